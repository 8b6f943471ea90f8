"""``memq``'s commands that run memq's processes: worker and beat (Celery), up and down (the
local stack), serve (the HTTP API) and mcp."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from collections.abc import Sequence

from .cli_shared import Commands, UsageError


def run_celery(kind: str, extra: Sequence[str]) -> int:
    """``memq worker`` and ``memq beat``: Celery in this process's place, ``extra`` passed on
    (``main`` calls this before parsing, so Celery's own flags reach it)."""
    from .wire import QUEUES  # noqa: PLC0415

    if kind != "worker" and importlib.util.find_spec("celery") is None:
        print(f'memq: {kind} needs Celery: pip install "memq[worker]"', file=sys.stderr)
        return 2
    if kind == "worker" and not {"-h", "--help"} & set(extra):
        from .ops import preflight  # noqa: PLC0415

        fatal, warnings = preflight()
        for line in fatal + warnings:
            print(f"memq: {line}", file=sys.stderr)
        if fatal:
            return 2
        from . import wiring  # noqa: PLC0415
        from .ops import yield_cpu  # noqa: PLC0415

        yield_cpu(wiring.settings().worker_nice)

    argv = [sys.executable, "-m", "celery", "-A", "memq.workers.app", kind, "--loglevel=INFO"]
    if kind == "worker" and not any(a in ("-Q", "--queues") or a.startswith(("-Q", "--queues="))
                                    for a in extra):
        argv += ["-Q", ",".join(QUEUES)]  # both queues unless told (-Q memq.extract)
    os.execv(sys.executable, [*argv, *extra])
    return 0  # not reached


def _component(text: str) -> str:
    """An argparse type: a component of the local stack (not choices=: Python 3.11 checks an
    empty ``NAME...`` against them and refuses it)."""
    from .stack import COMPONENTS  # noqa: PLC0415

    if text not in COMPONENTS:
        raise argparse.ArgumentTypeError(f"{text!r}: one of {', '.join(COMPONENTS)}")
    return text


def cmd_up(args: argparse.Namespace) -> int:
    from . import stack  # noqa: PLC0415

    if not 1 <= args.api_port <= 65535:
        raise UsageError(f"--api-port {args.api_port}: a port is 1-65535")
    skip = {"worker"} if args.no_worker else set()
    skip |= {"server"} if args.no_server else set()
    skip |= {"beat"} if args.no_beat else set()
    names = args.names or [n for n in stack.COMPONENTS if n not in skip]
    return stack.up(stack.config(args.home, api_port=args.api_port), names)


def cmd_down(args: argparse.Namespace) -> int:
    from . import stack  # noqa: PLC0415

    return stack.down(stack.config(args.home), args.names or stack.COMPONENTS)


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn  # noqa: PLC0415

    from .http import create_app, warm_reads_in_background  # noqa: PLC0415

    if not 1 <= args.port <= 65535:
        raise UsageError(f"--port {args.port}: a port is 1-65535")
    import structlog  # noqa: PLC0415

    from . import wiring  # noqa: PLC0415
    from .ops import mask_url  # noqa: PLC0415

    s = wiring.settings()
    wiring.configure_logging(s.log_level)  # an operator's server: INFO unless MEMQ_LOG_LEVEL
    app = create_app()
    structlog.get_logger("memq.serve").info(
        "memq serve", url=f"http://{args.host}:{args.port}", auth=s.auth,
        tenant=s.tenant if s.auth == "off" else None, redis=mask_url(s.redis_url),
        neo4j=[mask_url(u) for u in s.graph_uris()],
        chroma=[f"{h}:{p}" for h, p in s.chroma_addresses()], docs="/docs", console="/ui/")
    # the first search finds the model loaded, the stores connected and Neo4j's plans made
    # (MEMQ_WARM=off: not); /readyz?path=read says ready once it is over
    warm_reads_in_background(app)
    # uvicorn's own lines stay at warnings: its access line carries the query string
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False)
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("mcp") is None:
        raise UsageError('memq mcp needs the MCP SDK: pip install "memq[mcp]"')
    if not 1 <= args.port <= 65535:
        raise UsageError(f"--port {args.port}: a port is 1-65535")
    from . import wiring  # noqa: PLC0415

    if not wiring.settings().api_url and not args.local:
        # an MCP host passes no environment unless told to: without the API's URL and a key
        # the server would open the stores directly, outside any tenant
        raise UsageError("memq mcp goes through memq serve: set MEMQ_API_URL and MEMQ_API_KEY "
                         "in the host's config (\"env\"), or give --local to open this "
                         "machine's stores directly")
    from .mcp import serve  # noqa: PLC0415

    serve(args.user, args.transport, args.host, args.port, tenant=args.tenant)
    return 0


def add_worker(sub: Commands) -> None:
    """Help only: ``main`` hands ``memq worker ...`` to ``run_celery`` unparsed."""
    sub.add_parser("worker", help="start a Celery worker (extra args go to celery)")


def add_beat(sub: Commands) -> None:
    """Help only, as ``add_worker``."""
    sub.add_parser("beat", help="start the Celery beat scheduler")


def add_up(sub: Commands) -> None:
    p = sub.add_parser("up", help="start the local stack: Redis, Neo4j, Chroma, a worker, beat "
                       "and memq serve on 127.0.0.1 (installs what is missing where it can)")
    p.add_argument("--home", metavar="DIR", help="data, logs and pid files (default MEMQ_HOME)")
    p.add_argument("--no-worker", action="store_true", help="no background worker")
    p.add_argument("--no-server", action="store_true", help="no memq serve")
    p.add_argument("--no-beat", action="store_true",
                   help="no beat (the lifecycle jobs' scheduler: decay, expiry, consolidation)")
    p.add_argument("--api-port", type=int, default=8080, help="memq serve's port (8080)")
    p.add_argument("names", nargs="*", metavar="NAME", type=_component,
                   help="only these: redis, neo4j, chroma, worker, beat, server (default: all)")
    p.set_defaults(fn=cmd_up)


def add_down(sub: Commands) -> None:
    p = sub.add_parser("down", help="stop what memq up started (SIGTERM, then SIGKILL)")
    p.add_argument("--home", metavar="DIR", help="the stack's folder (default MEMQ_HOME)")
    p.add_argument("names", nargs="*", metavar="NAME", type=_component,
                   help="only these (default: all)")
    p.set_defaults(fn=cmd_down)


def add_serve(sub: Commands) -> None:
    p = sub.add_parser("serve", help="the HTTP API (FastAPI; docs at /docs)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.set_defaults(fn=cmd_serve)


def add_mcp(sub: Commands) -> None:
    p = sub.add_parser("mcp", help="an MCP server for one user (stdio, or streamable HTTP)")
    p.add_argument("--user", required=True, help="the one user its tools read and write")
    p.add_argument("--transport", choices=("stdio", "streamable-http"), default="stdio")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--local", action="store_true",
                   help="open the stores directly (no MEMQ_API_URL): one machine, the users "
                        "of MEMQ_TENANT (--tenant)")
    p.set_defaults(fn=cmd_mcp)
