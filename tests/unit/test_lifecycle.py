"""Lifecycle steps on plain values: the seeds' formulas, idempotence, clusters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memq.pipeline import lifecycle
from memq.pipeline.lifecycle import Policy
from memq.schemas import Kind, Status, StoredMemory

T0 = datetime(2026, 1, 1, tzinfo=UTC)
P = Policy()


def mem(mid: str, importance: float = 0.6, *, kind: Kind = Kind.PREFERENCE,
        confidence: float = 0.9, **extra: object) -> StoredMemory:
    return StoredMemory.model_validate({
        "id": mid, "user_id": "u", "content": f"memory {mid}", "kind": kind,
        "confidence": confidence, "importance": importance, "source_turn_ids": [mid],
        "valid_at": T0, "created_at": T0, "updated_at": T0, "embedding_model": "m", **extra})


def days(n: float) -> datetime:
    return T0 + timedelta(days=n)


def test_decay_is_importance_times_rate_to_the_days_since_access() -> None:
    m = mem("a", 0.8)
    assert lifecycle.decayed(m, days(10), P) == pytest.approx(0.8 * 0.95**10)
    seen = m.with_changes(last_accessed_at=days(10))
    assert lifecycle.decayed(seen, days(10), P) == pytest.approx(0.8)


def test_decay_archives_exactly_below_the_floor_and_is_idempotent() -> None:
    # 0.5 * 0.95^d < 0.1  <=>  d > 31.38;  0.6: d > 34.93
    memories = [mem("low", 0.5), mem("mid", 0.6), mem("gone", 0.1, status=Status.ARCHIVED)]
    changes = lifecycle.decay(memories, days(33), P)
    assert [c.before.id for c in changes] == ["low"]
    assert changes[0].after.status is Status.ARCHIVED
    assert changes[0].after.updated_at == days(33)
    after = [c.after for c in changes] + memories[1:]
    assert lifecycle.decay(after, days(33), P) == []


def test_recall_boost_is_capped_and_outlives_an_unrecalled_twin() -> None:
    twin, recalled = mem("twin", 0.6), mem("recalled", 0.6)
    boosted = lifecycle.recalled(recalled, days(20), P)
    assert boosted.importance == pytest.approx(0.6 * 0.95**20 + 0.1)
    assert boosted.last_accessed_at == days(20)
    archived = {c.before.id for c in lifecycle.decay([twin, boosted], days(40), P)}
    assert archived == {"twin"}
    assert lifecycle.recalled(mem("x", 0.99), T0, P).importance == 1.0


def test_recall_score_is_similarity_decay_confidence() -> None:
    m = mem("a", 0.5, confidence=0.8)
    assert lifecycle.recall_score(0.9, m, days(2), P) == pytest.approx(0.9 * 0.5 * 0.95**2 * 0.8)


def test_expiry_by_kind_by_session_and_explicit() -> None:
    p = Policy(ttl={Kind.EVENT: timedelta(days=30)}, session_grace=timedelta(hours=24))
    event = mem("event", kind=Kind.EVENT)
    pref = mem("pref")
    session = mem("session", scope="session")
    explicit = mem("explicit", expires_at=days(3))
    memories = [event, pref, session, explicit]
    assert [c.before.id for c in lifecycle.expire(memories, days(0.5), p)] == []
    assert [c.before.id for c in lifecycle.expire(memories, days(1), p)] == ["session"]
    assert [c.before.id for c in lifecycle.expire(memories, days(3), p)] == ["session",
                                                                             "explicit"]
    assert [c.before.id for c in lifecycle.expire(memories, days(365), p)] == [
        "event", "session", "explicit"]  # preferences never expire


def test_capacity_archives_the_lowest_scores() -> None:
    p = Policy(capacity=2)
    memories = [mem("a", 0.9), mem("b", 0.2), mem("c", 0.5), mem("d", 0.9, confidence=0.1)]
    changes = lifecycle.over_capacity(memories, T0, p)
    assert sorted(c.before.id for c in changes) == ["b", "d"]  # 0.2*0.9 and 0.9*0.1 lowest
    assert lifecycle.over_capacity([c.after for c in changes] + memories[:1] + memories[2:2],
                                   T0, p) == []


def test_clusters_need_min_size_and_are_deterministic() -> None:
    run = [("r1", [1.0, 0.0, 0.0]), ("r2", [0.95, 0.3, 0.0]), ("r3", [0.9, 0.0, 0.4])]
    bake = [("b1", [0.0, 0.0, 1.0]), ("b2", [0.1, 0.0, 0.99])]
    found = lifecycle.clusters(run + bake, similarity=0.8, min_size=3)
    assert found == [["r1", "r2", "r3"]]
    assert lifecycle.clusters(list(reversed(run + bake)), similarity=0.8, min_size=3) == found
    assert lifecycle.clusters(bake, similarity=0.8, min_size=3) == []
    assert lifecycle.clusters([], similarity=0.8, min_size=3) == []
