"""Faults against the real services, each run held against the serial oracle (scripts/chaos).

Every fault row: a fresh set of users (stress.generate), enqueued, worker processes running,
the fault injected while they work; then the wait for every delivery, and the comparison of
each user's memories, facts, audit and episodes with the oracle. One table, one row a fault.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import stress
from own_redis import flush_own

REPO = Path(__file__).resolve().parents[1]
FAULTS = ("kill", "pause", "chroma-down", "neo4j-down", "redis-restart", "llm-storm",
          "poison", "fuzz", "huge")


@dataclass
class Ctx:
    args: argparse.Namespace
    workers: list[subprocess.Popen[bytes]]
    env: dict[str, str]
    logdir: Path
    rng: random.Random
    coord: Any
    extra: dict[str, int]


def _services(action: str, name: str) -> None:
    subprocess.run([str(REPO / "scripts" / "services"), action, name], check=True,
                   capture_output=True, timeout=180)


def fault_kill(ctx: Ctx) -> None:
    end = time.monotonic() + ctx.args.duration
    while time.monotonic() < end:
        i = ctx.rng.randrange(len(ctx.workers))
        stress.signal_group(ctx.workers[i], signal.SIGKILL)
        ctx.workers[i].wait()
        ctx.workers[i] = stress.start_worker(i, ctx.env, ctx.logdir)
        time.sleep(3)


def fault_pause(ctx: Ctx) -> None:
    end = time.monotonic() + ctx.args.duration
    while time.monotonic() < end:
        i = ctx.rng.randrange(len(ctx.workers))
        stress.signal_group(ctx.workers[i], signal.SIGSTOP)
        time.sleep(3 * float(ctx.env["MEMQ_CLAIM_S"]))
        stress.signal_group(ctx.workers[i], signal.SIGCONT)


def _outage(name: str) -> Callable[[Ctx], None]:
    def run(ctx: Ctx) -> None:
        time.sleep(1)
        _services("down", name)
        time.sleep(ctx.args.duration)
        _services("up", name)
    return run


def fault_redis(ctx: Ctx) -> None:
    time.sleep(1)
    _services("down", "redis")
    time.sleep(min(10.0, ctx.args.duration))
    _services("up", "redis")


def fault_poison(ctx: Ctx) -> None:
    sys.path.insert(0, str(REPO / "tests"))
    from poison import garbage

    for queue in ("memq.extract", "memq.store"):
        for raw in garbage(queue).values():
            ctx.coord.broker.lpush(queue, raw)
            ctx.extra["planted poison"] += 1


def fault_nothing(ctx: Ctx) -> None:
    return None


INJECT: dict[str, Callable[[Ctx], None]] = {
    "kill": fault_kill, "pause": fault_pause, "chroma-down": _outage("chroma"),
    "neo4j-down": _outage("neo4j"), "redis-restart": fault_redis, "llm-storm": fault_nothing,
    "poison": fault_poison, "fuzz": fault_nothing, "huge": fault_nothing,
}


def fuzzed_lines(rng: random.Random, good: list[str], n: int, user: str) -> list[str | bytes]:
    """The good lines, and n broken ones among them (of another user: a flipped byte may
    still make a valid turn): each must get a verdict or go through, none may stop the good
    ones."""
    bad: list[str | bytes] = []
    for _ in range(n):
        line = bytearray(json.dumps({**json.loads(rng.choice(good)), "user_id": user}).encode())
        for _ in range(rng.randint(1, 4)):
            line[rng.randrange(len(line))] = rng.randrange(256)
        bad.append(bytes(line))
    bad += [b"\xff\xfe", "[" * 50_000, '{"n": ' + "9" * 6000 + "}", "null", "{}"]
    out: list[str | bytes] = list(good) + bad
    rng.shuffle(out)
    return out


def _wait(coord: Any, timeout: float) -> bool:
    """Like workers.outbox.wait, riding out a Redis restart."""
    import redis

    from memq.workers import outbox

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if not outbox.inflight(coord):
                return True
        except redis.RedisError:
            pass
        time.sleep(0.5)
    return False


def _start_llm(ctx_env: dict[str, str], storm: float, seconds: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "fakellm.py"), "--rules", "--storm", str(storm),
         "--storm-seconds", str(seconds)], cwd=REPO, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.stdout is not None
    ctx_env.update({"MEMQ_LLM_BASE_URL": proc.stdout.readline().strip(),
                    "MEMQ_LLM_MODEL": "fake-rules", "MEMQ_LLM_TIMEOUT_S": "2"})
    return proc


def build_input(name: str, args: argparse.Namespace, rng: random.Random, run: str,
                parse_lines: Any) -> tuple[list[stress.UserPlan], list[Any], dict[str, int], str]:
    """The users and their batches; fuzzed lines and long noise turns for those faults."""
    plans = [stress.generate(f"chaos-{name}-{run}-u{u}", args.turns, rng)
             for u in range(args.users)]
    good = [json.dumps(line) for p in plans for line in p.lines]
    extra = {"planted poison": 0, "verdicts": 0, "huge turns": 0}
    lines: list[str | bytes] = list(good)
    if name == "fuzz":
        lines = fuzzed_lines(rng, good, args.turns, f"chaos-fuzz-{run}")
    batches, errors = parse_lines(lines)
    extra["verdicts"] = len(errors)
    huge_user = f"chaos-huge-{run}"
    if name == "huge":  # long turns of noise: every one an episode, no memory
        noise = [json.dumps({"user_id": huge_user, "session_id": "s1", "turn_id": f"h{i}",
                             "role": "user", "timestamp": f"2026-02-01T09:{i % 60:02d}:00Z",
                             "content": " ".join(rng.choice(["lorem", "ipsum", "dolor", "sit"])
                                                 for _ in range(5_000))[:32_000]})
                 for i in range(args.huge_turns)]
        more, _ = parse_lines(noise)
        batches += more
        extra["huge turns"] = args.huge_turns
    return plans, batches, extra, huge_user


def run_fault(name: str, args: argparse.Namespace) -> dict[str, Any]:
    from memq.workers import wiring
    from memq.workers.client import enqueue, parse_lines

    rng = random.Random(f"{args.seed}-{name}")
    run = uuid.uuid4().hex[:6]
    plans, batches, extra, huge_user = build_input(name, args, rng, run, parse_lines)
    coord = wiring.coord()
    flush_own(coord.r, "chaos")  # only a Redis scripts/services started from MEMQ_HOME
    env = {**os.environ, "C_FORCE_ROOT": "1"}
    llm = _start_llm(env, 0.3, args.duration) if name == "llm-storm" else None
    logdir = Path(os.environ.get("MEMQ_HOME", REPO / ".memq")) / "logs"
    logdir.mkdir(parents=True, exist_ok=True)
    workers = [stress.start_worker(i, env, logdir) for i in range(args.workers)]
    ctx = Ctx(args, workers, env, logdir, rng, coord, extra)
    started = time.monotonic()
    try:
        enqueue(batches)
        INJECT[name](ctx)
        fault_over = time.monotonic()
        done = _wait(coord, args.timeout)
        recovery = time.monotonic() - fault_over
        alive = sum(w.poll() is None for w in ctx.workers)
    finally:
        for w in ctx.workers:
            stress.signal_group(w, signal.SIGCONT)
            stress.signal_group(w, signal.SIGTERM)
        for w in ctx.workers:
            try:
                w.wait(timeout=60)
            except subprocess.TimeoutExpired:
                stress.signal_group(w, signal.SIGKILL)
        if llm is not None:
            llm.terminate()
    return tally(name, plans, coord, extra, huge_user, done=done, recovery=recovery,
                 dead_workers=len(ctx.workers) - alive, seconds=time.monotonic() - started)


def tally(name: str, plans: list[stress.UserPlan], coord: Any, extra: dict[str, int],
          huge_user: str, *, done: bool, recovery: float, dead_workers: int,
          seconds: float) -> dict[str, Any]:
    """What came out against what went in, and the oracle's verdict."""
    from memq.workers import deadletters, wiring

    score = stress.compare(plans, wiring.stores_for)
    dead = deadletters.dead_letters(coord)
    quarantined = sum(1 for d in dead if str(d.get("stage", "")).startswith("broker:")
                      or d.get("delivery_id") in ("p1", "p2", "p3", "p4"))
    huge_episodes = wiring.chroma().count_episodes(huge_user) if name == "huge" else 0
    turns_in = sum(len(p.lines) for p in plans) + extra["huge turns"]
    episodes = sum(wiring.chroma().count_episodes(p.user_id) for p in plans) + huge_episodes
    audit = sum(len(wiring.graph().audit(p.user_id)) for p in plans)
    lost = score["episodes_missing"] + (extra["huge turns"] - huge_episodes) + max(
        0, score["expected"] - score["found"])
    wrong = (score["wrong_current"] + score["wrong_intervals"] + score["missing_audit"]
             + score["graph_drift"] + score["index_drift"])
    return {"fault": name, "turns in": turns_in, "episodes": episodes,
            "memories": score["found"], "audit": audit, "lost": lost,
            "duplicated": score["duplicates"], "wrong": wrong,
            "dead-lettered": len(dead) - quarantined, "quarantined": quarantined,
            "verdicts": extra["verdicts"], "workers dead": dead_workers,
            "recovery s": round(recovery, 1), "total s": round(seconds, 1),
            "finished": done}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("faults", nargs="*", default=list(FAULTS), help=f"of {', '.join(FAULTS)}")
    ap.add_argument("--quick", action="store_true", help="short outages, few turns (CI)")
    ap.add_argument("--users", type=int, default=8)
    ap.add_argument("--turns", type=int, default=40)
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--duration", type=float, default=60.0, help="outage / fault seconds")
    ap.add_argument("--huge-turns", type=int, default=100)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if args.quick:
        args.users, args.turns, args.duration, args.huge_turns = 4, 24, 12.0, 24
    port = os.environ.get("MEMQ_REDIS_PORT", "6379")
    os.environ["MEMQ_REDIS_URL"] = f"redis://127.0.0.1:{port}/10"
    os.environ.setdefault("MEMQ_CLAIM_S", "4")
    os.environ.setdefault("MEMQ_STALL_S", "15")
    os.environ.setdefault("MEMQ_REAPER_INTERVAL_S", "1")
    os.environ.setdefault("MEMQ_VISIBILITY_TIMEOUT_S", "60")
    unknown = set(args.faults) - set(FAULTS)
    if unknown:
        ap.error(f"unknown fault(s): {', '.join(sorted(unknown))}")
    print(f"chaos: {args.users} users x {args.turns} turns, {args.workers} workers, "
          f"faults {args.duration:g} s, load average {os.getloadavg()[0]:.2f}", flush=True)
    rows = []
    for name in args.faults:
        row = run_fault(name, args)
        rows.append(row)
        print(json.dumps(row), flush=True)
    cols = list(rows[0])
    print("\n| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for row in rows:
        print("| " + " | ".join(str(row[c]) for c in cols) + " |")
    bad = [r["fault"] for r in rows if r["lost"] or r["duplicated"] or r["wrong"]
           or r["dead-lettered"] or r["workers dead"] or not r["finished"]]
    print(f"\nload average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"chaos: FAIL ({', '.join(bad)})" if bad else "chaos: OK")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
