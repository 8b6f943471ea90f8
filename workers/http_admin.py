"""The HTTP API's operator routes (:mod:`memq.workers.http`): the tenant's access record
and the Prometheus metrics, for an admin key."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Query, Response

from . import wiring
from .http_deps import Admin


def admin_router() -> APIRouter:
    """``GET /v1/access`` and ``GET /metrics``."""
    router = APIRouter()

    @router.get("/v1/access", summary="The tenant's access record (admin): who read what, when")
    def get_access(caller: Admin, limit: int = Query(default=100, ge=1, le=10_000)
                   ) -> list[dict[str, str]]:
        if caller.key is None:
            raise HTTPException(404, "no access record with MEMQ_AUTH=off (no tenants)")
        return wiring.keys().access(caller.key.tenant, limit)

    @router.get("/metrics", summary="Prometheus metrics of every worker (kept in Redis; admin)")
    def metrics(_: Admin) -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest  # noqa: PLC0415
        from prometheus_client.registry import CollectorRegistry  # noqa: PLC0415

        from .metrics import RedisCollector  # noqa: PLC0415

        registry = CollectorRegistry(auto_describe=False)
        registry.register(RedisCollector(wiring.coord()))
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    return router
