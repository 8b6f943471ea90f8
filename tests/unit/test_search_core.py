"""Search as the core runs it (pipeline.search), through the shipped in-memory stores
(pipeline.testing): no service, no mock. The same fakes pass the contract suite the real
adapters pass (tests/integration/test_contract.py)."""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from memq.pipeline import ids, recall
from memq.pipeline.lifecycle import Policy
from memq.pipeline.search import search
from memq.pipeline.testing import HashEmbedder, InMemoryIndex
from memq.schemas import Kind, Status, StoredMemory, Turn

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
EMBED = HashEmbedder()


def _turns(index: InMemoryIndex, user: str, session: str, texts: list[str],
           day: datetime = NOW - timedelta(days=3), speaker: str | None = None) -> list[str]:
    turns = [Turn(turn_id=f"{session}-{i}", role="user", content=t,
                  timestamp=day + timedelta(minutes=i), speaker=speaker)
             for i, t in enumerate(texts)]
    vectors = EMBED.embed([recall.episode_text(t.content, t.speaker, t.timestamp)
                           for t in turns])
    index.add(user, session, turns, vectors, EMBED.model_id, NOW)
    return [f"{session}/{t.turn_id}" for t in turns]


def _memory(index: InMemoryIndex, user: str, content: str, refs: list[str], *,
            status: Status = Status.CURRENT, importance: float = 0.8,
            accessed: datetime | None = None, valid: datetime = NOW - timedelta(days=3)
            ) -> StoredMemory:
    m = StoredMemory(id=ids.memory_id(user, content, refs), user_id=user, content=content,
                     kind=Kind.FACT, confidence=0.9, importance=importance,
                     source_turn_ids=refs, valid_at=valid, status=status,
                     created_at=valid, updated_at=valid, embedding_model=EMBED.model_id,
                     last_accessed_at=accessed)
    index.upsert([m], EMBED.embed([content]))
    return m


def _search(index: InMemoryIndex, user: str, query: str, k: int = 10) -> list[recall.Hit]:
    return search(index, index, EMBED, user, query, k, NOW, Policy())


def test_finds_the_turn_and_the_memory_that_answer() -> None:
    index = InMemoryIndex()
    refs = _turns(index, "u1", "s1", ["We run production on Ubuntu 22.04 now.",
                                      "I had pasta for lunch.", "My sister lives in Oslo."])
    _memory(index, "u1", "The user's production environment is Ubuntu 22.04.", refs[:1])
    hits = _search(index, "u1", "what OS is production on?", k=3)
    assert hits[0].type == "episode" and "Ubuntu" in hits[0].content
    assert [h.type for h in hits if "Ubuntu" in h.content] == ["episode", "memory"]
    assert "Oslo" not in " ".join(h.content for h in hits[:3] if h.type == "memory")


def test_one_users_search_never_sees_another_users_turns() -> None:
    index = InMemoryIndex()
    _turns(index, "alice", "s1", ["My favourite cheese is gouda."])
    _memory(index, "alice", "The user's favourite cheese is gouda.", ["s1/s1-0"])
    _turns(index, "bob", "s1", ["I had tea."])
    assert [h for h in _search(index, "bob", "gouda cheese") if "gouda" in h.content] == []


def test_what_is_no_longer_true_comes_after_what_is() -> None:
    index = InMemoryIndex()
    old = _turns(index, "u1", "s1", ["Our production servers run CentOS 7."],
                 day=NOW - timedelta(days=30))
    new = _turns(index, "u1", "s2", ["We migrated production servers to Ubuntu 22.04."])
    _memory(index, "u1", "The user's production environment is CentOS 7.", old,
            status=Status.SUPERSEDED, valid=NOW - timedelta(days=30))
    _memory(index, "u1", "The user's production environment is Ubuntu 22.04.", new)
    turns = [h.content for h in _search(index, "u1", "production servers") if h.type == "episode"]
    assert turns.index("We migrated production servers to Ubuntu 22.04.") < turns.index(
        "Our production servers run CentOS 7.")


def test_the_list_for_k_is_the_head_of_the_list_for_any_larger_k() -> None:
    index = InMemoryIndex()
    _turns(index, "u1", "s1", [f"I visited city number {i} on my trip." for i in range(30)])
    full = [h.id for h in _search(index, "u1", "which city did I visit on the trip", k=20)]
    for k in (1, 5, 10):
        assert [h.id for h in _search(index, "u1", "which city did I visit on the trip",
                                      k=k)] == full[:k]


def test_a_decayed_memory_ranks_below_a_fresh_one_that_matches_as_well() -> None:
    index = InMemoryIndex()
    refs = _turns(index, "u1", "s1", ["I like jazz.", "I like blues."])
    stale = _memory(index, "u1", "The user likes jazz music.", refs[:1], importance=0.3,
                    accessed=NOW - timedelta(days=60))
    fresh = _memory(index, "u1", "The user likes blues music.", refs[1:], importance=0.9,
                    accessed=NOW)
    ranked = [h.id for h in _search(index, "u1", "likes music") if h.type == "memory"]
    assert ranked.index(fresh.id) < ranked.index(stale.id)


def test_vectors_of_another_model_are_never_compared() -> None:
    index = InMemoryIndex()
    other = HashEmbedder(model_id="other-256")
    turn = Turn(turn_id="t", role="user", content="I keep bees in the garden.",
                timestamp=NOW - timedelta(days=1))
    index.add("u1", "s1", [turn], other.embed([turn.content]), other.model_id, NOW)
    vector = EMBED.embed(["bees garden"])[0]
    assert index.search("u1", vector, EMBED.model_id, 5) == []
    assert index.cosines("u1", [ids.episode_id("u1", "s1/t")], vector, EMBED.model_id) == {}
    # the lexical signal still finds it
    assert [h.content for h in _search(index, "u1", "bees")] == [turn.content]


class _Homes(HashEmbedder):
    """Hashed words, plus one dimension for every word about a home: what a real model
    gives ("where do I live?" is near "The user lives in Cork.") and hashed words do not."""

    HOME = re.compile(r"\b(?:live|lives|lived|home|settled|cork|lyon|paris)\b", re.I)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for text, v in zip(texts, super().embed(texts), strict=True):
            w = [*v, 3.0 * len(self.HOME.findall(text))]
            norm = math.sqrt(sum(x * x for x in w)) or 1.0
            out.append([x / norm for x in w])
        return out


def test_the_current_fact_comes_before_the_turn_that_said_the_old_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A user who moved twice: the first turn matches "where do I live now?" by its words,
    the current memory says Cork in words the question lacks. Cork comes first, the old
    turns say what holds now; asked about the past, the old turn leads."""
    monkeypatch.setattr(sys.modules[__name__], "EMBED", _Homes())
    _moved_twice()


def _moved_twice() -> None:
    index = InMemoryIndex()
    lyon, paris, cork = (_turns(index, "u1", s, [text])
                         for s, text in (("s1", "I live in Lyon."),
                                         ("s2", "Packed up and left for Paris."),
                                         ("s3", "Settled down in Cork at last.")))
    cork_m = _memory(index, "u1", "The user lives in Cork.", cork)
    paris_m = _memory(index, "u1", "The user lives in Paris.", paris,
                      status=Status.SUPERSEDED)
    index.upsert([paris_m.with_changes(superseded_by=cork_m.id)], [None])
    lyon_m = _memory(index, "u1", "The user lives in Lyon.", lyon, status=Status.SUPERSEDED)
    index.upsert([lyon_m.with_changes(superseded_by=paris_m.id)], [None])
    hits = _search(index, "u1", "where do I live now?", k=3)
    assert "Cork" in hits[0].content
    said = next(h for h in hits if h.type == "episode" and h.source_turn_ids == lyon)
    assert [h.id for h in hits].index(cork_m.id) < hits.index(said)
    assert (said.superseded_by, said.current) == (cork_m.id, "The user lives in Cork.")
    past = _search(index, "u1", "where did I live before?", k=3)
    assert past[0].source_turn_ids in (lyon, lyon_m.source_turn_ids) and past[0].id != cork_m.id


class _WordsLost(InMemoryIndex):
    """The graph without some turns' words (forgotten while a search ran)."""

    def __init__(self, lost: set[str]) -> None:
        super().__init__()
        self.lost = lost

    def turns(self, user_id: str, episode_ids: Sequence[str]) -> dict[str, recall.Hit]:
        return {i: h for i, h in super().turns(user_id, episode_ids).items()
                if i not in self.lost}


def test_a_turn_found_by_its_vector_gets_its_words_from_the_graph() -> None:
    index = InMemoryIndex()
    refs = _turns(index, "u1", "s1", ["My dog Biscuit loves the beach."], speaker="Ana")
    (dense,) = index.search("u1", EMBED.embed(["a pet at the seaside"])[0], EMBED.model_id, 5)
    assert dense.content == "" and dense.speaker is None  # the vector index holds no words
    # a query BM25 cannot match: the turn is found by its vector alone
    (hit,) = [h for h in _search(index, "u1", "zzz qqq") if h.type == "episode"]
    assert (hit.content, hit.speaker, hit.source_turn_ids) == (
        "My dog Biscuit loves the beach.", "Ana", refs)


def test_a_turn_whose_words_are_gone_is_not_found() -> None:
    index = _WordsLost(set())
    _turns(index, "u1", "s1", ["My dog Biscuit loves the beach.", "I had tea."])
    index.lost = {h.id for h in index.search("u1", EMBED.embed(["dog"])[0], EMBED.model_id, 5)
                  if h.source_turn_ids == ["s1/s1-0"]}
    lost = set(index.lost)
    assert lost
    without = {h.id for h in _search(index, "u1", "zzz qqq")}
    index.lost = set()
    # found by its vector alone (BM25 cannot match), and only while the graph has its words
    assert lost.isdisjoint(without) and lost <= {h.id for h in _search(index, "u1", "zzz qqq")}
