"""The graph's fence, on the real Neo4j: a plan's write (``Neo4jGraph.apply``, one statement)
lands whole when the user is still at the version the plan was made from, and not at all --
no memory, fact, audit entry or lock flag -- when the user has moved on."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from memq.pipeline.adapters.neo4j.store import Neo4jGraph
from memq.pipeline.errors import StaleVersion
from memq.schemas import AuditEntry, Kind, StoredMemory, Triple

from .conftest import NEO4J_URI

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def graph(services: None) -> Iterator[tuple[Neo4jGraph, str]]:
    g = Neo4jGraph(NEO4J_URI)
    user = f"fence-{uuid.uuid4().hex[:8]}"
    try:
        yield g, user
    finally:
        g.delete_user(user)
        g.close()


def _plan(user: str, n: int, city: str) -> tuple[StoredMemory, AuditEntry]:
    memory = StoredMemory(
        id=f"m_{user}_{n}", user_id=user, content=f"The user lives in {city}.",
        kind=Kind.FACT, confidence=0.9, importance=0.5, source_turn_ids=[f"s/t{n}"],
        triples=[Triple(subject="user", predicate="lives_in", object=city)],
        valid_at=NOW, created_at=NOW, updated_at=NOW, embedding_model="test-model")
    entry = AuditEntry(id=f"a_{user}_{n}", user_id=user, memory_id=memory.id, operation="add",
                       after=memory.model_dump(mode="json"), reason="test",
                       source_turn_ids=memory.source_turn_ids, batch_id=f"b{n}",
                       extractor="test", at=NOW)
    return memory, entry


def test_a_plan_lands_whole_at_its_version_and_not_at_all_after(
        graph: tuple[Neo4jGraph, str]) -> None:
    g, user = graph
    first, first_audit = _plan(user, 1, "Paris")
    assert g.apply(user, [first], [first_audit], NOW, expected=0) == 1
    assert g.get(user, [first.id]) == [first]
    assert [e.id for e in g.audit(user)] == [first_audit.id]
    assert [(f["predicate"], f["object"]) for f in g.facts(user)] == [("lives_in", "Paris")]

    stale, stale_audit = _plan(user, 2, "Berlin")
    with pytest.raises(StaleVersion, match="at version 1, the plan was made at 0"):
        g.apply(user, [stale], [stale_audit], NOW, expected=0)
    assert g.version(user).version == 1
    assert g.get(user, [stale.id]) == []
    assert [e.id for e in g.audit(user)] == [first_audit.id]
    assert [f["object"] for f in g.facts(user)] == ["Paris"]
    with g._driver.session() as session:  # the lock flag is never left behind
        (flag,) = session.run("MATCH (u:User {id: $u}) RETURN u._lock AS f", u=user)
    assert flag["f"] is None

    assert g.apply(user, [stale], [stale_audit], NOW, expected=1) == 2
    assert g.apply(user, [], [], NOW, expected=None) == 3  # unfenced: any version
    assert g.get(user, [stale.id]) == [stale]


def test_a_plan_for_a_user_forgotten_since_leaves_no_trace(
        graph: tuple[Neo4jGraph, str]) -> None:
    g, user = graph
    memory, entry = _plan(user, 1, "Oslo")
    with pytest.raises(StaleVersion, match="no version any more"):
        g.apply(user, [memory], [entry], NOW, expected=3)
    assert user not in g.users()
    assert g.get(user, [memory.id]) == [] and g.audit(user) == []
    assert g.apply(user, [memory], [entry], NOW, expected=0) == 1  # a first plan makes it
    assert user in g.users()
