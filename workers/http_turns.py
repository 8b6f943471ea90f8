"""The HTTP API's turns and deliveries (:mod:`memq.workers.http`): ``POST /v1/turns``
enqueues (202 with the delivery ids), ``/v1/deliveries`` says where they are."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from pydantic import ValidationError

from . import auth, outbox, wiring
from .api import Status, StoresClient, messages_to_batches
from .client import check_times
from .http_deps import Caller, Sender, Writer, throttle
from .http_models import (
    MAX_BODY_ITEMS,
    TURNS_SCHEMA,
    AddRequest,
    DeliveryState,
    Enqueued,
    StatusRequest,
)
from .settings import Settings


def _ingest(settings: Settings, caller: Caller, chars: int) -> None:
    """The tenant's ingest volume: 413 above one burst, 429 while the bucket refills."""
    if caller.key is None or settings.rate_ingest_chars_per_s <= 0:
        return
    if chars > settings.rate_ingest_burst_chars:
        raise HTTPException(413, f"{chars} characters of turns in one request; at most "
                                 f"{settings.rate_ingest_burst_chars:g}")
    throttle(caller.key.tenant, "ingest", chars, settings.rate_ingest_chars_per_s,
             settings.rate_ingest_burst_chars, "characters of turns")


def _status(caller: Caller, st: Status) -> dict[str, Any]:
    if not caller.owns(st.user_id):  # another tenant's: as if never seen
        st = Status(delivery_id=st.delivery_id, state="unknown")
    return {"delivery_id": st.delivery_id, "state": st.state,
            "user_id": auth.external_user(caller.tenant, st.user_id),
            "reason": st.reason, "finished": st.finished}


def _turns(client: StoresClient, settings: Settings, caller: Caller, items: list[Any]
           ) -> dict[str, Any]:
    """The turns of a JSON array of ``memq enqueue`` lines, enqueued; 400 with per-item
    reasons."""
    from .client import parse_lines  # noqa: PLC0415

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
    _ingest(settings, caller, sum(len(t.content) for b in batches for t in b.turns))
    return {"delivery_ids": client.enqueue(batches), "batches": len(batches),
            "batch_ids": [b.batch_id for b in batches]}


def turns_router(client: StoresClient, settings: Settings) -> APIRouter:
    """``POST /v1/turns``, ``GET /v1/deliveries/{delivery_id}``, ``POST /v1/deliveries``."""
    router = APIRouter()

    @router.post("/v1/turns", status_code=202, summary="Enqueue turns or a conversation",
                 response_model=Enqueued, openapi_extra={"requestBody": {
                     "required": True, "content": {"application/json": {
                         "schema": TURNS_SCHEMA}}}})
    async def post_turns(request: Request, caller: Writer) -> dict[str, Any]:
        """Body: a JSON array of turn objects (the fields of a ``memq enqueue`` line), or
        ``{"user_id", "messages": [{"role", "content", "name"?, "timestamp"?}],
        "session_id"?}``. All or nothing: any invalid item is a 400 with per-item reasons."""
        try:
            body = json.loads(await request.body())
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise HTTPException(400, f"not JSON: {exc}") from None
        if isinstance(body, list):
            return await asyncio.to_thread(_turns, client, settings, caller, body)
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
            _ingest(settings, caller, sum(len(t.content) for b in batches for t in b.turns))
            ids = await asyncio.to_thread(client.enqueue, batches)
            return {"delivery_ids": ids, "batches": len(batches),
                    "batch_ids": [b.batch_id for b in batches]}
        raise HTTPException(400, "expected a JSON array of turns or an object with messages")

    @router.get("/v1/deliveries/{delivery_id}", summary="Where a delivery is",
                response_model=DeliveryState)
    def get_delivery(delivery_id: str, caller: Sender) -> dict[str, Any]:
        (st,) = client.status([delivery_id])
        return _status(caller, st)

    @router.post("/v1/deliveries", summary="Where these deliveries are (wait_s: until finished)",
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

    return router
