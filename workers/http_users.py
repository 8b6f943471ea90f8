"""The HTTP API's reads of a user (:mod:`memq.workers.http`): memories, facts, the audit
trail, turns and their metadata, whose a memory is, the tenant's users; and the correction
of one memory."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query

from ..schemas import AuditEntry, StoredMemory
from . import auth, wiring
from .api import StoresClient, json_default
from .http_deps import Reader, Writer
from .http_models import Correction, Fact, LatestTurn, Owner, TurnRefs


def memories_router(client: StoresClient) -> APIRouter:
    """A user's memories, facts and audit trail, one memory's owner, and its correction
    (``PATCH``)."""
    router = APIRouter()

    @router.get("/v1/users/{user_id}/memories", response_model=list[StoredMemory])
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

    @router.get("/v1/users/{user_id}/memories/{memory_id}", response_model=StoredMemory,
                summary="One memory, any status")
    def get_memory(caller: Reader, user_id: str, memory_id: str) -> dict[str, Any]:
        memory = client.memory(caller.user(user_id), memory_id)
        if memory is None:
            raise HTTPException(404, f"no memory {memory_id} of user {user_id}")
        return caller.out(memory.model_dump(mode="json"))  # type: ignore[no-any-return]

    @router.get("/v1/users/{user_id}/facts", response_model=list[Fact])
    def get_facts(user_id: str, caller: Reader) -> list[dict[str, Any]]:
        rows = json.loads(json.dumps(client.facts(caller.user(user_id)), default=json_default))
        return caller.out(rows)  # type: ignore[no-any-return]

    @router.get("/v1/users/{user_id}/audit", response_model=list[AuditEntry])
    def get_audit(caller: Reader, user_id: str, memory_id: str | None = Query(default=None),
                  batch_id: Annotated[list[str] | None, Query(max_length=1_000)] = None
                  ) -> list[dict[str, Any]]:
        """The user's audit trail; of one memory (``memory_id``), or of some batches
        (``batch_id``, repeated)."""
        entries = client.audit(caller.user(user_id), memory_id, batch_ids=batch_id)
        return caller.out([e.model_dump(mode="json") for e in entries])  # type: ignore[no-any-return]

    @router.get("/v1/memories/{memory_id}/owner", response_model=Owner,
                summary="Whose memory this is, among the caller's users")
    def get_owner(caller: Reader, memory_id: str) -> dict[str, Any]:
        """``user_id`` null: no memory of that id among the caller's tenant's users."""
        owner = client.owner(memory_id)
        if owner is None or not caller.owns(owner):
            return {"user_id": None}
        return {"user_id": auth.external_user(caller.tenant, owner)}

    @router.patch("/v1/users/{user_id}/memories/{memory_id}", response_model=StoredMemory,
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

    return router


def users_router(client: StoresClient) -> APIRouter:
    """``GET /v1/users``, a user's turns by reference and their metadata."""
    router = APIRouter()

    @router.get("/v1/users", response_model=list[str], summary="The caller's tenant's users")
    def get_users(caller: Reader, limit: int = Query(default=1_000, ge=1, le=10_000),
                  offset: int = Query(default=0, ge=0)) -> list[str]:
        mine = sorted(u for u in (auth.external_user(caller.tenant, s)
                                  for s in wiring.all_users()) if u)
        return mine[offset:offset + limit]

    @router.get("/v1/users/{user_id}/turns/latest", response_model=LatestTurn,
                summary="The newest turn whose reference starts with a prefix")
    def get_latest_turn(caller: Reader, user_id: str,
                        prefix: str = Query(min_length=1, max_length=300)) -> dict[str, Any]:
        """``prefix``: of ``<session>/<turn>`` (the LangGraph store keys its turns so);
        ``turn`` null when none has it."""
        return {"turn": client.latest_turn(caller.user(user_id), prefix)}

    @router.post("/v1/users/{user_id}/turn-metadata", response_model=dict[str, dict[str, Any]],
                 summary="The metadata the producer gave these turns")
    def post_turn_metadata(caller: Reader, user_id: str,
                           body: TurnRefs) -> dict[str, dict[str, Any]]:
        return client.turn_metadata(caller.user(user_id), body.refs)

    return router
