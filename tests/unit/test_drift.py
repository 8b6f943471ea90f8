"""check.find_drift / latest_snapshots / plan_repair on plain values: no store, no clock."""

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
                    closed_fact_ids=frozenset() if m.is_current else fact_ids(m))
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


# -- no drift ----------------------------------------------------------------------------------
def test_agreeing_sides_have_no_drift() -> None:
    cur = memory()
    old = superseded(memory("The user lives in Porto."), T2)
    assert find_drift([cur, old], [node(cur), node(old)], {}) == []


def test_sub_millisecond_time_differences_are_the_same_instant() -> None:
    m = memory()
    g = node(m, updated_at=m.updated_at + timedelta(microseconds=400))
    assert find_drift([m], [g], {}) == []


# -- missing on one side -------------------------------------------------------------------------
def test_missing_in_graph_restores_the_vector_record() -> None:
    m = memory()
    d = only(find_drift([m], [], {}))
    assert d.kind is DriftKind.MISSING_IN_GRAPH
    assert d.truth == m and d.source is Source.VECTORS
    assert d.graph is None and d.vectors is not None and d.vectors["status"] == "current"


def test_missing_in_graph_prefers_a_later_audit_snapshot() -> None:
    m = memory()
    later = superseded(m, T3)
    d = only(find_drift([m], [], {m.id: later}))
    assert d.truth == later and d.source is Source.AUDIT


def test_missing_in_vectors_restores_the_latest_snapshot() -> None:
    m = memory()
    d = only(find_drift([], [node(m)], {m.id: m}))
    assert d.kind is DriftKind.MISSING_IN_VECTORS
    assert d.truth == m and d.source is Source.AUDIT and d.repairable
    assert d.vectors is None


def test_missing_in_vectors_without_snapshot_is_unrepairable() -> None:
    m = memory()
    d = only(find_drift([], [node(m)], {}))
    assert d.kind is DriftKind.MISSING_IN_VECTORS
    assert not d.repairable and d.truth is None and d.source is None
    assert "unrepairable" in d.describe()


# -- differs: the later updated_at wins ----------------------------------------------------------
def test_vectors_updated_later_win() -> None:
    old = memory()
    new = superseded(old, T2)  # chroma has the supersede, the graph missed it
    d = only(find_drift([new], [node(old)], {old.id: old}))
    assert d.kind is DriftKind.DIFFERS
    assert d.fields == ("status", "invalid_at", "updated_at")
    assert d.truth == new and d.source is Source.VECTORS
    assert d.vectors and d.graph
    assert (d.vectors["status"], d.graph["status"]) == ("superseded", "current")


def test_graph_updated_later_wins_with_its_snapshot() -> None:
    old = memory()
    new = superseded(old, T2)  # the graph (and its audit trail) has the supersede
    d = only(find_drift([old], [node(new)], {old.id: new}))
    assert d.kind is DriftKind.DIFFERS
    assert d.truth == new and d.source is Source.GRAPH


def test_graph_updated_later_without_its_snapshot_is_unrepairable() -> None:
    old = memory()
    new = superseded(old, T2)
    d = only(find_drift([old], [node(new)], {old.id: old}))  # the snapshot is the older state
    assert d.kind is DriftKind.DIFFERS and not d.repairable


def test_tie_is_decided_by_the_snapshot_of_that_version() -> None:
    m = memory()
    tampered = node(m, status="archived")  # status changed in place, updated_at untouched
    d = only(find_drift([m], [tampered], {m.id: m}))
    assert d.kind is DriftKind.DIFFERS and d.fields == ("status",)
    assert d.truth == m and d.source is Source.AUDIT
    assert "status: vectors='current' graph='archived'" in d.describe()


def test_tie_without_snapshot_is_unrepairable() -> None:
    m = memory()
    d = only(find_drift([m], [node(m, content="Something else.")], {}))
    assert d.kind is DriftKind.DIFFERS and d.fields == ("content",) and not d.repairable


# -- stale facts ----------------------------------------------------------------------------------
def test_open_fact_of_a_superseded_memory_is_stale() -> None:
    old = superseded(memory(), T2)
    d = only(find_drift([old], [node(old, open_fact_ids=fact_ids(old),
                                      closed_fact_ids=frozenset())], {}))
    assert d.kind is DriftKind.STALE_FACTS
    assert d.truth == old and d.source is Source.VECTORS
    (problem,) = d.fields
    assert problem.endswith("open on a superseded memory")


def test_current_memory_with_closed_or_missing_fact_is_stale() -> None:
    other = Triple(subject="user", predicate="lives_in", object="Lisbon")
    m = memory(triples=(PROD, other))
    prod_id, other_id = (ids.triple_id(m.id, t.subject, t.predicate, t.object)
                         for t in (PROD, other))
    g = node(m, open_fact_ids=frozenset({"t_foreign"}), closed_fact_ids=frozenset({prod_id}))
    d = only(find_drift([m], [g], {}))
    assert d.kind is DriftKind.STALE_FACTS
    assert set(d.fields) == {f"{prod_id} closed on a current memory",
                             f"{other_id} missing on a current memory",
                             "t_foreign open but not a triple of the memory"}


def test_differs_takes_precedence_over_facts() -> None:
    m = memory()
    d = only(find_drift([m], [node(m, status="superseded", open_fact_ids=frozenset())],
                        {m.id: m}))
    assert d.kind is DriftKind.DIFFERS


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
def test_repair_plan_reembeds_only_missing_or_changed_content() -> None:
    gone = memory("The user is a product manager.")
    wrong = memory()
    renamed = memory("The user prefers short answers.", updated_at=T2)
    drifts = find_drift(
        [wrong, renamed], [node(gone), node(wrong, status="archived"),
                           node(renamed, content="Old words.", updated_at=T1)],
        {gone.id: gone, wrong.id: wrong})
    plan = plan_repair(drifts, model_id=MODEL, now=NOW)
    assert not plan.skipped
    reembed = {m.id: r for m, r in zip(plan.memories, plan.reembed, strict=True)}
    assert reembed == {gone.id: True, wrong.id: False, renamed.id: False}
    # renamed: chroma (later) already holds the new content and its vector


def test_repair_entries_are_deterministic_repair_audits() -> None:
    m = memory()
    drifts = find_drift([m], [node(m, status="archived")], {m.id: m})
    first = plan_repair(drifts, model_id=MODEL, now=NOW)
    again = plan_repair(drifts, model_id=MODEL, now=NOW + timedelta(hours=1))
    (audit,) = first.audit
    assert audit.operation is Operation.REPAIR
    assert audit.id == ids.audit_id(f"repair:differs:{m.updated_at.isoformat()}", m.id, "repair")
    assert audit.id == again.audit[0].id
    assert audit.after == m.model_dump(mode="json")
    assert "differs" in audit.reason and "status" in audit.reason


def test_repair_skips_unrepairable_and_foreign_models() -> None:
    lost = memory("The user lives in Porto.")
    foreign = memory().with_changes(embedding_model="other-model")
    drifts = find_drift([], [node(lost), node(foreign)], {foreign.id: foreign})
    plan = plan_repair(drifts, model_id=MODEL, now=NOW)
    assert plan.memories == []
    skipped = dict((d.memory_id, why) for d, why in plan.skipped)
    assert skipped[lost.id] == "no audit snapshot of it"
    assert "other-model" in skipped[foreign.id]


def test_drift_json_is_serialisable() -> None:
    m = memory()
    (d,) = find_drift([m], [node(m, status="archived")], {m.id: m})
    out = json.loads(json.dumps(d.to_json()))
    assert out["kind"] == "differs" and out["fields"] == ["status"]
    assert out["truth"]["id"] == m.id and out["source"] == "audit" and out["repairable"]
