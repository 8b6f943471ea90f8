"""``memq``: the commands people type. Thin: parse, call, print."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from . import cli_data, cli_ops, cli_service, cli_tenants
from .cli_shared import Commands, UsageError
from .version import version

# Each command is added by the module of its concern; memq --help lists them in this order.
_COMMANDS: tuple[Callable[[Commands], None], ...] = (
    cli_data.add_schema, cli_data.add_enqueue, cli_service.add_worker, cli_service.add_beat,
    cli_data.add_wait, cli_ops.add_status, cli_service.add_up, cli_service.add_down,
    cli_ops.add_doctor, cli_service.add_serve, cli_service.add_mcp, cli_data.add_memories,
    cli_data.add_audit, cli_data.add_facts, cli_data.add_search, cli_data.add_forget,
    cli_data.add_context, cli_tenants.add_keys, cli_tenants.add_webhooks, cli_ops.add_run,
    cli_ops.add_move_user, cli_ops.add_check, cli_ops.add_scrub, cli_ops.add_deadletters,
    cli_ops.add_chroma_index,
)

_TENANT_HELP = ("the tenant whose user --user names (default MEMQ_TENANT): the stores see "
                "<tenant>:<user>; ignored over HTTP (MEMQ_API_URL), where the key's applies")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memq", description=__doc__)
    parser.add_argument("--version", action="version", version=f"memq {version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in _COMMANDS:
        add(sub)
    # every command that names a user (enqueue: its lines do) names it within a tenant
    for name, command in sub.choices.items():
        if name == "enqueue" or any("--user" in a.option_strings for a in command._actions):
            command.add_argument("--tenant", help=_TENANT_HELP)
    return parser


def one_line(exc: BaseException) -> tuple[str, int]:
    """A failure the user can act on, as one line with the fix, and its exit code."""
    import redis  # noqa: PLC0415
    from pydantic import ValidationError  # noqa: PLC0415

    from ..pipeline.errors import PermanentError, TransientError, UserBusy  # noqa: PLC0415

    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    from .auth import AuthError  # noqa: PLC0415

    if isinstance(exc, UsageError | AuthError):  # a bad tenant, scope or user id: usage
        return text, 2
    from .http_client import ApiError  # noqa: PLC0415

    if isinstance(exc, ApiError):
        hint = {401: " (set MEMQ_API_KEY: memq keys create makes one)",
                403: " (the key's scopes: memq keys list)"}.get(exc.status, "")
        return f"{text}{hint}", 3 if exc.status in (429, 503) else 1
    if isinstance(exc, ValidationError) and exc.title == "Settings":  # the settings
        e = exc.errors()[0]
        msg = str(e["msg"]).removeprefix("Value error, ")
        if not e["loc"]:
            return f"bad settings: {msg}", 2
        name = str(e["loc"][0]).upper()  # a field's name, or the variable (a renamed one's)
        return f"bad setting {name if name.startswith('MEMQ_') else 'MEMQ_' + name}: {msg}", 2
    if isinstance(exc, redis.RedisError):
        from . import wiring  # noqa: PLC0415
        from .ops import mask_url  # noqa: PLC0415

        return (f"cannot reach Redis at {mask_url(wiring.settings().redis_url)} ({text}); "
                "start it (memq up; in a checkout scripts/services up) or set MEMQ_REDIS_URL", 3)
    if isinstance(exc, UserBusy):  # the stores answered: the user is being worked on
        return f"{text}; try again in a minute (memq status shows the queues)", 3
    if isinstance(exc, TransientError):
        return f"{text}; is the service up? (memq doctor checks each one)", 3
    if type(exc).__module__.startswith("neo4j"):
        return (f"Neo4j: {text}; start it (memq up) or set MEMQ_NEO4J_URI "
                "(memq doctor checks each service)", 3)
    if isinstance(exc, ModuleNotFoundError):
        return (f"{text}: this command needs the worker extra: pip install \"memq[worker]\" "
                "(the HTTP API: \"memq[server]\")", 2)
    if isinstance(exc, PermanentError | ValueError | OSError | TimeoutError):
        return text, 1
    raise exc


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in ("worker", "beat"):
            return cli_service.run_celery(argv[0], argv[1:])
        args = build_parser().parse_args(argv)
        from . import wiring  # noqa: PLC0415

        wiring.configure_logging(os.environ.get("MEMQ_LOG_LEVEL", "WARNING"))
        return int(args.fn(args))
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001  (re-raised unless it is one the user can fix)
        message, code = one_line(exc)
        print(f"memq: {message}", file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(main())
