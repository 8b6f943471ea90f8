"""The HTTP API's search and context block (:mod:`memq.workers.http`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException

from ..pipeline.ports import Hit
from .api import StoresClient, hit_json
from .http_deps import Reader
from .http_models import ContextBlock, ContextRequest, SearchRequest


def search_router(client: StoresClient) -> APIRouter:
    """``POST /v1/search`` and ``POST /v1/context``."""
    router = APIRouter()

    @router.post("/v1/search", response_model=list[Hit])
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

    @router.post("/v1/context", response_model=ContextBlock)
    def post_context(req: ContextRequest, caller: Reader) -> dict[str, Any]:
        block = client.context(caller.user(req.user_id), req.query, max_tokens=req.max_tokens,
                               k=req.k)
        return {"user_id": req.user_id, "context": block}

    return router
