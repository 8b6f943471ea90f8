"""``memq forget``: privacy forgetting of a user, or of one memory, in every store.

A user (:func:`forget_user`), in this order:

1. The forgotten marker (``workers.forgotten.mark``), before anything else. Extract checks it
   for work enqueued before that time and drops the work; a delivery's post checks it again,
   atomically, and extract takes back the episodes it wrote if the marker appeared while it
   wrote them (so a forgotten user's batch never reaches a mailbox after step 4).
2. The user's claim, so that no drain is between its commit and its Chroma write while we
   delete. (Should a drain frozen past its claim wake up later, its plan is refused: the
   Neo4j forget below moves the user's version on, and its Chroma write is undone by its own
   check against the version, see pipeline.service.project.)
3. Chroma: the user's memories and episodes.
4. Redis: the turn ledger and every delivery of the user, queued or in its mailbox, with the
   batch and what extract found (``workers.forgotten.forget_traces``); the user's dead letters are
   **dropped** (they hold the batch, content included; nothing else of them is kept); the
   user's messages still waiting in the Celery queues are removed.
5. Neo4j: the user's Memory nodes, FACT edges and Entity nodes; every Audit node of the user
   becomes a tombstone (ids, operation, time, source turn ids; ``before``/``after`` removed,
   ``reason`` "forgotten"); one FORGET entry (memory id ``*``) records the forgetting, when
   anything of the user was there (in any store): forgetting again, or forgetting a user or
   a memory that never existed, records nothing.

A message a worker has already reserved (kombu's ``unacked`` hash) is left to that worker: its
delivery is gone, so it does nothing.

One memory (:func:`forget_memory`), holding the same claim: its Chroma record; its Memory
node, its FACT edges and the user's Entity nodes no FACT edge references any more; the Audit
nodes about it become tombstones, and entries written by the same decision (same batch, a
shared source turn) lose the fields that quote it; one FORGET entry for it. The turns it came
from stay by default (episodes are forgotten with the user); ``with_sources=True`` forgets
them too: their episodes in Chroma and Neo4j, so neither search nor the context block can
quote the turn again (the user's other memories of the same turn stay).

Both then ask for a scrub (workers/scrub.py): within ``MEMQ_SCRUB_DELAY_S`` and Neo4j's next
checkpoint, the words leave the stores' files too.

Both are idempotent: run again, they find nothing more to delete and write nothing (the
HTTP API's access record keeps who asked). Logs carry ids and counts, never content.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

import structlog

from ..pipeline import ids
from ..pipeline.errors import UserBusy
from ..schemas import AuditEntry, Operation
from . import deadletters, event_stream, forgotten, queues, scrub, section, wiring
from .coord import Coord
from .publish import publish_apply
from .wire import QUEUE_PAGE, QUEUES, message_args

log = structlog.get_logger(__name__)

EXTRACTOR = "memq forget"
ALL_MEMORIES = "*"


@dataclass(frozen=True)
class ForgetReport:
    """What one forget request removed. ``graph``: Neo4j nodes and FACT edges deleted plus
    audit entries stripped of content (the FORGET entry written is not counted)."""

    user_id: str
    memory_id: str | None = None
    chroma: int = 0
    graph: int = 0
    redis_keys: int = 0
    queued: int = 0
    dead_letters: int = 0
    episodes: int = 0  # source turns forgotten with a memory (with_sources)

    @property
    def total(self) -> int:
        return (self.chroma + self.graph + self.redis_keys + self.queued + self.dead_letters
                + self.episodes)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "total": self.total}

    def describe(self) -> str:
        what = (f"memory {self.memory_id} of user {self.user_id}" if self.memory_id
                else f"user {self.user_id}")
        return (f"forgot {what}: {self.chroma} Chroma record(s), {self.graph} Neo4j change(s), "
                f"{self.redis_keys} Redis key(s), {self.queued} queued message(s), "
                f"{self.dead_letters} dead letter(s)"
                + (f", {self.episodes} source turn(s)" if self.episodes else ""))


# -- pure: which Redis entries belong to the user -------------------------------------------
def queued_delivery(raw: str, user_id: str) -> str | None:
    """The delivery id of a kombu message (as the Redis transport stores it in a queue list)
    that is about ``user_id`` ("" for a drain, which has none); None for anything else,
    unreadable messages included. The body is ``[args, kwargs, embed]`` and ``args[0]`` the
    StageMessage."""
    args = message_args(raw)
    payload = args[0] if args else None
    if not isinstance(payload, dict) or payload.get("user_id") != user_id:
        return None  # not a memq stage message, or another user's
    delivery = payload.get("delivery_id")
    return str(delivery) if delivery else ""


def dead_letter_of(raw: str, user_id: str) -> bool:
    """Whether a dead-letter entry (``workers.deadletters``) is of ``user_id``."""
    try:
        entry = json.loads(raw)
        return bool(entry["user_id"] == user_id)
    except (ValueError, TypeError, KeyError, IndexError):
        return False


def tombstone(user_id: str, memory_id: str, at: float) -> AuditEntry:
    """The FORGET entry: ids, operation and time only. Its id follows from (user, memory,
    time), so a retried write of the same request is one entry."""
    stamp = f"{int(at * 1000)}"
    batch_id = "forget_" + hashlib.sha256(f"{user_id}\x1f{stamp}".encode()).hexdigest()[:24]
    return AuditEntry(
        id=ids.audit_id(batch_id, memory_id, str(Operation.FORGET)), user_id=user_id,
        memory_id=memory_id, operation=Operation.FORGET,
        reason="user forgotten" if memory_id == ALL_MEMORIES else "memory forgotten",
        batch_id=batch_id, extractor=EXTRACTOR, at=datetime.fromtimestamp(at, UTC),
    )


# -- Redis ---------------------------------------------------------------------------------
SCAN_COUNT = 1000  # keys a SCAN step looks at: a few hundred microseconds of Redis


def purge_queued(coord: Coord, user_id: str, keys: list[str] | None = None) -> int:
    """Remove the user's messages waiting in the queues, read a page at a time (one read of
    a deep backlog would hold Redis up for every agent and worker; see
    workers.reaper.queued_deliveries for why paging from the head misses nothing that stays
    queued). What this removes from a page shifts the rest back by as many. A message a
    worker took meanwhile is not removed (LREM finds nothing): its delivery is gone, the
    worker does nothing."""
    removed = 0
    for key in queues.lists(coord, QUEUES, SCAN_COUNT) if keys is None else keys:
        start = 0
        while True:
            rows = queues.page(coord, key, start, QUEUE_PAGE)
            gone = 0
            for raw in rows:
                if queued_delivery(raw, user_id) is not None:
                    gone += queues.remove(coord, key, raw)
            removed += gone
            if len(rows) < QUEUE_PAGE:
                break
            start += len(rows) - gone
    return removed


def drop_dead_letters(coord: Coord, user_id: str) -> int:
    return deadletters.drop(coord, lambda raw: dead_letter_of(raw, user_id))


@contextmanager
def _held(coord: Coord, user_id: str, wait_s: float | None) -> Iterator[None]:
    lease = wiring.settings().claim_s
    # Long enough for a drain that holds the claim to finish, or for a dead one's lease to
    # run out.
    wait = 2 * lease if wait_s is None else wait_s
    with section.hold(coord, user_id, lease, wait, publish_apply) as token:
        if token is None:
            raise UserBusy(f"user {user_id} is busy: not free after {wait:g}s; "
                           "run forget again")
        yield


# -- the requests --------------------------------------------------------------------------
def forget_user(user_id: str, *, claim_wait_s: float | None = None) -> ForgetReport:
    """Forget a user in every store (see the module docstring for the order and why)."""
    coord = wiring.coord()
    at = time.time()
    forgotten.mark(coord, user_id, at)  # first: in-flight work of the user now writes nothing
    log.info("forgetting user", user_id=user_id)
    with _held(coord, user_id, claim_wait_s):
        home = wiring.shard_map().of(user_id)
        # every shard, not only the user's: an extraction that read the placement before a
        # move and wrote its episodes after the move deleted the source left them there
        # (workers.shards.move); on the shards not the user's, nothing of record is kept
        chroma = sum(stores.delete_user(user_id) for stores in wiring.chromas())
        elsewhere = sum(g.delete_user(user_id) for i, g in enumerate(wiring.graphs())
                        if i != home.neo4j)
        redis_keys = forgotten.forget_traces(coord, user_id)
        dead = drop_dead_letters(coord, user_id)
        queued = purge_queued(coord, user_id)
        # the FORGET entry only if anything was there
        graph = elsewhere + wiring.graphs()[home.neo4j].forget_user(
            user_id, tombstone(user_id, ALL_MEMORIES, at),
            changed_elsewhere=bool(chroma or elsewhere or redis_keys or dead or queued))
    report = ForgetReport(user_id=user_id, chroma=chroma, graph=graph, redis_keys=redis_keys,
                          queued=queued, dead_letters=dead)
    log.info("forgot user", **{k: v for k, v in report.to_json().items() if k != "memory_id"})
    if report.total:
        event_stream.emit(coord, "memory.forgotten", user_id, memory_id=ALL_MEMORIES)
        scrub.request(coord.r)  # and from the stores' files (erasure at rest)
    return report


def forget_turns(user_id: str, prefix: str) -> int:
    """Forget the user's turns whose reference (``<session>/<turn>``) starts with ``prefix``
    and every memory made from them, in every store (the LangGraph store's ``delete`` of a
    key); the number of turns. Each memory is forgotten as :func:`forget_memory` does."""
    graph = wiring.graph_for(user_id)
    refs = sorted(graph.turn_refs(user_id, prefix))
    if not refs:
        return 0
    wanted = set(refs)
    for m in graph.read_memories(user_id, include_inactive=True):
        if wanted & set(m.source_turn_ids):
            forget_memory(user_id, m.id)
    wiring.chroma_for(user_id).delete_episodes(user_id, refs)
    graph.delete_episodes(user_id, refs)
    scrub.request(wiring.coord().r)
    log.info("forgot turns", user_id=user_id, turns=len(refs))
    return len(refs)


def forget_memory(user_id: str, memory_id: str, *, with_sources: bool = False,
                  claim_wait_s: float | None = None) -> ForgetReport:
    """Forget one memory of a user in every store; the user's other memories stay.
    ``with_sources``: the turns it was extracted from too (every version's, superseded
    ones included)."""
    coord = wiring.coord()
    at = time.time()
    log.info("forgetting memory", user_id=user_id, memory_id=memory_id,
             with_sources=with_sources)
    with _held(coord, user_id, claim_wait_s):
        graph_store = wiring.graph_for(user_id)
        refs = sorted({ref for m in graph_store.get(user_id, [memory_id])
                       for ref in m.source_turn_ids}) if with_sources else []
        chroma = wiring.chroma_for(user_id).delete_memory(user_id, memory_id)
        graph = graph_store.forget_memory(user_id, memory_id, tombstone(user_id, memory_id, at),
                                          changed_elsewhere=chroma > 0)
        episodes = 0
        if refs:
            wiring.chroma_for(user_id).delete_episodes(user_id, refs)
            episodes = graph_store.delete_episodes(user_id, refs)
    report = ForgetReport(user_id=user_id, memory_id=memory_id, chroma=chroma, graph=graph,
                          episodes=episodes)
    log.info("forgot memory", **report.to_json())
    if report.total:
        event_stream.emit(coord, "memory.forgotten", user_id, memory_id=memory_id)
        scrub.request(coord.r)
    return report
