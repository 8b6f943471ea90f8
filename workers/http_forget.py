"""The HTTP API's forgets (:mod:`memq.workers.http`): a user, a memory, turns by prefix."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from .api import StoresClient
from .http_deps import Forgetter
from .http_models import Forgotten, TurnsForgotten


def forget_router(client: StoresClient) -> APIRouter:
    """``DELETE`` of ``/v1/users/{user_id}``, ``.../memories/{memory_id}`` and ``.../turns``."""
    router = APIRouter()

    @router.delete("/v1/users/{user_id}/turns", response_model=TurnsForgotten,
                   summary="Forget turns by reference prefix, and the memories made from them")
    def delete_turns(caller: Forgetter, user_id: str,
                     prefix: str = Query(min_length=1, max_length=300)) -> dict[str, int]:
        return {"turns": client.forget_turns(caller.user(user_id), prefix)}

    @router.delete("/v1/users/{user_id}", summary="Forget a user in every store",
                   response_model=Forgotten)
    def delete_user(user_id: str, caller: Forgetter) -> dict[str, Any]:
        return caller.out(client.forget(caller.user(user_id)).to_json())  # type: ignore[no-any-return]

    @router.delete("/v1/users/{user_id}/memories/{memory_id}", summary="Forget one memory",
                   response_model=Forgotten)
    def delete_memory(caller: Forgetter, user_id: str, memory_id: str,
                      with_sources: bool = False) -> dict[str, Any]:
        """``with_sources=true`` also forgets the turns the memory was extracted from (their
        episodes, in every store); by default they stay, as the user's other turns do."""
        report = client.forget(caller.user(user_id), memory_id, with_sources=with_sources)
        return caller.out(report.to_json())  # type: ignore[no-any-return]

    return router
