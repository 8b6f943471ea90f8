"""The warm-up (workers/warm.py) against the tests' real Neo4j: the write path's statements
run on a sample in one rolled-back transaction, nothing kept, and another thread's real
writes, made meanwhile, are not part of it. And a worker warms itself when it starts. A
server's kept read plans (``CYPHER replan=skip``) answer as Neo4j's own planning does."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from integration.conftest import (
    REPO,
    Worker,
    demo_lines,
    memq,
    memq_env,
    start_worker,
    stored,
    wait_done,
)

SCRIPT = r"""
import sys, threading
from datetime import UTC, datetime
from memq.schemas import Turn
from memq.workers import wiring
from memq.workers.warm import rehearse

user, other = sys.argv[1], sys.argv[2]
graph = wiring.graph()
started = threading.Event()

def real_write():  # a real user's write, in another thread, while the rehearsal runs
    started.wait(30)
    graph.add_episodes(other, "s1", [Turn(turn_id="t1", role="user", content="I like tea.",
                                          timestamp=datetime(2026, 1, 1, tzinfo=UTC))],
                       datetime.now(UTC))

writer = threading.Thread(target=real_write)
writer.start()
rehearsal = graph.rehearsal
def rehearsing():  # the other thread writes once this one's transaction is open
    context = rehearsal()
    class Both:
        def __enter__(self):
            context.__enter__()
            started.set()
            writer.join()
        def __exit__(self, *exc):
            return context.__exit__(*exc)
    return Both()
graph.rehearsal = rehearsing
took = rehearse(rounds=2, user=user)
print("took", round(took, 2))
print("kept", len(graph.read_memories(user, include_inactive=True)), user in graph.users(),
      graph.version(user).version)
print("other", len(graph.turn_refs(other, "s1")))
graph.delete_user(other)
"""


def test_the_rehearsal_keeps_nothing_and_leaves_other_writes_alone(services: None,
                                                                   user_id: str) -> None:
    res = subprocess.run([sys.executable, "-c", SCRIPT, f"warm-{user_id}", user_id], check=False,
                         cwd=REPO,
                         env=memq_env(), capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in res.stdout.splitlines())
    assert lines["kept"] == "0 False 0"  # no memory, no user node, no version
    assert lines["other"] == "1"  # the other thread's write is committed, not rolled back


def test_a_worker_warms_itself_when_it_starts(services: None, tmp_path: Path) -> None:
    worker = start_worker(tmp_path, "warm", concurrency=1,
                          env=memq_env(MEMQ_WARM="on", MEMQ_LOG_LEVEL="INFO",
                                       MEMQ_LOG_FORMAT="json"))
    try:
        deadline = time.monotonic() + 120
        while '"warmed up"' not in worker.log.read_text():  # its pool process
            if time.monotonic() > deadline:
                pytest.fail(f"no warm-up in the worker's log:\n{worker.log.read_text()[-3000:]}")
            time.sleep(0.2)
        assert "warm-up failed" not in worker.log.read_text()
    finally:
        worker.stop()


def test_a_client_asked_to_be_warm_is_warm_when_it_returns(services: None) -> None:
    """``Client(warm=True)``: the model is loaded and the stores connected before the
    constructor returns, even where MEMQ_WARM=off (that setting is for the servers)."""
    script = ("from memq import Client\nfrom memq.workers import wiring\n"
              "print('before', wiring.embedder.cache_info().currsize)\n"
              "Client(warm=True)\n"
              "print('after', wiring.embedder.cache_info().currsize)\n")
    res = subprocess.run([sys.executable, "-c", script], check=False, cwd=REPO,
                         env=memq_env(MEMQ_WARM="off"), capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    counts = [line for line in res.stdout.splitlines() if line.startswith(("before", "after"))]
    assert counts == ["before 0", "after 1"], res.stdout
    assert "warm-up failed" not in res.stderr


KEPT = r"""
import sys
from datetime import UTC, datetime
from memq.workers import search, warm, wiring

user, now = sys.argv[1], datetime.now(UTC)
graph = wiring.graph()
questions = ["where do I live?", "what do I do for work?", "what did I say about the servers we "
             "run in production and the database we moved to?", "tea"]
def answers():
    return [[(h.type, h.id, round(h.score, 6)) for h in search.search(user, q, 10, now)]
            for q in questions]
decided = answers()  # Neo4j plans (and replans) as it decides
graph.keep_read_plans()
print("same", answers() == decided, sum(map(len, decided)))
print("renewed", warm.replan_reads([graph]))
"""


def test_kept_read_plans_answer_as_neo4j_planning_does(worker: Worker, user_id: str) -> None:
    memq("enqueue", "-", stdin=demo_lines(user_id))
    wait_done()
    res = subprocess.run([sys.executable, "-c", KEPT, stored(user_id)], check=False, cwd=REPO,
                         env=memq_env(), capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in res.stdout.splitlines())
    same, hits = lines["same"].split()
    assert same == "True" and int(hits) > 0
    assert lines["renewed"] == "None"  # the keeper's round: every statement ran
