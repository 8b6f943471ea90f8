"""check.find_drift / latest_snapshots / plan_repair on plain values: no store, no clock. The
graph is checked against its audit trail, the index against the graph."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from memq.pipeline import ids
from memq.pipeline.check import (
    Drift,
    DriftKind,
    GraphMemory,
    Source,
    find_drift,
    latest_snapshots,
    plan_repair,
)
from memq.pipeline.ports import IndexEntry
from memq.schemas import AuditEntry, Kind, Operation, Status, StoredMemory, Triple

USER = "u1"
MODEL = "test-model"
T1 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
T2 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
T3 = datetime(2026, 11, 3, 9, 0, tzinfo=UTC)
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
PROD = Triple(subject="user", predicate="production_environment", object="CentOS 7")


def memory(content: str = "The user's production environment is CentOS 7.", *,
           status: Status = Status.CURRENT, updated_at: datetime = T1,
           triples: tuple[Triple, ...] = (PROD,), **changes: Any) -> StoredMemory:
    return StoredMemory(
        id=ids.memory_id(USER, content, ["t1"]), user_id=USER, content=content, kind=Kind.FACT,
        confidence=0.9, importance=0.5, triples=list(triples), source_turn_ids=["t1"],
        valid_at=T1, status=status, created_at=T1, updated_at=updated_at,
        embedding_model=MODEL, **changes)


def fact_ids(m: StoredMemory) -> frozenset[str]:
    return frozenset(ids.triple_id(m.id, t.subject, t.predicate, t.object) for t in m.triples)


def node(m: StoredMemory, **changes: Any) -> GraphMemory:
    """The Memory node the pipeline writes for ``m``, with consistent FACT edges."""
    g = GraphMemory(id=m.id, user_id=m.user_id, status=str(m.status), content=m.content,
                    valid_at=m.valid_at, invalid_at=m.invalid_at, updated_at=m.updated_at,
                    open_fact_ids=fact_ids(m) if m.is_current else frozenset(),
                    closed_fact_ids=frozenset() if m.is_current else fact_ids(m), state=m)
    return replace(g, **changes)


def superseded(m: StoredMemory, at: datetime) -> StoredMemory:
    return m.with_changes(status=Status.SUPERSEDED, invalid_at=T2, superseded_by="m_next",
                          updated_at=at)


def entry(m: StoredMemory | None, op: Operation = Operation.ADD, *, memory_id: str = "",
          after: dict[str, Any] | None = None, n: int = 0) -> AuditEntry:
    mid = m.id if m else memory_id
    return AuditEntry(id=f"a{n}", user_id=USER, memory_id=mid, operation=op,
                      after=after if after is not None else (m.model_dump(mode="json") if m
                                                             else None),
                      reason="r", batch_id="b", extractor="x", at=T1)


def only(drifts: list[Drift]) -> Drift:
    assert len(drifts) == 1, drifts
    return drifts[0]


def indexed(*memories: StoredMemory, **changes: Any) -> dict[str, IndexEntry]:
    """The index entries the pipeline writes for these memories."""
    return {m.id: replace(IndexEntry(id=m.id, status=str(m.status),
                                     content_hash=ids.content_hash(m.content),
                                     model=m.embedding_model), **changes) for m in memories}


def drift(index: dict[str, IndexEntry], graph: list[GraphMemory],
          snapshots: dict[str, StoredMemory]) -> list[Drift]:
    return find_drift(index, graph, snapshots, user_id=USER)


# -- no drift ----------------------------------------------------------------------------------
def test_agreeing_stores_have_no_drift() -> None:
    cur = memory()
    old = superseded(memory("The user's production environment is Debian."), T2)
    assert drift(indexed(cur, old), [node(cur), node(old)], {cur.id: cur, old.id: old}) == []


def test_sub_millisecond_time_differences_are_the_same_instant() -> None:
    m = memory()
    g = node(m, updated_at=m.updated_at + timedelta(microseconds=400))
    assert drift(indexed(m), [g], {m.id: m}) == []


def test_a_node_newer_than_every_snapshot_is_the_record() -> None:
    m = memory()
    later = m.with_changes(importance=0.1, updated_at=T2)  # a decay: no snapshot of it
    assert drift(indexed(later), [node(later)], {m.id: m}) == []


# -- the graph against its audit trail ------------------------------------------------------------
def test_a_lost_node_is_restored_from_its_latest_snapshot() -> None:
    m = memory()
    d = only(drift(indexed(m), [], {m.id: m}))
    assert (d.kind, d.truth, d.source) == (DriftKind.MISSING_IN_GRAPH, m, Source.AUDIT)


def test_a_node_older_than_its_latest_snapshot_takes_the_snapshot() -> None:
    m = memory()
    later = superseded(m, T2)
    d = only(drift(indexed(m), [node(m)], {m.id: later}))
    assert (d.kind, d.truth, d.source) == (DriftKind.DIFFERS, later, Source.AUDIT)
    assert "status" in d.fields


def test_a_node_that_disagrees_with_the_snapshot_of_its_version_takes_it() -> None:
    m = memory()
    d = only(drift(indexed(m), [node(m, status="archived")], {m.id: m}))
    assert (d.kind, d.fields, d.truth) == (DriftKind.DIFFERS, ("status",), m)


def test_a_damaged_node_without_a_snapshot_is_unrepairable() -> None:
    m = memory()
    d = only(drift(indexed(m), [node(m, state=None)], {}))
    assert d.kind is DriftKind.DIFFERS and not d.repairable and d.truth is None


def test_open_fact_of_a_superseded_memory_is_stale() -> None:
    m = superseded(memory(), T2)
    g = node(m, open_fact_ids=fact_ids(m), closed_fact_ids=frozenset())
    d = only(drift(indexed(m), [g], {m.id: m}))
    assert d.kind is DriftKind.STALE_FACTS and d.truth == m and d.source is Source.GRAPH
    assert "open on a superseded memory" in d.fields[0]


def test_current_memory_with_closed_or_missing_fact_is_stale() -> None:
    extra = Triple(subject="user", predicate="works_at", object="Acme")
    m = memory(triples=(PROD, extra))
    prod, acme = sorted(fact_ids(m))
    d = only(drift(indexed(m), [node(m, open_fact_ids=frozenset(),
                                     closed_fact_ids=frozenset({prod}))], {m.id: m}))
    assert d.kind is DriftKind.STALE_FACTS
    assert set(d.fields) == {f"{prod} closed on a current memory",
                             f"{acme} missing on a current memory"}


def test_graph_drift_takes_precedence_over_facts_and_index() -> None:
    m = memory()
    d = only(drift({}, [node(m, status="superseded", open_fact_ids=frozenset())], {m.id: m}))
    assert d.kind is DriftKind.DIFFERS


# -- the index against the graph --------------------------------------------------------------
def test_index_drift_is_named_and_repaired_by_the_re_index() -> None:
    gone, stale, moved = memory("The user is a PM."), memory(), memory("The user likes tea.")
    done = superseded(memory("The user is in Oslo."), T2)
    index = {**indexed(stale, content_hash="other"), **indexed(moved, model="older-model"),
             **indexed(done, status="current"),
             "m_stray": IndexEntry(id="m_stray", status="current", content_hash="x", model=MODEL)}
    found = {d.memory_id: d for d in drift(index, [node(m) for m in (gone, stale, moved, done)],
                                           {})}
    assert {i: (d.kind, d.fields) for i, d in found.items()} == {
        gone.id: (DriftKind.MISSING_IN_INDEX, ()),
        stale.id: (DriftKind.INDEX_DIFFERS, ("content_hash",)),
        moved.id: (DriftKind.INDEX_DIFFERS, ("model",)),
        done.id: (DriftKind.INDEX_DIFFERS, ("status",)),
        "m_stray": (DriftKind.NOT_IN_GRAPH, ()),
    }
    assert all(d.repairable for d in found.values())
    assert plan_repair(list(found.values()), model_id=MODEL, now=NOW).memories == []


# -- snapshots ------------------------------------------------------------------------------------
def test_latest_snapshot_by_updated_at_skipping_non_states() -> None:
    m = memory()
    later = superseded(m, T2)
    trail = [
        entry(later, Operation.SUPERSEDE, n=0),
        entry(m, Operation.ADD, n=1),  # older state, listed after
        entry(None, Operation.DROP_DUPLICATE, memory_id=m.id,
              after={"candidate": {"content": "x"}}, n=2),
        entry(None, Operation.UPDATE, memory_id=m.id, after={"id": m.id, "broken": 1}, n=3),
    ]
    assert latest_snapshots(trail) == {m.id: later}


def test_latest_snapshot_tie_goes_to_the_later_entry() -> None:
    m = memory()
    late = superseded(m, T1)  # a late arrival: ADD and SUPERSEDE in one batch, same time
    assert latest_snapshots([entry(m, n=0), entry(late, Operation.SUPERSEDE, n=1)]) == {
        m.id: late}


# -- repair plan ----------------------------------------------------------------------------------
def test_repair_entries_are_deterministic_repair_audits() -> None:
    m = memory()
    drifts = drift(indexed(m), [node(m, status="archived")], {m.id: m})
    first = plan_repair(drifts, model_id=MODEL, now=NOW)
    again = plan_repair(drifts, model_id=MODEL, now=NOW + timedelta(hours=1))
    (audit,) = first.audit
    assert first.memories == [m]
    assert audit.operation is Operation.REPAIR
    assert audit.id == ids.audit_id(f"repair:differs:{m.updated_at.isoformat()}", m.id, "repair")
    assert audit.id == again.audit[0].id
    assert audit.after == m.model_dump(mode="json")
    assert "differs" in audit.reason and "status" in audit.reason


def test_repair_skips_unrepairable_and_foreign_models() -> None:
    lost = memory("The user lives in Porto.")
    foreign = memory().with_changes(embedding_model="other-model")
    drifts = drift({}, [node(lost, state=None), node(foreign, status="archived")],
                   {foreign.id: foreign})
    plan = plan_repair(drifts, model_id=MODEL, now=NOW)
    assert plan.memories == []
    skipped = dict((d.memory_id, why) for d, why in plan.skipped)
    assert "no audit snapshot" in skipped[lost.id]
    assert "other-model" in skipped[foreign.id]


def test_drift_json_is_serialisable_and_lines_read() -> None:
    m = memory()
    (d,) = drift(indexed(m), [node(m, status="archived")], {m.id: m})
    out = json.loads(json.dumps(d.to_json()))
    assert out["kind"] == "differs" and out["fields"] == ["status"]
    assert out["truth"]["id"] == m.id and out["source"] == "audit" and out["repairable"]
    assert "status: graph='archived' record='current'" in d.describe()
    (e,) = drift({}, [node(m)], {m.id: m})
    assert e.describe().startswith(f"missing_in_index {m.id} of {USER}: not in the index")
