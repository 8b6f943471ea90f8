"""The agent API over HTTP (``memq serve``): FastAPI on uvicorn, docs at ``/docs``.

The same operations as :class:`memq.workers.api.Client`. Writes are enqueues (202 with the
delivery ids); reads go to the stores; a store that is down is a 503 with one line saying
which. Request bodies are never logged.

Every route but ``/healthz``, ``/readyz`` and the docs wants ``Authorization: Bearer <key>``
(``memq keys create``; :mod:`memq.workers.auth`): the key's tenant owns the user ids it names
(the stores see ``<tenant>:<user id>``), its scopes say what it may do. No or a bad key: 401;
a scope the key lacks: 403; a delivery of another tenant reads as unknown. ``MEMQ_AUTH=off``
serves every user of ``MEMQ_TENANT`` to anyone who reaches the port (local development; said
in the log): the same namespace rule as every door without a key.
"""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import UTC, datetime
from typing import Any

import redis
import structlog
from fastapi import FastAPI, Request, Response

from ..pipeline.errors import PermanentError, TransientError
from . import auth, problems, wiring
from .api import StoresClient
from .bounds import BoundedBody
from .http_admin import admin_router
from .http_deps import Caller
from .http_forget import forget_router
from .http_health import health_router
from .http_models import MAX_BODY_ITEMS, TURNS_DEFS
from .http_search import search_router
from .http_turns import turns_router
from .http_users import memories_router, users_router
from .version import version

# Caller and MAX_BODY_ITEMS: still importable from here, where they were defined before
__all__ = ["MAX_BODY_ITEMS", "Caller", "create_app", "warm_reads_in_background"]

log = structlog.get_logger(__name__)
# routes whose every call is kept in the tenant's access record (who, route, user, status)
_RECORDED = ("/v1/turns", "/v1/deliveries", "/v1/users", "/v1/search", "/v1/context",
             "/ui/users")  # the console's views of a user (workers.console)


def _one_line(exc: Exception) -> str:
    first = str(exc).splitlines()[0][:200] if str(exc) else ""
    return f"{type(exc).__name__}: {first}"


def create_app() -> FastAPI:
    """The API's app: each resource's routes (``workers/http_*.py``) put together, with the
    docs, the error shapes, the access record and log line, and the console."""
    settings = wiring.settings()
    wiring.one_blas_thread()  # search's small matrix products (wiring.one_blas_thread)
    auth_on = settings.auth == "on"
    app = FastAPI(title="memq", version=version(), docs_url=None, redoc_url=None,
                  description="Long-term memory for AI agents: enqueue turns, read memories. "
                              "Every /v1 route wants `Authorization: Bearer <key>` "
                              "(`memq keys create`).")
    _offline_docs(app)
    client = StoresClient()  # the routes pass the stores' ids (Caller.user)
    _with_turns_schemas(app)
    if not auth_on:
        log.warning("MEMQ_AUTH=off: no API keys; anyone who reaches this port reads, writes "
                    "and forgets every user. For local development only.")
    _record_access(app, auth_on)
    _log_requests(app)
    _errors(app)
    app.include_router(turns_router(client, settings))
    app.include_router(memories_router(client))
    app.include_router(users_router(client))
    app.include_router(search_router(client))
    app.include_router(forget_router(client))
    app.include_router(admin_router())
    # set while the read path warms (warm_reads_in_background): not ready for reads yet
    app.state.warming = threading.Event()
    app.include_router(health_router(app.state.warming, auth_on))
    from . import console  # noqa: PLC0415

    console.mount(app)  # the memory console at /ui
    # added last, so it runs first: before the access record, the key check and any parsing
    app.add_middleware(BoundedBody, max_bytes=settings.max_body_bytes,
                       max_depth=settings.max_json_depth)
    return app


def _with_turns_schemas(app: FastAPI) -> None:
    default_openapi = app.openapi

    def openapi() -> dict[str, Any]:
        """FastAPI's document, with the schemas the body of /v1/turns refers to."""
        doc = default_openapi()
        held = doc.setdefault("components", {}).setdefault("schemas", {})
        for name, schema in TURNS_DEFS.items():
            held.setdefault(name, schema)
        return doc

    app.openapi = openapi  # type: ignore[method-assign]


def _record_access(app: FastAPI, auth_on: bool) -> None:
    @app.middleware("http")
    async def _access_record(request: Request, call_next: Any) -> Any:
        """Every call of a recorded route, with what is known of who made it: a key's calls
        (refused ones too: 403, 429) in its tenant's record, with the user of the path when
        the body was not read; a 401 in the record of the tenant whose key id it presented
        (revoked, or a wrong secret), else in the operator's record of refusals."""
        response = await call_next(request)
        if not auth_on:
            return response
        route = getattr(request.scope.get("route"), "path", request.url.path)
        if not route.startswith(_RECORDED):
            return response
        caller: Caller | None = getattr(request.state, "caller", None)
        presented, named = getattr(request.state, "refused", (None, None))
        key: auth.ApiKey | None = caller.key if caller is not None else named
        users = list(dict.fromkeys(caller.users)) if caller is not None else []
        if not users and (path_user := request.scope.get("path_params", {}).get("user_id")):
            users = [str(path_user)[:200]]
        entry = {"at": datetime.now(UTC).isoformat(), "key": key.id if key else presented or "",
                 "method": request.method, "route": route, "user": ",".join(users),
                 "status": str(response.status_code)}
        if key is None:
            if response.status_code != 401:
                return response
            entry["address"] = request.client.host if request.client else ""
        try:
            await asyncio.to_thread(
                wiring.keys().record_access, key.tenant if key else None, entry)
        except redis.RedisError:
            log.warning("access record not written", key=entry["key"], route=route)
        return response


def _log_requests(app: FastAPI) -> None:
    @app.middleware("http")
    async def _access_line(request: Request, call_next: Any) -> Any:
        """One line per request for the operator: method, route template (never a user id
        or text), status, duration, key id. Probes of /healthz and /readyz at debug."""
        started = time.perf_counter()
        response = await call_next(request)
        route = getattr(request.scope.get("route"), "path", None) or "(no route)"
        caller: Caller | None = getattr(request.state, "caller", None)
        emit = log.debug if route in ("/healthz", "/readyz") else log.info
        emit("request", method=request.method, route=route, status=response.status_code,
             ms=round(1000 * (time.perf_counter() - started), 1),
             key=caller.key.id if caller is not None and caller.key is not None else None)
        return response


def _errors(app: FastAPI) -> None:
    problems.install(app)  # one error shape for every route (the console's pages aside)

    @app.exception_handler(TransientError)
    @app.exception_handler(redis.RedisError)
    async def _down(_: Request, exc: Exception) -> Response:
        return problems.response(problems.problem(503, _one_line(exc)))

    @app.exception_handler(PermanentError)
    async def _permanent(_: Request, exc: Exception) -> Response:
        return problems.response(problems.problem(422, f"{type(exc).__name__}: {exc}"))


def warm_reads_in_background(app: FastAPI, where: str = "memq serve") -> threading.Thread:
    """The read path warmed (``workers.warm.warm_reads``: the model, the stores' connections,
    Neo4j's plans, kept from then on) beside the first requests; until it is over (done,
    failed, or skipped by MEMQ_WARM=off), ``/readyz?path=read`` answers 503 with
    ``"warming": true``."""
    from .warm import warm_reads  # noqa: PLC0415

    warming: threading.Event = app.state.warming
    warming.set()

    def run() -> None:
        try:
            warm_reads(where, keep=True)
        finally:
            warming.clear()

    thread = threading.Thread(target=run, name="memq-warm", daemon=True)
    thread.start()
    return thread


DOCS_ASSETS = "/docs-assets"


def _offline_docs(app: FastAPI) -> None:
    """``/docs`` (Swagger UI) and ``/redoc`` from assets a package ships (fastapi-offline),
    served here: FastAPI's default pages load them from a CDN, blank without the internet."""
    from importlib import resources  # noqa: PLC0415

    from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html  # noqa: PLC0415
    from fastapi.responses import HTMLResponse  # noqa: PLC0415
    from fastapi.staticfiles import StaticFiles  # noqa: PLC0415

    assets = resources.files("fastapi_offline") / "static"
    app.mount(DOCS_ASSETS, StaticFiles(directory=str(assets)), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json", title="memq API",
            swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{DOCS_ASSETS}/favicon.png")

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        return get_redoc_html(openapi_url="/openapi.json", title="memq API",
                              redoc_js_url=f"{DOCS_ASSETS}/redoc.standalone.js",
                              redoc_favicon_url=f"{DOCS_ASSETS}/favicon.png",
                              with_google_fonts=False)
