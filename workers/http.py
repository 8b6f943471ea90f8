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
import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

import redis
import structlog
from fastapi import Depends, FastAPI, HTTPException, Query, Request, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from memq.pipeline.errors import PermanentError, TransientError
from memq.pipeline.ports import Hit
from memq.schemas import AuditEntry, StoredMemory, TurnLine
from memq.workers import auth, outbox, problems, wiring
from memq.workers.api import (
    Message,
    Status,
    StoresClient,
    hit_json,
    json_default,
    messages_to_batches,
)
from memq.workers.bounds import BoundedBody
from memq.workers.client import check_times

log = structlog.get_logger(__name__)
MAX_BODY_ITEMS = 10_000
MAX_WAIT_S = 30.0
# routes whose every call is kept in the tenant's access record (who, route, user, status)
READY_TTL_S = 2.0  # how long /readyz's probe of the stores is reused
_RECORDED = ("/v1/turns", "/v1/deliveries", "/v1/users", "/v1/search", "/v1/context",
             "/ui/users")  # the console's views of a user (workers.console)


class AddRequest(BaseModel):
    user_id: str
    messages: list[Message] = Field(min_length=1, max_length=MAX_BODY_ITEMS)
    session_id: str | None = None
    metadata: dict[str, Any] | None = None  # kept on each turn


class SearchRequest(BaseModel):
    user_id: str
    query: str = Field(min_length=1)
    k: int = Field(default=10, ge=1, le=100)
    record: bool = False  # count as a recall: the agent acts on what it read
    threshold: float | None = None  # a score at least this
    types: list[Literal["memory", "episode"]] | None = None
    kinds: list[str] | None = None  # of memories: fact, preference, event, ...
    statuses: list[str] | None = None  # of memories: current, superseded
    since: datetime | None = None  # event time
    until: datetime | None = None


class ContextRequest(BaseModel):
    user_id: str
    query: str = Field(min_length=1)
    max_tokens: int = Field(default=800, ge=1, le=32_000)
    k: int = Field(default=20, ge=1, le=100)


# -- the answers, typed (the OpenAPI document's schemas: a generated client gets them) --------
class Enqueued(BaseModel):
    delivery_ids: list[str]
    batches: int
    batch_ids: list[str] = Field(default_factory=list)  # each delivery's batch, as audited


class DeliveryState(BaseModel):
    delivery_id: str
    state: Literal["queued", "started", "extracted", "done", "dead_lettered", "unknown"]
    user_id: str | None = None
    reason: str | None = None  # why, when dead-lettered
    finished: bool


class ContextBlock(BaseModel):
    user_id: str
    context: str


class Fact(BaseModel):
    """A triple with its times: valid (world) and created / expired (system)."""

    model_config = ConfigDict(extra="allow")

    subject: str
    predicate: str
    object: str
    memory_id: str
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    created_at: datetime | None = None
    expired_at: datetime | None = None
    source_turn_ids: list[str] = Field(default_factory=list)


class Forgotten(BaseModel):
    """What a forget removed (``graph``: nodes and FACT edges deleted plus audit entries
    stripped of content)."""

    user_id: str
    memory_id: str | None = None
    chroma: int
    graph: int
    redis_keys: int
    queued: int
    dead_letters: int
    episodes: int
    total: int


# the body of POST /v1/turns: a conversation, or the lines of `memq enqueue` (the route
# parses it itself, to answer 400 with a reason per item; this is its documented schema)
TURNS_BODY = TypeAdapter(AddRequest | list[TurnLine])
_TURNS_SCHEMA = TURNS_BODY.json_schema(ref_template="#/components/schemas/{model}")
_TURNS_DEFS = _TURNS_SCHEMA.pop("$defs", {})


class Owner(BaseModel):
    user_id: str | None


class TurnRefs(BaseModel):
    refs: list[str] = Field(max_length=10_000)  # <session>/<turn>


class Correction(BaseModel):
    text: str = Field(min_length=1, max_length=4_000)  # what the memory says from now on


class StoredTurn(BaseModel):
    """One turn as stored: its reference ``<session>/<turn>``, text and producer metadata."""

    ref: str
    text: str
    metadata: dict[str, Any]
    created_at: datetime
    event_at: datetime


class LatestTurn(BaseModel):
    turn: StoredTurn | None  # None: no turn has that prefix


class TurnsForgotten(BaseModel):
    turns: int


class StatusRequest(BaseModel):
    delivery_ids: list[str] = Field(min_length=1, max_length=1_000)
    # wait up to this long for every delivery to finish (done or dead-lettered)
    wait_s: float = Field(default=0.0, ge=0.0, le=MAX_WAIT_S)


@dataclass
class Caller:
    """Who calls: the key (None: auth off) and the users it named (for the access record)."""

    key: auth.ApiKey | None
    users: list[str] = field(default_factory=list)

    @property
    def tenant(self) -> str:
        """The key's tenant; with ``MEMQ_AUTH=off``, ``MEMQ_TENANT`` (one rule for every door)."""
        return self.key.tenant if self.key else wiring.settings().tenant

    def user(self, user_id: str) -> str:
        """The stores' id of the caller's user ``user_id``; 400 for an id that is not one."""
        try:
            internal = auth.tenant_user(self.tenant, user_id)
        except auth.AuthError as exc:
            raise HTTPException(400, str(exc)) from None
        self.users.append(user_id)
        return internal

    def out(self, value: Any) -> Any:
        return auth.externalize(self.tenant, value)

    def owns(self, internal_user: str | None) -> bool:
        return auth.external_user(self.tenant, internal_user) is not None


def _one_line(exc: Exception) -> str:
    first = str(exc).splitlines()[0][:200] if str(exc) else ""
    return f"{type(exc).__name__}: {first}"


_UNAUTHORIZED = {"WWW-Authenticate": "Bearer"}
_SCHEME = HTTPBearer(auto_error=False, description="an API key from `memq keys create`")
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_SCHEME)]


def _identify(request: Request, creds: HTTPAuthorizationCredentials | None) -> Caller:
    if wiring.settings().auth == "off":
        return Caller(None)
    if creds is None:
        raise HTTPException(401, "no API key: send Authorization: Bearer <key> "
                                 "(memq keys create makes one)", headers=_UNAUTHORIZED)
    key = wiring.keys().verify(creds.credentials)
    if key is None:
        # for the access record: a revoked (or mistyped) key of a tenant is that tenant's
        key_id = auth.key_id_of(creds.credentials)
        request.state.refused = (key_id, wiring.keys().get(key_id) if key_id else None)
        raise HTTPException(401, "this API key is not valid (unknown, revoked or malformed)",
                            headers=_UNAUTHORIZED)
    caller = Caller(key)
    request.state.caller = caller
    return caller


def _throttle(tenant: str, bucket: str, cost: float, rate: float, burst: float,
              what: str) -> None:
    """429 with ``Retry-After`` while the tenant's ``bucket`` cannot take ``cost``."""
    wait = wiring.keys().take(tenant, bucket, cost, rate, burst)
    if wait > 0:
        raise HTTPException(429, f"tenant {tenant}: more than {rate:g} {what} a second",
                            headers={"Retry-After": str(math.ceil(wait))})


def _need(*scopes: str) -> Callable[[Request, HTTPAuthorizationCredentials | None], Caller]:
    """The dependency of a route that needs one of ``scopes``: the caller, or 401/403/429."""
    def dependency(request: Request, creds: Credentials) -> Caller:
        caller = _identify(request, creds)
        if caller.key is None:
            return caller
        if not any(caller.key.allows(scope) for scope in scopes):
            raise HTTPException(403, f"this key may not {' or '.join(scopes)} (its scopes: "
                                     f"{','.join(sorted(caller.key.scopes))})")
        s = wiring.settings()
        _throttle(caller.key.tenant, "requests", 1, s.rate_requests_per_s,
                  s.rate_requests_burst, "requests")
        return caller
    return dependency


Reader = Annotated[Caller, Depends(_need("read"))]
Writer = Annotated[Caller, Depends(_need("write"))]
Forgetter = Annotated[Caller, Depends(_need("forget"))]
Admin = Annotated[Caller, Depends(_need("admin"))]
Sender = Annotated[Caller, Depends(_need("read", "write"))]  # a writer waits on its deliveries


def create_app() -> FastAPI:  # noqa: PLR0915  (the routes, in one place)
    settings = wiring.settings()
    wiring.one_blas_thread()  # search's small matrix products (wiring.one_blas_thread)
    auth_on = settings.auth == "on"
    app = FastAPI(title="memq", version=_version(), docs_url=None, redoc_url=None,
                  description="Long-term memory for AI agents: enqueue turns, read memories. "
                              "Every /v1 route wants `Authorization: Bearer <key>` "
                              "(`memq keys create`).")
    _offline_docs(app)
    client = StoresClient()  # the routes pass the stores' ids (Caller.user)
    default_openapi = app.openapi

    def openapi() -> dict[str, Any]:
        """FastAPI's document, with the schemas the body of /v1/turns refers to."""
        doc = default_openapi()
        held = doc.setdefault("components", {}).setdefault("schemas", {})
        for name, schema in _TURNS_DEFS.items():
            held.setdefault(name, schema)
        return doc

    app.openapi = openapi  # type: ignore[method-assign]
    if not auth_on:
        log.warning("MEMQ_AUTH=off: no API keys; anyone who reaches this port reads, writes "
                    "and forgets every user. For local development only.")

    def ingest(caller: Caller, chars: int) -> None:
        """The tenant's ingest volume: 413 above one burst, 429 while the bucket refills."""
        if caller.key is None or settings.rate_ingest_chars_per_s <= 0:
            return
        if chars > settings.rate_ingest_burst_chars:
            raise HTTPException(413, f"{chars} characters of turns in one request; at most "
                                     f"{settings.rate_ingest_burst_chars:g}")
        _throttle(caller.key.tenant, "ingest", chars, settings.rate_ingest_chars_per_s,
                  settings.rate_ingest_burst_chars, "characters of turns")

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

    problems.install(app)  # one error shape for every route (the console's pages aside)

    @app.exception_handler(TransientError)
    @app.exception_handler(redis.RedisError)
    async def _down(_: Request, exc: Exception) -> Response:
        return problems.response(problems.problem(503, _one_line(exc)))

    @app.exception_handler(PermanentError)
    async def _permanent(_: Request, exc: Exception) -> Response:
        return problems.response(problems.problem(422, f"{type(exc).__name__}: {exc}"))

    @app.post("/v1/turns", status_code=202, summary="Enqueue turns or a conversation",
              response_model=Enqueued, openapi_extra={"requestBody": {
                  "required": True, "content": {"application/json": {
                      "schema": _TURNS_SCHEMA}}}})
    async def post_turns(request: Request, caller: Writer) -> dict[str, Any]:
        """Body: a JSON array of turn objects (the fields of a ``memq enqueue`` line), or
        ``{"user_id", "messages": [{"role", "content", "name"?, "timestamp"?}],
        "session_id"?}``. All or nothing: any invalid item is a 400 with per-item reasons."""
        try:
            body = json.loads(await request.body())
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise HTTPException(400, f"not JSON: {exc}") from None
        if isinstance(body, list):
            return await asyncio.to_thread(_turns, caller, body)
        if isinstance(body, dict):
            try:
                add = AddRequest.model_validate(body)
                batches = messages_to_batches(caller.user(add.user_id), add.messages,
                                              add.session_id, datetime.now(UTC),
                                              metadata=add.metadata)
                check_times(batches)
            except ValidationError as exc:
                raise HTTPException(400, {"errors": [
                    {"item": ".".join(str(p) for p in e["loc"]), "reason": e["msg"]}
                    for e in exc.errors()]}) from None
            except ValueError as exc:  # a naive timestamp, ...
                raise HTTPException(400, str(exc).splitlines()[0]) from None
            ingest(caller, sum(len(t.content) for b in batches for t in b.turns))
            ids = await asyncio.to_thread(client.enqueue, batches)
            return {"delivery_ids": ids, "batches": len(batches),
                    "batch_ids": [b.batch_id for b in batches]}
        raise HTTPException(400, "expected a JSON array of turns or an object with messages")

    def _turns(caller: Caller, items: list[Any]) -> dict[str, Any]:
        from memq.workers.client import parse_lines  # noqa: PLC0415

        if len(items) > MAX_BODY_ITEMS:
            raise HTTPException(413, f"at most {MAX_BODY_ITEMS} turns a request")
        owned, wrong = [], []
        for i, item in enumerate(items):
            mine = item
            if isinstance(item, dict) and isinstance(item.get("user_id"), str):
                try:
                    mine = {**item, "user_id": auth.tenant_user(caller.tenant, item["user_id"])}
                    caller.users.append(item["user_id"])
                except auth.AuthError as exc:
                    wrong.append({"item": i, "reason": str(exc)})
            owned.append(mine)
        batches, errors = parse_lines(json.dumps(item, ensure_ascii=False) for item in owned)
        reasons = wrong + [{"item": e.line - 1, "reason": e.reason} for e in errors
                           if e.line - 1 not in {w["item"] for w in wrong}]
        if reasons:
            raise HTTPException(400, {"errors": sorted(reasons, key=lambda r: r["item"])})
        if not batches:
            raise HTTPException(400, "no turns")
        ingest(caller, sum(len(t.content) for b in batches for t in b.turns))
        return {"delivery_ids": client.enqueue(batches), "batches": len(batches),
                "batch_ids": [b.batch_id for b in batches]}

    def _status(caller: Caller, st: Status) -> dict[str, Any]:
        if not caller.owns(st.user_id):  # another tenant's: as if never seen
            st = Status(delivery_id=st.delivery_id, state="unknown")
        return {"delivery_id": st.delivery_id, "state": st.state,
                "user_id": auth.external_user(caller.tenant, st.user_id),
                "reason": st.reason, "finished": st.finished}

    @app.get("/v1/deliveries/{delivery_id}", summary="Where a delivery is",
             response_model=DeliveryState)
    def get_delivery(delivery_id: str, caller: Sender) -> dict[str, Any]:
        (st,) = client.status([delivery_id])
        return _status(caller, st)

    @app.post("/v1/deliveries", summary="Where these deliveries are (wait_s: until finished)",
              response_model=list[DeliveryState])
    def post_deliveries(req: StatusRequest, caller: Sender
                        ) -> list[dict[str, Any]]:
        # blocks until they finish (woken as each does) or wait_s; never for another tenant's
        coord = wiring.coord()
        mine = [row["delivery_id"] for row in outbox.statuses(coord, req.delivery_ids)
                if caller.owns(row["user_id"])]
        found = {row["delivery_id"]: row
                 for row in outbox.await_finished(coord, mine, req.wait_s)}
        return [_status(caller, Status(**found.get(d, {"delivery_id": d, "state": "unknown"})))
                for d in req.delivery_ids]

    @app.get("/v1/users/{user_id}/memories", response_model=list[StoredMemory])
    def get_memories(caller: Reader, user_id: str,
                     include_all: bool = Query(default=False, alias="all"),
                     as_of: datetime | None = None,
                     limit: int | None = Query(default=None, ge=1, le=10_000),
                     offset: int = Query(default=0, ge=0)) -> list[dict[str, Any]]:
        if as_of is not None and as_of.tzinfo is None:
            raise HTTPException(400, "as_of needs a time zone, e.g. 2026-11-01T12:00:00Z")
        found = client.memories(caller.user(user_id), include_inactive=include_all,
                                as_of=as_of, limit=limit, offset=offset)
        return caller.out([m.model_dump(mode="json") for m in found])  # type: ignore[no-any-return]

    @app.get("/v1/users/{user_id}/memories/{memory_id}", response_model=StoredMemory,
             summary="One memory, any status")
    def get_memory(caller: Reader, user_id: str, memory_id: str) -> dict[str, Any]:
        memory = client.memory(caller.user(user_id), memory_id)
        if memory is None:
            raise HTTPException(404, f"no memory {memory_id} of user {user_id}")
        return caller.out(memory.model_dump(mode="json"))  # type: ignore[no-any-return]

    @app.get("/v1/users/{user_id}/facts", response_model=list[Fact])
    def get_facts(user_id: str, caller: Reader) -> list[dict[str, Any]]:
        rows = json.loads(json.dumps(client.facts(caller.user(user_id)), default=json_default))
        return caller.out(rows)  # type: ignore[no-any-return]

    @app.get("/v1/users/{user_id}/audit", response_model=list[AuditEntry])
    def get_audit(caller: Reader, user_id: str, memory_id: str | None = Query(default=None),
                  batch_id: Annotated[list[str] | None, Query(max_length=1_000)] = None
                  ) -> list[dict[str, Any]]:
        """The user's audit trail; of one memory (``memory_id``), or of some batches
        (``batch_id``, repeated)."""
        entries = client.audit(caller.user(user_id), memory_id, batch_ids=batch_id)
        return caller.out([e.model_dump(mode="json") for e in entries])  # type: ignore[no-any-return]

    @app.get("/v1/memories/{memory_id}/owner", response_model=Owner,
             summary="Whose memory this is, among the caller's users")
    def get_owner(caller: Reader, memory_id: str) -> dict[str, Any]:
        """``user_id`` null: no memory of that id among the caller's tenant's users."""
        owner = client.owner(memory_id)
        if owner is None or not caller.owns(owner):
            return {"user_id": None}
        return {"user_id": auth.external_user(caller.tenant, owner)}

    @app.get("/v1/users", response_model=list[str], summary="The caller's tenant's users")
    def get_users(caller: Reader, limit: int = Query(default=1_000, ge=1, le=10_000),
                  offset: int = Query(default=0, ge=0)) -> list[str]:
        mine = sorted(u for u in (auth.external_user(caller.tenant, s)
                                  for s in wiring.all_users()) if u)
        return mine[offset:offset + limit]

    @app.get("/v1/users/{user_id}/turns/latest", response_model=LatestTurn,
             summary="The newest turn whose reference starts with a prefix")
    def get_latest_turn(caller: Reader, user_id: str,
                        prefix: str = Query(min_length=1, max_length=300)) -> dict[str, Any]:
        """``prefix``: of ``<session>/<turn>`` (the LangGraph store keys its turns so);
        ``turn`` null when none has it."""
        return {"turn": client.latest_turn(caller.user(user_id), prefix)}

    @app.delete("/v1/users/{user_id}/turns", response_model=TurnsForgotten,
                summary="Forget turns by reference prefix, and the memories made from them")
    def delete_turns(caller: Forgetter, user_id: str,
                     prefix: str = Query(min_length=1, max_length=300)) -> dict[str, int]:
        return {"turns": client.forget_turns(caller.user(user_id), prefix)}

    @app.post("/v1/users/{user_id}/turn-metadata", response_model=dict[str, dict[str, Any]],
              summary="The metadata the producer gave these turns")
    def post_turn_metadata(caller: Reader, user_id: str,
                           body: TurnRefs) -> dict[str, dict[str, Any]]:
        return client.turn_metadata(caller.user(user_id), body.refs)

    @app.post("/v1/search", response_model=list[Hit])
    def post_search(req: SearchRequest, caller: Reader) -> list[dict[str, Any]]:
        for when in (req.since, req.until):
            if when is not None and when.tzinfo is None:
                raise HTTPException(400, "since and until need a time zone")
        if req.record and caller.key is not None and not caller.key.allows("write"):
            # a recall changes what is stored (importance, the decay clock, the audit)
            raise HTTPException(403, "record=true changes memories: this key may not write "
                                     f"(its scopes: {','.join(sorted(caller.key.scopes))})")
        return [hit_json(h) for h in client.search(
            caller.user(req.user_id), req.query, req.k, record=req.record,
            threshold=req.threshold, types=req.types, kinds=req.kinds, since=req.since,
            until=req.until, statuses=req.statuses)]

    @app.post("/v1/context", response_model=ContextBlock)
    def post_context(req: ContextRequest, caller: Reader) -> dict[str, Any]:
        block = client.context(caller.user(req.user_id), req.query, max_tokens=req.max_tokens,
                               k=req.k)
        return {"user_id": req.user_id, "context": block}

    @app.delete("/v1/users/{user_id}", summary="Forget a user in every store",
                response_model=Forgotten)
    def delete_user(user_id: str, caller: Forgetter) -> dict[str, Any]:
        return caller.out(client.forget(caller.user(user_id)).to_json())  # type: ignore[no-any-return]

    @app.delete("/v1/users/{user_id}/memories/{memory_id}", summary="Forget one memory",
                response_model=Forgotten)
    def delete_memory(caller: Forgetter, user_id: str, memory_id: str,
                      with_sources: bool = False) -> dict[str, Any]:
        """``with_sources=true`` also forgets the turns the memory was extracted from (their
        episodes, in every store); by default they stay, as the user's other turns do."""
        report = client.forget(caller.user(user_id), memory_id, with_sources=with_sources)
        return caller.out(report.to_json())  # type: ignore[no-any-return]

    @app.patch("/v1/users/{user_id}/memories/{memory_id}", response_model=StoredMemory,
               summary="Correct one memory (audited: the old version is kept, superseded)")
    def correct_memory(caller: Writer, user_id: str, memory_id: str,
                       body: Correction) -> dict[str, Any]:
        """The memory says ``text`` from now on; the answer is the memory as it now is (a
        new id: a memory's id follows from its text). 404: the user has no such current
        memory."""
        try:
            memory = client.correct(caller.user(user_id), memory_id, body.text)
        except LookupError as exc:
            raise HTTPException(404, f"no current memory {memory_id} of user {user_id}"
                                ) from exc
        return caller.out(memory.model_dump(mode="json"))  # type: ignore[no-any-return]

    @app.get("/v1/access", summary="The tenant's access record (admin): who read what, when")
    def get_access(caller: Admin, limit: int = Query(default=100, ge=1, le=10_000)
                   ) -> list[dict[str, str]]:
        if caller.key is None:
            raise HTTPException(404, "no access record with MEMQ_AUTH=off (no tenants)")
        return wiring.keys().access(caller.key.tenant, limit)

    @app.get("/healthz", summary="Liveness: the process answers")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    # set while the read path warms (warm_reads_in_background): not ready for reads yet
    app.state.warming = threading.Event()
    probed: list[tuple[float, str, list[Any]]] = []
    probing = threading.Lock()

    def _checks() -> tuple[str, list[Any]]:
        """When the stores were probed, and their checks: at most once per READY_TTL_S in
        this process, however often anyone asks (``/readyz`` wants no key)."""
        from memq.workers.ops import doctor  # noqa: PLC0415

        with probing:
            if not probed or time.monotonic() - probed[0][0] > READY_TTL_S:
                at = datetime.now(UTC).isoformat()
                probed[:] = [(time.monotonic(), at, doctor(services_only=True))]
            return probed[0][1], probed[0][2]

    @app.get("/readyz", summary="Readiness: the write path needs Redis; reads need the stores")
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
        warming = app.state.warming.is_set()
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

    @app.get("/metrics", summary="Prometheus metrics of every worker (kept in Redis; admin)")
    def metrics(_: Admin) -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest  # noqa: PLC0415
        from prometheus_client.registry import CollectorRegistry  # noqa: PLC0415

        from memq.workers.metrics import RedisCollector  # noqa: PLC0415

        registry = CollectorRegistry(auto_describe=False)
        registry.register(RedisCollector(wiring.coord()))
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    from memq.workers import console  # noqa: PLC0415

    console.mount(app)  # the memory console at /ui
    # added last, so it runs first: before the access record, the key check and any parsing
    app.add_middleware(BoundedBody, max_bytes=settings.max_body_bytes,
                       max_depth=settings.max_json_depth)
    return app


def warm_reads_in_background(app: FastAPI, where: str = "memq serve") -> threading.Thread:
    """The read path warmed (``workers.warm.warm_reads``: the model, the stores' connections,
    Neo4j's plans) beside the first requests; until it is over (done, failed, or skipped by
    MEMQ_WARM=off), ``/readyz?path=read`` answers 503 with ``"warming": true``."""
    from memq.workers.warm import warm_reads  # noqa: PLC0415

    warming: threading.Event = app.state.warming
    warming.set()

    def run() -> None:
        try:
            warm_reads(where)
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


def _version() -> str:
    from memq import __version__  # noqa: PLC0415

    return __version__
