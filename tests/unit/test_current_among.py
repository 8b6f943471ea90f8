"""service.current_among: the graph asked for the head of each neighbour list first gives what
one question about the whole lists gives."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime

from memq.pipeline.service import HEAD_SLACK, current_among
from memq.schemas import Kind, Status, StoredMemory

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def _memory(mid: str, current: bool) -> StoredMemory:
    return StoredMemory(id=mid, user_id="u", content=f"Memory {mid}.", kind=Kind.FACT,
                        confidence=0.9, importance=0.5, triples=[], source_turn_ids=["s/t"],
                        valid_at=NOW, created_at=NOW, updated_at=NOW, embedding_model="m",
                        status=Status.CURRENT if current else Status.SUPERSEDED)


class Graph:
    """near_current as near_current.cypher defines it: per list, the first k current; every
    id asked about counted as a lookup."""

    def __init__(self, memories: dict[str, StoredMemory]) -> None:
        self.memories = memories
        self.lookups = 0
        self.calls = 0

    def near_current(self, user_id: str, near: Sequence[Sequence[str]],
                     k: int) -> list[StoredMemory]:
        self.calls += 1
        self.lookups += sum(len(ids) for ids in near)
        out: dict[str, StoredMemory] = {}
        for ids in near:
            top = [self.memories[i] for i in ids if i in self.memories
                   and self.memories[i].status == Status.CURRENT][:k]
            out.update((m.id, m) for m in top)
        return list(out.values())


def test_the_head_first_gives_what_the_whole_lists_give() -> None:
    rng = random.Random(5)
    for _ in range(300):
        superseded = rng.choice([0.0, 0.1, 0.5, 0.9])
        memories = {f"m{i}": _memory(f"m{i}", rng.random() >= superseded) for i in range(60)}
        lists = [rng.sample(sorted(memories), rng.randint(0, 20)) for _ in range(8)]
        k = rng.randint(1, 6)
        whole = {m.id for m in Graph(memories).near_current("u", lists, k)}
        graph = Graph(memories)
        assert set(current_among(graph, "u", lists, k)) == whole  # type: ignore[arg-type]
        assert graph.calls <= 2


def test_lists_whose_head_holds_k_current_are_looked_up_once_and_only_in_their_head() -> None:
    memories = {f"m{i}": _memory(f"m{i}", i % 10 != 0) for i in range(200)}  # a tenth superseded
    lists = [[f"m{i}" for i in range(q * 20, q * 20 + 20)] for q in range(8)]
    graph = Graph(memories)
    got = current_among(graph, "u", lists, 5)  # type: ignore[arg-type]
    assert graph.calls == 1
    assert graph.lookups == 8 * (5 + HEAD_SLACK)  # not 160
    assert all(got[m].status == Status.CURRENT for m in got)
    assert len(got) == 8 * 5


def test_a_list_short_of_current_in_its_head_is_asked_again_for_the_rest_only() -> None:
    # the first list's head is all superseded (a fact that changed many times); the others
    # are fine
    memories = {f"a{i}": _memory(f"a{i}", i >= 9) for i in range(20)}
    memories |= {f"b{i}": _memory(f"b{i}", True) for i in range(20)}
    lists = [[f"a{i}" for i in range(20)], [f"b{i}" for i in range(20)]]
    graph = Graph(memories)
    got = current_among(graph, "u", lists, 5)  # type: ignore[arg-type]
    assert graph.calls == 2
    assert graph.lookups == 2 * 8 + 12
    assert {m for m in got if m.startswith("a")} == {f"a{i}" for i in range(9, 14)}
