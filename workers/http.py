"""The agent API over HTTP (``memq serve``): FastAPI on uvicorn, docs at ``/docs``.

The same operations as :class:`memq.workers.api.Client`. Writes are enqueues (202 with the
delivery ids); reads go to the stores; a store that is down is a 503 with one line saying
which. Request bodies are never logged.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import redis
from fastapi import FastAPI, HTTPException, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, ValidationError

from memq.pipeline.errors import PermanentError, TransientError
from memq.workers import wiring
from memq.workers.api import Client, Message, hit_json, messages_to_batches

MAX_BODY_ITEMS = 10_000


class AddRequest(BaseModel):
    user_id: str
    messages: list[Message] = Field(min_length=1)
    session_id: str | None = None


class SearchRequest(BaseModel):
    user_id: str
    query: str = Field(min_length=1)
    k: int = Field(default=10, ge=1, le=100)
    record: bool = False  # count as a recall: the agent acts on what it read


class ContextRequest(BaseModel):
    user_id: str
    query: str = Field(min_length=1)
    max_tokens: int = Field(default=800, ge=1, le=32_000)
    k: int = Field(default=20, ge=1, le=100)


def _one_line(exc: Exception) -> str:
    first = str(exc).splitlines()[0][:200] if str(exc) else ""
    return f"{type(exc).__name__}: {first}"


def create_app() -> FastAPI:  # noqa: PLR0915  (the routes, in one place)
    app = FastAPI(title="memq", version=_version(),
                  description="Long-term memory for AI agents: enqueue turns, read memories.")
    client = Client()

    @app.exception_handler(TransientError)
    @app.exception_handler(redis.RedisError)
    async def _down(_: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"detail": _one_line(exc)}, status_code=503)

    @app.exception_handler(PermanentError)
    async def _permanent(_: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"detail": f"{type(exc).__name__}: {exc}"}, status_code=422)

    @app.post("/v1/turns", status_code=202, summary="Enqueue turns or a conversation")
    async def post_turns(request: Request) -> dict[str, Any]:
        """Body: a JSON array of turn objects (the fields of a ``memq enqueue`` line), or
        ``{"user_id", "messages": [{"role", "content", "name"?, "timestamp"?}],
        "session_id"?}``. All or nothing: any invalid item is a 400 with per-item reasons."""
        try:
            body = json.loads(await request.body())
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise HTTPException(400, f"not JSON: {exc}") from None
        if isinstance(body, list):
            return _turns(body)
        if isinstance(body, dict):
            try:
                add = AddRequest.model_validate(body)
                batches = messages_to_batches(add.user_id, add.messages, add.session_id,
                                              datetime.now(UTC))
            except ValidationError as exc:
                raise HTTPException(400, {"errors": [
                    {"item": ".".join(str(p) for p in e["loc"]), "reason": e["msg"]}
                    for e in exc.errors()]}) from None
            ids = client.enqueue(batches)
            return {"delivery_ids": ids, "batches": len(batches)}
        raise HTTPException(400, "expected a JSON array of turns or an object with messages")

    def _turns(items: list[Any]) -> dict[str, Any]:
        from memq.workers.client import parse_lines  # noqa: PLC0415

        if len(items) > MAX_BODY_ITEMS:
            raise HTTPException(413, f"at most {MAX_BODY_ITEMS} turns a request")
        batches, errors = parse_lines(json.dumps(item, ensure_ascii=False) for item in items)
        if errors:
            raise HTTPException(400, {"errors": [{"item": e.line - 1, "reason": e.reason}
                                                 for e in errors]})
        if not batches:
            raise HTTPException(400, "no turns")
        return {"delivery_ids": client.enqueue(batches), "batches": len(batches)}

    @app.get("/v1/deliveries/{delivery_id}", summary="Where a delivery is")
    def get_delivery(delivery_id: str) -> dict[str, Any]:
        (st,) = client.status([delivery_id])
        return {"delivery_id": st.delivery_id, "state": st.state, "user_id": st.user_id,
                "reason": st.reason, "finished": st.finished}

    @app.get("/v1/users/{user_id}/memories")
    def get_memories(user_id: str, include_all: bool = Query(default=False, alias="all"),
                     as_of: datetime | None = None) -> list[dict[str, Any]]:
        if as_of is not None and as_of.tzinfo is None:
            raise HTTPException(400, "as_of needs a time zone, e.g. 2026-11-01T12:00:00Z")
        found = client.memories(user_id, include_inactive=include_all, as_of=as_of)
        return [m.model_dump(mode="json") for m in found]

    @app.get("/v1/users/{user_id}/facts")
    def get_facts(user_id: str) -> list[dict[str, Any]]:
        return json.loads(json.dumps(client.facts(user_id), default=str))  # type: ignore[no-any-return]

    @app.get("/v1/users/{user_id}/audit")
    def get_audit(user_id: str, memory_id: str | None = Query(default=None)
                  ) -> list[dict[str, Any]]:
        return [e.model_dump(mode="json") for e in client.audit(user_id, memory_id)]

    @app.post("/v1/search")
    def post_search(req: SearchRequest) -> list[dict[str, Any]]:
        return [hit_json(h) for h in client.search(req.user_id, req.query, req.k,
                                                   record=req.record)]

    @app.post("/v1/context")
    def post_context(req: ContextRequest) -> dict[str, Any]:
        block = client.context(req.user_id, req.query, max_tokens=req.max_tokens, k=req.k)
        return {"user_id": req.user_id, "context": block}

    @app.delete("/v1/users/{user_id}", summary="Forget a user in every store")
    def delete_user(user_id: str) -> dict[str, Any]:
        return client.forget(user_id).to_json()

    @app.delete("/v1/users/{user_id}/memories/{memory_id}", summary="Forget one memory")
    def delete_memory(user_id: str, memory_id: str) -> dict[str, Any]:
        return client.forget(user_id, memory_id).to_json()

    @app.get("/healthz", summary="Liveness: the process answers")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", summary="Readiness: Redis, Neo4j and Chroma reachable")
    def readyz(response: Response) -> dict[str, Any]:
        from memq.workers.ops import doctor  # noqa: PLC0415

        checks = doctor(services_only=True)
        ok = all(c.ok for c in checks)
        response.status_code = 200 if ok else 503
        return {"ready": ok, "checks": [c.to_json() for c in checks]}

    @app.get("/metrics", summary="Prometheus metrics of every worker (kept in Redis)")
    def metrics() -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest  # noqa: PLC0415
        from prometheus_client.registry import CollectorRegistry  # noqa: PLC0415

        from memq.workers.metrics import RedisCollector  # noqa: PLC0415

        registry = CollectorRegistry(auto_describe=False)
        registry.register(RedisCollector(wiring.coord().r))
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    return app


def _version() -> str:
    from memq import __version__  # noqa: PLC0415

    return __version__
