"""pipeline.correct (a user's correction as a plan) and memq.Memory's pure parts (scope and
filters), on plain values; through the fakes, the correction commits fenced."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memq.pipeline import ids, service
from memq.pipeline.correct import REASON, correction
from memq.pipeline.merge import OfflineJudge
from memq.pipeline.rules import RuleExtractor
from memq.pipeline.testing import FencedGraph, HashEmbedder, InMemoryIndex
from memq.schemas import Kind, Operation, Status, StoredMemory, Triple
from memq.workers.mem0 import _matches, _scope

T0 = datetime(2026, 3, 1, tzinfo=UTC)
NOW = datetime(2026, 12, 1, tzinfo=UTC)
EMBED = HashEmbedder()


def _old() -> StoredMemory:
    return StoredMemory(
        id=ids.memory_id("u1", "The user lives in Lisbon.", ["s/t1"]), user_id="u1",
        content="The user lives in Lisbon.", kind=Kind.FACT, confidence=0.9, importance=0.7,
        triples=[Triple(subject="user", predicate="lives_in", object="Lisbon")],
        source_turn_ids=["s/t1"], valid_at=T0, created_at=T0, updated_at=T0,
        embedding_model=EMBED.model_id)


def test_a_correction_supersedes_the_old_version_and_keeps_its_valid_time() -> None:
    old = _old()
    plan = correction(old, "The user lives in Porto.", EMBED.embed(["x"])[0], now=NOW,
                      model_id=EMBED.model_id)
    new, closed = (w.memory for w in plan.writes)
    assert new.content == "The user lives in Porto." and new.is_current
    assert (new.valid_at, new.source_turn_ids, new.kind) == (T0, ["s/t1"], Kind.FACT)
    assert new.id == ids.memory_id("u1", "The user lives in Porto.", ["s/t1"])
    assert closed.status == Status.SUPERSEDED and closed.superseded_by == new.id
    assert closed.invalid_at == T0  # as stated, it was never true: no as-of read shows it
    assert [(e.operation, e.memory_id, e.reason) for e in plan.audit] == [
        (Operation.ADD, new.id, REASON), (Operation.SUPERSEDE, old.id, REASON)]
    again = correction(old, "The user lives in Porto.", EMBED.embed(["x"])[0], now=NOW,
                       model_id=EMBED.model_id)
    assert [e.id for e in again.audit] == [e.id for e in plan.audit]  # deterministic


def test_the_same_text_or_a_closed_memory_is_no_correction() -> None:
    old = _old()
    same = correction(old, "  the user lives in lisbon. ", [0.0], now=NOW, model_id="m")
    assert same.writes == [] and same.audit == []
    with pytest.raises(ValueError, match="only a current memory"):
        correction(old.with_changes(status=Status.SUPERSEDED), "x", [0.0], now=NOW,
                   model_id="m")
    with pytest.raises(ValueError, match="empty"):
        correction(old, "   ", [0.0], now=NOW, model_id="m")


def test_a_correction_commits_fenced_through_the_fakes() -> None:
    graph, index = FencedGraph(), InMemoryIndex()
    ports = service.Ports(embedder=EMBED, extractor=RuleExtractor(), judge=OfflineJudge(),
                          memories=index, episodes=index, graph=graph)
    old = _old()
    v = service.commit(ports, "u1", [old], EMBED.embed([old.content]), [], NOW, expected=0)
    plan = correction(old, "The user lives in Porto.", EMBED.embed(["Porto"])[0], now=NOW,
                      model_id=EMBED.model_id)
    service.commit_plan(ports, plan, NOW, expected=v)
    assert [m.content for m in graph.read_memories("u1")] == ["The user lives in Porto."]
    assert graph.read_memories("u1", as_of=NOW) == graph.read_memories("u1")
    assert {m.id for m in index.memories("u1", include_inactive=True)} == {
        old.id, plan.writes[0].memory.id}


def test_mem0_scopes_map_to_memq_users() -> None:
    assert _scope({"user_id": "alice", "agent_id": "bot"}) == ("alice", {"agent_id": "bot"})
    assert _scope({"agent_id": "bot"}) == ("agent:bot", {"agent_id": "bot"})
    assert _scope({"run_id": "r1"}) == ("run:r1", {"run_id": "r1"})
    with pytest.raises(ValueError, match="one of user_id"):
        _scope({})
    with pytest.raises(ValueError, match="whitespace"):
        _scope({"user_id": "a b"})


def test_mem0_filter_operators() -> None:
    assert _matches("movies", "movies") and not _matches("food", "movies")
    assert _matches("a", {"in": ["a", "b"]}) and not _matches("c", {"in": ["a", "b"]})
    assert _matches("a", {"ne": "b"}) and not _matches("a", {"eq": "b"})
    assert _matches(NOW, {"gte": "2026-11-01T00:00:00Z", "lt": "2027-01-01T00:00:00+00:00"})
    assert not _matches(T0, {"gte": "2026-11-01T00:00:00Z"})
    assert not _matches(None, {"gte": "2026-11-01T00:00:00Z"})
    with pytest.raises(ValueError, match="operator"):
        _matches("a", {"like": "a%"})
    with pytest.raises(ValueError, match="time zone"):
        _matches(NOW, {"gte": "2026-11-01T00:00:00"})
