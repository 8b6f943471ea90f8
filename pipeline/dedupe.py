"""Similarity between a candidate and a user's existing memories, and what it means."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any

import numpy as np

from .errors import ModelMismatchError
from .policy import Thresholds


class Closeness(StrEnum):
    DUPLICATE = "duplicate"  # >= duplicate threshold: drop
    AMBIGUOUS = "ambiguous"  # [ambiguous, duplicate): the judge decides
    DISTINCT = "distinct"


def classify(similarity: float, thresholds: Thresholds) -> Closeness:
    if similarity >= thresholds.duplicate:
        return Closeness.DUPLICATE
    if similarity >= thresholds.ambiguous:
        return Closeness.AMBIGUOUS
    return Closeness.DISTINCT


def require_same_model(expected: str, found: str) -> None:
    """Vectors of two embedding models live in different spaces: never compare them."""
    if expected != found:
        raise ModelMismatchError(
            f"refusing to compare vectors of embedding model {found!r} with {expected!r}; "
            "re-embed the user's memories (memq run reembed) or configure the old model"
        )


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return float(unit(a) @ unit(b))


def unit(v: Sequence[float]) -> Any:
    """``v`` scaled to length 1 (float64; a zero vector stays zero): converted once, then
    compared with many (``cosines``)."""
    a = np.asarray(v, dtype=np.float64)
    norm = float(np.linalg.norm(a))
    return a / norm if norm else a


def cosines(v: Sequence[float], units: Sequence[Any]) -> list[float]:
    """``cosine(v, u)`` for each of ``units`` (from ``unit``), in one matrix product: a plan
    compares each candidate with every memory added before it, which one list-to-array
    conversion per pair made quadratic in Python."""
    if not units:
        return []
    return [float(x) for x in np.stack(units) @ unit(v)]
