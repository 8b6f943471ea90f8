"""Privacy forgetting, against the real stores and real workers: a unique string planted in a
user's turns is searched for in EVERY store (every Chroma collection, every Neo4j node and
relationship, every Redis database) and must be gone after forgetting, including for a batch
that was in flight when the user was forgotten."""

from __future__ import annotations

import base64
import binascii
import json
import re
import subprocess
import sys
import time
import uuid
from functools import cache
from typing import Any

import chromadb
import neo4j
import pytest
import redis

from integration.conftest import (
    CHROMA_PORT,
    NEO4J_URI,
    REDIS_BASE,
    REPO,
    Worker,
    episode_texts,
    memq,
    memq_env,
    start_worker,
    stored,
    user_collection,
    wait_done,
)
from memq.pipeline.adapters.chroma import RECORD
from memq.workers import deadletters, outbox
from memq.workers.coord import Coord

pytestmark = pytest.mark.integration

CHROMA = ("127.0.0.1", CHROMA_PORT)
NEO4J = NEO4J_URI
REDIS = REDIS_BASE
INFLIGHT_REDIS_URL = f"{REDIS}/12"  # test (b): its own broker db, no other worker takes it

_FORGET = """
import json, sys
from memq.workers import wiring
from memq.workers.forget import forget_memory, forget_user
wiring.configure_logging("WARNING")
user, memory = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else None)
report = forget_memory(user, memory) if memory else forget_user(user)
print(json.dumps(report.to_json()))
"""


@cache
def _cli_wired() -> bool:
    """``memq forget --user U [--memory ID] --json`` once workers/cli.py calls workers.forget;
    until then the same functions in a process of their own, with the same environment."""
    res = memq("forget", "--help", check=False)
    return "--memory" in res.stdout and "--json" in res.stdout


def forget(user_id: str, memory_id: str | None = None,
           env: dict[str, str] | None = None) -> dict[str, Any]:
    extra = [] if memory_id is None else [memory_id]
    if _cli_wired():
        args = ["forget", "--user", user_id, "--json"]
        if memory_id is not None:
            args += ["--memory", memory_id]
        res = memq(*args, env=env)
    else:
        res = subprocess.run([sys.executable, "-c", _FORGET, user_id, *extra], check=False,
                             cwd=REPO, env=env or memq_env(), capture_output=True, text=True,
                             timeout=300)
        assert res.returncode == 0, res.stderr[-3000:]
    return dict(json.loads(res.stdout))


def read(*args: str, env: dict[str, str] | None = None) -> Any:
    return json.loads(memq(*args, "--json", env=env).stdout)


def line(user_id: str, session: str, turn: str, content: str, day: int) -> str:
    return json.dumps({"user_id": user_id, "session_id": session, "turn_id": turn,
                       "role": "user", "content": content,
                       "timestamp": f"2026-11-{day:02d}T09:00:00Z"})


# -- searching every store ----------------------------------------------------------------
_B64 = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")


def _expand(text: str, depth: int = 0) -> list[str]:
    """The text and whatever base64 inside it decodes to (kombu keeps message bodies in
    base64), recursively."""
    out = [text]
    if depth >= 3:
        return out
    for run in _B64.findall(text):
        try:
            decoded = base64.b64decode(run + "=" * (-len(run) % 4)).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        out += _expand(decoded, depth + 1)
    return out


def _holds(value: Any, needle: str) -> bool:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, default=str)
    return any(needle in t for t in _expand(value))


def chroma_hits(needle: str) -> list[str]:
    client = chromadb.HttpClient(host=CHROMA[0], port=CHROMA[1])
    hits = []
    for col in client.list_collections():
        offset, page = 0, 1000
        while True:
            res = col.get(include=["documents", "metadatas"], limit=page, offset=offset)
            for rid, doc, meta in zip(res["ids"], res["documents"] or [],
                                      res["metadatas"] or [], strict=True):
                if (_holds(rid, needle) or _holds(doc or "", needle) or _holds(meta, needle)
                        or _holds(json.loads((meta or {}).get(RECORD, "{}")), needle)):
                    hits.append(f"chroma:{col.name}:{rid}")
            if len(res["ids"]) < page:
                break
            offset += page
    return hits


_PROPS = """
any(k IN keys(x) WHERE toStringOrNull(x[k]) CONTAINS $s
    OR (valueType(x[k]) STARTS WITH 'LIST'
        AND any(v IN x[k] WHERE toStringOrNull(v) CONTAINS $s)))
"""


def neo4j_hits(needle: str) -> list[str]:
    with neo4j.GraphDatabase.driver(NEO4J) as driver, driver.session() as session:
        nodes = session.run(
            f"MATCH (x) WHERE {_PROPS} OR any(l IN labels(x) WHERE l CONTAINS $s) "
            "RETURN labels(x) AS what, x.id AS id", s=needle).data()
        rels = session.run(
            f"MATCH ()-[x]->() WHERE {_PROPS} OR type(x) CONTAINS $s "
            "RETURN type(x) AS what, x.id AS id", s=needle).data()
    return [f"neo4j:{r['what']}:{r['id']}" for r in nodes + rels]


def redis_hits(needle: str) -> list[str]:
    base = redis.Redis.from_url(f"{REDIS}/0")
    databases = int(base.config_get("databases").get("databases", 16))
    hits = []
    for db in range(databases):
        r = redis.Redis.from_url(f"{REDIS}/{db}")
        for key in r.scan_iter(count=1000):
            kind = r.type(key).decode()
            values: list[Any] = [key]
            if kind == "string":
                values.append(r.get(key))
            elif kind == "list":
                values += r.lrange(key, 0, -1)
            elif kind == "hash":
                values += [x for kv in r.hgetall(key).items() for x in kv]
            elif kind == "set":
                values += list(r.smembers(key))
            elif kind == "zset":
                values += [m for m, _ in r.zrange(key, 0, -1, withscores=True)]
            elif kind == "stream":
                values += [json.dumps({k.decode(): v.decode("utf-8", "replace")
                                       for k, v in fields.items()})
                           for _, fields in r.xrange(key)]
            if any(_holds(v, needle) for v in values if v is not None):
                hits.append(f"redis:{db}:{key.decode('utf-8', 'replace')}")
    return hits


def find_everywhere(needle: str) -> list[str]:
    return chroma_hits(needle) + neo4j_hits(needle) + redis_hits(needle)


def assert_tombstones(entries: list[dict[str, Any]]) -> None:
    for e in entries:
        assert e["before"] is None and e["after"] is None, e
        assert e["operation"] and e["at"], e
        assert e["reason"] in ("forgotten", "user forgotten", "memory forgotten"), e
        assert e["reason"] == "forgotten" or e["operation"] == "forget", e


def user_episodes(user_id: str) -> list[str]:
    """The user's episode records in Chroma, with their words from the graph."""
    try:
        res = user_collection(stored(user_id), "memq_episodes").get(include=[])
    except chromadb.errors.NotFoundError:
        return []  # forgotten users' collections are dropped
    return episode_texts(stored(user_id), res["ids"]) if res["ids"] else []


# -- (a) a user, everything processed ------------------------------------------------------
def test_forget_user_leaves_no_trace_in_any_store(worker: Worker, user_id: str) -> None:
    secret = uuid.uuid4().hex
    memq("enqueue", "-", stdin="\n".join([
        line(user_id, "s1", "f1", f"I live in Zzz{secret}.", 1),
        line(user_id, "s1", "f2", f"Have you ever heard of Zzz{secret}?", 2),  # rules: nothing
        line(user_id, "s1", "f3", "I'm a product manager.", 3),
    ]) + "\n")
    wait_done()
    memories = read("memories", "--user", user_id, "--all")
    assert sorted(m["content"] for m in memories) == [
        "The user is a product manager.", f"The user lives in Zzz{secret}."]
    planted = find_everywhere(secret)
    # words are the graph's alone: Chroma's records (a memory's: a vector, a hash, a status;
    # a turn's: vectors, ids, times, a role) hold none, so its process never sees them
    assert not any(h.startswith("chroma:") for h in planted), planted
    assert len(user_episodes(user_id)) == 3 and sum(secret in w for w in user_episodes(
        user_id)) == 2
    assert any(h.startswith("neo4j:") for h in planted), planted
    # Done work leaves no content in Redis: the batch and what extract found go with it.
    assert not any(h.startswith("redis:") for h in planted), planted

    report = forget(user_id)
    assert report["chroma"] == 5  # 2 memories + 3 episodes
    assert report["graph"] > 0 and report["redis_keys"] == 1  # the turn ledger

    assert find_everywhere(secret) == []
    assert read("memories", "--user", user_id, "--all") == []
    assert read("facts", "--user", user_id) == []
    assert user_episodes(user_id) == []
    audit = read("audit", "--user", user_id)
    assert_tombstones(audit)
    forgets = [e for e in audit if e["operation"] == "forget"]
    assert [(e["memory_id"], e["reason"]) for e in forgets] == [("*", "user forgotten")]
    adds = {e["memory_id"] for e in audit if e["operation"] == "add"}
    assert adds == {m["id"] for m in memories}  # the trail keeps ids, operation and time
    for e in audit:
        assert "Zzz" not in json.dumps(e) and "product" not in json.dumps(e)

    again = forget(user_id)
    assert again["total"] == 0, again
    after = read("audit", "--user", user_id)  # forgetting again changes nothing, records none
    assert [e["memory_id"] for e in after if e["operation"] == "forget"] == ["*"]
    assert forget(user_id, "m_never_was")["total"] == 0
    assert len(read("audit", "--user", user_id)) == len(after)  # nor for an id never there
    nobody = f"t-nobody-{uuid.uuid4().hex[:8]}"
    assert forget(nobody)["total"] == 0 and read("audit", "--user", nobody) == []


# -- (b) a batch in flight when the user is forgotten ---------------------------------------
def _log_until(worker: Worker, text: bytes, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while text not in worker.log.read_bytes():
        assert time.monotonic() < deadline, worker.log.read_text()[-3000:]
        assert worker.proc.poll() is None, worker.log.read_text()[-3000:]
        time.sleep(0.1)


def test_forget_user_with_a_batch_in_flight(services: None, tmp_path, user_id: str) -> None:
    secret = uuid.uuid4().hex
    bystander = f"{user_id}-other"
    r = redis.Redis.from_url(INFLIGHT_REDIS_URL, decode_responses=True)
    r.flushdb()
    env = memq_env(MEMQ_REDIS_URL=INFLIGHT_REDIS_URL)
    coord = Coord.from_url(INFLIGHT_REDIS_URL)
    held = start_worker(tmp_path, "held", concurrency=1, env=env, delay=("memq.apply", 6))
    try:
        # Two batches of the user: the drain of the first is held at its start (its episodes
        # written by extract), the other is extracted or still queued meanwhile (one worker
        # process, prefetch 1); so is a batch of another user, which must come through
        # untouched.
        memq("enqueue", "-", env=env, stdin="\n".join([
            line(user_id, "s1", "g1", f"I live in Zzz{secret}.", 1),
            line(user_id, "s1", "g2", f"Is Zzz{secret} nice in winter?", 2),
            line(user_id, "s2", "g3", f"I work at Zzz{secret} Labs.", 3),
            line(bystander, "s1", "g1", "I live in Bergen.", 1),
        ]) + "\n")
        # A dead letter of each user, written the way a failing stage writes one.
        for owner, text in ((user_id, f"I live in Zzz{secret}."), (bystander, "Hello.")):
            batch = {"schema_version": "1", "user_id": stored(owner), "session_id": "s9",
                     "turns": [{"turn_id": "d1", "role": "user", "content": text,
                                "timestamp": "2026-11-09T09:00:00Z", "metadata": {}}]}
            deadletters.dead_letter(coord, f"dead-{owner}", stored(owner), "memq.apply",
                                    "PermanentError: planted",
                                    {"batch": json.dumps(batch)})
        _log_until(held, b"fault injection: delaying")
        assert any(secret in d for d in user_episodes(user_id))  # extract wrote episodes

        report = forget(user_id, env=env)
        assert report["chroma"] >= 1, report
        assert report["dead_letters"] == 1, report

        memq("wait", "--timeout", "120", env=env)
    finally:
        held.stop()
    assert [d["delivery_id"] for d in deadletters.dead_letters(coord)] == [f"dead-{bystander}"]
    assert outbox.inflight(coord) == 0

    assert find_everywhere(secret) == []
    assert read("memories", "--user", user_id, "--all", env=env) == []
    assert read("facts", "--user", user_id, env=env) == []
    assert user_episodes(user_id) == []
    audit = read("audit", "--user", user_id, env=env)
    assert_tombstones(audit)
    assert [e["memory_id"] for e in audit if e["operation"] == "forget"] == ["*"]
    assert [m["content"] for m in read("memories", "--user", bystander, env=env)] == [
        "The user lives in Bergen."]

    again = forget(user_id, env=env)
    assert again["total"] == 0, again
    forget(bystander, env=env)


# -- (c) one memory ------------------------------------------------------------------------
def test_forget_one_memory_keeps_the_others(worker: Worker, user_id: str) -> None:
    secret, other = uuid.uuid4().hex, uuid.uuid4().hex
    memq("enqueue", "-", stdin="\n".join([
        line(user_id, "s1", "h1", "I live in Paris.", 1),
        line(user_id, "s1", "h2", f"I live in Zzz{secret}.", 2),  # supersedes Paris
        line(user_id, "s1", "h3", f"I work at Acme{other}.", 3),
    ]) + "\n")
    wait_done()
    before = {m["content"]: m for m in read("memories", "--user", user_id, "--all")}
    assert {c: m["status"] for c, m in before.items()} == {
        "The user lives in Paris.": "superseded",
        f"The user lives in Zzz{secret}.": "current",
        f"The user works at Acme{other}.": "current",
    }
    target = before[f"The user lives in Zzz{secret}."]["id"]
    assert any(h.startswith("neo4j:") for h in find_everywhere(secret))

    report = forget(user_id, target)
    assert report["chroma"] == 1 and report["graph"] > 0, report

    after = {m["content"]: m for m in read("memories", "--user", user_id, "--all")}
    assert after == {c: m for c, m in before.items() if m["id"] != target}
    facts = read("facts", "--user", user_id)
    assert sorted(f["object"] for f in facts) == [f"Acme{other}", "Paris"]
    assert all(f["memory_id"] != target for f in facts)
    # Nothing of it left but the turn it was said in, in the graph (episodes go with the
    # user; Chroma never held their words).
    assert sorted(re.sub(r"-[su][0-9a-f]+.*", "", h.split(":")[1])
                  for h in find_everywhere(secret)) == ["['Episode']"]
    assert find_everywhere(other) != [] and any(
        h.startswith("neo4j:") for h in find_everywhere(other))

    assert_tombstones(read("audit", "--user", user_id, "--memory", target))
    trail = read("audit", "--user", user_id)
    mine = [e for e in trail if e["memory_id"] == target]
    assert {e["operation"] for e in mine} == {"add", "forget"}
    # The supersede of Paris was decided by the forgotten memory: its reason quoted it and is
    # gone; the snapshot of Paris stays, so `memq check --repair` can still restore Paris.
    paris = before["The user lives in Paris."]["id"]
    supersede = [e for e in trail if e["memory_id"] == paris and e["operation"] == "supersede"]
    assert len(supersede) == 1
    assert supersede[0]["reason"] == "forgotten"
    assert supersede[0]["after"]["content"] == "The user lives in Paris."
    kept = [e for e in trail if e["memory_id"] == after[f"The user works at Acme{other}."]["id"]]
    assert [e["after"]["content"] for e in kept] == [f"The user works at Acme{other}."]

    assert "no drift" in memq("check", "--user", user_id).stdout
    assert forget(user_id, target)["total"] == 0
