"""Extraction around the extractor: token estimate, chunking, the gate, in-batch folding."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from memq.pipeline.extract import chunk_turns, estimate_tokens, extract, fold_exact_duplicates
from memq.schemas import CandidateMemory, Kind, Turn

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def turn(turn_id: str, content: str, minute: int = 0) -> Turn:
    return Turn(turn_id=turn_id, role="user", content=content,
                timestamp=T0 + timedelta(minutes=minute))


def cand(content: str, turn_ids: Sequence[str] = ("t1",), *, confidence: float = 0.9,
         importance: float = 0.5, minute: int = 0) -> CandidateMemory:
    return CandidateMemory(content=content, kind=Kind.FACT, confidence=confidence,
                           importance=importance, source_turn_ids=list(turn_ids),
                           valid_at=T0 + timedelta(minutes=minute))


class CountingExtractor:
    """One candidate per turn, with a confidence read from the turn text; counts calls."""

    name = "counting"
    prompt_version = None

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def extract(self, turns: Sequence[Turn]) -> list[CandidateMemory]:
        self.calls.append([t.turn_id for t in turns])
        out = []
        for t in turns:
            text, _, conf = t.content.partition("|")
            out.append(CandidateMemory(
                content=text, kind=Kind.FACT, confidence=float(conf or 0.9), importance=0.5,
                source_turn_ids=[t.turn_id], valid_at=t.timestamp))
        return out


# -- estimate_tokens --------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 4),  # role and separators only
        ("abcd", 5),
        ("abcde", 6),  # partial 4-char group rounds up
        ("a" * 400, 104),
        ("你好", 6),  # one token per CJK character
        ("我喜欢简洁的回答。", 13),  # CJK punctuation counts per char too
        ("hi你好", 7),  # 2 CJK + ceil(2/4) + 4
        ("こんにちは", 9),  # kana is in the per-char range
    ],
)
def test_estimate_tokens(text: str, expected: int) -> None:
    assert estimate_tokens(text) == expected


def test_cjk_costs_more_than_latin_of_same_length() -> None:
    assert estimate_tokens("中" * 40) == 44
    assert estimate_tokens("a" * 40) == 14


# -- chunk_turns ------------------------------------------------------------------------------

def test_chunks_respect_budget_and_keep_order() -> None:
    # each turn costs 4 + 4 = 8 tokens ("x" * 16)
    turns = [turn(f"t{i}", "x" * 16, i) for i in range(5)]
    assert {estimate_tokens(t.content) for t in turns} == {8}
    chunks = chunk_turns(turns, budget=16)
    assert [[t.turn_id for t in c] for c in chunks] == [["t0", "t1"], ["t2", "t3"], ["t4"]]
    assert all(sum(estimate_tokens(t.content) for t in c) <= 16 for c in chunks)


def test_chunk_exactly_at_budget_is_not_split() -> None:
    turns = [turn(f"t{i}", "x" * 16, i) for i in range(3)]
    assert [len(c) for c in chunk_turns(turns, budget=24)] == [3]
    assert [len(c) for c in chunk_turns(turns, budget=23)] == [2, 1]


def test_over_budget_turn_stands_alone() -> None:
    turns = [turn("a", "x" * 16, 0), turn("big", "y" * 400, 1), turn("b", "x" * 16, 2)]
    chunks = chunk_turns(turns, budget=20)
    assert [[t.turn_id for t in c] for c in chunks] == [["a"], ["big"], ["b"]]


def test_no_turns_no_chunks() -> None:
    assert chunk_turns([], budget=100) == []


# -- fold_exact_duplicates --------------------------------------------------------------------

def test_fold_merges_turn_ids_and_keeps_earliest_time() -> None:
    folded = fold_exact_duplicates([
        cand("The user likes tea.", ["t1"], confidence=0.8, importance=0.6, minute=0),
        cand("the user  likes TEA", ["t3", "t1"], confidence=0.95, importance=0.2, minute=5),
    ])
    assert len(folded) == 1
    (one,) = folded
    assert one.content == "The user likes tea."  # first wording kept
    assert one.source_turn_ids == ["t1", "t3"]
    assert one.valid_at == T0  # a fact holds from its first mention
    assert (one.confidence, one.importance) == (0.95, 0.6)


def test_fold_keeps_distinct_and_sorts_by_time() -> None:
    folded = fold_exact_duplicates([
        cand("The user likes coffee.", ["t2"], minute=2),
        cand("The user likes tea.", ["t1"], minute=1),
    ])
    assert [c.content for c in folded] == ["The user likes tea.", "The user likes coffee."]


# -- extract ----------------------------------------------------------------------------------

def test_extract_calls_extractor_once_per_chunk() -> None:
    fake = CountingExtractor()
    turns = [turn(f"t{i}", f"Fact number {i} is here.", i) for i in range(5)]
    per_turn = estimate_tokens(turns[0].content)
    result = extract(fake, turns, budget=2 * per_turn, min_confidence=0.7)
    assert fake.calls == [["t0", "t1"], ["t2", "t3"], ["t4"]]
    assert result.chunks == 3
    assert [c.source_turn_ids for c in result.kept] == [[f"t{i}"] for i in range(5)]


def test_confidence_gate_is_inclusive() -> None:
    fake = CountingExtractor()
    turns = [turn("low", "Dropped fact.|0.69", 0), turn("edge", "Kept fact.|0.7", 1),
             turn("high", "Also kept.|0.99", 2)]
    result = extract(fake, turns, budget=3_000, min_confidence=0.7)
    assert fake.calls == [["low", "edge", "high"]]
    assert [c.content for c in result.kept] == ["Kept fact.", "Also kept."]
    assert [c.content for c in result.below_gate] == ["Dropped fact."]


def test_extract_folds_duplicates_across_chunks() -> None:
    fake = CountingExtractor()
    turns = [turn("a", "The user likes tea.", 0), turn("b", "The user likes tea", 1)]
    result = extract(fake, turns, budget=1, min_confidence=0.7)
    assert result.chunks == 2
    assert len(fake.calls) == 2
    assert [(c.source_turn_ids, c.valid_at) for c in result.kept] == [
        (["a", "b"], T0)]


def test_extract_of_nothing_calls_nothing() -> None:
    fake = CountingExtractor()
    result = extract(fake, [], budget=100, min_confidence=0.7)
    assert (fake.calls, result.kept, result.below_gate, result.chunks) == ([], [], [], 0)
