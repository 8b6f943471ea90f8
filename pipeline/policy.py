"""Thresholds the pure steps take as arguments. Defaults are the seeds' (see shared/seeds)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Thresholds:
    min_confidence: float = 0.7  # extraction gate: below is dropped
    duplicate: float = 0.95  # similarity at or above: duplicate, dropped
    ambiguous: float = 0.92  # [ambiguous, duplicate): the judge decides
    neighbors: int = 5  # nearest existing memories looked at per candidate
    chunk_tokens: int = 3_000  # extraction token budget per LLM call
    judge_concurrency: int = 8  # judge calls of one plan made at once (service.merge)

    def __post_init__(self) -> None:
        if not 0.0 <= self.ambiguous <= self.duplicate <= 1.0:
            raise ValueError("need 0 <= ambiguous <= duplicate <= 1")
        if not 0.0 <= self.min_confidence <= 1.0:
            raise ValueError("min_confidence must be within [0, 1]")
        if self.judge_concurrency < 1:
            raise ValueError("judge_concurrency must be at least 1")
