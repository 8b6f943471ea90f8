"""mem0's ``Memory`` API on memq: ``from memq import Memory`` in a mem0 snippet, and it runs.

The calls and results are mem0's (``{"results": [...]}`` of plain dicts, ``memory`` the text,
``event`` ADD / UPDATE / DELETE), with memq underneath:

- **Scope.** memq keeps each user's memories apart by construction. ``user_id`` is the memq
  user; with only ``agent_id`` (or ``run_id``) the memq user is ``agent:<id>`` (``run:<id>``),
  a user of the tenant like any other (the key's, or ``tenant=``: the stores see
  ``local:agent:<id>``), so no agent id reaches another tenant.
  ``agent_id`` and ``run_id`` given beside a user are kept on the turns (metadata) and filter
  reads; ``run_id`` is also the memq session. Every read names its scope, as in mem0 2.x
  (``filters={"user_id": ...}``), or as in mem0 1.x (``user_id=...``).
- **add** enqueues (milliseconds) and, by default, waits until the turns are applied, then
  reports what changed: ADD (a new memory), UPDATE (a memory refined), DELETE (a memory
  superseded: memq keeps it, out of search, in ``history``). ``wait=False`` returns at once
  with the delivery ids. ``metadata`` is kept on the turns; a memory's metadata is that of
  the turns it came from. ``infer=False`` is refused: memq keeps every turn (searchable) and
  always extracts.
- **update** is an audited correction: the old version stays, superseded, "corrected by the
  user" in the trail; the result names the memory's new id (a memory's id follows from its
  text). **delete** / **delete_all** forget, in every store (content-free tombstones stay in
  the audit trail). **history** is the memory's audit trail, in mem0's shape.
- **filters**: ``user_id`` / ``agent_id`` / ``run_id``, ``kind``, ``status`` (default current;
  ``"all"`` for every one), ``created_at`` / ``updated_at`` / ``valid_at`` ranges
  (``{"gte": ..., "lte": ...}``, ISO 8601 or datetimes), and any metadata key (a value, or
  ``{"eq"|"ne"|"in": ...}``). ``threshold`` drops hits scored below it.

Reads and writes go to the stores with the settings of the environment (as ``memq.Client``),
or, given ``api_url`` and ``api_key``, to ``memq serve`` over HTTP (as ``memq.HttpClient``:
the key's tenant owns the user ids; ``get(memory_id)`` finds only the tenant's own).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from ..schemas import AuditEntry, Operation, StoredMemory
from .api import Client, messages_to_batches

T = TypeVar("T")

__all__ = ["AsyncMemory", "Memory"]

_SCOPES = ("user_id", "agent_id", "run_id")
_EVENTS = {Operation.ADD: "ADD", Operation.UPDATE: "UPDATE", Operation.SUPERSEDE: "DELETE",
           Operation.FORGET: "DELETE"}
_TIMES = ("created_at", "updated_at", "valid_at")


def _scope(args: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    """The memq user for these mem0 scope ids, and the ids to keep on the turns."""
    given = {k: str(args[k]).strip() for k in _SCOPES if args.get(k) is not None}
    if any(not v or any(c.isspace() for c in v) for v in given.values()):
        raise ValueError(f"a scope id is empty or holds whitespace: {given}")
    kept = {k: v for k, v in given.items() if k != "user_id"}
    if "user_id" in given:
        return given["user_id"], kept
    if "agent_id" in given:
        return f"agent:{given['agent_id']}", kept
    if "run_id" in given:
        return f"run:{given['run_id']}", kept
    raise ValueError("one of user_id, agent_id, run_id is needed (or in filters=)")


def _messages(messages: Any) -> list[dict[str, Any]]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if isinstance(messages, Mapping):
        return [dict(messages)]
    if isinstance(messages, Sequence):
        return [dict(m) if isinstance(m, Mapping) else {"role": "user", "content": str(m)}
                for m in messages]
    raise ValueError(f"messages is a {type(messages).__name__}: a string, a message (dict) "
                     "or a list of messages")


def _when(value: Any) -> datetime:
    when = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    if when.tzinfo is None:
        raise ValueError(f"{value!r} needs a time zone")
    return when


def _matches(value: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping):
        for op, operand in wanted.items():
            if op in ("gte", "gt", "lte", "lt"):
                if value is None:
                    return False
                have, bound = _when(value), _when(operand)
                if not {"gte": have >= bound, "gt": have > bound, "lte": have <= bound,
                        "lt": have < bound}[op]:
                    return False
            elif op == "eq":
                if value != operand:
                    return False
            elif op == "ne":
                if value == operand:
                    return False
            elif op == "in":
                if value not in operand:
                    return False
            else:
                raise ValueError(f"filter operator {op!r}: one of eq, ne, in, gte, gt, lte, lt")
        return True
    return bool(value == wanted)


class Memory:
    """mem0's ``Memory`` (sync). ``wait``: add returns once its turns are applied (mem0's
    semantics), within ``timeout`` seconds; False: at once. ``api_url`` (and ``api_key``):
    the same over HTTP (``memq serve``), scoped to the key's tenant and scopes; else the
    stores directly, as ``memq.Client``, for ``tenant`` (default ``MEMQ_TENANT``)."""

    def __init__(self, *, wait: bool = True, timeout: float = 300.0,
                 api_url: str | None = None, api_key: str | None = None,
                 tenant: str | None = None) -> None:
        self._client: Any
        if api_url is not None:
            from .http_client import HttpClient  # noqa: PLC0415

            self._client = HttpClient(api_url, api_key=api_key)
        else:
            self._client = Client(tenant=tenant)
        self.wait, self.timeout = wait, timeout

    # -- writing ------------------------------------------------------------------------------
    def add(self, messages: Any, *, user_id: str | None = None, agent_id: str | None = None,
            run_id: str | None = None, metadata: Mapping[str, Any] | None = None,
            infer: bool = True, wait: bool | None = None, **kwargs: Any) -> dict[str, Any]:
        if kwargs:
            raise ValueError(f"add() takes no {', '.join(sorted(kwargs))} in memq "
                             "(see memq.workers.mem0)")
        if not infer:
            raise ValueError("infer=False: memq keeps every turn as an episode (searchable) and "
                             "always extracts; leave infer out")
        user, kept = _scope({"user_id": user_id, "agent_id": agent_id, "run_id": run_id})
        batches = messages_to_batches(user, _messages(messages), run_id, datetime.now(UTC),
                                      metadata={**(metadata or {}), **kept})
        submitted = self._client.submit(batches)
        deliveries = [d for d, _ in submitted]
        if not (self.wait if wait is None else wait):
            return {"results": [], "deliveries": deliveries, "status": "queued"}
        statuses = self._client.wait(deliveries, self.timeout)
        dead = [s for s in statuses if s.state == "dead_lettered"]
        if dead:
            raise RuntimeError(f"{len(dead)} of {len(statuses)} deliveries dead-lettered: "
                               f"{dead[0].reason} (memq deadletters)")
        trail = self._client.audit(user, batch_ids=[b for _, b in submitted])
        return {"results": self._events(user, trail)}

    def _events(self, user: str, trail: Sequence[AuditEntry]) -> list[dict[str, Any]]:
        out = []
        for e in trail:
            event = _EVENTS.get(e.operation)
            if event is None or not e.after or "content" not in e.after:
                continue
            item: dict[str, Any] = {"id": e.memory_id, "memory": e.after["content"],
                                    "event": event, "user_id": user}
            if e.before and e.before.get("content") != e.after["content"]:
                item["previous_memory"] = e.before.get("content")
            out.append(item)
        return out

    def update(self, memory_id: str, text: str | None = None, *, data: str | None = None,
               user_id: str | None = None) -> dict[str, Any]:
        """An audited correction (mem0 calls the text ``text``, or ``data``)."""
        new_text = text if text is not None else data
        if new_text is None:
            raise ValueError("update() needs the new text")
        user = self._owner(memory_id, user_id)
        memory = self._client.correct(user, memory_id, new_text)
        return {"message": "Memory updated successfully!", "id": memory.id}

    def _chain(self, user: str, memory_id: str) -> list[StoredMemory]:
        """The memory and the versions that replaced it, in order (an ``update``, a newer
        fact): in mem0 an update keeps the id, so ``get``, ``history`` and ``delete`` of an
        id act on the memory as it now is."""
        chain: list[StoredMemory] = []
        step: str | None = memory_id
        while step is not None and len(chain) < 64 and step not in {m.id for m in chain}:
            memory = self._client.memory(user, step)
            if memory is None:
                break
            chain.append(memory)
            step = memory.superseded_by
        return chain

    def delete(self, memory_id: str, *, user_id: str | None = None) -> dict[str, Any]:
        """Forgets the memory and every version that replaced it: nothing of it stays
        current or searchable."""
        user = self._owner(memory_id, user_id)
        chain = self._chain(user, memory_id)
        for memory in reversed(chain) if chain else []:
            self._client.forget(user, memory.id)
        if not chain:
            self._client.forget(user, memory_id)
        return {"message": "Memory deleted successfully!"}

    def delete_all(self, *, user_id: str | None = None, agent_id: str | None = None,
                   run_id: str | None = None) -> dict[str, Any]:
        user, kept = _scope({"user_id": user_id, "agent_id": agent_id, "run_id": run_id})
        if user_id is not None and kept:
            raise ValueError("delete_all() forgets a whole memq user: give user_id alone (or "
                             "agent_id / run_id alone)")
        self._client.forget(user)
        return {"message": "Memories deleted successfully!"}

    # -- reading ------------------------------------------------------------------------------
    def search(self, query: str, *, filters: Mapping[str, Any] | None = None,
               limit: int | None = None, top_k: int | None = None,
               threshold: float | None = None, **scope: Any) -> dict[str, Any]:
        wanted = self._filters(filters, scope)
        user, _ = _scope(wanted)
        k = limit or top_k or 20
        hits = self._client.search(user, query, min(100, max(k * 3, 20)))
        memories = {m.id: m for m in self._client.memories(user, include_inactive=True)}
        found = [memories[h.id] for h in hits if h.type == "memory" and h.id in memories]
        scores = {h.id: h.score for h in hits}
        items = self._items(user, found, wanted)
        for item in items:
            item["score"] = scores.get(item["id"])
        if threshold is not None:
            items = [i for i in items if (i["score"] or 0.0) >= threshold]
        return {"results": items[:k]}

    def get_all(self, *, filters: Mapping[str, Any] | None = None, limit: int | None = None,
                top_k: int | None = None, **scope: Any) -> dict[str, Any]:
        wanted = self._filters(filters, scope)
        user, _ = _scope(wanted)
        found = self._client.memories(user, include_inactive=True)
        found.sort(key=lambda m: (m.created_at, m.id), reverse=True)  # newest first
        items = self._items(user, found, wanted)
        return {"results": items[: (limit or top_k or 100)]}

    def get(self, memory_id: str, *, user_id: str | None = None) -> dict[str, Any] | None:
        try:
            user = self._owner(memory_id, user_id)
        except LookupError:
            return None
        chain = self._chain(user, memory_id)
        return self._items(user, [chain[-1]], {"status": "all"})[0] if chain else None

    def history(self, memory_id: str, *, user_id: str | None = None) -> list[dict[str, Any]]:
        """The memory's audit trail as mem0 shapes history: one row per change."""
        try:
            user = self._owner(memory_id, user_id)
        except LookupError:
            return []
        rows = []
        versions = [m.id for m in self._chain(user, memory_id)] or [memory_id]
        trail = [e for v in versions for e in self._client.audit(user, v)]
        for e in sorted(trail, key=lambda e: e.at):
            before = (e.before or {}).get("content")
            after = (e.after or {}).get("content")
            rows.append({"id": e.id, "memory_id": e.memory_id, "old_memory": before,
                         "new_memory": after, "event": _EVENTS.get(e.operation,
                                                                   str(e.operation).upper()),
                         "reason": e.reason, "created_at": e.at.isoformat(),
                         "updated_at": e.at.isoformat(),
                         "is_deleted": e.operation in (Operation.FORGET, Operation.SUPERSEDE)})
        return rows

    # -- helpers --------------------------------------------------------------------------------
    @staticmethod
    def _filters(filters: Mapping[str, Any] | None, scope: Mapping[str, Any]) -> dict[str, Any]:
        unknown = set(scope) - set(_SCOPES)
        if unknown:
            raise ValueError(f"unknown argument(s) {', '.join(sorted(unknown))}: scope ids "
                             "(user_id, agent_id, run_id) or filters=")
        return {**(filters or {}), **{k: v for k, v in scope.items() if v is not None}}

    def _owner(self, memory_id: str, user_id: str | None) -> str:
        if user_id is not None:
            return user_id
        owner: str | None = self._client.owner(memory_id)
        if owner is None:
            raise LookupError(f"no memory {memory_id}")
        return owner

    def _items(self, user: str, found: Sequence[StoredMemory],
               wanted: Mapping[str, Any]) -> list[dict[str, Any]]:
        meta = self._client.turn_metadata(user, [r for m in found for r in m.source_turn_ids])
        status = wanted.get("status", "current")
        out = []
        for m in found:
            merged: dict[str, Any] = {}
            for ref in m.source_turn_ids:
                merged.update(meta.get(ref, {}))
            fields = {"kind": str(m.kind), "status": str(m.status), "created_at": m.created_at,
                      "updated_at": m.updated_at, "valid_at": m.valid_at}
            if status != "all" and not _matches(str(m.status), status):
                continue
            ok = True
            for key, value in wanted.items():
                if key in ("status", "user_id"):
                    continue
                have = fields[key] if key in fields else merged.get(key)
                if not _matches(have, value):
                    ok = False
                    break
            if not ok:
                continue
            scoped: dict[str, Any] = {k: merged[k] for k in ("agent_id", "run_id") if k in merged}
            out.append({
                "id": m.id, "memory": m.content, "hash": m.id, "metadata": merged or None,
                "created_at": m.created_at.isoformat(), "updated_at": m.updated_at.isoformat(),
                "user_id": user, **scoped,
                "kind": str(m.kind), "status": str(m.status), "valid_at": m.valid_at.isoformat(),
                "invalid_at": m.invalid_at.isoformat() if m.invalid_at else None,
                "source_turn_ids": list(m.source_turn_ids)})
        return out


class AsyncMemory:
    """mem0's ``AsyncMemory``: :class:`Memory`'s calls in a worker thread each."""

    def __init__(self, *, wait: bool = True, timeout: float = 300.0,
                 api_url: str | None = None, api_key: str | None = None,
                 tenant: str | None = None) -> None:
        self._sync = Memory(wait=wait, timeout=timeout, api_url=api_url, api_key=api_key,
                            tenant=tenant)

    async def _run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await asyncio.to_thread(fn, *args, **kwargs)

    async def add(self, messages: Any, **kwargs: Any) -> dict[str, Any]:
        return await self._run(self._sync.add, messages, **kwargs)

    async def search(self, query: str, **kwargs: Any) -> dict[str, Any]:
        return await self._run(self._sync.search, query, **kwargs)

    async def get_all(self, **kwargs: Any) -> dict[str, Any]:
        return await self._run(self._sync.get_all, **kwargs)

    async def get(self, memory_id: str, **kwargs: Any) -> dict[str, Any] | None:
        return await self._run(self._sync.get, memory_id, **kwargs)

    async def update(self, memory_id: str, text: str | None = None,
                     **kwargs: Any) -> dict[str, Any]:
        return await self._run(self._sync.update, memory_id, text, **kwargs)

    async def delete(self, memory_id: str, **kwargs: Any) -> dict[str, Any]:
        return await self._run(self._sync.delete, memory_id, **kwargs)

    async def delete_all(self, **kwargs: Any) -> dict[str, Any]:
        return await self._run(self._sync.delete_all, **kwargs)

    async def history(self, memory_id: str, **kwargs: Any) -> list[dict[str, Any]]:
        return await self._run(self._sync.history, memory_id, **kwargs)
