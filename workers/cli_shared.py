"""What the ``memq`` command modules (``cli_*.py``) share: the usage error, JSON output, the
argument types and times, and the client a command reads or writes through.

Light on purpose: ``memq --help`` imports it; the clients are imported when a command runs.
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from typing import Any, TypeAlias

# what a command module's ``add_*`` function adds its command to (a string: argparse's class
# takes no subscript at run time)
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


class UsageError(Exception):
    """A mistake of the caller's: one line, exit code 2."""


def print_json(value: Any) -> None:
    from .api import json_default  # noqa: PLC0415

    print(json.dumps(value, ensure_ascii=False, indent=2, default=json_default))


def print_report(args: argparse.Namespace, report: Any) -> int:
    """A forget's or a scrub's report: as JSON (--json), or its one line."""
    if args.json:
        print_json(report.to_json())
    else:
        print(report.describe())
    return 0


def positive(text: str) -> int:
    """An argparse type: a whole number of 1 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: must be 1 or more")
    return value


def now_of(args: argparse.Namespace) -> datetime:
    """``--now`` when given, else the clock."""
    if not getattr(args, "now", None):
        return datetime.now(UTC)
    return parse_time(args.now, "--now")


def parse_time(text: str, flag: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"{flag} {text!r} is not an ISO 8601 time; "
                         "e.g. 2026-11-01T12:00:00Z") from None
    if value.tzinfo is None:
        raise UsageError(f"{flag} needs a time zone, e.g. 2026-11-01T12:00:00Z")
    return value


def remote_client() -> Any:
    """The HTTP client when MEMQ_API_URL is set (memq search, context and memories ask the
    API then: a light install, a URL and MEMQ_API_KEY are enough); None: read here."""
    from .settings import Settings  # noqa: PLC0415

    if not Settings().api_url:
        return None
    from .http_client import HttpClient  # noqa: PLC0415

    return HttpClient()


def local_client(args: argparse.Namespace) -> Any:
    """The stores, for the users of ``--tenant`` (default ``MEMQ_TENANT``): the CLI names
    users as every door does, ``<tenant>:<user>`` in the stores."""
    from . import auth  # noqa: PLC0415
    from .api import Client  # noqa: PLC0415

    tenant = getattr(args, "tenant", None)
    if tenant:
        try:
            auth.check_tenant(tenant)
        except auth.AuthError as exc:
            raise UsageError(f"--tenant: {exc}") from None
    return Client(tenant=tenant)


def stores_id(args: argparse.Namespace) -> str:
    """``--user`` as the stores name it (``<tenant>:<user>``)."""
    try:
        return str(local_client(args).stores_id(args.user))
    except ValueError as exc:
        raise UsageError(f"--user: {exc}") from None
