"""Drift between the two stores, and the plan that repairs it. Pure: no store, no clock.

Chroma keeps every memory in full (metadata); Neo4j keeps a Memory node and its FACT edges;
the audit trail keeps a full snapshot of every state a memory was written in. ``find_drift``
compares the first two memory by memory and names, for each disagreement, the ``truth``:

* both sides hold it: the side updated later wins; the graph's full state is the audit
  snapshot written with it (same ``updated_at``). On a tie the audit snapshot of that version
  decides; with none, nothing says which side is right: unrepairable.
* only Chroma holds it: Chroma's record (or a later audit snapshot, should there be one).
* only the graph holds it: the latest audit snapshot; none: unrepairable.
* both agree, but its FACT edges do not match it (open edges of a memory that is no longer
  current, a current memory's triple closed or missing): the memory itself, re-applied.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from pydantic import ValidationError

from memq.pipeline import ids
from memq.schemas import AuditEntry, Operation, StoredMemory

# Chroma keeps times as float epoch seconds: equal within this is the same instant.
TOLERANCE = timedelta(milliseconds=1)
COMPARED = ("status", "content", "valid_at", "invalid_at", "updated_at")
REPAIRER = "memq-check"

Said = dict[str, str | None]  # what one side says about a memory, field by field


class DriftKind(StrEnum):
    MISSING_IN_GRAPH = "missing_in_graph"
    MISSING_IN_VECTORS = "missing_in_vectors"
    DIFFERS = "differs"
    STALE_FACTS = "stale_facts"
    UNREADABLE = "unreadable"  # an index record not in its layout, of no memory of the graph


class Source(StrEnum):
    VECTORS = "vectors"  # Chroma's record
    GRAPH = "graph"  # the graph's state, in full from the audit snapshot written with it
    AUDIT = "audit"  # the latest audit snapshot


@dataclass(frozen=True)
class GraphMemory:
    """What a Memory node holds, and which of its FACT edges are open or closed."""

    id: str
    user_id: str
    status: str  # plain text: a node may hold a value no Status has
    content: str
    valid_at: datetime | None  # None only on a damaged node
    invalid_at: datetime | None
    updated_at: datetime | None
    open_fact_ids: frozenset[str] = frozenset()
    closed_fact_ids: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Drift:
    user_id: str
    memory_id: str
    kind: DriftKind
    vectors: Said | None  # what Chroma says; None: no record
    graph: Said | None  # what Neo4j says; None: no Memory node
    fields: tuple[str, ...]  # DIFFERS: the fields; STALE_FACTS: the fact problems
    truth: StoredMemory | None  # the state to write to both stores; None: unrepairable
    source: Source | None
    note: str

    @property
    def repairable(self) -> bool:
        return self.truth is not None or self.kind is DriftKind.UNREADABLE

    def describe(self) -> str:
        if self.kind is DriftKind.DIFFERS and self.vectors and self.graph:
            body = "; ".join(f"{f}: vectors={_short(self.vectors[f])} graph={_short(self.graph[f])}"
                             for f in self.fields)
        elif self.kind is DriftKind.STALE_FACTS:
            body = "facts: " + ", ".join(self.fields)
        elif self.kind is DriftKind.UNREADABLE:
            return (f"{self.kind} {self.memory_id} of {self.user_id}: only in chroma, not in "
                    f"the index layout -> {self.note}")
        else:
            held = self.vectors or self.graph or {}
            where = "chroma" if self.vectors else "neo4j"
            body = f"only in {where} ({held.get('status')}, {_short(held.get('content'))})"
        if self.truth is not None:
            tail = (f"truth from {self.source} (updated_at {self.truth.updated_at.isoformat()}):"
                    f" {self.note}")
        else:
            tail = f"unrepairable: {self.note}"
        return f"{self.kind} {self.memory_id} of {self.user_id}: {body} -> {tail}"

    def to_json(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id, "memory_id": self.memory_id, "kind": str(self.kind),
            "vectors": self.vectors, "graph": self.graph, "fields": list(self.fields),
            "repairable": self.repairable,
            "source": str(self.source) if self.source else None,
            "note": self.note,
            "truth": self.truth.model_dump(mode="json") if self.truth else None,
        }


@dataclass(frozen=True)
class Repair:
    """One user's repair: write ``memories`` to both stores (a fresh vector where ``reembed``),
    with one REPAIR audit entry each; ``skipped``: drift this repair cannot fix, and why."""

    memories: list[StoredMemory] = field(default_factory=list)
    reembed: list[bool] = field(default_factory=list)
    audit: list[AuditEntry] = field(default_factory=list)
    skipped: list[tuple[Drift, str]] = field(default_factory=list)


def _short(value: str | None, width: int = 60) -> str:
    if value is None:
        return "None"
    return repr(value if len(value) <= width else value[: width - 1] + "…")


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _same(a: datetime | None, b: datetime | None) -> bool:
    if a is None or b is None:
        return a is b
    return abs(a - b) <= TOLERANCE


def _later(a: datetime | None, b: datetime | None) -> bool:
    """``a`` is after ``b``; no time at all is before every time."""
    if a is None or b is None:
        return a is not None
    return a - b > TOLERANCE


def said_by_vectors(m: StoredMemory) -> Said:
    return {"status": str(m.status), "content": m.content, "valid_at": _iso(m.valid_at),
            "invalid_at": _iso(m.invalid_at), "updated_at": _iso(m.updated_at)}


def said_by_graph(g: GraphMemory) -> Said:
    return {"status": g.status, "content": g.content, "valid_at": _iso(g.valid_at),
            "invalid_at": _iso(g.invalid_at), "updated_at": _iso(g.updated_at),
            "open_facts": ",".join(sorted(g.open_fact_ids)),
            "closed_facts": ",".join(sorted(g.closed_fact_ids))}


def _differing(v: StoredMemory, g: GraphMemory) -> tuple[str, ...]:
    same = {
        "status": str(v.status) == g.status, "content": v.content == g.content,
        "valid_at": _same(v.valid_at, g.valid_at), "invalid_at": _same(v.invalid_at, g.invalid_at),
        "updated_at": _same(v.updated_at, g.updated_at),
    }
    return tuple(f for f in COMPARED if not same[f])


def fact_problems(m: StoredMemory, g: GraphMemory) -> tuple[str, ...]:
    """How the FACT edges of ``g`` fail to state the triples of memory ``m``."""
    expected = {ids.triple_id(m.id, t.subject, t.predicate, t.object) for t in m.triples}
    if not m.is_current:
        return tuple(f"{t} open on a {m.status} memory" for t in sorted(g.open_fact_ids))
    problems = [f"{t} {'closed' if t in g.closed_fact_ids else 'missing'} on a current memory"
                for t in sorted(expected - g.open_fact_ids)]
    problems += [f"{t} open but not a triple of the memory"
                 for t in sorted(g.open_fact_ids - expected)]
    return tuple(problems)


def latest_snapshots(entries: Iterable[AuditEntry]) -> dict[str, StoredMemory]:
    """Per memory, the latest full state its audit trail records (``after`` of add, update,
    supersede and repair entries; a dropped duplicate records a candidate, not a state).
    Entries come in trail order: of two snapshots with the same ``updated_at``, the later."""
    latest: dict[str, StoredMemory] = {}
    for entry in entries:
        if not entry.after or entry.after.get("id") != entry.memory_id:
            continue
        try:
            snap = StoredMemory.model_validate(entry.after)
        except ValidationError:
            continue
        prior = latest.get(snap.id)
        if prior is None or snap.updated_at >= prior.updated_at:
            latest[snap.id] = snap
    return latest


def _both(v: StoredMemory, g: GraphMemory, snap: StoredMemory | None) -> Drift | None:
    differing = _differing(v, g)
    if not differing:
        problems = fact_problems(v, g)
        if not problems:
            return None
        return Drift(v.user_id, v.id, DriftKind.STALE_FACTS, said_by_vectors(v), said_by_graph(g),
                     problems, v, Source.VECTORS, "the facts do not match the memory")

    def drift(truth: StoredMemory | None, source: Source | None, note: str) -> Drift:
        return Drift(v.user_id, v.id, DriftKind.DIFFERS, said_by_vectors(v), said_by_graph(g),
                     differing, truth, source, note)

    graph_state = snap if snap is not None and _same(snap.updated_at, g.updated_at) else None
    if _later(v.updated_at, g.updated_at):
        return drift(v, Source.VECTORS, "chroma was updated later")
    if _later(g.updated_at, v.updated_at):
        if graph_state is None:
            return drift(None, None, "neo4j was updated later, but no audit snapshot holds "
                                     "that state in full")
        return drift(graph_state, Source.GRAPH, "neo4j was updated later")
    if graph_state is None:
        return drift(None, None, "both sides have the same updated_at and no audit snapshot "
                                 "of that version says which is right")
    return drift(graph_state, Source.AUDIT,
                 "same updated_at on both sides; the audit snapshot of that version decides")


def _only_vectors(v: StoredMemory, snap: StoredMemory | None) -> Drift:
    if snap is not None and _later(snap.updated_at, v.updated_at):
        truth, source, note = snap, Source.AUDIT, "the audit trail holds a later state"
    else:
        truth, source, note = v, Source.VECTORS, "chroma holds the full record"
    return Drift(v.user_id, v.id, DriftKind.MISSING_IN_GRAPH, said_by_vectors(v), None, (),
                 truth, source, note)


def _only_graph(g: GraphMemory, snap: StoredMemory | None) -> Drift:
    note = "restored from the latest audit snapshot" if snap else "no audit snapshot of it"
    return Drift(g.user_id, g.id, DriftKind.MISSING_IN_VECTORS, None, said_by_graph(g), (),
                 snap, Source.AUDIT if snap else None, note)


def find_drift(vector_side: Sequence[StoredMemory], graph_side: Sequence[GraphMemory],
               snapshots: dict[str, StoredMemory]) -> list[Drift]:
    """Every memory the two sides disagree on, by memory id; ``snapshots``: per memory id,
    the latest audit snapshot (see :func:`latest_snapshots`)."""
    vectors = {m.id: m for m in vector_side}
    graph = {g.id: g for g in graph_side}
    drifts: list[Drift] = []
    for mid in sorted(vectors.keys() | graph.keys()):
        v, g, snap = vectors.get(mid), graph.get(mid), snapshots.get(mid)
        if v is not None and g is not None:
            found = _both(v, g, snap)
            if found is not None:
                drifts.append(found)
        elif v is not None:
            drifts.append(_only_vectors(v, snap))
        elif g is not None:
            drifts.append(_only_graph(g, snap))
    return drifts


def repair_entry(drift: Drift, truth: StoredMemory, now: datetime) -> AuditEntry:
    key = f"repair:{drift.kind}:{truth.updated_at.isoformat()}"
    detail = f" ({', '.join(drift.fields)})" if drift.fields else ""
    return AuditEntry(
        id=ids.audit_id(key, drift.memory_id, "repair"), user_id=drift.user_id,
        memory_id=drift.memory_id, operation=Operation.REPAIR, before=None,
        after=truth.model_dump(mode="json"),
        reason=f"repair {drift.kind}{detail}: truth from {drift.source}, {drift.note}",
        source_turn_ids=list(truth.source_turn_ids), batch_id=key, extractor=REPAIRER, at=now,
    )


def unreadable(user_id: str, memory_ids: Iterable[str], held: Iterable[str]
               ) -> list[Drift]:
    """Index records not in the layout whose ids the graph does not hold (those it holds are
    missing from the index, as ``find_drift`` says): the re-index deletes them."""
    known = set(held)
    return [Drift(user_id=user_id, memory_id=i, kind=DriftKind.UNREADABLE, vectors=None,
                  graph=None, fields=(), truth=None, source=None,
                  note="the graph holds no such memory: the re-index deletes it")
            for i in sorted(set(memory_ids) - known)]


def plan_repair(drifts: Sequence[Drift], *, model_id: str, now: datetime) -> Repair:
    """What to write to fix one user's ``drifts``. A memory needs a fresh vector when Chroma
    lacks it or holds other content; that vector comes from ``model_id``'s embedder, so a
    memory of another embedding model is not re-embedded (skipped, with the reason)."""
    repair = Repair()
    for drift in drifts:
        truth = drift.truth
        if drift.kind is DriftKind.UNREADABLE:
            continue  # nothing to write: the re-index deletes it
        if truth is None:
            repair.skipped.append((drift, drift.note))
            continue
        reembed = drift.vectors is None or drift.vectors["content"] != truth.content
        if reembed and truth.embedding_model != model_id:
            repair.skipped.append((drift, f"needs a vector of {truth.embedding_model}, the "
                                          f"embedder is {model_id}"))
            continue
        repair.memories.append(truth)
        repair.reembed.append(reembed)
        repair.audit.append(repair_entry(drift, truth, now))
    return repair
