"""Consolidation's sources (``jobs.consolidate``): the user's own turns and memories cluster into
a semantic memory; a named person's (multi-party chat) never do -- they would be summarised
as the user's, and their turns, embedded with name and date, cluster by greeting alone.
Through the shipped fakes and the rule extractor."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memq.pipeline import jobs, service
from memq.pipeline.errors import StaleVersion
from memq.pipeline.lifecycle import Policy
from memq.pipeline.merge import OfflineJudge
from memq.pipeline.predicates import Predicates
from memq.pipeline.rules import RuleExtractor
from memq.pipeline.testing import FencedGraph, HashEmbedder, InMemoryIndex
from memq.schemas import Turn

T0 = datetime(2023, 5, 1, 9, 0, tzinfo=UTC)
NOW = datetime(2026, 12, 1, tzinfo=UTC)
RUN = "Went for a long run by the river this morning."


def _stores(speaker: str | None = None, text: str = RUN, vector: list[float] | None = None,
            role: str = "user") -> tuple[service.Ports, FencedGraph, InMemoryIndex, list[str]]:
    """Three turns alike of user u1, one a session, in the graph (words) and the index
    (vectors); their episode ids."""
    graph, index = FencedGraph(), InMemoryIndex()
    ports = service.Ports(embedder=HashEmbedder(), extractor=RuleExtractor(),
                          judge=OfflineJudge(), memories=index, episodes=index, graph=graph)
    vector = vector or ports.embedder.embed([text])[0]
    for i in range(3):
        turn = [Turn(turn_id="t1", role=role, content=text, timestamp=T0 + timedelta(days=i),
                     speaker=speaker)]
        graph.add_episodes("u1", f"s{i}", turn, NOW)
        index.add("u1", f"s{i}", turn, [vector], ports.embedder.model_id, NOW)
    ids_ = [h.id for h in graph.unconsolidated_turns("u1")]
    return ports, graph, index, ids_


def _consolidate(ports: service.Ports) -> list[str]:
    """The job's consolidation on u1 (no memories): the memories it made."""
    fence = jobs.Fence.begin(ports, "u1")
    jobs.consolidate(ports, "u1", NOW, Policy(), memories=[],
                     episodes=jobs.unconsolidated_episodes(ports, "u1", fence), fence=fence,
                     is_single=Predicates.default().is_single)
    return [m.content for m in ports.graph.read_memories("u1")]


def _run(speaker: str | None, text: str = RUN, vector: list[float] | None = None) -> list[str]:
    """The memories consolidation makes of three turns alike, and the turns it marked (their
    references: the graph no longer offers them)."""
    ports, graph, _, _ = _stores(speaker, text, vector)
    made = _consolidate(ports)
    left = {h.source_turn_ids[0] for h in graph.unconsolidated_turns("u1")}
    return made + sorted({f"s{i}/t1" for i in range(3)} - left)


def test_the_users_own_turns_consolidate() -> None:
    found = _run(None)
    assert any("long run by the river" in c for c in found)
    assert {"s0/t1", "s1/t1", "s2/t1"} <= set(found)  # marked in the graph


def test_a_named_persons_turns_do_not() -> None:
    assert _run("Calvin") == []


def test_a_cluster_that_says_nothing_is_left_alone() -> None:
    """Three "?" turns cluster (LongMemEval has them; MiniLM embeds them alike, the hashing
    embedder not at all): no memory, and no crash of the job."""
    assert _run(None, "?", vector=[1.0, 0.0]) == []


def test_a_consolidated_turn_is_offered_once_and_the_mark_is_the_graphs() -> None:
    ports, graph, _, ids_ = _stores()
    (made,) = _consolidate(ports)
    assert graph.unconsolidated_turns("u1") == []
    (memory,) = graph.read_memories("u1")
    assert sorted(memory.derived_from) == sorted(ids_)
    assert _consolidate(ports) == [made]  # a second run finds nothing left


def test_only_the_users_turns_are_offered_with_their_words_and_vectors() -> None:
    ports, _, _, _ = _stores(role="assistant")
    assert jobs.unconsolidated_episodes(ports, "u1", jobs.Fence.begin(ports, "u1")) == []
    ports, _, _, ids_ = _stores(speaker="Calvin")
    found = jobs.unconsolidated_episodes(ports, "u1", jobs.Fence.begin(ports, "u1"))
    assert [(e.id, e.content, e.speaker, e.turn_id) for e in found] == [
        (i, RUN, "Calvin", f"s{n}/t1") for n, i in enumerate(ids_)]
    assert all(e.vector == ports.embedder.embed([RUN])[0] for e in found)


def test_a_turn_an_old_record_marks_is_not_consolidated_twice() -> None:
    """Records written before the graph held consolidation's state carry the mark in the
    index: such a turn is left out, and its mark copied into the graph, fenced."""
    ports, graph, index, ids_ = _stores()
    for i in ids_:
        index.legacy_mark("u1", i, "m_before")
    fence = jobs.Fence.begin(ports, "u1")
    assert jobs.unconsolidated_episodes(ports, "u1", fence) == []
    assert graph.unconsolidated_turns("u1") == []  # the graph holds the mark now
    assert fence.version == graph.version("u1").version == 1  # a fenced write
    assert _consolidate(ports) == []  # nothing made of them again

    ports, graph, index, ids_ = _stores()
    index.legacy_mark("u1", ids_[0], "m_before")
    stale = jobs.Fence(graph.version("u1").version)
    graph.apply("u1", [], [], NOW, expected=None)  # another writer since the job began
    with pytest.raises(StaleVersion):
        jobs.unconsolidated_episodes(ports, "u1", stale)
    assert len(graph.unconsolidated_turns("u1")) == 3  # nothing marked
