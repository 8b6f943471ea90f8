"""Extraction around the extractor: chunk a batch to a token budget, run the extractor once
per chunk, gate by confidence, and fold exact duplicates inside the batch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..schemas import CandidateMemory, Turn
from .ids import content_hash
from .ports import Extractor


def estimate_tokens(text: str) -> int:
    """Cheap and conservative: one token per CJK character, ~4 characters otherwise."""
    cjk = sum(1 for ch in text if "\u3000" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff")
    return cjk + (len(text) - cjk + 3) // 4 + 4  # +4: role and separators


def chunk_turns(turns: Sequence[Turn], budget: int) -> list[list[Turn]]:
    """Consecutive chunks whose estimated size stays within ``budget`` (a longer turn alone)."""
    chunks: list[list[Turn]] = []
    current: list[Turn] = []
    used = 0
    for turn in turns:
        cost = estimate_tokens(turn.content)
        if current and used + cost > budget:
            chunks.append(current)
            current, used = [], 0
        current.append(turn)
        used += cost
    if current:
        chunks.append(current)
    return chunks


@dataclass(frozen=True)
class Extraction:
    kept: list[CandidateMemory]
    below_gate: list[CandidateMemory]
    chunks: int


def fold_exact_duplicates(candidates: Sequence[CandidateMemory]) -> list[CandidateMemory]:
    """Same sentence twice in one batch: one candidate, all source turns, the earliest time."""
    by_hash: dict[str, CandidateMemory] = {}
    for cand in candidates:
        key = content_hash(cand.content)
        prior = by_hash.get(key)
        if prior is None:
            by_hash[key] = cand
            continue
        turns = list(dict.fromkeys([*prior.source_turn_ids, *cand.source_turn_ids]))
        by_hash[key] = prior.model_copy(
            update={
                "source_turn_ids": turns,
                "valid_at": min(prior.valid_at, cand.valid_at),  # holds from the first
                "confidence": max(prior.confidence, cand.confidence),
                "importance": max(prior.importance, cand.importance),
            }
        )
    return sorted(by_hash.values(), key=lambda c: (c.valid_at, c.source_turn_ids))


def extract(
    extractor: Extractor, turns: Sequence[Turn], *, budget: int, min_confidence: float
) -> Extraction:
    chunks = chunk_turns(turns, budget)
    found: list[CandidateMemory] = []
    for chunk in chunks:
        found.extend(extractor.extract(chunk))
    kept = [c for c in found if c.confidence >= min_confidence]
    below = [c for c in found if c.confidence < min_confidence]
    return Extraction(kept=fold_exact_duplicates(kept), below_gate=below, chunks=len(chunks))
