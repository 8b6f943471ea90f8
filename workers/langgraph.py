"""memq as a LangGraph store: ``graph.compile(store=MemqStore())``.

A namespace is a memq user: ``("memories", "alice")`` is the user ``memories:alice`` of the
store's tenant (``tenant=``, default ``MEMQ_TENANT``; the stores see
``local:memories:alice``), so one namespace never reads another's items, and no namespace
reaches another tenant's users, by construction. The LangGraph store's calls
map to memq's:

- ``put(namespace, key, value)`` enqueues the value as a user turn (its ``content`` or
  ``text``, else the value as JSON), the key and value kept on the turn. memq extracts what
  is worth remembering from it, as from any turn. ``wait=True`` (the store's option) returns
  once it is applied; by default ``put`` returns at once.
- ``get(namespace, key)`` is the newest value put under the key (once applied).
- ``search(namespace, query=…)`` is memq's search: memories and turns, best first, as items
  whose value is ``{"content", "type", "kind", "status"}`` (a turn put under a key: the key
  and the value put); without a query, the user's current memories, newest first.
- ``delete(namespace, key)`` (``put`` of None) forgets the key's turns and the memories made
  from them, in every store.
- ``list_namespaces`` lists the tenant's users, split on ``:``.

``MemqStore(api_url=…, api_key=…)`` does the same through ``memq serve``: the key's tenant owns
the namespaces and its scopes hold (``read``, ``write`` to put, ``forget`` to delete).

``filter`` matches the item's value (equality). ``index`` is moot (memq indexes every turn
and memory); a TTL is refused with a one-line reason (memories decay and expire by policy).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from ..schemas import IngestBatch, Turn
from .api import Client

SESSION = "langgraph"
MAX_VALUE_BYTES = 4_000


def _user(namespace: tuple[str, ...]) -> str:
    user = ":".join(namespace)
    if not namespace or not user or len(user) > 128 or any(
            not (c.isalnum() or c in "_.:@-") for c in user):
        raise ValueError(f"namespace {namespace!r}: memq users are 1-128 characters of "
                         "letters, digits and _ . : @ - (joined on ':')")
    return user


def _key_prefix(key: str) -> str:
    return f"{SESSION}/lg-{hashlib.sha256(key.encode()).hexdigest()[:20]}-"


def _text(value: dict[str, Any]) -> str:
    for field in ("content", "text", "memory"):
        if isinstance(value.get(field), str) and value[field].strip():
            return str(value[field])
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


class MemqStore(BaseStore):
    """A LangGraph ``BaseStore`` over memq (see the module docstring). ``wait``: a put
    returns once applied (read-your-writes), within ``timeout`` seconds."""

    supports_ttl = False

    def __init__(self, *, wait: bool = False, timeout: float = 120.0,
                 tenant: str | None = None, api_url: str | None = None,
                 api_key: str | None = None) -> None:
        self._client: Any
        if api_url is not None:  # through memq serve: the key's tenant and scopes
            from .http_client import HttpClient  # noqa: PLC0415

            self._client = HttpClient(api_url, api_key=api_key)
        else:
            self._client = Client(tenant=tenant)
        self.wait, self.timeout = wait, timeout

    # -- the one entry point LangGraph calls ---------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        out: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                out.append(self._get(op))
            elif isinstance(op, PutOp):
                self._put(op)
                out.append(None)
            elif isinstance(op, SearchOp):
                out.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                out.append(self._namespaces(op))
            else:
                raise ValueError(f"unknown store operation {type(op).__name__}")
        return out

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    # -- the operations --------------------------------------------------------------------------
    def _put(self, op: PutOp) -> None:
        user = _user(op.namespace)
        if op.value is None:
            self._delete(user, op.key)
            return
        if op.ttl is not None:
            raise ValueError("memq's store keeps no TTLs: memories decay and expire by policy "
                             "(memq run decay|expire)")
        value = dict(op.value)
        kept = json.dumps(value, ensure_ascii=False, sort_keys=True)
        now = datetime.now(UTC)
        digest = hashlib.sha256(f"{kept}\x1f{now.isoformat()}".encode()).hexdigest()[:12]
        prefix = _key_prefix(op.key)
        meta: dict[str, Any] = {"langgraph_key": op.key}
        if len(kept.encode()) <= MAX_VALUE_BYTES:
            meta["langgraph_value"] = value
        turn = Turn(turn_id=prefix.split("/", 1)[1] + digest, role="user", content=_text(value),
                    timestamp=now, metadata=meta)
        ids = self._client.enqueue([IngestBatch(user_id=user, session_id=SESSION,
                                                turns=[turn])])
        if self.wait:
            self._client.wait(ids, self.timeout)

    def _get(self, op: GetOp) -> Item | None:
        turn = self._client.latest_turn(_user(op.namespace), _key_prefix(op.key))
        if turn is None:
            return None
        value = turn["metadata"].get("langgraph_value") or {"content": turn["text"]}
        return Item(value=value, key=op.key, namespace=op.namespace,
                    created_at=turn["created_at"], updated_at=turn["event_at"])

    def _delete(self, user: str, key: str) -> None:
        self._client.forget_turns(user, _key_prefix(key))

    def _search(self, op: SearchOp) -> list[SearchItem]:

        user = _user(op.namespace_prefix)
        wanted = op.offset + op.limit
        items: list[SearchItem] = []
        if op.query:
            hits = self._client.search(user, op.query, min(100, max(wanted * 2, 10)))
            refs = [r for h in hits for r in h.source_turn_ids]
            meta = self._client.turn_metadata(user, refs)
            for h in hits:
                put = next((meta[r] for r in h.source_turn_ids if r in meta
                            and "langgraph_key" in meta[r]), None)
                if h.type == "episode" and put is not None:
                    key = str(put["langgraph_key"])
                    value = put.get("langgraph_value") or {"content": h.content}
                else:
                    key, value = h.id, {"content": h.content, "type": h.type,
                                        "kind": h.kind, "status": h.status}
                items.append(SearchItem(namespace=op.namespace_prefix, key=key, value=value,
                                        created_at=h.created_at, updated_at=h.event_at,
                                        score=h.score))
        else:
            memories = sorted(self._client.memories(user), key=lambda m: m.created_at,
                              reverse=True)
            items = [SearchItem(namespace=op.namespace_prefix, key=m.id,
                                value={"content": m.content, "type": "memory",
                                       "kind": str(m.kind), "status": str(m.status)},
                                created_at=m.created_at, updated_at=m.updated_at)
                     for m in memories]
        if op.filter:
            items = [i for i in items
                     if all(i.value.get(k) == v for k, v in op.filter.items())]
        return items[op.offset:wanted]

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        found = sorted(tuple(u.split(":")) for u in self._client.users())
        for condition in op.match_conditions or ():
            path = tuple(condition.path)
            size = len(path)
            found = [ns for ns in found if len(ns) >= size and all(
                p in ("*", part) for p, part in zip(path, ns[:size] if condition.match_type
                                                    == "prefix" else ns[-size:], strict=True))]
        if op.max_depth is not None:
            found = sorted(set(ns[:op.max_depth] for ns in found))
        return found[op.offset:op.offset + op.limit]
