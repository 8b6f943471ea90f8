"""The agent API in Python: :class:`Client` (sync) and :class:`AsyncClient`.

Writing is enqueueing: ``add`` records the turns in Redis and returns delivery ids in
milliseconds; workers do the rest. Reading (``search``, ``memories``, ``facts``, ``audit``,
``context``) goes to the stores directly and needs the ``memq[worker]`` extra; a
``memq[client]`` install can ``add``, ``status`` and ``wait`` with pydantic and redis only
(the broker's message is built without Celery: ``workers/wire.py``).

Searching is read-only. An agent that acts on what it read says so (``record=True``): that
is a recall, which raises the memories' importance and resets their decay clock.

Configuration comes from ``MEMQ_*`` environment variables or a ``.env`` file
(``memq.workers.settings``), the same for the CLI, the workers and the HTTP API.

**One namespace rule** (``workers.auth.tenant_user``): the stores see ``<tenant>:<user id>``
whichever door a user id came through. A key's tenant over HTTP; here, with no key, the
client's ``tenant`` (default ``MEMQ_TENANT``, ``local``). What the client returns names users
as the caller does. :class:`StoresClient` takes the stores' ids as they are, for the front
doors that applied a tenant already (the HTTP API, the console).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from ..schemas import IngestBatch, Turn
from ..schemas.messages import Role

if TYPE_CHECKING:
    from ..pipeline.ports import Hit
    from ..schemas import AuditEntry, StoredMemory
    from .forget import ForgetReport

__all__ = ["AsyncClient", "Client", "Message", "Status", "StoresClient", "messages_to_batches"]
T = TypeVar("T")


class Message(BaseModel):
    """A chat message as agents hold them (OpenAI's shape): ``name`` is who spoke when several
    people share a conversation; ``timestamp`` is when it was said (default: the call's time)."""

    model_config = ConfigDict(extra="forbid")

    role: Role
    content: str = Field(min_length=1)
    name: str | None = Field(default=None, max_length=128)
    timestamp: datetime | None = None


def _turn_id(m: Message, nth: int) -> str:
    """Deterministic: the same message added again gets the same id (and is applied once); the
    nth identical message of one call gets its own."""
    key = "\x1f".join((m.role, m.name or "", m.content,
                       m.timestamp.isoformat() if m.timestamp else "", str(nth)))
    return "m-" + hashlib.sha256(key.encode()).hexdigest()[:20]


def messages_to_batches(user_id: str, messages: str | Sequence[Mapping[str, Any] | Message],
                        session_id: str | None, now: datetime,
                        metadata: Mapping[str, Any] | None = None) -> list[IngestBatch]:
    """Chat messages -> the ingest contract. A message without a timestamp is dated ``now``
    plus its position in microseconds (order kept); the session defaults to the UTC day. A
    string is one message of the user's (``add("u1", "I live in Lisbon.")``)."""
    from .client import chunk_batches  # noqa: PLC0415

    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    parsed = [m if isinstance(m, Message) else Message.model_validate(m) for m in messages]
    if not parsed:
        raise ValueError("messages is empty")
    seen: Counter[tuple[str, str | None, str, datetime | None]] = Counter()
    turns = []
    for position, m in enumerate(parsed):
        key = (m.role, m.name, m.content, m.timestamp)
        seen[key] += 1
        when = m.timestamp or now + timedelta(microseconds=position)
        if when.tzinfo is None:
            raise ValueError(f"messages[{position}].timestamp needs a time zone")
        turns.append(Turn(turn_id=_turn_id(m, seen[key]), role=m.role, content=m.content,
                          timestamp=when, speaker=m.name, metadata=dict(metadata or {})))
    session = session_id or f"s-{now:%Y-%m-%d}"
    return chunk_batches(user_id, session, turns)


@dataclass(frozen=True)
class Status:
    """Where one delivery is: queued | started | extracted (in flight), done, dead_lettered
    (``reason`` says why), or unknown (never seen, or done longer ago than memq remembers)."""

    delivery_id: str
    state: str
    user_id: str | None = None
    reason: str | None = None

    @property
    def finished(self) -> bool:
        return self.state in ("done", "dead_lettered", "unknown")


class Client:
    """Sync agent API. Cheap to construct; connections are opened on first use. ``tenant``
    owns the user ids it is given (default ``MEMQ_TENANT``). ``warm=True`` pays at
    construction instead of at the first search: the embedding model is loaded and the
    stores connected (``workers.warm.warm_reads``, on a user that holds nothing) before it
    returns, for an agent that searches soon after it starts."""

    def __init__(self, *, tenant: str | None = None, warm: bool = False) -> None:
        self._tenant = tenant
        if warm:
            from .warm import warm_reads  # noqa: PLC0415

            warm_reads("Client", force=True)

    @property
    def tenant(self) -> str:
        from . import auth, wiring  # noqa: PLC0415

        if self._tenant is None:
            self._tenant = wiring.settings().tenant
        return auth.check_tenant(self._tenant)

    def stores_id(self, user_id: str) -> str:
        """The id the stores know this client's user ``user_id`` by (``<tenant>:<id>``);
        ValueError for an id outside the alphabet or too long."""
        from . import auth  # noqa: PLC0415

        return auth.tenant_user(self.tenant, user_id)

    def caller_id(self, stored: str | None) -> str | None:
        """The caller's id of a stored user id; None when it is not this tenant's."""
        from . import auth  # noqa: PLC0415

        return auth.external_user(self.tenant, stored)

    def _own(self, batches: Iterable[IngestBatch]) -> list[IngestBatch]:
        return [b.model_copy(update={"user_id": self.stores_id(b.user_id)}) for b in batches]

    def _shown(self, items: list[T]) -> list[T]:
        """Models (memories, audit entries) with ``user_id`` as the caller names it."""
        return [m.model_copy(update={"user_id": self.caller_id(m.user_id)})  # type: ignore[attr-defined]
                for m in items]

    def add(self, user_id: str, messages: str | Sequence[Mapping[str, Any] | Message],
            session_id: str | None = None, *,
            metadata: Mapping[str, Any] | None = None) -> list[str]:
        """Enqueue a conversation (chat messages, or one string: a message of the user's);
        returns its delivery ids at once. ``metadata`` is kept on each turn (a memory shows
        its turns')."""
        batches = messages_to_batches(user_id, messages, session_id, datetime.now(UTC),
                                      metadata=metadata)
        return self.enqueue(batches)

    def enqueue(self, batches: Iterable[IngestBatch]) -> list[str]:
        """Enqueue batches in the ingest contract (turn ids and times of your own)."""
        return [d for d, _ in self.submit(batches)]

    def submit(self, batches: Iterable[IngestBatch]) -> list[tuple[str, str]]:
        """``enqueue``, answering (delivery id, batch id as the audit trail names it)."""
        from .client import enqueue  # noqa: PLC0415

        return [(p.delivery_id, p.batch_id) for p in enqueue(self._own(batches))]

    def _status(self, row: dict[str, Any]) -> Status:
        st = Status(**row)
        return dataclasses.replace(st, user_id=self.caller_id(st.user_id)) if st.user_id else st

    def status(self, delivery_ids: Sequence[str]) -> list[Status]:
        from . import outbox, wiring  # noqa: PLC0415

        return [self._status(row) for row in outbox.statuses(wiring.coord(), list(delivery_ids))]

    def wait(self, delivery_ids: Sequence[str], timeout: float = 300.0) -> list[Status]:
        """Block until every delivery is done or dead-lettered (woken as each one finishes,
        not polling); TimeoutError otherwise."""
        from . import outbox, wiring  # noqa: PLC0415

        rows = outbox.await_finished(wiring.coord(), list(delivery_ids), timeout)
        statuses = [self._status(row) for row in rows]
        if not all(s.finished for s in statuses):
            waiting = sum(not s.finished for s in statuses)
            raise TimeoutError(f"{waiting} of {len(statuses)} deliveries still in flight "
                               f"after {timeout:g}s")
        return statuses

    def search(self, user_id: str, query: str, k: int = 10, *, record: bool = False,
               now: datetime | None = None, threshold: float | None = None,
               types: Sequence[str] | None = None, kinds: Sequence[str] | None = None,
               since: datetime | None = None, until: datetime | None = None,
               statuses: Sequence[str] | None = None) -> list[Hit]:
        """Memories (similarity x decay x confidence), then episodes; ``record=True`` counts
        it as a recall of the memories returned. Filters: ``threshold`` (score at least),
        ``types`` ("memory", "episode"), ``kinds`` and ``statuses`` (of memories: current,
        superseded), ``since`` / ``until`` (event time); filtered, the best k of a deeper
        list."""
        _check_k(k)
        from .search import search  # noqa: PLC0415

        filtered = any(f is not None for f in (threshold, types, kinds, since, until,
                                               statuses))
        hits = search(self.stores_id(user_id), query, min(100, 3 * k) if filtered else k,
                      now or datetime.now(UTC), record=record)
        if not filtered:
            return hits
        kept = [h for h in hits
                if (threshold is None or h.score >= threshold)
                and (types is None or h.type in types)
                and (kinds is None or h.kind in kinds)
                and (statuses is None or h.status in statuses)
                and (since is None or h.event_at >= since)
                and (until is None or h.event_at <= until)]
        return kept[:k]

    def memories(self, user_id: str, *, include_inactive: bool = False,
                 as_of: datetime | None = None, limit: int | None = None,
                 offset: int = 0) -> list[StoredMemory]:
        """The user's memories from the state of record, by valid time then id; a page of
        ``limit`` from ``offset`` when asked."""
        from . import wiring  # noqa: PLC0415

        if offset < 0 or (limit is not None and limit < 1):
            raise ValueError(f"limit {limit}, offset {offset}: limit 1 or more, offset 0 or more")
        # the graph: the state of record (Chroma, its index, may trail it after a crash)
        user = self.stores_id(user_id)
        found = wiring.graph_for(user).read_memories(user, include_inactive=include_inactive,
                                                     as_of=as_of)
        return self._shown(found[offset:] if limit is None else found[offset:offset + limit])

    def memory(self, user_id: str, memory_id: str) -> StoredMemory | None:
        """One memory of the user, as the state of record holds it (any status)."""
        from . import wiring  # noqa: PLC0415

        user = self.stores_id(user_id)
        found = self._shown(wiring.graph_for(user).get(user, [memory_id]))
        return found[0] if found else None

    def facts(self, user_id: str) -> list[dict[str, Any]]:
        """The graph's triples with valid_at / invalid_at / expired_at."""
        from . import wiring  # noqa: PLC0415

        user = self.stores_id(user_id)
        return wiring.graph_for(user).facts(user)

    def audit(self, user_id: str, memory_id: str | None = None, *,
              batch_ids: Sequence[str] | None = None) -> list[AuditEntry]:
        """The audit trail: the user's, one memory's, or what some batches did."""
        from . import wiring  # noqa: PLC0415

        user = self.stores_id(user_id)
        return self._shown(wiring.graph_for(user).audit(user, memory_id, batch_ids=batch_ids))

    def owner(self, memory_id: str) -> str | None:
        """Whose memory this id is (None: no such memory, or another tenant's)."""
        from . import wiring  # noqa: PLC0415

        return self.caller_id(next((u for g in wiring.graphs() if (u := g.owner(memory_id))),
                                   None))

    def turn_metadata(self, user_id: str, refs: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The metadata the producer gave these turns (``<session>/<turn>``), where any."""
        from . import wiring  # noqa: PLC0415

        user = self.stores_id(user_id)
        return wiring.graph_for(user).turn_metadata(user, refs)

    def users(self) -> list[str]:
        """This client's tenant's users, sorted."""
        from . import wiring  # noqa: PLC0415

        return sorted(u for u in (self.caller_id(s) for s in wiring.all_users()) if u)

    def latest_turn(self, user_id: str, prefix: str) -> dict[str, Any] | None:
        """The user's newest turn whose reference (``<session>/<turn>``) starts with
        ``prefix``: ref, text, metadata, created_at, event_at; None when there is none."""
        from . import wiring  # noqa: PLC0415

        user = self.stores_id(user_id)
        return wiring.graph_for(user).latest_turn(user, prefix)

    def forget_turns(self, user_id: str, prefix: str) -> int:
        """Forget the user's turns whose reference starts with ``prefix`` and the memories
        made from them, in every store; the number of turns."""
        from .forget import forget_turns  # noqa: PLC0415

        return forget_turns(self.stores_id(user_id), prefix)

    def context(self, user_id: str, query: str, *, max_tokens: int = 800, k: int = 20,
                now: datetime | None = None) -> str:
        """A prompt-ready block from the k best hits for ``query``: the memories among them
        (current, then no longer true), then the dated turns, most relevant first, cut to
        about ``max_tokens`` (``pipeline.context``)."""
        from ..pipeline.context import render_context  # noqa: PLC0415
        from . import wiring  # noqa: PLC0415

        if max_tokens < 1:
            raise ValueError(f"max_tokens is {max_tokens}: 1 or more")
        hits = self.search(user_id, query, k, now=now or datetime.now(UTC))
        user = self.stores_id(user_id)
        before = wiring.graph_for(user).turns_before(
            user, [h.id for h in hits if h.type == "episode"])
        return render_context(hits, max_tokens, before=before, query=query)

    def correct(self, user_id: str, memory_id: str, text: str) -> StoredMemory:
        """The user says the memory is wrong: from now on it says ``text`` (the old version
        stays, superseded, "corrected by the user" in the audit trail); returns the memory
        as it now is. LookupError when the user has no such current memory."""
        from .correct import correct_memory  # noqa: PLC0415

        return self._shown([correct_memory(self.stores_id(user_id), memory_id, text)])[0]

    def forget(self, user_id: str, memory_id: str | None = None, *,
               with_sources: bool = False) -> ForgetReport:
        """Every store; the audit keeps content-free tombstones. One memory's source turns
        stay unless ``with_sources`` (a user's go with the user)."""
        from .forget import forget_memory, forget_user  # noqa: PLC0415

        user = self.stores_id(user_id)
        report = (forget_memory(user, memory_id, with_sources=with_sources) if memory_id
                  else forget_user(user))
        return dataclasses.replace(report, user_id=user_id)


class StoresClient(Client):
    """The agent API over the stores' own user ids (``acme:u42``), for the front doors that
    applied a tenant already (the HTTP API, the console) and for tools that work across
    tenants (benchmarks, the stress test)."""

    def stores_id(self, user_id: str) -> str:
        return user_id

    def caller_id(self, stored: str | None) -> str | None:
        return stored


def _check_k(k: int, most: int = 100) -> None:
    if not 1 <= k <= most:
        raise ValueError(f"k is {k}: ask for 1 to {most} hits")


def json_default(value: Any) -> Any:
    """``json.dumps``' default for memq's outputs: one time format in every JSON output, ISO
    8601 with its zone as pydantic writes the models' (``2026-11-01T09:00:00Z``)."""
    from pydantic_core import to_jsonable_python  # noqa: PLC0415

    try:
        return to_jsonable_python(value)
    except ValueError:  # pydantic_core's PydanticSerializationError: not a type it knows
        return str(value)


def hit_json(hit: Hit) -> dict[str, Any]:
    return {k: (json_default(v) if isinstance(v, datetime) else v)
            for k, v in asdict(hit).items()}


class AsyncClient:
    """The same API for asyncio agents: each call runs the sync client in a worker thread
    (the store drivers are sync), so the event loop never blocks."""

    def __init__(self, *, tenant: str | None = None, warm: bool = False) -> None:
        self._sync = Client(tenant=tenant, warm=warm)  # warm: as Client's, before it returns

    async def add(self, user_id: str, messages: str | Sequence[Mapping[str, Any] | Message],
                  session_id: str | None = None, *,
                  metadata: Mapping[str, Any] | None = None) -> list[str]:
        return await asyncio.to_thread(self._sync.add, user_id, messages, session_id,
                                       metadata=metadata)

    async def enqueue(self, batches: Iterable[IngestBatch]) -> list[str]:
        return await asyncio.to_thread(self._sync.enqueue, list(batches))

    async def status(self, delivery_ids: Sequence[str]) -> list[Status]:
        return await asyncio.to_thread(self._sync.status, delivery_ids)

    async def wait(self, delivery_ids: Sequence[str], timeout: float = 300.0) -> list[Status]:
        return await asyncio.to_thread(self._sync.wait, delivery_ids, timeout)

    async def search(self, user_id: str, query: str, k: int = 10, *, record: bool = False,
                     now: datetime | None = None, **filters: Any) -> list[Hit]:
        return await asyncio.to_thread(self._sync.search, user_id, query, k, record=record,
                                       now=now, **filters)

    async def memories(self, user_id: str, *, include_inactive: bool = False,
                       as_of: datetime | None = None, limit: int | None = None,
                       offset: int = 0) -> list[StoredMemory]:
        return await asyncio.to_thread(self._sync.memories, user_id,
                                       include_inactive=include_inactive, as_of=as_of,
                                       limit=limit, offset=offset)

    async def memory(self, user_id: str, memory_id: str) -> StoredMemory | None:
        return await asyncio.to_thread(self._sync.memory, user_id, memory_id)

    async def facts(self, user_id: str) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self._sync.facts, user_id)

    async def audit(self, user_id: str, memory_id: str | None = None, *,
                    batch_ids: Sequence[str] | None = None) -> list[AuditEntry]:
        return await asyncio.to_thread(self._sync.audit, user_id, memory_id,
                                       batch_ids=batch_ids)

    async def context(self, user_id: str, query: str, *, max_tokens: int = 800, k: int = 20,
                      now: datetime | None = None) -> str:
        return await asyncio.to_thread(self._sync.context, user_id, query,
                                       max_tokens=max_tokens, k=k, now=now)

    async def correct(self, user_id: str, memory_id: str, text: str) -> StoredMemory:
        return await asyncio.to_thread(self._sync.correct, user_id, memory_id, text)

    async def forget(self, user_id: str, memory_id: str | None = None, *,
                     with_sources: bool = False) -> ForgetReport:
        return await asyncio.to_thread(self._sync.forget, user_id, memory_id,
                                       with_sources=with_sources)
