"""The agent API end to end on the real services and a real worker: the Python clients (run
as an agent would, in a process of their own), the HTTP API over real HTTP (``memq serve``),
the operator commands with a service down, and logs that keep no user text."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from integration.conftest import Worker, free_port, memq, memq_env, new_key, start_api

pytestmark = pytest.mark.integration

SYNC_AGENT = r"""
import json, sys
from datetime import datetime
from memq import Client

user = sys.argv[1]
memory = Client()
ids = memory.add(user, [
    {"role": "user", "content": "I live in Lisbon.",
     "timestamp": "2026-11-20T10:00:00Z"},
    {"role": "assistant", "content": "Nice, how do you like Lisbon?",
     "timestamp": "2026-11-20T10:00:05Z"},
    {"role": "user", "content": "We use Terraform for all our infrastructure.",
     "timestamp": "2026-11-20T10:01:00Z"},
], session_id="s1")
again = memory.add(user, [{"role": "user", "content": "I live in Lisbon.",
                           "timestamp": "2026-11-20T10:00:00Z"}], session_id="s1")
# the suite's first deliveries pay the worker's cold start (model load, Neo4j's JIT): on a
# loaded machine (CI beside other jobs) that alone took over 120 s once
statuses = memory.wait(ids + again, timeout=300)
before = {m.id: (m.importance, m.last_accessed_at) for m in memory.memories(user)}
hits = memory.search(user, "where does the user live?", k=5)
after = {m.id: (m.importance, m.last_accessed_at) for m in memory.memories(user)}
recorded = memory.search(user, "where does the user live?", k=5, record=True)
boosted = {m.id: m.importance for m in memory.memories(user)}
print(json.dumps({
    "ids": ids, "states": [s.state for s in statuses],
    "memories": [m.content for m in memory.memories(user)],
    "episodes": [h.content for h in hits if h.type == "episode"],
    "memory_hits": [h.id for h in hits if h.type == "memory"],
    "read_only": before == after,
    "boosted": [i for i in boosted if boosted[i] > before[i][0]],
    "recorded": [h.id for h in recorded if h.type == "memory"],
    "facts": [[f["predicate"], f["object"]] for f in memory.facts(user)],
    "audit": len(memory.audit(user)),
    "context": memory.context(user, "where does the user live?"),
    "forgot": memory.forget(user).to_json(),
    "after_forget": len(memory.memories(user, include_inactive=True)),
}, default=str))
"""

ASYNC_AGENT = r"""
import asyncio, json, sys
from memq import AsyncClient

async def main(user):
    memory = AsyncClient()
    ids = await memory.add(user, [{"role": "user", "content": "I prefer tea over coffee.",
                                   "name": "Maria"}])
    statuses = await memory.wait(ids, timeout=120)
    hits = await memory.search(user, "tea or coffee?", k=3)
    return {"states": [s.state for s in statuses],
            "memories": [m.content for m in await memory.memories(user)],
            "hits": len(hits)}

print(json.dumps(asyncio.run(main(sys.argv[1]))))
"""


def _agent(script: str, user: str, **env: str) -> dict[str, Any]:
    res = subprocess.run([sys.executable, "-c", script, user], cwd="/", env=memq_env(**env),
                         capture_output=True, text=True, timeout=420, check=False)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_python_client_end_to_end(worker: Worker, user_id: str) -> None:
    out = _agent(SYNC_AGENT, user_id)
    assert len(out["ids"]) == 1 and set(out["states"]) == {"done"}
    assert any("Lisbon" in m for m in out["memories"]), out["memories"]
    assert any("Terraform" in m for m in out["memories"]), out["memories"]
    assert len(out["memories"]) == 2  # the repeated message was applied once
    assert any("Lisbon" in e for e in out["episodes"])
    assert out["read_only"], "a plain search changed the memories"
    assert out["boosted"] and set(out["boosted"]) <= set(out["recorded"])
    assert ["lives_in", "Lisbon"] in out["facts"]
    assert out["audit"] >= 2
    assert "Lisbon" in out["context"] and "What is known (current):" in out["context"]
    assert out["after_forget"] == 0


def test_async_client_end_to_end(worker: Worker, user_id: str) -> None:
    out = _agent(ASYNC_AGENT, user_id)
    assert out["states"] == ["done"]
    assert any("tea" in m for m in out["memories"]), out["memories"]
    assert out["hits"] >= 1


TENANT = "t-api"


@pytest.fixture(scope="module")
def api(worker: Worker, tmp_path_factory: pytest.TempPathFactory
        ) -> Iterator[tuple[str, Path, httpx.Client]]:
    """``memq serve`` as shipped (auth on), and a client that sends an admin key of the
    tests' tenant with every call."""
    server = start_api(tmp_path_factory.mktemp("serve") / "serve.log")
    key = new_key(TENANT, "admin")
    with httpx.Client(headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
        yield server.base, server.log, http
    server.stop()


def _done(http: httpx.Client, base: str, delivery_ids: list[str]) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 120
    while True:
        states = [http.get(f"{base}/v1/deliveries/{d}").json() for d in delivery_ids]
        if all(s["finished"] for s in states) or time.monotonic() > deadline:
            return states
        time.sleep(0.2)


def test_http_api_end_to_end(api: tuple[str, Path, httpx.Client], user_id: str) -> None:
    base, _, http = api
    turn = {"user_id": user_id, "session_id": "s1", "role": "user",
            "timestamp": "2026-11-01T09:00:00Z"}
    bad = http.post(f"{base}/v1/turns", json=[
        {**turn, "turn_id": "t1", "content": "Our production servers run CentOS 7."},
        {**turn, "turn_id": "t2", "content": "   "},
        {**turn, "turn_id": "t3", "content": "ok", "timestamp": "yesterday"}])
    assert bad.status_code == 400
    assert [e["item"] for e in bad.json()["errors"]] == [1, 2]
    assert bad.headers["content-type"] == "application/problem+json"
    assert http.get(f"{base}/v1/users/{user_id}/memories").json() == []  # all or nothing

    ok = http.post(f"{base}/v1/turns", json=[
        {**turn, "turn_id": "t1", "content": "Our production servers run CentOS 7."}])
    assert ok.status_code == 202, ok.text
    chat = http.post(f"{base}/v1/turns", json={"user_id": user_id, "session_id": "s2",
                                                "messages": [
        {"role": "user", "content": "We migrated production to Ubuntu 22.04.",
         "timestamp": "2026-11-15T09:00:00Z"}]})
    assert chat.status_code == 202, chat.text
    states = _done(http, base, ok.json()["delivery_ids"] + chat.json()["delivery_ids"])
    assert {s["state"] for s in states} == {"done"}, states

    memories = http.get(f"{base}/v1/users/{user_id}/memories").json()
    assert [m["content"] for m in memories] == ["The user's production environment is "
                                                "Ubuntu 22.04."]
    everything = http.get(f"{base}/v1/users/{user_id}/memories", params={"all": True}).json()
    assert len(everything) == 2
    facts = http.get(f"{base}/v1/users/{user_id}/facts").json()
    assert {f["object"] for f in facts} == {"CentOS 7", "Ubuntu 22.04"}
    audit = http.get(f"{base}/v1/users/{user_id}/audit").json()
    assert {a["operation"] for a in audit} >= {"add", "supersede"}
    hits = http.post(f"{base}/v1/search", json={"user_id": user_id,
                                                 "query": "what OS is production on?"}).json()
    assert "Ubuntu" in hits[0]["content"]  # the current fact first: its memory or its turn
    assert [h["type"] for h in hits if "Ubuntu" in h["content"]][:2] in (
        ["memory", "episode"], ["episode", "memory"])
    turns = [h["content"] for h in hits if h["type"] == "episode"]
    assert turns.index("We migrated production to Ubuntu 22.04.") < turns.index(
        "Our production servers run CentOS 7.")  # the superseded statement comes after
    block = http.post(f"{base}/v1/context", json={"user_id": user_id, "query": "production OS",
                                                   "max_tokens": 200}).json()["context"]
    assert "Ubuntu 22.04" in block and len(block) <= 800
    assert http.post(f"{base}/v1/search", json={"user_id": user_id}).status_code == 422

    metrics = http.get(f"{base}/metrics").text
    assert 'memq_stage_seconds_bucket{le="+Inf",stage="memq.extract"}' in metrics
    assert 'memq_memories_written_total{operation="supersede"}' in metrics
    assert 'memq_queue_depth{queue="memq.extract"}' in metrics
    for stage in ("searchable", "current"):  # freshness: its own, finer buckets
        assert f'memq_freshness_seconds_bucket{{le="0.15",stage="{stage}"}}' in metrics
    assert http.get(f"{base}/readyz").json()["ready"] is True
    assert "/v1/turns" in http.get(f"{base}/openapi.json").json()["paths"]
    assert http.get(f"{base}/v1/deliveries/{uuid.uuid4().hex}").json()["state"] == "unknown"

    gone = http.delete(f"{base}/v1/users/{user_id}")
    assert gone.status_code == 200
    assert http.get(f"{base}/v1/users/{user_id}/memories",
                     params={"all": True}).json() == []


def test_forgotten_text_is_in_no_log_line(api: tuple[str, Path, httpx.Client], worker: Worker,
                                          user_id: str) -> None:
    base, serve_log, http = api
    code = uuid.uuid4().hex[:10]
    secret = f"I live in Quokka Street {code}."  # extracted: through every stage
    res = http.post(f"{base}/v1/turns", json={"user_id": user_id, "messages": [
        {"role": "user", "content": secret}]})
    assert res.status_code == 202
    assert {s["state"] for s in _done(http, base, res.json()["delivery_ids"])} == {"done"}
    assert http.post(f"{base}/v1/search", json={"user_id": user_id, "query": "where do I live",
                                                 "record": True}).status_code == 200
    memq("forget", "--user", f"{TENANT}:{user_id}")  # the stores' id of the tenant's user
    for log in (worker.log, serve_log):  # no log line of the worker or the API holds it
        text = log.read_text(errors="replace")
        assert code not in text and "Quokka" not in text, log
    assert user_id in worker.log.read_text()  # the worker did log this user's work (by id)


def test_doctor_and_status_with_a_service_down(worker: Worker) -> None:
    dead = str(free_port())  # nothing listens there
    res = memq("doctor", check=False, env=memq_env(MEMQ_NEO4J_PORT=dead))
    assert res.returncode != 0
    failed = [line for line in res.stdout.splitlines() if line.startswith("FAIL")]
    assert len(failed) == 1 and "neo4j" in failed[0], res.stdout
    assert "ok   redis" in res.stdout and "ok   chroma" in res.stdout

    res = memq("status", check=False, env=memq_env(MEMQ_REDIS_URL=f"redis://127.0.0.1:{dead}/0"))
    assert res.returncode != 0
    assert res.stderr.count("\n") == 1 and "cannot reach Redis" in res.stderr, res.stderr

    now = json.loads(memq("status", "--json").stdout)
    assert set(now["queues"]) == {"memq.extract", "memq.store"}
    assert any(name.startswith("w1@") for name in now["workers"]), now
    doctor = json.loads(memq("doctor", "--json").stdout)
    assert doctor["ok"] is True
    assert doctor["configuration"]["MEMQ_LLM_API_KEY"] is None  # masked or unset, never shown


def test_enqueue_from_a_pipe_publishes_as_the_lines_arrive(services: None, user_id: str) -> None:
    """`memq enqueue -` does not hold a producer's turns until the end of its input."""
    proc = subprocess.Popen([sys.executable, "-m", "memq.workers.cli", "enqueue", "-"],
                            env=memq_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for i in range(2):
            proc.stdin.write(json.dumps({
                "user_id": user_id, "session_id": "s-pipe", "turn_id": f"t{i}", "role": "user",
                "content": f"I like tea number {i}.", "timestamp": "2026-11-01T09:00:00Z"}) + "\n")
            proc.stdin.flush()
            line = proc.stdout.readline()  # published while the input is still open
            assert line.startswith("published 1 turn(s) of user"), line
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
    memq("forget", "--user", user_id, "--purge")
