"""scripts/bench search end to end, small: it plants a tenant's user, reads it in process and
through memq serve with that tenant's read key, and leaves no live key behind. Its latencies
are the bench's to show, not a timed test's."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from integration.conftest import REPO, free_port, memq, memq_env

pytestmark = pytest.mark.integration


def test_search_bench_reads_through_memq_serve_with_a_key(services: None) -> None:
    res = subprocess.run(
        [str(REPO / "scripts" / "bench"), "search", "--memories", "40", "--episodes", "40",
         "--queries", "12", "--settle", "0", "--api-port", str(free_port())],
        check=False, cwd=REPO, env=memq_env(), capture_output=True, text=True, timeout=600)
    print(res.stdout)
    assert res.returncode == 0, res.stdout + res.stderr[-4000:]
    assert re.search(r"^in-process search, k=10: p50 [\d.]+ ms, p95 [\d.]+ ms", res.stdout, re.M)
    assert re.search(r"^HTTP POST /v1/search, k=10: p50 [\d.]+ ms", res.stdout, re.M)
    assert "asking memq serve (MEMQ_API_URL): median" in res.stdout
    made = [k for k in json.loads(memq("keys", "list", "--json").stdout)
            if k["name"] == "bench search"]
    assert made and all(k["revoked_at"] for k in made)
