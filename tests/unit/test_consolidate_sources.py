"""Consolidation's sources (``jobs.consolidate``): the user's own turns and memories cluster into
a semantic memory; a named person's (multi-party chat) never do -- they would be summarised
as the user's, and their turns, embedded with name and date, cluster by greeting alone.
Through the shipped fakes and the rule extractor."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memq.pipeline import jobs, service
from memq.pipeline.lifecycle import Policy
from memq.pipeline.merge import OfflineJudge
from memq.pipeline.ports import EpisodeItem
from memq.pipeline.predicates import Predicates
from memq.pipeline.rules import RuleExtractor
from memq.pipeline.testing import FencedGraph, HashEmbedder, InMemoryIndex

T0 = datetime(2023, 5, 1, 9, 0, tzinfo=UTC)
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _run(speaker: str | None, text: str = "Went for a long run by the river this morning.",
         vector: list[float] | None = None) -> list[str]:
    graph, index = FencedGraph(), InMemoryIndex()
    ports = service.Ports(embedder=HashEmbedder(), extractor=RuleExtractor(),
                          judge=OfflineJudge(), memories=index, episodes=index, graph=graph)
    vector = vector or ports.embedder.embed([text])[0]
    episodes = [EpisodeItem(id=f"e{i}", content=text, vector=vector,
                            event_at=T0 + timedelta(days=i), turn_id=f"s{i}/t1",
                            speaker=speaker) for i in range(3)]
    marked: list[str] = []
    jobs.consolidate(ports, "u1", NOW, Policy(), memories=[], episodes=episodes,
                     mark_episodes=lambda ids, _into: marked.extend(ids),
                     fence=jobs.Fence.begin(ports, "u1"),
                     is_single=Predicates.default().is_single)
    return [m.content for m in graph.read_memories("u1")] + marked


def test_the_users_own_turns_consolidate() -> None:
    found = _run(None)
    assert any("long run by the river" in c for c in found) and {"e0", "e1", "e2"} <= set(found)


def test_a_named_persons_turns_do_not() -> None:
    assert _run("Calvin") == []


def test_a_cluster_that_says_nothing_is_left_alone() -> None:
    """Three "?" turns cluster (LongMemEval has them; MiniLM embeds them alike, the hashing
    embedder not at all): no memory, and no crash of the job."""
    assert [c for c in _run(None, "?", vector=[1.0, 0.0]) if not c.startswith("e")] == []
