"""Lifecycle jobs for one user, run through the ports: decay, expire, capacity, consolidate,
reembed. The caller holds the user's claim. Each job is idempotent: the pure step finds
nothing left to do on a second run, and audit ids derive from the state being changed, so a
job killed half-way and run again writes the same entries, not new ones.

Writes go through ``service.commit``: fenced on the user's version read before the job read
its memories (Chroma brought up to date first; decay, expire and capacity read the memories from
the graph, the state of record), so a job that was paused while a batch merged
is refused (StaleVersion, retried) rather than writing old states over new ones. A job with
many changes commits them in chunks of :data:`COMMIT_CHUNK`, each fenced on the version the
one before it made; one refused part-way is retried and finds only what is left.
Consolidation's marks on the turns it used are the graph's too, fenced the same way
(``GraphStore.mark_consolidated``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from ..schemas import (
    AuditEntry,
    CandidateMemory,
    Kind,
    Operation,
    Status,
    StoredMemory,
    Triple,
    Turn,
)
from . import ids, lifecycle, profiles, service
from .lifecycle import Change, Policy
from .ports import EpisodeItem, Extractor
from .service import Ports

COMMIT_CHUNK = 1000  # memories (with their audit entries) per fenced commit


@dataclass(frozen=True)
class JobResult:
    job: str
    user_id: str
    examined: int
    changed: int


@dataclass
class Fence:
    """The user's version a job read its state at; every commit moves it on."""

    version: int

    @classmethod
    def begin(cls, ports: Ports, user_id: str) -> Fence:
        return cls(service.catch_up(ports, user_id).version)


def apply_changes(ports: Ports, user_id: str, job: str, op: Operation,
                  changes: Sequence[Change], now: datetime, fence: Fence,
                  vectors: Sequence[list[float] | None] | None = None) -> int:
    if not changes:
        return 0
    audit = [AuditEntry(
        id=ids.audit_id(f"job:{job}", c.before.id, f"{op}:{c.before.updated_at.isoformat()}"),
        user_id=user_id, memory_id=c.after.id, operation=op,
        before=c.before.model_dump(mode="json") if c.before is not c.after else None,
        after=c.after.model_dump(mode="json"), reason=c.reason,
        source_turn_ids=list(c.after.source_turn_ids), batch_id=f"job:{job}",
        extractor=f"lifecycle:{job}", at=now,
    ) for c in changes]
    memories = [c.after for c in changes]
    rows = list(vectors) if vectors else [None] * len(memories)
    # bounded transactions: a job over a 100k-memory user must fit the default heap (one
    # commit of 90k decayed memories and their audit exceeded Neo4j's transaction memory)
    for start in range(0, len(memories), COMMIT_CHUNK):
        end = start + COMMIT_CHUNK
        fence.version = service.commit(ports, user_id, memories[start:end], rows[start:end],
                                       audit[start:end], now, expected=fence.version)
    return len(changes)


def _simple(job: str, step: Callable[[Sequence[StoredMemory], datetime, Policy], list[Change]]
            ) -> Callable[[Ports, str, datetime, Policy], JobResult]:
    def run(ports: Ports, user_id: str, now: datetime, policy: Policy) -> JobResult:
        fence = Fence.begin(ports, user_id)
        memories = ports.graph.read_memories(user_id)  # the state of record
        changed = apply_changes(ports, user_id, job, Operation.ARCHIVE,
                                step(memories, now, policy), now, fence)
        return JobResult(job, user_id, len(memories), changed)
    return run


decay = _simple("decay", lifecycle.decay)
expire = _simple("expire", lifecycle.expire)
capacity = _simple("capacity", lifecycle.over_capacity)


def summarize(extractor: Extractor, texts: Sequence[str], at: datetime,
              source_ids: Sequence[str]) -> CandidateMemory | None:
    """One semantic sentence for a cluster: what the extractor finds in it, most supported
    first; else the cluster's first text that says something, quoted as a recurring theme;
    None when none does (a cluster of "?" and "..." turns: LongMemEval has them)."""
    turns = [Turn(turn_id=f"c{i}", role="user", content=t, timestamp=at)
             for i, t in enumerate(texts)]
    found = sorted(extractor.extract(turns), key=lambda c: (-len(c.source_turn_ids), c.content))
    if found:
        best = found[0]
        return best.model_copy(update={"source_turn_ids": list(source_ids), "valid_at": at})
    themes = [t.strip().strip(".!?。！？…").strip()[:160] for t in texts]
    theme = next((t for t in themes if t), None)
    if theme is None:
        return None
    return CandidateMemory(
        content=f'The user repeatedly brings up: "{theme}".', kind=Kind.FACT, confidence=0.7,
        importance=0.5, source_turn_ids=list(source_ids), valid_at=at,
        triples=[Triple(subject="user", predicate="repeatedly_mentions", object=theme)])


def unconsolidated_episodes(ports: Ports, user_id: str, fence: Fence) -> list[EpisodeItem]:
    """The user's turns (role user) not yet consolidated, as the graph says (the state of
    record), with their words, and their vectors under the embedder's model from the episode
    index (a turn it has no vector of is left out).

    A turn that only a record written before the graph held this state marks consolidated
    (``EpisodeVector.legacy_into``) has the mark copied into the graph here, fenced as the
    job's writes are, and is left out: the graph then leaves it out, so each old mark is
    read once."""
    turns = ports.graph.unconsolidated_turns(user_id)
    held = ports.episodes.episode_vectors(user_id, ports.embedder.model_id,
                                          [t.id for t in turns])
    legacy = {i: v.legacy_into for i, v in held.items() if v.legacy_into is not None}
    if legacy:
        fence.version = ports.graph.mark_consolidated(user_id, legacy, expected=fence.version)
    return [EpisodeItem(id=t.id, content=t.content, vector=held[t.id].vector,
                        event_at=t.event_at, turn_id=t.source_turn_ids[0], speaker=t.speaker)
            for t in turns if t.id in held and t.id not in legacy]


def consolidate(ports: Ports, user_id: str, now: datetime, policy: Policy, *,
                memories: Sequence[tuple[StoredMemory, list[float]]],
                episodes: Sequence[EpisodeItem], fence: Fence,
                is_single: Callable[[str], bool]) -> JobResult:
    """Clusters of >= cluster_min similar episodic memories and episodes, not consolidated
    before, become one semantic memory DERIVED_FROM them; source memories keep importance
    x 0.3, source episodes are marked in the graph (fenced: ``GraphStore.mark_consolidated``).
    A cluster is consolidated once: the semantic memory's id derives from its members. A
    summary that is already a current memory is not added again (the sources point at that
    one); one that states a single-valued fact is not added at all: such facts have a
    timeline, which only the pipeline places on.

    Only the user's own turns and memories are sources: a named person's (multi-party chat)
    would be summarised as the user's ("The user got a new Ferrari." of Calvin's), and their
    turns, embedded with name and date, cluster at 0.8 by greeting alone (on LoCoMo dev few
    of the memories so derived were supported by an observation; figures:
    scripts/results/2026-12-07-figures-from-comments.md)."""
    mems = {m.id: (m, v) for m, v in memories if m.consolidated_into is None and m.is_current
            and all(t.subject == "user" for t in m.triples)}
    eps = {e.id: e for e in episodes if e.speaker is None}
    items = [(k, v) for k, (_, v) in mems.items()] + [(e.id, e.vector) for e in eps.values()]
    groups = lifecycle.clusters(items, similarity=policy.cluster_similarity,
                                min_size=policy.cluster_min)
    changed = 0
    for group in groups:
        members = [mems[k][0] for k in group if k in mems]
        sources = [e for k in group if (e := eps.get(k)) is not None]
        texts = [mems[k][0].content if k in mems else eps[k].content for k in group]
        at = max([m.valid_at for m in members] + [e.event_at for e in sources])
        turns = sorted({t for m in members for t in m.source_turn_ids}
                       | {e.turn_id for e in sources})
        semantic_id = "m_" + ids.content_hash(f"consolidated:{user_id}:{','.join(sorted(group))}")
        if not ports.graph.get(user_id, [semantic_id]):
            cand = summarize(ports.extractor, texts, at, turns)
            if cand is None or any(is_single(t.predicate) for t in cand.triples):
                continue
            known = ports.graph.exact(user_id, [cand.content]).get(ids.content_hash(cand.content))
            if known is not None:
                semantic_id = known.id
            else:
                changed += _add_semantic(ports, user_id, cand, semantic_id, group, members,
                                         turns, at, now, fence)
        faded = [Change(m, m.with_changes(
            importance=m.importance * policy.consolidated_factor,
            consolidated_into=semantic_id, updated_at=now),
            f"consolidated into {semantic_id}") for m in members]
        changed += apply_changes(ports, user_id, "consolidate", Operation.UPDATE, faded, now,
                                 fence)
        if sources:
            fence.version = ports.graph.mark_consolidated(
                user_id, {e.id: semantic_id for e in sources}, expected=fence.version)
    return JobResult("consolidate", user_id, len(items), changed)


def _add_semantic(ports: Ports, user_id: str, cand: CandidateMemory, semantic_id: str,
                  group: Sequence[str], members: Sequence[StoredMemory], turns: list[str],
                  at: datetime, now: datetime, fence: Fence) -> int:
    semantic = StoredMemory(
        id=semantic_id, user_id=user_id, content=cand.content,
        kind=Kind.FACT if cand.kind is Kind.EVENT else cand.kind,
        confidence=cand.confidence,
        importance=max([m.importance for m in members] + [cand.importance]),
        entities=cand.entities, triples=cand.triples, source_turn_ids=turns,
        valid_at=at, created_at=now, updated_at=now,
        embedding_model=ports.embedder.model_id, derived_from=sorted(group))
    vector = ports.embedder.embed([semantic.content])[0]
    add = Change(semantic, semantic, f"consolidated from {len(group)} similar items")
    return apply_changes(ports, user_id, "consolidate", Operation.CONSOLIDATE, [add], now,
                         fence, vectors=[vector])


def profile(ports: Ports, user_id: str, now: datetime, policy: Policy,
            fence: Fence) -> JobResult:
    """The user's people's topic profiles (``pipeline.profiles``) brought up to date: a topic's
    new profile is added (CONSOLIDATE, DERIVED_FROM its members, audited), one whose members
    have changed (grown, superseded, archived) is archived, its audit naming the profile that
    shares most of them. Members keep their importance: a profile is a view across
    sessions, not their replacement. Run again on the same memories, it changes nothing."""
    current = ports.graph.read_memories(user_id)  # the state of record
    pool = [m for m in current if profiles.eligible(m)]
    topics = ports.embedder.embed([profiles.topic_text(m) for m in pool])  # it batches
    drafts = profiles.profiles(user_id, pool, dict(zip([m.id for m in pool], topics, strict=True)),
                               similarity=policy.profile_similarity,
                               max_members=policy.profile_max, pool=policy.profile_pool)
    held = {m.id: m for m in current if profiles.is_profile(m)}
    new = [d for d in drafts if d.id not in held]
    added = [StoredMemory(
        id=d.id, user_id=user_id, content=d.content, kind=Kind.FACT, confidence=d.confidence,
        importance=d.importance, entities=[d.subject] if d.subject != "user" else [],
        triples=[d.triple], source_turn_ids=list(d.source_turn_ids), valid_at=d.valid_at,
        created_at=now, updated_at=now, embedding_model=ports.embedder.model_id,
        derived_from=list(d.members)) for d in new]
    changed = apply_changes(
        ports, user_id, "consolidate", Operation.CONSOLIDATE,
        [Change(m, m, f"profile of {len(m.derived_from)} memories over "
                      f"{len(profiles.sessions(m))} sessions")
         for m in added], now, fence, vectors=ports.embedder.embed([m.content for m in added]))
    # a profile whose members changed is archived (out of search, kept with its audit), not
    # superseded: it stated no fact that stopped being true, and a superseded memory's turns
    # are read as what is no longer true (search demotes them)
    kept = {d.id for d in drafts}
    stale = []
    for m in sorted((m for m in held.values() if m.id not in kept), key=lambda m: m.id):
        heir = max(drafts, key=lambda d: (len(set(d.members) & set(m.derived_from)), d.id),
                   default=None)
        why = (f"profile regrown into {heir.id}" if heir is not None
               and set(heir.members) & set(m.derived_from) else "profile's topic no longer holds")
        stale.append(Change(m, m.with_changes(status=Status.ARCHIVED, updated_at=now), why))
    changed += apply_changes(ports, user_id, "consolidate", Operation.ARCHIVE, stale, now, fence)
    return JobResult("profile", user_id, len(pool), changed)


def reembed(ports: Ports, user_id: str, now: datetime, *,
            migrate: Callable[[str, Callable[[list[str]], list[list[float]]], str], int]
            ) -> JobResult:
    """Every memory and episode of the user re-embedded from its text into the configured
    model's collections (under the user's claim). Queries never mix models: each model has its
    own collections, and a user's searches use the model its vectors were made with."""
    fence = Fence.begin(ports, user_id)
    model = ports.embedder.model_id
    # the memories' vectors from the graph's texts (the index holds no text), written under
    # the new model before the old records go (a crash in between repeats the job)
    memories = [m.with_changes(embedding_model=model)
                for m in ports.graph.read_memories(user_id, include_inactive=True)
                if m.embedding_model != model]
    for start in range(0, len(memories), COMMIT_CHUNK):
        chunk = memories[start:start + COMMIT_CHUNK]
        ports.memories.upsert(chunk, ports.embedder.embed([m.content for m in chunk]))
    moved = len(memories) + migrate(user_id, ports.embedder.embed, model)
    if moved:  # the graph's copy names the model too, in bounded transactions
        for start in range(0, len(memories), COMMIT_CHUNK):
            fence.version = ports.graph.apply(user_id, memories[start:start + COMMIT_CHUNK],
                                              [], now, expected=fence.version)
        # Those states are the graph's, and Chroma (caught up when the job began, then moved)
        # holds them with the new model: marked, the next job does not compare and rewrite
        # the whole user (100k memories: every record's metadata). A commit that came in
        # meanwhile leaves the mark alone, and the next catch_up does the work.
        ports.graph.mark_projected(user_id, fence.version, if_at=fence.version)
    return JobResult("reembed", user_id, moved, moved)
