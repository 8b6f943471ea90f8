"""No message can crash a worker: every kind of garbage on every memq queue is moved to the
dead-letter list with its reason and raw bytes, the workers keep running, and real work still
goes through afterwards."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import pytest
import redis
from poison import garbage

from integration.conftest import REDIS_BASE, demo_lines, memq, memq_env, start_worker
from memq.workers import deadletters
from memq.workers.coord import Coord

pytestmark = pytest.mark.integration


def test_garbage_on_every_queue_is_quarantined_and_workers_live(
    services: None, tmp_path: Path, user_id: str
) -> None:
    url = f"{REDIS_BASE}/11"
    r = redis.Redis.from_url(url)
    r.flushdb()
    env = memq_env(MEMQ_REDIS_URL=url)
    workers = [start_worker(tmp_path, f"p{i}", concurrency=1, env=env) for i in range(2)]
    try:
        planted = 0
        for queue in ("memq.extract", "memq.store"):
            for raw in garbage(queue).values():
                r.lpush(queue, raw)
                planted += 1
        deadline = time.monotonic() + 60
        while deadletters.dead_count(Coord(r)) < planted:
            assert time.monotonic() < deadline, (deadletters.dead_count(Coord(r)), planted)
            for w in workers:
                assert w.proc.poll() is None, w.log.read_text()[-3000:]
            time.sleep(0.2)
        time.sleep(1)
        assert deadletters.dead_count(Coord(r)) == planted  # each once, none lost, none doubled
        assert all(w.proc.poll() is None for w in workers)
        entries = deadletters.dead_letters(Coord(r))
        assert all(e["reason"] for e in entries)
        quarantined = [e for e in entries if e["stage"].startswith("broker:")]
        assert all(base64.b64decode(e["message"]["raw_base64"]) for e in quarantined)
        # ...and real work still goes through.
        memq("enqueue", "-", stdin=demo_lines(user_id), env=env)
        memq("wait", "--timeout", "120", env=env)
        memories = json.loads(memq("memories", "--user", user_id, "--json", env=env).stdout)
        assert len(memories) == 4  # the demo's current memories
    finally:
        for w in workers:
            w.stop()
    for w in workers:
        assert b"Unrecoverable error" not in w.log.read_bytes()
