"""Correct under many workers and any delay: the stress run against a serial oracle (plain,
with frozen workers, with kill -9, on a loaded host), a drain frozen between plan and commit
whose stale plan must be refused, and a worker killed there that must be completed once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import redis

from integration.conftest import REDIS_BASE, REPO, Worker, memq, memq_env, start_worker
from memq.workers import deadletters, outbox
from memq.workers.coord import Coord

pytestmark = pytest.mark.integration

WRONG = ("duplicates", "wrong current values", "missing audit entries",
         "wrong validity intervals", "graph/fact drift", "index drift", "dead letters",
         "episodes missing")


def _stress(*args: str) -> dict[str, str]:
    res = subprocess.run(
        [str(REPO / "scripts" / "stress"), *args], check=False, cwd=REPO,
        env=memq_env(MEMQ_STRESS_VERBOSE="1"), capture_output=True, text=True, timeout=1200)
    print(res.stdout)
    assert res.returncode == 0, res.stdout + res.stderr[-4000:]
    figures = dict(line.strip().split(": ", 1) for line in res.stdout.splitlines()
                   if ": " in line)
    for key in WRONG:
        assert figures[key] == "0", key
    assert figures["memories expected"] == figures["memories found"]
    assert figures["finished"] == "True"
    assert int(figures["max message bytes"]) <= 4096
    return figures


def test_stress_many_workers_redelivered_and_shuffled(services: None) -> None:
    figures = _stress("--users", "20", "--turns", "50", "--workers", "4", "--redeliver",
                      "--shuffle")
    assert figures["turns"] == "1000" and figures["workers"] == "4"


def test_stress_with_workers_frozen_past_every_lease(services: None) -> None:
    figures = _stress("--users", "10", "--turns", "40", "--workers", "3", "--redeliver",
                      "--shuffle", "--pause-workers", "--fault-every", "3", "--pause-s", "8",
                      "--seed", "2")
    assert int(figures["workers paused"]) >= 1


def test_stress_with_workers_killed(services: None) -> None:
    figures = _stress("--users", "10", "--turns", "40", "--workers", "3", "--redeliver",
                      "--shuffle", "--kill-workers", "--fault-every", "4", "--seed", "3")
    assert int(figures["workers killed"]) >= 1


def test_stress_eight_workers_on_a_loaded_host(services: None) -> None:
    figures = _stress("--users", "10", "--turns", "40", "--workers", "8", "--redeliver",
                      "--shuffle", "--cpu-burn", "4", "--seed", "4")
    assert figures["cpu burners"] == "4"


def test_stress_state_on_a_redis_cluster_with_workers_killed(services: None) -> None:
    """The coordination state on a Redis Cluster of three primaries made by the run
    (scripts/redis_cluster.py), the broker on the tests' Redis: every script and transaction
    of the coordination state in one slot (the cluster refuses any other), the reaper reading every
    bucket, workers killed mid-run; the oracle holds and the keys spread over the nodes."""
    figures = _stress("--users", "8", "--turns", "30", "--workers", "3", "--redeliver",
                      "--shuffle", "--kill-workers", "--fault-every", "3", "--seed", "6",
                      "--state-cluster", "3")
    assert figures["state"].startswith("Redis Cluster, 3 primaries")
    per_node = [int(n) for n in figures["state keys per primary"].split(",")]
    assert len(per_node) == 3 and min(per_node) > 0, per_node


def test_stress_state_node_restarted_only_its_users_wait(services: None) -> None:
    """A primary of the state's cluster (the one holding most of the run's users) shut down
    mid-run for 6 s and started again: its users' deliveries wait (none finishes while it is
    down), the other users' go on, nothing is lost."""
    figures = _stress("--users", "10", "--turns", "60", "--workers", "3", "--state-cluster",
                      "3", "--restart-state-node", "-1", "--restart-after", "2", "--down-s",
                      "6", "--seed", "7")
    assert int(figures["users on that node"]) >= 1
    assert float(figures["state node down seconds"]) >= 5.5
    assert figures["done while down, its users"] == "0"
    assert int(figures["done while down, other users"]) >= 1


def _can_make_namespaces() -> bool:
    res = subprocess.run(["ip", "netns", "add", "memq-probe"], check=False,
                         capture_output=True)
    subprocess.run(["ip", "netns", "del", "memq-probe"], check=False, capture_output=True)
    return res.returncode == 0


def test_stress_workers_on_three_hosts_one_link_cut(services: None) -> None:
    """Workers in network namespaces made by the run, each reaching the stores over a veth
    link of its own (scripts/netns.py); a random host's link is cut mid-run, then restored."""
    if not _can_make_namespaces():
        message = "cannot make network namespaces here (needs root and iproute2)"
        if os.environ.get("MEMQ_REQUIRE_SERVICES"):
            pytest.fail(message)
        pytest.skip(message)
    figures = _stress("--users", "10", "--turns", "40", "--workers", "3", "--netns", "3",
                      "--cut-links", "--cut-s", "8", "--fault-every", "5", "--redeliver",
                      "--shuffle", "--seed", "5")
    assert figures["hosts"] == "3" and int(figures["links cut"]) >= 1
    addresses = figures["store addresses"].split(",")
    assert len(set(addresses)) == 3 and "127.0.0.1" not in addresses
    here = subprocess.run(["ip", "-o", "-4", "addr"], check=True, capture_output=True,
                          text=True).stdout
    assert not [a for a in addresses if f"inet {a}/" in here]  # the run took its links away


def test_stress_on_two_neo4j_and_three_chroma_one_restarted(services: None) -> None:
    """Users over 2 Neo4j and 3 Chroma instances (the map in Redis, workers.placement); the
    second Neo4j stops mid-run and comes back: its users wait, the others go on, nothing is
    lost."""
    # enough work that the other users still have some while the shard is down (with 40
    # turns each they had finished before it went down: 0 done meanwhile, vacuously)
    figures = _stress("--users", "12", "--turns", "100", "--workers", "3", "--shuffle",
                      "--neo4j-shards", "2", "--chroma-shards", "3", "--restart-shard",
                      "neo4j:1", "--restart-after", "1", "--down-s", "8", "--seed", "6")
    assert figures["store shards"] == "neo4j 2, chroma 3"
    on = {kind: [int(x) for x in part.split()[1].split(",")]
          for kind, part in zip(("neo4j", "chroma"), figures["users on each shard"].split(" / "),
                                strict=True)}
    assert sum(on["neo4j"]) == 12 and min(on["neo4j"]) >= 1 and len(on["chroma"]) == 3
    assert float(figures["shard down seconds"]) >= 8
    assert figures["done while down, its users"] == "0"  # they waited
    assert int(figures["done while down, other users"]) >= 1  # the others did not


def test_stress_with_users_moved_between_shards_mid_run(services: None) -> None:
    """Random users moved between shards (workers.shards.move: fenced by the claim, the
    moving mark and the epoch mailbox.post checks) every second while the run goes on, with
    redeliveries and workers frozen past their leases."""
    figures = _stress("--users", "10", "--turns", "60", "--workers", "3", "--shuffle",
                      "--redeliver", "--neo4j-shards", "2", "--chroma-shards", "3",
                      "--move-every", "1", "--pause-workers", "--fault-every", "4",
                      "--pause-s", "8", "--seed", "11")
    assert int(figures["users moved"]) >= 5, figures


def _line(user: str, turn: str, text: str, day: int) -> str:
    return json.dumps({"user_id": user, "session_id": f"s{day}", "turn_id": turn,
                       "role": "user", "content": text,
                       "timestamp": f"2026-11-0{day}T09:00:00Z"})


def _wait_for(worker: Worker, needle: bytes, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while needle not in worker.log.read_bytes():
        assert time.monotonic() < deadline, worker.log.read_text()[-3000:]
        time.sleep(0.1)


def _isolated(db: int) -> tuple[str, redis.Redis]:
    """A broker database of the test's own: no other worker takes its tasks."""
    url = f"{REDIS_BASE}/{db}"
    r = redis.Redis.from_url(url, decode_responses=True)
    r.flushdb()
    return url, r


def _read(env: dict[str, str], *args: str) -> list[dict]:
    return json.loads(memq(*args, "--json", env=env).stdout)


def test_a_drain_frozen_between_plan_and_commit_is_refused(
    services: None, tmp_path: Path, user_id: str
) -> None:
    """The lease runs out while the drain is frozen (SIGSTOP: its renewing thread stops too);
    another worker takes the user and applies both sessions; when the frozen one wakes, its
    plan -- made before session 2 was applied -- is refused by the version fence, not
    applied over the newer state."""
    url, r = _isolated(12)
    base = {"MEMQ_REDIS_URL": url, "MEMQ_CLAIM_S": "2", "MEMQ_STALL_S": "4",
            "MEMQ_REAPER_INTERVAL_S": "0.5"}
    env = memq_env(**base)
    frozen = start_worker(tmp_path, "frozen", concurrency=1, env=env,
                          delay=("memq.upsert_graph", 3))
    memq("enqueue", "-", stdin=_line(user_id, "t1", "Our production servers run CentOS 7.", 1)
         + "\n", env=env)
    _wait_for(frozen, b"fault injection: delaying")
    os.killpg(frozen.proc.pid, signal.SIGSTOP)  # frozen with a plan made at version 0
    rescuer = start_worker(tmp_path, "rescuer", concurrency=1, env=env)
    try:
        memq("enqueue", "-", stdin=_line(user_id, "t1", "We moved production to Ubuntu 22.04.",
                                         2) + "\n", env=env)
        memq("wait", "--timeout", "120", env=env)  # the rescuer applied both sessions
        assert int(r.get("memq:stats:replans") or 0) == 0
        os.killpg(frozen.proc.pid, signal.SIGCONT)
        deadline = time.monotonic() + 30
        while int(r.get("memq:stats:replans") or 0) < 1:  # its commit comes, and is refused
            assert time.monotonic() < deadline, frozen.log.read_text()[-3000:]
            time.sleep(0.2)
        time.sleep(1)
    finally:
        os.killpg(frozen.proc.pid, signal.SIGCONT)
        frozen.stop()
        rescuer.stop()
    memories = _read(env, "memories", "--user", user_id, "--all")
    assert sorted((m["content"], m["status"]) for m in memories) == [
        ("The user's production environment is CentOS 7.", "superseded"),
        ("The user's production environment is Ubuntu 22.04.", "current"),
    ]
    audit = _read(env, "audit", "--user", user_id)
    assert sorted(e["operation"] for e in audit) == ["add", "add", "supersede"]
    facts = [f for f in _read(env, "facts", "--user", user_id)
             if f["invalid_at"] is None and f["expired_at"] is None]
    assert [f["object"] for f in facts] == ["Ubuntu 22.04"]
    assert deadletters.dead_count(Coord(r)) == 0


def test_worker_killed_between_plan_and_commit_completes_exactly_once(
    services: None, tmp_path: Path, user_id: str
) -> None:
    url, r = _isolated(13)
    base = {"MEMQ_REDIS_URL": url, "MEMQ_CLAIM_S": "2", "MEMQ_STALL_S": "4",
            "MEMQ_REAPER_INTERVAL_S": "0.5"}
    env = memq_env(**base)
    doomed = start_worker(tmp_path, "doomed", concurrency=1, env=env,
                          delay=("memq.upsert_graph", 60))
    lines = [_line(user_id, "k1", "I'm a product manager.", 1),
             _line(user_id, "k2", "Our production servers run CentOS 7.", 2),
             _line(user_id, "k3", "We moved production to Ubuntu 22.04.", 3)]
    memq("enqueue", "-", stdin="\n".join(lines) + "\n", env=env)
    _wait_for(doomed, b"fault injection: delaying")
    os.killpg(doomed.proc.pid, signal.SIGKILL)  # the whole worker: main process and pool
    doomed.proc.wait(timeout=10)
    assert outbox.inflight(Coord(r)) >= 1  # not lost...

    rescuer = start_worker(tmp_path, "rescuer", concurrency=1, env=env)
    try:
        memq("wait", "--timeout", "120", env=env)  # ...the reaper wakes the user's mailbox
    finally:
        rescuer.stop()
    assert deadletters.dead_count(Coord(r)) == 0
    memories = _read(env, "memories", "--user", user_id, "--all")
    assert sorted((m["content"], m["status"]) for m in memories) == [
        ("The user is a product manager.", "current"),
        ("The user's production environment is CentOS 7.", "superseded"),
        ("The user's production environment is Ubuntu 22.04.", "current"),
    ]
    audit = _read(env, "audit", "--user", user_id)
    assert len({e["id"] for e in audit}) == len(audit) == 4  # 3 adds + 1 supersede, once each
    assert sorted(e["operation"] for e in audit) == ["add", "add", "add", "supersede"]
