"""Similarity bands, cosine, and the embedding-model guard."""

from __future__ import annotations

import math
import random

import pytest

from memq.pipeline.dedupe import (
    Closeness,
    classify,
    cosine,
    cosines,
    require_same_model,
    unit,
)
from memq.pipeline.errors import ModelMismatchError, PermanentError
from memq.pipeline.policy import Thresholds

DEFAULT = Thresholds()


@pytest.mark.parametrize(
    ("similarity", "expected"),
    [
        (1.0, Closeness.DUPLICATE),
        (0.95, Closeness.DUPLICATE),
        (0.9499, Closeness.AMBIGUOUS),
        (0.92, Closeness.AMBIGUOUS),
        (0.9199, Closeness.DISTINCT),
        (0.0, Closeness.DISTINCT),
        (-1.0, Closeness.DISTINCT),
    ],
)
def test_classify_band_edges(similarity: float, expected: Closeness) -> None:
    assert classify(similarity, DEFAULT) is expected


def test_classify_uses_given_thresholds() -> None:
    strict = Thresholds(duplicate=0.99, ambiguous=0.97)
    assert classify(0.98, strict) is Closeness.AMBIGUOUS
    assert classify(0.96, strict) is Closeness.DISTINCT
    no_band = Thresholds(duplicate=0.9, ambiguous=0.9)
    assert classify(0.9, no_band) is Closeness.DUPLICATE
    assert classify(0.8999, no_band) is Closeness.DISTINCT


def test_thresholds_validated() -> None:
    with pytest.raises(ValueError, match="ambiguous <= duplicate"):
        Thresholds(duplicate=0.9, ambiguous=0.95)
    with pytest.raises(ValueError, match="min_confidence"):
        Thresholds(min_confidence=1.5)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ([1, 0, 0], [1, 0, 0], 1.0),
        ([1, 0, 0], [0, 1, 0], 0.0),
        ([1, 0, 0], [-1, 0, 0], -1.0),
        ([1, 1, 0], [1, 0, 0], 1 / math.sqrt(2)),
        ([3, 4], [6, 8], 1.0),  # scale does not matter
        ([0, 0, 0], [1, 0, 0], 0.0),  # zero vector: no direction, no similarity
    ],
)
def test_cosine(a: list[float], b: list[float], expected: float) -> None:
    assert cosine(a, b) == pytest.approx(expected)
    assert isinstance(cosine(a, b), float)


def test_same_model_passes() -> None:
    require_same_model("all-MiniLM-L6-v2", "all-MiniLM-L6-v2")  # no error


def test_model_mismatch_names_both_models() -> None:
    with pytest.raises(ModelMismatchError) as exc:
        require_same_model("all-MiniLM-L6-v2", "text-embedding-3-small")
    message = str(exc.value)
    assert "'all-MiniLM-L6-v2'" in message
    assert "'text-embedding-3-small'" in message
    assert isinstance(exc.value, PermanentError)  # dead-lettered, never retried


def test_cosines_against_many_equal_cosine_pair_by_pair() -> None:
    rng = random.Random(9)
    vectors = [[rng.uniform(-1, 1) for _ in range(384)] for _ in range(12)] + [[0.0] * 384]
    query = [rng.uniform(-1, 1) for _ in range(384)]
    got = cosines(query, [unit(v) for v in vectors])
    assert got == pytest.approx([cosine(query, v) for v in vectors], abs=1e-12)
    assert got[-1] == 0.0  # a zero vector is similar to nothing
    assert cosines(query, []) == []
