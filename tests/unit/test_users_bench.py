"""scripts/bench users' pure parts: the long tail of user sizes and the summary line."""

from __future__ import annotations

import statistics

from script_loader import load_script

ub = load_script("users_bench")


def test_user_sizes_are_a_long_tail_and_repeatable() -> None:
    sizes = ub.sizes_of(10_000)
    assert sizes == ub.sizes_of(10_000)  # seeded: every run plants the same users
    assert 15 <= statistics.median(sizes) <= 25  # most users: tens of turns
    assert max(sizes) == ub.TAIL_MAX and min(sizes) >= 1  # a few in the thousands, capped
    assert sum(s >= 1_000 for s in sizes) < 0.01 * len(sizes)
    assert ub.sizes_of(100) == sizes[:100]  # a smaller run is the first users of a larger


def test_the_summary_line_compares_the_largest_size_with_the_smallest() -> None:
    rows = [{"users": 100, "write_ms": 200.0, "hot_p95_ms": 40.0, "nn_recall": 1.0},
            {"users": 1000, "write_ms": 300.0, "hot_p95_ms": 50.0, "nn_recall": 0.98}]
    assert ub.summary(rows) == (
        "summary users=1000 write_ratio=1.50 search_p95_ratio=1.25 nn_recall=0.980")
