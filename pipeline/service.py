"""The pipeline's stages, run through the ports. The pure decisions live in ``extract``,
``dedupe`` and ``merge``; this module gathers what they need and writes what they decide.

The graph (Neo4j) is the state of record. Every write to a user's memories is one Neo4j
transaction fenced on the user's version (``GraphStore.apply(expected=...)``): a plan made from
version v commits only while the user is still at v, so no pause, lease or queue wait can make
a plan built on old state land. Chroma is a projection of the graph: it is written after the
commit, then checked against the version again (``project``), and brought up to date from the
graph before anything is planned (``catch_up``).
"""

from __future__ import annotations

import base64
import contextvars
import hashlib
import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, TypeVar, cast

import numpy as np

from ..schemas import (
    AuditEntry,
    CandidateMemory,
    ExtractedBatch,
    StoredMemory,
    Turn,
    turn_ref,
)
from . import extract as extraction
from . import ids, profiles, recall
from .dedupe import require_same_model
from .errors import StaleVersion
from .merge import (
    BatchContext,
    Plan,
    Prejudged,
    Prepared,
    Write,
    judge_key,
    likely_judged,
    plan_batch,
)
from .policy import Thresholds
from .ports import (
    Embedder,
    EpisodeStore,
    Extractor,
    GraphStore,
    Judge,
    MemoryStore,
    Neighbor,
    UserVersion,
    Vector,
)
from .predicates import Predicates

T = TypeVar("T")

MAX_PROJECT_ROUNDS = 20


@dataclass(frozen=True)
class Ports:
    embedder: Embedder
    extractor: Extractor
    judge: Judge
    memories: MemoryStore
    episodes: EpisodeStore
    graph: GraphStore


@dataclass(frozen=True)
class Extracted:
    candidates: list[CandidateMemory]
    vectors: list[list[float]]
    below_gate: int
    chunks: int
    episodes: int


@dataclass(frozen=True)
class Candidate:
    """A candidate of one batch, ready for a (possibly coalesced) plan."""

    candidate: CandidateMemory
    vector: Vector
    batch_id: str
    session_id: str


def pack(vector: Sequence[float]) -> str:
    """A vector as ``ExtractedBatch`` carries it: little-endian float32, base64."""
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode()


def unpack(text: str) -> Vector:
    return cast(Vector, np.frombuffer(base64.b64decode(text), dtype="<f4").tolist())


def extract(ports: Ports, user_id: str, session_id: str, turns: Sequence[Turn], *,
            thresholds: Thresholds, now: datetime) -> Extracted:
    """Every turn becomes an episode (raw text, role, event time); the extractor sees the
    turns under their per-user references (``<session>/<turn>``), so the source turn ids of
    what it finds are unique per user.

    The turns are embedded and written as episodes (the graph's record with their words,
    then Chroma's vectors, so a turn the vector index finds always has its words) in the side
    thread while the extractor works and the candidates are embedded: the extraction reads no
    episode, an LLM's answer is waited for, not computed, and the embedder lets go of the GIL,
    so a batch takes the longer of the two paths, not their sum. Both writes are idempotent.
    Nothing is returned before they are done, and their error, if any, is raised (after the
    extraction's own, which wins)."""
    def write_episodes() -> int:
        vectors, passage_vectors = recall.turn_vectors(
            ports.embedder.embed, [(t.content, t.speaker or t.role, t.timestamp) for t in turns])
        ports.graph.add_episodes(user_id, session_id, turns, now)  # words, and BM25 over them
        return ports.episodes.add(user_id, session_id, turns, vectors,
                                  ports.embedder.model_id, now, passage_vectors)

    writing = _beside(write_episodes)
    try:
        refs = [t.model_copy(update={"turn_id": turn_ref(session_id, t.turn_id)})
                for t in turns]
        result = extraction.extract(ports.extractor, refs, budget=thresholds.chunk_tokens,
                                    min_confidence=thresholds.min_confidence)
        cand_vectors = (ports.embedder.embed([c.content for c in result.kept])
                        if result.kept else [])
    finally:
        wait([writing])  # never leave a write running past the task
    episodes = writing.result()
    return Extracted(result.kept, cand_vectors, len(result.below_gate), result.chunks, episodes)


_pool: tuple[int, ThreadPoolExecutor] | None = None


def _beside(fn: Callable[..., T], *args: Any) -> Future[T]:
    """``fn(*args)`` in the side thread, in the caller's context (its log lines keep the
    task's correlation ids)."""
    return _side().submit(contextvars.copy_context().run, fn, *args)


def _side() -> ThreadPoolExecutor:
    """A thread for store work that runs beside the task's own (Chroma's nearest beside the
    graph's view; a batch's episode writes beside its extraction); one per process (a forked
    worker child gets its own: threads do not survive a fork)."""
    global _pool  # noqa: PLW0603
    if _pool is None or _pool[0] != os.getpid():
        _pool = (os.getpid(), ThreadPoolExecutor(max_workers=1, thread_name_prefix="memq-side"))
    return _pool[1]


# how far into each candidate's neighbour list the graph is asked first: the k nearest and a
# few more, which nearly always hold k current ones (a superseded memory's neighbourhood aside)
HEAD_SLACK = 3


def current_among(graph: GraphStore, user_id: str, lists: Sequence[Sequence[str]],
                  k: int) -> dict[str, StoredMemory]:
    """The first ``k`` current memories of each list of ids (nearest first), by id: what
    ``graph.near_current`` gives for the whole lists, in fewer index lookups. The graph is asked
    for the head of each list (``k + HEAD_SLACK`` ids) and, only for the lists whose head held
    fewer than ``k`` current, for the rest of them in a second round trip. Each id looked up
    costs the graph the same, whatever it turns out to be (the measured cost:
    scripts/results/2026-12-07-figures-from-comments.md): a batch's candidates' full lists
    are many more lookups than their heads, which nearly always suffice."""
    head = k + HEAD_SLACK
    found = {m.id: m for m in graph.near_current(user_id, [near[:head] for near in lists], k)}
    # `found` holds only current memories, among them each head's first k current (another
    # list may have brought more: taking each list's first k in order leaves those out)
    chosen: dict[str, StoredMemory] = {}
    short: list[tuple[Sequence[str], int]] = []
    for near in lists:
        top = [mid for mid in near[:head] if mid in found][:k]
        chosen.update((mid, found[mid]) for mid in top)
        if len(top) < k and len(near) > head:
            short.append((near[head:], k - len(top)))
    if short:
        more = {m.id: m for m in graph.near_current(user_id, [rest for rest, _ in short], k)}
        for rest, need in short:
            chosen.update((mid, more[mid]) for mid in [m for m in rest if m in more][:need])
    return chosen


@dataclass(frozen=True)
class Preparation:
    """The candidates of a (possibly coalesced) plan, ready to merge, and the version the plan
    is made at (its commit is fenced on it)."""

    version: int
    applied: frozenset[str]  # batches applied before: their candidates were left out
    prepared: list[Prepared]


def prepare(ports: Ports, user_id: str, items: Sequence[Candidate], *, batch_ids: Sequence[str],
            thresholds: Thresholds, predicates: Predicates) -> Preparation:
    """Per candidate: the user's nearest current memories and the holders of its slots, as the
    graph has them now. Chroma only says which memories are near (ids); their state comes
    from the graph, so a Chroma record behind the graph cannot mislead a plan.

    Two round trips' time: the graph's view of the batch (``plan_view``: version, applied
    batches, slot timelines, same-text memories, the candidates' own ids) while Chroma finds
    the nearest (asked again after ``catch_up`` when the view shows Chroma behind), then the
    graph's current ones among them. Every read is of the version the plan is fenced on, or
    newer: a newer one means a commit came in between, and the fence refuses the plan."""
    model_id = ports.embedder.model_id
    if items:
        foreign = ports.memories.foreign_model(user_id, model_id)
        if foreign is not None:
            require_same_model(model_id, foreign)
    candidates = [i.candidate for i in items]
    # the timelines of single-valued slots, and the holders of what a change replaces
    # and the facts a change of one would end with it (a new employer: the role held there)
    slots = sorted({t.slot for c in candidates for t in c.triples
                    if predicates.is_single(t.predicate)} | {
        t.slot for c in candidates for t in c.replaces} | {
        (t.subject.casefold(), d) for c in candidates for t in [*c.triples, *c.replaces]
        for d in predicates.related(t.predicate)})
    own_ids = [ids.memory_id(user_id, c.content, c.source_turn_ids) for c in candidates]
    # Superseded memories are near too: look wider, keep the current ones.
    wide = max(4 * thresholds.neighbors, 20)
    vectors = [i.vector for i in items]
    asked = _beside(ports.memories.similar, user_id, vectors, model_id, wide) \
        if items else None
    # the slots of every fact stated: a change applied before may have ended one of them
    ends = sorted({t.slot for c in candidates for t in c.triples})
    view = ports.graph.plan_view(user_id, batch_ids=batch_ids, slots=slots,
                                 memory_ids=sorted(set(own_ids)),
                                 contents=[c.content for c in candidates], ends=ends)
    near_all = asked.result() if asked is not None else []
    if view.version.projected < view.version.version:
        catch_up(ports, user_id)
        near_all = ports.memories.similar(user_id, vectors, model_id, wide) if items else []
    kept = [(i, own, top) for i, own, top in zip(items, own_ids, near_all, strict=True)
            if i.batch_id not in view.applied]
    if not kept:
        return Preparation(view.version.version, view.applied, [])
    near = [top for _, _, top in kept]
    state = dict(view.memories)
    state.update(current_among(ports.graph, user_id, [[mid for mid, _ in top] for top in near],
                               thresholds.neighbors))
    holder_ids = {h.memory_id for h in view.holders}
    holders = [state[h] for h in sorted(holder_ids) if h in state]
    prepared = []
    for item, own, top in kept:
        # a profile (consolidation's view of a topic) restates memories, it is not one:
        # a new statement is never its duplicate
        neighbors = [Neighbor(state[mid], sim) for mid, sim in top
                     if mid in state and state[mid].is_current
                     and not profiles.is_profile(state[mid])][: thresholds.neighbors]
        said = [*item.candidate.triples, *item.candidate.replaces]
        cand_slots = {t.slot for t in said} | {
            (t.subject.casefold(), d) for t in said for d in predicates.related(t.predicate)}
        stated = {t.slot for t in item.candidate.triples}
        enders = [state[e] for e in view.enders
                  if e in state and stated & {g.slot for g in state[e].replaces}]
        closed = {m.id for m in enders}
        ended = [state[c] for c in view.ended if c in state and state[c].superseded_by in closed]
        prepared.append(Prepared(
            candidate=item.candidate, vector=item.vector, neighbors=neighbors,
            slot_memories=[m for m in holders if cand_slots & {t.slot for t in m.triples}],
            already_stored=own in state,
            exact=view.exact.get(ids.content_hash(item.candidate.content)),
            batch_id=item.batch_id, session_id=item.session_id, enders=enders, ended=ended,
        ))
    return Preparation(view.version.version, view.applied, prepared)


def prejudge(judge: Judge, prepared: Sequence[Prepared], *, thresholds: Thresholds,
             predicates: Predicates) -> Judge:
    """``judge``, with the judgements the plan will most likely ask for (``likely_judged``)
    made ahead, up to ``thresholds.judge_concurrency`` at once: a busy user's plan waits for
    one LLM round trip where it waited for one per ambiguous candidate. A call that fails
    fails the plan, as it would have in the planner."""
    pairs = likely_judged(prepared, thresholds=thresholds, predicates=predicates)
    if len(pairs) < 2 or thresholds.judge_concurrency < 2:
        return judge
    unique = list({judge_key(new, old): (new, old) for new, old in pairs}.items())
    context = contextvars.copy_context()  # the log lines keep the task's correlation ids
    with ThreadPoolExecutor(min(len(unique), thresholds.judge_concurrency),
                            thread_name_prefix="memq-judge") as pool:
        answers = list(pool.map(lambda pair: context.copy().run(judge.judge, *pair),
                                [pair for _, pair in unique]))
    return Prejudged(judge, {key: answer for (key, _), answer in zip(unique, answers,
                                                                      strict=True)})


def merge(ports: Ports, prepared: Sequence[Prepared], ctx: BatchContext, *,
          thresholds: Thresholds, predicates: Predicates) -> Plan:
    judge = prejudge(ports.judge, prepared, thresholds=thresholds, predicates=predicates)
    plan = plan_batch(prepared, ctx, thresholds=thresholds, predicates=predicates,
                      judge=judge)
    # A refinement whose merged sentence is new needs its own vector.
    stale = [w for w in plan.writes if w.vector is None
             and w.memory.id in {a.memory_id for a in plan.audit if a.operation == "update"}]
    if not stale:
        return plan
    fresh = dict(zip([w.memory.id for w in stale],
                     ports.embedder.embed([w.memory.content for w in stale]), strict=True))
    writes = [Write(memory=w.memory, vector=fresh.get(w.memory.id, w.vector))
              for w in plan.writes]
    return plan.model_copy(update={"writes": writes})


# -- writing: the fenced commit and the Chroma projection -----------------------------------
def _to_chroma(ports: Ports, user_id: str, memories: Sequence[StoredMemory],
               vectors: Sequence[Vector | None], *, caught_up: bool = False) -> None:
    """Write these memory states to Chroma. A memory given no vector keeps the one Chroma has
    when that is of the same text; otherwise its text is embedded. ``caught_up``: the states
    come from a plan made after ``catch_up``, so Chroma holds every memory given no vector,
    with its text (a plan gives a vector to every new text): nothing to look up."""
    if not memories:
        return
    if caught_up:
        ports.memories.upsert(memories, vectors)
        return
    have = ports.memories.stored_hashes(user_id, [m.id for m in memories])
    missing = [i for i, (m, v) in enumerate(zip(memories, vectors, strict=True))
               if v is None and have.get(m.id) != ids.content_hash(m.content)]
    filled = list(vectors)
    if missing:
        embedded = ports.embedder.embed([memories[i].content for i in missing])
        for i, vector in zip(missing, embedded, strict=True):
            filled[i] = vector
    ports.memories.upsert(memories, filled)


def project(ports: Ports, user_id: str, memories: Sequence[StoredMemory],
            vectors: Sequence[Vector | None], version: int, *, caught_up: bool = True) -> None:
    """Chroma follows the graph. After writing the states committed at ``version``, look at
    the version again: if another writer committed meanwhile, this write may have put older
    states over newer ones (this process may have been paused between commit and write), so
    the same memories are written again as the graph has them now, until no commit came in
    between. Then Chroma holds every write up to ``version``."""
    touched = [m.id for m in memories]
    _to_chroma(ports, user_id, memories, vectors, caught_up=caught_up)
    seen = version
    for _ in range(MAX_PROJECT_ROUNDS):
        # marked only if no commit came in since ``seen`` (one round trip when none did)
        now = ports.graph.mark_projected(user_id, version, if_at=seen)
        if now == seen:
            return
        seen = now
        fresh = ports.graph.get(user_id, touched)
        gone = sorted(set(touched) - {m.id for m in fresh})
        ports.memories.delete_ids(user_id, gone)  # forgotten since
        _to_chroma(ports, user_id, fresh, [None] * len(fresh))
    ports.graph.mark_projected(user_id, version)


def reindex(ports: Ports, user_id: str, *, keep: Sequence[str] = ()) -> tuple[int, int]:
    """Chroma rebuilt from the graph for one user (``memq check --repair``; the caller holds
    the user's claim): every memory the graph holds written as the graph holds it (embedded
    again only where Chroma has no vector of its text), every record the graph does not hold
    deleted. ``keep``: ids left as they are (drift nothing can settle). Returns (written,
    deleted)."""
    v = ports.graph.version(user_id)
    held = ports.graph.read_memories(user_id, include_inactive=True, exclude=keep)
    indexed = ports.memories.memory_ids(user_id)
    gone = sorted(indexed - {m.id for m in held} - set(keep))
    ports.memories.delete_ids(user_id, gone)
    _to_chroma(ports, user_id, held, [None] * len(held))
    ports.graph.mark_projected(user_id, v.version, if_at=v.version)
    return len(held), len(gone)


def catch_up(ports: Ports, user_id: str) -> UserVersion:
    """Bring Chroma up to the graph (writes whose process died, or paused, between commit and
    Chroma) before anything is planned from it; returns the version now planned from."""
    v = ports.graph.version(user_id)
    if v.projected < v.version:
        behind = ports.graph.changed_since(user_id, v.projected)
        _to_chroma(ports, user_id, behind, [None] * len(behind))
        ports.graph.mark_projected(user_id, v.version)
    return UserVersion(version=v.version, projected=v.version)


def commit(ports: Ports, user_id: str, memories: Sequence[StoredMemory],
           vectors: Sequence[Vector | None], audit: Sequence[AuditEntry], now: datetime, *,
           expected: int | None, caught_up: bool = True) -> int:
    """The fenced write (StaleVersion if the user moved on since ``expected``), then Chroma.
    ``caught_up``: the states were planned after ``catch_up`` (see ``_to_chroma``). Returns
    the user's new version."""
    version = ports.graph.apply(user_id, memories, audit, now, expected=expected)
    project(ports, user_id, memories, vectors, version, caught_up=caught_up)
    return version


def commit_plan(ports: Ports, plan: Plan, now: datetime, *, expected: int) -> int:
    return commit(ports, plan.user_id, [w.memory for w in plan.writes],
                  [w.vector for w in plan.writes], plan.audit, now, expected=expected)


# -- the drain round: one coalesced plan over a user's waiting batches ------------------------
def combined_id(batch_ids: Sequence[str]) -> str:
    """The id of a plan over these batches (its audit entries carry it): the batch's own for
    one, a digest of the sorted ids for several, so the same batches give the same id."""
    if len(batch_ids) == 1:
        return batch_ids[0]
    return "c_" + hashlib.sha256("\x1f".join(sorted(batch_ids)).encode()).hexdigest()[:24]


Stage = Callable[[str], AbstractContextManager[object]]


def _no_stage(name: str) -> AbstractContextManager[object]:
    return nullcontext()


@dataclass(frozen=True)
class Round:
    """What one drain round did. ``version``: the user's version the plan was made at;
    ``skipped``: batches applied before (their candidates were left out); ``committed``: the
    version the plan's commit made, None when it wrote nothing (nothing to write, or
    ``stale``: another writer committed since ``version``, the fence refused the plan and
    nothing was written; the caller plans the same batches again)."""

    version: int
    skipped: frozenset[str]
    candidates: int
    plan: Plan
    committed: int | None
    stale: bool = False


def apply_round(ports: Ports, user_id: str, batches: Sequence[ExtractedBatch], *,
                thresholds: Thresholds, predicates: Predicates, now: datetime,
                stage: Stage = _no_stage) -> Round:
    """Dedupe, merge and the fenced commit of one plan over ``batches`` (a user's mailbox,
    oldest first), made from the graph as it is now. Idempotent: a batch applied before
    contributes nothing, and planning the same batches again from the same state gives the
    same plan (deterministic ids). ``stage(name)`` wraps each stage (``memq.dedupe``,
    ``memq.merge``, ``memq.upsert``): the shell times them there."""
    with stage("memq.dedupe"):
        items = [Candidate(c, unpack(v), b.batch_id, b.session_id)
                 for b in batches for c, v in zip(b.candidates, b.vectors, strict=True)]
        preparation = prepare(ports, user_id, items, batch_ids=[b.batch_id for b in batches],
                              thresholds=thresholds, predicates=predicates)
    ctx = BatchContext(user_id=user_id, batch_id=combined_id([b.batch_id for b in batches]),
                       model_id=ports.embedder.model_id, extractor=ports.extractor.name,
                       prompt_version=ports.extractor.prompt_version, now=now)
    with stage("memq.merge"):
        plan = merge(ports, preparation.prepared, ctx, thresholds=thresholds,
                     predicates=predicates)
    done = Round(version=preparation.version, skipped=preparation.applied,
                 candidates=len(preparation.prepared), plan=plan, committed=None)
    if not (plan.writes or plan.audit):
        return done
    try:
        with stage("memq.upsert"):
            new = commit_plan(ports, plan, now, expected=preparation.version)
    except StaleVersion:
        return replace(done, stale=True)
    return replace(done, committed=new)
