"""The pipeline's stages, run through the ports. Each stage is one function the Celery task
calls; the pure decisions live in ``extract``, ``dedupe`` and ``merge``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from pipeline import extract as extraction
from pipeline import ids
from pipeline.dedupe import require_same_model
from pipeline.merge import BatchContext, Plan, Prepared, Write, plan_batch
from pipeline.policy import Thresholds
from pipeline.ports import Embedder, EpisodeStore, Extractor, GraphStore, Judge, MemoryStore
from pipeline.predicates import Predicates
from schemas import CandidateMemory, IngestBatch, Turn


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


def record_episodes(ports: Ports, batch: IngestBatch, turns: Sequence[Turn], now: datetime) -> int:
    """Every turn becomes an episode (raw text, role, event time), before extraction runs."""
    vectors = ports.embedder.embed([t.content for t in turns])
    return ports.episodes.add(batch.user_id, batch.session_id, turns, vectors,
                              ports.embedder.model_id, now)


def extract(ports: Ports, batch: IngestBatch, turns: Sequence[Turn], *, thresholds: Thresholds,
            now: datetime) -> Extracted:
    episodes = record_episodes(ports, batch, turns, now)
    result = extraction.extract(ports.extractor, turns, budget=thresholds.chunk_tokens,
                                min_confidence=thresholds.min_confidence)
    vectors = ports.embedder.embed([c.content for c in result.kept]) if result.kept else []
    return Extracted(result.kept, vectors, len(result.below_gate), result.chunks, episodes)


def prepare(ports: Ports, user_id: str, candidates: Sequence[CandidateMemory],
            vectors: Sequence[list[float]], *, thresholds: Thresholds,
            predicates: Predicates) -> list[Prepared]:
    """Gather, per candidate, the user's nearest memories and the holders of its slots."""
    model_id = ports.embedder.model_id
    foreign = ports.memories.foreign_model(user_id, model_id)
    if foreign is not None:
        require_same_model(model_id, foreign)
    slots = sorted({t.slot for c in candidates for t in c.triples
                    if predicates.is_single(t.predicate)})
    holder_ids = {h.memory_id for h in ports.graph.slot_holders(user_id, slots)}
    own_ids = [ids.memory_id(user_id, c.content, c.source_turn_ids) for c in candidates]
    found = ports.memories.get(user_id, sorted(holder_ids | set(own_ids)))  # one read for both
    holders = [m for m in found if m.id in holder_ids]
    stored = {m.id for m in found}
    exact = ports.memories.exact(user_id, [c.content for c in candidates])
    prepared = []
    neighbors = ports.memories.nearest_many(user_id, vectors, model_id, thresholds.neighbors)
    for cand, vector, own, near in zip(candidates, vectors, own_ids, neighbors, strict=True):
        cand_slots = {t.slot for t in cand.triples}
        prepared.append(Prepared(
            candidate=cand, vector=vector,
            neighbors=near,
            slot_memories=[m for m in holders if cand_slots & {t.slot for t in m.triples}],
            already_stored=own in stored, exact=exact.get(ids.content_hash(cand.content)),
        ))
    return prepared


def merge(ports: Ports, prepared: Sequence[Prepared], ctx: BatchContext, *,
          thresholds: Thresholds, predicates: Predicates) -> Plan:
    plan = plan_batch(prepared, ctx, thresholds=thresholds, predicates=predicates,
                      judge=ports.judge)
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


def upsert_vectors(ports: Ports, plan: Plan) -> None:
    ports.memories.upsert([w.memory for w in plan.writes], [w.vector for w in plan.writes])


def upsert_graph(ports: Ports, plan: Plan, now: datetime) -> None:
    ports.graph.apply(plan.user_id, [w.memory for w in plan.writes], plan.audit, now)
