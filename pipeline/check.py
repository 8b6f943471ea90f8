"""Drift: where a store does not hold what the state of record says, and the plan that repairs
it. Pure: no store, no clock.

The graph (Neo4j) is the state of record; the audit trail keeps a full snapshot of every state
a memory was written in (``after``), in the same transaction as the node. Chroma is an index:
per memory a vector, the content hash it is of, the memory's status, under its model's
collection. ``find_drift`` checks, per memory id:

* **the graph against its audit trail**: a node whose fields disagree with the snapshot of
  its version (same ``updated_at``), or older than its latest snapshot, is repaired from the
  snapshot; a snapshot with no node (a node lost) is restored; a node newer than every
  snapshot is the record as it is (nothing says otherwise). A node's FACT edges must state
  its triples (open on a current memory, closed otherwise): else re-applied.
* **the index against the graph**: a memory the index lacks, holds of other text, status or
  model, or a record of no memory the graph holds. The re-index (``service.reindex``) fixes
  them all from the graph; nothing of the index is ever a truth.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from pydantic import ValidationError

from ..schemas import AuditEntry, Operation, StoredMemory
from . import ids
from .ports import IndexEntry

# Times that differ by less than this are the same instant (drivers round differently).
TOLERANCE = timedelta(milliseconds=1)
COMPARED = ("status", "content", "valid_at", "invalid_at", "updated_at")
REPAIRER = "memq-check"

Said = dict[str, str | None]  # what one side says about a memory, field by field


class DriftKind(StrEnum):
    MISSING_IN_GRAPH = "missing_in_graph"  # the audit trail holds a memory the graph lost
    DIFFERS = "differs"  # the graph's node disagrees with the audit snapshot of its version
    STALE_FACTS = "stale_facts"  # the node's FACT edges do not state its triples
    MISSING_IN_INDEX = "missing_in_index"  # a memory of the graph the index lacks
    INDEX_DIFFERS = "index_differs"  # the index holds it of other text, status or model
    NOT_IN_GRAPH = "not_in_graph"  # an index record of no memory the graph holds


INDEX_KINDS = frozenset({DriftKind.MISSING_IN_INDEX, DriftKind.INDEX_DIFFERS,
                         DriftKind.NOT_IN_GRAPH})


class Source(StrEnum):
    GRAPH = "graph"  # the graph's own state
    AUDIT = "audit"  # the latest audit snapshot


@dataclass(frozen=True)
class GraphMemory:
    """What a Memory node holds (``state``: parsed, None when the node is damaged), and which
    of its FACT edges are open or closed."""

    id: str
    user_id: str
    status: str  # plain text: a node may hold a value no Status has
    content: str
    valid_at: datetime | None  # None only on a damaged node
    invalid_at: datetime | None
    updated_at: datetime | None
    open_fact_ids: frozenset[str] = frozenset()
    closed_fact_ids: frozenset[str] = frozenset()
    state: StoredMemory | None = None


@dataclass(frozen=True)
class Drift:
    user_id: str
    memory_id: str
    kind: DriftKind
    index: Said | None  # what the index says; None: no record
    graph: Said | None  # what the graph says; None: no Memory node
    fields: tuple[str, ...]  # DIFFERS, INDEX_DIFFERS: the fields; STALE_FACTS: the problems
    truth: StoredMemory | None  # the state of record to write; None: none (see repairable)
    source: Source | None
    note: str

    @property
    def repairable(self) -> bool:
        """Index drift is repaired by the re-index; graph drift needs a truth."""
        return self.kind in INDEX_KINDS or self.truth is not None

    def describe(self) -> str:
        if self.kind in (DriftKind.DIFFERS, DriftKind.INDEX_DIFFERS):
            other = self.index if self.kind is DriftKind.INDEX_DIFFERS else self.graph
            mine = self.graph if self.kind is DriftKind.INDEX_DIFFERS else self.truth_said
            side = "index" if self.kind is DriftKind.INDEX_DIFFERS else "graph"
            body = "; ".join(f"{f}: {side}={_short((other or {}).get(f))} "
                             f"record={_short((mine or {}).get(f))}" for f in self.fields)
        elif self.kind is DriftKind.STALE_FACTS:
            body = "facts: " + ", ".join(self.fields)
        else:
            held = self.index or self.graph or self.truth_said or {}
            where = {DriftKind.NOT_IN_GRAPH: "only in the index",
                     DriftKind.MISSING_IN_INDEX: "not in the index",
                     DriftKind.MISSING_IN_GRAPH: "only in the audit trail"}[self.kind]
            body = f"{where} ({held.get('status')}, {_short(held.get('content'))})"
        if self.kind in INDEX_KINDS:
            tail = f"re-index: {self.note}"
        elif self.truth is not None:
            tail = (f"truth from {self.source} (updated_at {self.truth.updated_at.isoformat()}):"
                    f" {self.note}")
        else:
            tail = f"unrepairable: {self.note}"
        return f"{self.kind} {self.memory_id} of {self.user_id}: {body} -> {tail}"

    @property
    def truth_said(self) -> Said | None:
        return said_by_record(self.truth) if self.truth is not None else None

    def to_json(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id, "memory_id": self.memory_id, "kind": str(self.kind),
            "index": self.index, "graph": self.graph, "fields": list(self.fields),
            "repairable": self.repairable,
            "source": str(self.source) if self.source else None,
            "note": self.note,
            "truth": self.truth.model_dump(mode="json") if self.truth else None,
        }


@dataclass(frozen=True)
class Repair:
    """One user's repair of the graph: write ``memories``, with one REPAIR audit entry each;
    ``skipped``: graph drift it cannot fix, and why. The index is rebuilt from the graph
    afterwards (a memory's text is embedded again where the index holds no vector of it)."""

    memories: list[StoredMemory] = field(default_factory=list)
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


def said_by_record(m: StoredMemory) -> Said:
    return {"status": str(m.status), "content": m.content, "valid_at": _iso(m.valid_at),
            "invalid_at": _iso(m.invalid_at), "updated_at": _iso(m.updated_at),
            "content_hash": ids.content_hash(m.content), "model": m.embedding_model}


def said_by_graph(g: GraphMemory) -> Said:
    return {"status": g.status, "content": g.content, "valid_at": _iso(g.valid_at),
            "invalid_at": _iso(g.invalid_at), "updated_at": _iso(g.updated_at),
            "open_facts": ",".join(sorted(g.open_fact_ids)),
            "closed_facts": ",".join(sorted(g.closed_fact_ids))}


def said_by_index(e: IndexEntry) -> Said:
    return {"status": e.status, "content_hash": e.content_hash, "model": e.model}


def _differing(m: StoredMemory, g: GraphMemory) -> tuple[str, ...]:
    same = {
        "status": str(m.status) == g.status, "content": m.content == g.content,
        "valid_at": _same(m.valid_at, g.valid_at), "invalid_at": _same(m.invalid_at, g.invalid_at),
        "updated_at": _same(m.updated_at, g.updated_at),
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


def _graph_drift(g: GraphMemory, snap: StoredMemory | None) -> Drift | None:
    def drift(kind: DriftKind, fields: tuple[str, ...], truth: StoredMemory | None,
              source: Source | None, note: str) -> Drift:
        return Drift(g.user_id, g.id, kind, None, said_by_graph(g), fields, truth, source, note)

    if snap is not None and _later(snap.updated_at, g.updated_at):
        return drift(DriftKind.DIFFERS, _differing(snap, g) or ("updated_at",), snap,
                     Source.AUDIT, "the audit trail holds a later state")
    if snap is not None and _same(snap.updated_at, g.updated_at):
        differing = _differing(snap, g)
        if differing or g.state is None:
            return drift(DriftKind.DIFFERS, differing or ("unreadable",), snap, Source.AUDIT,
                         "the audit snapshot of that version decides")
    if g.state is None:
        return drift(DriftKind.DIFFERS, ("unreadable",), None, None,
                     "a damaged node, and no audit snapshot of its version")
    problems = fact_problems(g.state, g)
    if problems:
        return drift(DriftKind.STALE_FACTS, problems, g.state, Source.GRAPH,
                     "the facts do not match the memory")
    return None


def _index_drift(m: StoredMemory, e: IndexEntry | None) -> Drift | None:
    if e is None:
        return Drift(m.user_id, m.id, DriftKind.MISSING_IN_INDEX, None, said_by_record(m), (),
                     m, Source.GRAPH, "written again from the graph")
    record = said_by_record(m)
    fields = tuple(f for f, value in (("status", e.status), ("content_hash", e.content_hash),
                                      ("model", e.model)) if value != record[f])
    if not fields:
        return None
    return Drift(m.user_id, m.id, DriftKind.INDEX_DIFFERS, said_by_index(e), record, fields, m,
                 Source.GRAPH, "written again from the graph")


def find_drift(index: Mapping[str, IndexEntry], graph_side: Sequence[GraphMemory],
               snapshots: Mapping[str, StoredMemory], *, user_id: str) -> list[Drift]:
    """Every memory a store disagrees on, by memory id; ``index``: the index's records by id;
    ``snapshots``: per memory id, the latest audit snapshot (see :func:`latest_snapshots`).
    A memory whose graph drifts is not also reported for the index: its repair, then the
    re-index, fix both."""
    graph = {g.id: g for g in graph_side}
    drifts: list[Drift] = []
    for mid in sorted(index.keys() | graph.keys() | snapshots.keys()):
        g, snap, e = graph.get(mid), snapshots.get(mid), index.get(mid)
        if g is not None:
            found = _graph_drift(g, snap)
            record = g.state
        elif snap is not None:
            found = Drift(user_id, mid, DriftKind.MISSING_IN_GRAPH, None, None, (), snap,
                          Source.AUDIT, "restored from the latest audit snapshot")
            record = None
        else:
            found = Drift(user_id, mid, DriftKind.NOT_IN_GRAPH, said_by_index(e) if e else None,
                          None, (), None, None, "the graph holds no such memory: deleted")
            record = None
        if found is None and record is not None:
            found = _index_drift(record, e)
        if found is not None:
            drifts.append(found)
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


def plan_repair(drifts: Sequence[Drift], *, model_id: str, now: datetime) -> Repair:
    """What to write to the graph to fix one user's graph ``drifts`` (index drift is the
    re-index's). A vector, where one is needed, comes from ``model_id``'s embedder, so a
    memory of another embedding model is skipped, with the reason."""
    repair = Repair()
    for drift in drifts:
        if drift.kind in INDEX_KINDS:
            continue
        truth = drift.truth
        if truth is None:
            repair.skipped.append((drift, drift.note))
            continue
        if truth.embedding_model != model_id:
            repair.skipped.append((drift, f"needs a vector of {truth.embedding_model}, the "
                                          f"embedder is {model_id}"))
            continue
        repair.memories.append(truth)
        repair.audit.append(repair_entry(drift, truth, now))
    return repair
