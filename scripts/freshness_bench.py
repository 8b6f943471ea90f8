"""Freshness: how long after ``add`` a turn is searchable and its memories are current.

For each worker count (``--workers 1,4,8``, worker processes of concurrency 1, started here):
1. **saturation**: a burst of batches enqueued at once and drained; the throughput (turns/s)
   is the saturation rate, and the burst's freshness is what a backlog costs;
2. **paced** runs at fractions of that rate (``--fractions 0.5,1.0``): batches enqueued
   open-loop (on a schedule, whatever the workers do) for ``--seconds``, each to one of
   ``--users`` users, then drained.
Freshness is what the workers export (``memq_freshness_seconds{stage=searchable|current}``,
workers.metrics): seconds from the enqueue (the client's clock) until the delivery's episodes
are written to both stores (searchable) and until its plan is committed (current); p50/p95
by Prometheus' rule over the histogram recorded during the run.

The batches: LoCoMo's sessions as published (``--dataset``, each session one batch, as an
agent enqueues after a session, turns with their speakers), spread over the run's users; or
the stress run's generated conversations without one. On a stack of its own (scripts/services,
free ports, a temporary MEMQ_HOME) unless ``--stack here`` (the configured services, Redis db
13: what the tests use).

Last line: ``summary half_searchable_p95=<highest over the worker counts, at 0.5 of
saturation> half_current_p95=<same> saturation_turns_s=<at the most workers>``.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))


def batches_of(dataset: str | None, users: int, run: str, n: int, seed: int) -> list[Any]:
    """``n`` batches (IngestBatch), round-robin over ``users`` users of this run."""
    from memq.schemas import IngestBatch

    rng = random.Random(seed)
    if dataset:
        import memory_bench

        _, convs = memory_bench.load(dataset, prefix="fresh")
        pool = [b for c in convs for b in c.batches]
    else:
        import stress

        from memq.workers.client import parse_lines

        plans = [stress.generate(f"gen{u}", 60, rng) for u in range(8)]
        pool, errors = parse_lines(json.dumps(line) for p in plans for line in p.lines)
        assert not errors, errors[:3]
    out = []
    for k in range(n):
        b = pool[rng.randrange(len(pool))]
        out.append(IngestBatch(user_id=f"fresh-{run}-u{k % users:04d}",
                               session_id=f"{b.session_id}-{k}", turns=b.turns))
    return out


def start_workers(n: int, env: dict[str, str], logdir: Path) -> list[subprocess.Popen[bytes]]:
    procs = []
    for i in range(n):
        log = (logdir / f"fresh-worker-{i}.log").open("ab")
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "memq.workers.cli", "worker", "--concurrency", "1",
             "-n", f"fresh{i}@%h"], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True))
    return procs


def stop_workers(procs: Sequence[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def wait_ready(n: int, timeout: float = 120) -> None:
    from memq.workers.ops import _workers

    deadline = time.monotonic() + timeout
    while len(_workers()) < n:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{n} workers did not answer within {timeout:.0f} s")
        time.sleep(0.5)


def phase(batches: Sequence[Any], rate: float | None, timeout: float) -> dict[str, Any]:
    """Enqueue ``batches`` (at once when ``rate`` is None, else on a schedule of ``rate``
    turns/s), wait until done; the freshness recorded meanwhile and the throughput."""
    from memq.workers import outbox, wiring
    from memq.workers.client import enqueue
    from memq.workers.metrics import freshness, minus, read

    coord = wiring.coord()
    before = read(coord.r).get("memq_freshness_seconds", {})
    turns = sum(len(b.turns) for b in batches)
    started = time.monotonic()
    due, late = started, 0.0
    if rate is None:
        enqueue(list(batches))
    else:
        for b in batches:
            pause = due - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            else:
                late = max(late, -pause)
            enqueue([b])
            due += len(b.turns) / rate
    offered_s = time.monotonic() - started
    done = outbox.wait(coord, timeout)
    seconds = time.monotonic() - started
    after = read(coord.r).get("memq_freshness_seconds", {})
    delta = {labels: minus(v, before.get(labels, {})) for labels, v in after.items()}
    fresh = freshness({"memq_freshness_seconds": delta})
    return {"turns": turns, "batches": len(batches), "finished": done,
            "offered_turns_s": turns / offered_s if rate is not None and offered_s else None,
            "turns_s": turns / seconds, "enqueue_late_s": late, "fresh": fresh,
            "load": os.getloadavg()[0]}


def _row(workers: int, label: str, r: dict[str, Any]) -> dict[str, Any]:
    f = r["fresh"]
    return {"workers": workers, "phase": label, "turns": r["turns"], "batches": r["batches"],
            "offered": r["offered_turns_s"], "turns_s": r["turns_s"],
            "searchable_p50": f["searchable"]["p50"], "searchable_p95": f["searchable"]["p95"],
            "current_p50": f["current"]["p50"], "current_p95": f["current"]["p95"],
            "observed": (f["searchable"]["count"], f["current"]["count"]),
            "late": r["enqueue_late_s"], "finished": r["finished"], "load": r["load"]}


def _fmt(x: float | None, nd: int = 2) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def print_row(row: dict[str, Any]) -> None:
    print(f"{row['workers']:>7} {row['phase']:>10} {row['turns']:>6} {row['batches']:>7} "
          f"{_fmt(row['offered'], 1):>8} {_fmt(row['turns_s'], 1):>7} "
          f"{_fmt(row['searchable_p50']):>8} {_fmt(row['searchable_p95']):>8} "
          f"{_fmt(row['current_p50']):>8} {_fmt(row['current_p95']):>8} "
          f"{row['observed'][0]:>5.0f}/{row['observed'][1]:<5.0f} {_fmt(row['late']):>6} "
          f"{_fmt(row['load']):>5}{'' if row['finished'] else '  NOT FINISHED'}", flush=True)


HEADER = (f"{'workers':>7} {'phase':>10} {'turns':>6} {'batches':>7} {'offered':>8} "
          f"{'turns/s':>7} {'search50':>8} {'search95':>8} {'curr50':>8} {'curr95':>8} "
          f"{'observed':>11} {'late':>6} {'load1':>5}")


def summary(rows: Sequence[dict[str, Any]]) -> str:
    half = [r for r in rows if r["phase"] == "x0.5"]

    def worst(key: str) -> str:
        got = [r[key] for r in half if r[key] is not None]
        return _fmt(max(got) if got else None)

    sat = [r for r in rows if r["phase"] == "burst"]
    most = max(sat, key=lambda r: r["workers"]) if sat else None
    return (f"summary half_searchable_p95={worst('searchable_p95')} "
            f"half_current_p95={worst('current_p95')} "
            f"saturation_turns_s={_fmt(most['turns_s'] if most else None, 1)}")


def measure(args: Any, env: dict[str, str]) -> list[dict[str, Any]]:
    """The rows, with the services ``env`` names (already in this process's environment)."""
    from memq.workers import deadletters, wiring

    logdir = Path(os.environ.get("MEMQ_HOME", REPO / ".memq")) / "logs"
    logdir.mkdir(parents=True, exist_ok=True)
    run = uuid.uuid4().hex[:6]
    rows: list[dict[str, Any]] = []
    print(HEADER, flush=True)
    for n in [int(x) for x in str(args.workers).split(",")]:
        procs = start_workers(n, env, logdir)
        try:
            wait_ready(n)
            warm = batches_of(args.dataset, args.users, f"{run}w{n}", 2 * n, args.seed)
            phase(warm, None, args.timeout)  # models loaded, stores warm
            burst = batches_of(args.dataset, args.users, f"{run}b{n}", args.burst, args.seed + n)
            sat = phase(burst, None, args.timeout)
            rows.append(_row(n, "burst", sat))
            print_row(rows[-1])
            for f in [float(x) for x in str(args.fractions).split(",")]:
                rate = f * sat["turns_s"]
                mean = sat["turns"] / sat["batches"]
                k = max(4, round(rate * args.seconds / mean))
                paced = batches_of(args.dataset, args.users, f"{run}p{n}-{f}", k,
                                   args.seed + 100 * n + int(10 * f))
                rows.append(_row(n, f"x{f:g}", phase(paced, rate, args.timeout)))
                print_row(rows[-1])
        finally:
            stop_workers(procs)
    dead = len(deadletters.dead_letters(wiring.coord()))
    print(f"dead letters: {dead}")
    return rows


@contextlib.contextmanager
def stack(kind: str) -> Iterator[dict[str, str]]:
    if kind == "here":
        port = os.environ.get("MEMQ_REDIS_PORT", "6379")
        os.environ["MEMQ_REDIS_URL"] = f"redis://127.0.0.1:{port}/13"
        yield {**os.environ, "C_FORCE_ROOT": "1"}
        return
    import users_bench

    with users_bench.scratch_stack() as env:
        os.environ.update(env)
        yield {**os.environ, "C_FORCE_ROOT": "1"}


def run(args: Any) -> list[dict[str, Any]]:
    with stack(args.stack) as env:
        rows = measure(args, env)
    print(summary(rows))
    return rows
