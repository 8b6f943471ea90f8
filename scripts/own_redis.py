"""Before a bench or a fault run empties a Redis database: is it a Redis the run's own stack
started? (scripts/bench, scripts/chaos)

The Redis a run talks to comes from the settings, and ``MEMQ_REDIS_URL`` can point them at any
server, a user's own among them. So the server is asked, not the settings: a Redis that
``scripts/services`` (``memq.workers.stack``) started from ``MEMQ_HOME`` keeps its data in
``$MEMQ_HOME/redis`` (``CONFIG GET dir``) and is the live ``redis-server`` whose pid the
stack's pid file holds (``INFO server``'s ``process_id``); a scratch redis-server a bench
started itself is held to its temporary folder and the pid of the child it started. Anything
else, or a server that will not say, is refused with one line: what, why, and what to do.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


STACK_REMEDY = ("start the run's own stores with scripts/services up (a MEMQ_HOME and "
                "MEMQ_REDIS_PORT of their own) and run it in that environment, "
                "MEMQ_REDIS_URL unset")


@dataclass(frozen=True)
class Expected:
    """Where the run's own Redis keeps its data, and its process (None: none runs)."""
    data_dir: Path
    pid: int | None
    started_by: str  # who started it, for the message
    remedy: str = STACK_REMEDY  # what to do when the Redis found is another


def stack_home() -> Path:
    """The folder scripts/services runs the stores in: MEMQ_HOME, else the checkout's .memq
    (scripts/services' and scripts/worker's own rule; the shell's variable, not .env)."""
    return Path(os.environ.get("MEMQ_HOME") or REPO / ".memq").expanduser().absolute()


def stack_redis(home: Path | None = None) -> Expected:
    """The Redis the stack of ``home`` (default: stack_home()) started, as the stack itself
    recognises it: its pid file naming a live redis-server (workers/procs.py)."""
    from memq.workers import stack

    home = home or stack_home()
    component = stack.components(stack.Config(home=home, cache=home))["redis"]
    return Expected(home / "redis", component.owned(),
                    f"scripts/services from MEMQ_HOME={home}")


def refusal(server_dir: str, server_pid: int, expected: Expected) -> str | None:
    """Why a Redis that keeps its data in ``server_dir`` and runs as ``server_pid`` is not the
    expected one; None when it is."""
    want = expected.data_dir.resolve()  # Redis reports its working directory, links resolved
    if Path(server_dir).resolve() != want:
        return f"it keeps its data in {server_dir}, not in {want}"
    if expected.pid is None:
        return f"no redis-server started by {expected.started_by} is running"
    if server_pid != expected.pid:
        return (f"it is process {server_pid}, not the redis-server started by "
                f"{expected.started_by} (pid {expected.pid})")
    return None


def _where(r: Any) -> str:
    """host:port db N (or the socket's path) of a client: never its URL (a password)."""
    pool = getattr(r, "connection_pool", None)  # a cluster client has none: nodes instead
    kw = pool.connection_kwargs if pool is not None else {}
    place = kw.get("path") or f"{kw.get('host', '?')}:{kw.get('port', '?')}"
    return f"{place} db {kw.get('db', 0)}"


def _text(value: Any) -> str:
    """A reply as text, whether the client decodes replies or not."""
    if isinstance(value, bytes):
        return value.decode()
    if not isinstance(value, str):
        raise TypeError(f"no dir in the reply: {value!r}")
    return value


def require_own(r: Any, what: str, expected: Expected | None = None) -> None:
    """Exit with one line unless ``r`` is the Redis ``expected`` describes (default: the one
    scripts/services started from this MEMQ_HOME)."""
    import redis

    expected = expected or stack_redis()
    try:
        reply = dict(r.config_get("dir"))
        server_dir = _text(reply.get("dir", reply.get(b"dir")))
        server_pid = int(r.info("server")["process_id"])
    except (redis.RedisError, KeyError, ValueError, TypeError) as exc:
        said = " ".join(str(exc).split())
        why = f"it did not answer CONFIG GET dir and INFO ({type(exc).__name__}: {said})"
    else:
        found = refusal(server_dir, server_pid, expected)
        if found is None:
            return
        why = found
    sys.exit(f"{what}: refusing to use the Redis at {_where(r)} (the run empties its database "
             f"there): {why}; {expected.remedy}")


def flush_own(r: Any, what: str, expected: Expected | None = None) -> None:
    """FLUSHDB, only on the run's own Redis (require_own): every flush in scripts/ is this."""
    require_own(r, what, expected)
    r.flushdb()
