"""Quantiles of the stored histograms (workers.metrics.quantile): Prometheus'
histogram_quantile rule, on the per-metric buckets."""

from __future__ import annotations

import pytest

from memq.workers.metrics import BUCKETS, FRESHNESS_BUCKETS, freshness, minus, quantile

NAME = "memq_freshness_seconds"


def _series(samples: list[float], bounds: tuple[float, ...]) -> dict[str, float]:
    out: dict[str, float] = {"count": float(len(samples)), "sum": sum(samples)}
    for x in samples:
        le = next((b for b in bounds if x <= b), None)
        key = f"le={le if le is not None else '+Inf'}"
        out[key] = out.get(key, 0.0) + 1
    return out


def test_interpolates_inside_the_bucket_that_holds_the_rank() -> None:
    # 100 samples: 90 in (0.4, 0.5], 10 in (2.5, 3.0]
    values = _series([0.45] * 90 + [2.7] * 10, FRESHNESS_BUCKETS)
    assert quantile(NAME, values, 0.5) == pytest.approx(0.4 + 0.1 * 50 / 90)
    assert quantile(NAME, values, 0.95) == pytest.approx(2.5 + 0.5 * 5 / 10)
    assert quantile(NAME, {}, 0.5) is None


def test_each_metric_reads_with_its_own_buckets() -> None:
    values = _series([0.12] * 10, BUCKETS)  # stage seconds: (0.1, 0.25]
    assert quantile("memq_stage_seconds", values, 1.0) == pytest.approx(0.25)
    fresh = _series([0.12] * 10, FRESHNESS_BUCKETS)  # freshness: (0.1, 0.15]
    assert quantile(NAME, fresh, 1.0) == pytest.approx(0.15)


def test_past_the_last_bucket_is_its_bound() -> None:
    values = _series([1000.0] * 3, FRESHNESS_BUCKETS)
    assert quantile(NAME, values, 0.95) == FRESHNESS_BUCKETS[-1]


def test_freshness_of_what_was_recorded_between_two_readings() -> None:
    before = _series([0.3] * 10, FRESHNESS_BUCKETS)
    after = _series([0.3] * 10 + [4.5] * 10, FRESHNESS_BUCKETS)
    stored = {NAME: {(("stage", "current"),): minus(after, before)}}
    got = freshness(stored)
    assert got["current"]["count"] == 10
    assert got["current"]["p50"] == pytest.approx(4.0 + 1.0 * 5 / 10)
    assert got["searchable"] == {"p50": None, "p95": None, "count": 0.0}
