"""scripts/chaos --quick: every fault, short, against the tests' own services (it stops and
starts them), each run held against the serial oracle: nothing lost, duplicated or wrong, no
worker left dead, no dead letter."""

from __future__ import annotations

import subprocess

import pytest

from integration.conftest import REPO, memq_env

pytestmark = pytest.mark.integration


def test_chaos_quick(services: None) -> None:
    env = memq_env()
    env.pop("MEMQ_REDIS_URL")  # chaos picks its own database on the tests' Redis
    res = subprocess.run([str(REPO / "scripts" / "chaos"), "--quick"], check=False, cwd=REPO,
                         env=env, capture_output=True, text=True, timeout=1800)
    print(res.stdout)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-4000:]
    rows = [line for line in res.stdout.splitlines() if line.startswith("| ")][1:]
    assert len(rows) == 9
