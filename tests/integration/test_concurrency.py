"""Correct under many workers: the stress run against a serial oracle, and a worker killed
with SIGKILL in the middle of a merge."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest
import redis

from integration.conftest import REPO, memq, memq_env, start_worker

pytestmark = pytest.mark.integration


def test_stress_many_workers_redelivered_and_shuffled(services: None) -> None:
    res = subprocess.run(
        [str(REPO / "scripts" / "stress"), "--users", "20", "--turns", "50", "--workers", "4",
         "--redeliver", "--shuffle"],
        check=False, cwd=REPO, env=memq_env(MEMQ_STRESS_VERBOSE="1"), capture_output=True,
        text=True, timeout=1200)
    print(res.stdout)
    assert res.returncode == 0, res.stdout + res.stderr[-4000:]
    figures = dict(line.strip().split(": ", 1) for line in res.stdout.splitlines()
                   if ": " in line)
    assert figures["turns"] == "1000"
    assert figures["workers"] == "4"
    for key in ("duplicates", "wrong current values", "missing audit entries",
                "wrong validity intervals", "graph/vector drift", "dead letters"):
        assert figures[key] == "0", key
    assert figures["memories expected"] == figures["memories found"]


def test_worker_killed_mid_merge_completes_exactly_once(
    services: None, tmp_path, user_id: str
) -> None:
    url = "redis://127.0.0.1:6379/13"  # its own broker db: no other worker takes the task
    base = {"MEMQ_REDIS_URL": url, "MEMQ_VISIBILITY_TIMEOUT_S": "6", "MEMQ_LOCK_LEASE_S": "5",
            "MEMQ_RESTORE_SWEEP_S": "2"}
    r = redis.Redis.from_url(url, decode_responses=True)
    r.flushdb()
    doomed = start_worker(tmp_path, "doomed", concurrency=1, env=memq_env(
        **base, MEMQ_FAULT_DELAY_STAGE="memq.merge", MEMQ_FAULT_DELAY_S="60"))
    env = memq_env(**base)
    lines = [json.dumps({"user_id": user_id, "session_id": "s1", "turn_id": f"k{i}",
                         "role": "user", "content": text,
                         "timestamp": f"2026-11-0{i + 1}T09:00:00Z"})
             for i, text in enumerate(["I'm a product manager.",
                                       "Our production servers run CentOS 7.",
                                       "We moved production to Ubuntu 22.04."])]
    memq("enqueue", "-", stdin="\n".join(lines) + "\n", env=env)

    deadline = time.monotonic() + 90
    while b"fault injection: delaying stage" not in doomed.log.read_bytes():
        assert time.monotonic() < deadline, doomed.log.read_text()[-3000:]
        time.sleep(0.2)
    os.killpg(doomed.proc.pid, signal.SIGKILL)  # the whole worker: main process and pool
    doomed.proc.wait(timeout=10)
    assert int(r.scard("memq:inflight")) == 1  # the batch is not lost...

    rescuer = start_worker(tmp_path, "rescuer", concurrency=1, env=env)
    try:
        memq("wait", "--timeout", "120", env=env)  # ...it is redelivered and completes
    finally:
        rescuer.stop()
    assert r.llen("memq:deadletter") == 0

    def read(*args: str) -> list[dict]:
        return json.loads(memq(*args, "--json", env=env).stdout)

    memories = read("memories", "--user", user_id, "--all")
    assert sorted((m["content"], m["status"]) for m in memories) == [
        ("The user is a product manager.", "current"),
        ("The user's production environment is CentOS 7.", "superseded"),
        ("The user's production environment is Ubuntu 22.04.", "current"),
    ]
    audit = read("audit", "--user", user_id)
    assert len({e["id"] for e in audit}) == len(audit) == 4  # 3 adds + 1 supersede, once each
    assert sorted(e["operation"] for e in audit) == ["add", "add", "add", "supersede"]
