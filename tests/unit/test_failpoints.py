"""Fail points (workers/failpoints.py) do nothing until a plugin registers a callback; the
tests' plugin (tests/faults.py) stalls a worker at the point it is given, and gets into a
process by the environment and the arguments ``faults.worker`` makes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import faults
import pytest

from memq.workers import failpoints

REPO = Path(__file__).resolve().parents[2]


def test_callbacks_run_at_every_point_in_order_until_unregistered() -> None:
    heard: list[str] = []

    def first(point: str) -> None:
        heard.append(f"first {point}")

    def second(point: str) -> None:
        heard.append(f"second {point}")

    failpoints.at("memq.apply")  # nothing registered: nothing happens
    failpoints.register(first)
    failpoints.register(second)
    try:
        failpoints.at("memq.apply")
    finally:
        failpoints.unregister(first)
        failpoints.unregister(second)
    failpoints.at("memq.extract")
    assert heard == ["first memq.apply", "second memq.apply"]


def test_the_plugin_stalls_at_its_points_only(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(faults.time, "sleep", slept.append)
    at = faults.delaying(faults.parse("memq.apply=6, memq.upsert_graph=0.5"))
    for point in ("memq.extract", "memq.upsert_graph", "memq.apply"):
        at(point)
    assert slept == [0.5, 6.0]


@pytest.mark.parametrize("spec", ["memq.apply", "=3", "memq.apply=soon"])
def test_a_malformed_delay_is_refused(spec: str) -> None:
    with pytest.raises(ValueError):  # float's own message, or ours
        faults.parse(spec)


def test_a_process_started_as_worker_says_arms_the_plugin_on_import() -> None:
    """What Celery's ``--include faults`` does in the worker: import it by name, with the
    environment ``faults.worker`` made (run from elsewhere than tests/)."""
    env, args = faults.worker({**os.environ, "PYTHONPATH": "/nowhere"}, "memq.upsert_graph", 0.01)
    assert args == ["--include", "faults"]
    assert env["PYTHONPATH"].split(os.pathsep) == [str(REPO / "tests"), "/nowhere"]
    code = ("import importlib; importlib.import_module('faults'); "
            "from memq.workers import failpoints; "
            "failpoints.at('memq.apply'); print('--'); failpoints.at('memq.upsert_graph')")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd="/", capture_output=True,
                         text=True, timeout=60, check=True)
    before, _, after = (out.stdout + out.stderr).partition("--")
    assert "fault injection: delaying" not in before
    assert "fault injection: delaying" in after and "memq.upsert_graph" in after
