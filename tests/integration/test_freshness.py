"""Freshness as a number (scripts/bench freshness, small): every delivery is observed once
searchable and once current, and never current before it was searchable. The targets
(p95 ≤ 1 s / 5 s at half of saturation) are the bench's to show, not a timed test's."""

from __future__ import annotations

import re
import subprocess

import pytest

from integration.conftest import REPO, memq_env

pytestmark = pytest.mark.integration


def test_freshness_bench_observes_every_delivery_twice_in_order(services: None) -> None:
    res = subprocess.run(
        [str(REPO / "scripts" / "bench"), "freshness", "--stack", "here", "--workers", "2",
         "--burst", "8", "--seconds", "6", "--fractions", "0.5", "--users", "6"],
        check=False, cwd=REPO, env=memq_env(), capture_output=True, text=True, timeout=600)
    print(res.stdout)
    assert res.returncode == 0, res.stdout + res.stderr[-4000:]
    rows = [line.split() for line in res.stdout.splitlines()
            if re.match(r"\s*2\s+(burst|x0\.5)\s", line)]
    assert [r[1] for r in rows] == ["burst", "x0.5"]
    for r in rows:
        batches = int(r[3])
        assert r[10] == f"{batches}/{batches}", r  # each delivery: searchable once, current once
        s50, s95, c50, c95 = map(float, r[6:10])
        assert s50 <= s95 and c50 <= c95
        assert s50 <= c50 and s95 <= c95, r  # searchable (episodes) before current (the plan)
        assert "NOT FINISHED" not in " ".join(r)
    assert "dead letters: 0" in res.stdout
    assert re.search(r"^summary half_searchable_p95=[\d.]+ half_current_p95=[\d.]+ "
                     r"saturation_turns_s=[\d.]+$", res.stdout, re.M)
