"""Fault injection for the tests that freeze or kill a worker at a named point of a task: a
plugin that stalls the worker there (memq.workers.failpoints names the points) and logs
``fault injection: delaying`` first, the line the test waits for before it strikes.

    worker = start_worker(tmp, "frozen", env=env, delay=("memq.upsert_graph", 3))

(tests/integration/conftest.py; :func:`worker` gives any script that starts workers the same.)
A worker reads ``FAULT_DELAY=<point>=<seconds>[,<point>=<seconds>...]`` when it imports this
module; memq has no setting for it, and :func:`memq.workers.failpoints.at` does nothing in a
worker that did not load it.

How it gets into a worker: ``memq worker`` hands its extra arguments to Celery unparsed, and
Celery's ``--include faults`` imports the module in the worker's main process, before the pool
forks: every pool process has the callback, a replacement process forked later too, and
nothing but the worker started with the option is touched. This folder goes on the worker's
PYTHONPATH, so the module is ``faults`` there as it is in pytest (``pythonpath = ["tests"]``)
and in a script that puts ``tests/`` on ``sys.path`` (scripts/chaos does for tests/poison.py),
whatever the worker's working directory. Not a ``sitecustomize.py``: it would load into every
Python process started with that path (the ``memq`` commands a test runs beside the worker),
and it would hide the environment's own sitecustomize, if it has one.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path

import structlog

from memq.workers import failpoints

ENV = "FAULT_DELAY"
INCLUDE = ("--include", "faults")
HERE = Path(__file__).resolve().parent

log = structlog.get_logger("faults")


def parse(spec: str) -> dict[str, float]:
    """``memq.apply=6,memq.upsert_graph=3`` -> the seconds to stall at each point."""
    delays: dict[str, float] = {}
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        point, sep, seconds = part.rpartition("=")
        if not sep or not point:
            raise ValueError(f"{ENV}: {part!r} is not <point>=<seconds>")
        delays[point] = float(seconds)
    return delays


def delaying(delays: Mapping[str, float]) -> failpoints.Callback:
    """The callback: at a point of ``delays``, log, then sleep its seconds."""

    def at(point: str) -> None:
        seconds = delays.get(point, 0.0)
        if seconds > 0:
            log.warning("fault injection: delaying", point=point, seconds=seconds)
            time.sleep(seconds)

    return at


def worker(env: Mapping[str, str], point: str, seconds: float
           ) -> tuple[dict[str, str], list[str]]:
    """What a ``memq worker`` that stalls ``seconds`` at ``point`` is started with: ``env``
    with this folder on PYTHONPATH and the delay, and the arguments to add to the command."""
    path = [str(HERE), *filter(None, [env.get("PYTHONPATH")])]
    return ({**env, "PYTHONPATH": os.pathsep.join(path), ENV: f"{point}={seconds:g}"},
            list(INCLUDE))


if ENV in os.environ:  # loaded by a worker started with worker(): arm it
    failpoints.register(delaying(parse(os.environ[ENV])))
