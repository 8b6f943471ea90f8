"""The HTTP API's probes (:mod:`memq.workers.http`): liveness and readiness, no key needed."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Query, Response

from . import wiring
from .http_deps import Credentials

READY_TTL_S = 2.0  # how long /readyz's probe of the stores is reused


def health_router(warm_up: threading.Event, auth_on: bool) -> APIRouter:
    """``GET /healthz`` and ``GET /readyz``; ``warm_up`` is set while the read path warms
    (``warm_reads_in_background``)."""
    router = APIRouter()
    probed: list[tuple[float, str, list[Any]]] = []
    probing = threading.Lock()

    @router.get("/healthz", summary="Liveness: the process answers")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    def _checks() -> tuple[str, list[Any]]:
        """When the stores were probed, and their checks: at most once per READY_TTL_S in
        this process, however often anyone asks (``/readyz`` wants no key)."""
        from .ops import doctor  # noqa: PLC0415

        with probing:
            if not probed or time.monotonic() - probed[0][0] > READY_TTL_S:
                at = datetime.now(UTC).isoformat()
                probed[:] = [(time.monotonic(), at, doctor(services_only=True))]
            return probed[0][1], probed[0][2]

    @router.get("/readyz", summary="Readiness: the write path needs Redis; reads need the stores")
    def readyz(response: Response, creds: Credentials,
               path: str = Query(default="write", pattern="^(write|read)$")
               ) -> dict[str, Any]:
        """``path=write`` (default): 200 when Redis answers (the broker's, and the state's
        when apart: enqueue needs nothing else); ``path=read``: 200 when Neo4j and Chroma
        answer too. With shards (a cluster's primaries, store shards) a kind is ready while
        any of its shards answers: one that is down stops only its users, and taking the API
        out of rotation would stop everyone's; ``degraded`` says some check failed. The
        checks' details are for an admin key (or MEMQ_AUTH=off). While the server warms its
        read path after it starts (the model, Neo4j's plans), ``path=read`` is 503 with
        ``"warming": true``: a search meanwhile would pay for the warm-up."""
        checked_at, checks = _checks()

        def up(kind: str) -> bool:
            mine = [c for c in checks if c.name == kind or c.name.startswith(kind + "[")]
            return not mine or any(c.ok for c in mine)

        write = up("redis") and up("redis-state")
        read = write and up("neo4j") and up("chroma")
        warming = warm_up.is_set()
        ready = (read and not warming) if path == "read" else write
        response.status_code = 200 if ready else 503
        out: dict[str, Any] = {"ready": ready, "write": write,
                               "read": read, "degraded": not all(c.ok for c in checks),
                               "checked_at": checked_at}
        if warming:
            out["warming"] = True
        admin = not auth_on
        if auth_on and creds is not None and write:
            key = wiring.keys().verify(creds.credentials)
            admin = key is not None and key.allows("admin")
        if admin:
            out["checks"] = [c.to_json() for c in checks]
        return out

    return router
