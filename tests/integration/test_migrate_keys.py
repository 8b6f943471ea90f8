"""An upgrade from the layout before the buckets (one outbox, one in-flight set, keys named
by the bare user or delivery): ``memq migrate-keys`` moves what a running deployment left in
Redis -- a delivery in flight, a mailbox with its claim, the turn ledger, a forgetting marker,
a store-shard entry, dead letters -- to where this release reads it; a second run finds
nothing. Its own Redis database (8)."""

from __future__ import annotations

import json
import uuid

import pytest
import redis

from integration.conftest import REDIS_BASE, memq, memq_env
from memq.workers.coord import Coord, legacy_keys
from memq.workers.shards import ShardMap

pytestmark = pytest.mark.integration
URL = f"{REDIS_BASE}/8"


def _plant_legacy(r: redis.Redis, user: str, queued: str, extracted: str) -> None:
    """As the release before wrote them (workers/coord.py at a389376)."""
    r.hset(f"memq:delivery:{queued}", mapping={"user": user, "batch": "{}",
                                              "enqueued_at": "100.0", "state": "queued"})
    r.hset(f"memq:delivery:{extracted}", mapping={"user": user, "batch": "{}",
                                                 "enqueued_at": "50.0", "state": "extracted"})
    r.set(f"memq:extracted:{extracted}", "[]")
    r.zadd("memq:outbox", {queued: 130.0})
    r.sadd("memq:inflight", queued, extracted)
    r.zadd(f"memq:mbox:{user}", {extracted: 60.0})
    r.sadd("memq:mboxes", user)
    r.set(f"memq:owner:{user}", "token-1")
    r.sadd(f"memq:turns:{user}", "s1/t1", "s1/t2")
    r.set(f"memq:forgotten:{user}", "10.0")
    r.hset(f"memq:shard:{{{user}}}", mapping={"neo4j": 1, "chroma": 2, "epoch": 3})
    r.set(f"memq:outcome:{uuid.uuid4().hex}", f"done {user}")
    r.rpush("memq:deadletter", json.dumps({"delivery_id": "dead-1", "user_id": user,
                                           "stage": "memq.extract", "reason": "r",
                                           "at": "2026-01-01T00:00:00+00:00"}),
            json.dumps({"delivery_id": None, "stage": "broker:memq.extract", "reason": "q",
                        "at": "2026-01-02T00:00:00+00:00"}))


def test_migrate_keys_moves_a_running_deployments_state(services: None) -> None:
    r = redis.Redis.from_url(URL, decode_responses=True)
    r.flushdb()
    user = "tenant:al{ice}"  # a brace in the id: the bucket's tag still comes first
    odd = "m3f"  # an id that looks like a bucket tag in the old shard key: memq:shard:{m3f}
    queued, extracted = uuid.uuid4().hex, uuid.uuid4().hex
    _plant_legacy(r, user, queued, extracted)
    r.hset(f"memq:shard:{{{odd}}}", mapping={"neo4j": 1, "chroma": 1, "epoch": 1})
    assert legacy_keys(r)

    env = memq_env(MEMQ_REDIS_URL=URL)
    moved = json.loads(memq("migrate-keys", "--json", env=env).stdout)
    assert moved["delivery"] == 2 and moved["mbox"] == 1 and moved["shard"] == 2
    assert moved["outbox"] == 1 and moved["dead letters"] == 2

    coord = Coord(r)
    assert not legacy_keys(r)
    assert not [k for k in r.scan_iter("memq:*") if "{m" not in k]  # nothing left behind
    record = coord.delivery(queued)
    assert record is not None and record.user_id == user and record.state == "queued"
    assert coord.due(200.0) == [queued]  # the reaper finds it again
    assert coord.inflight() == 2 and coord.pending([queued, extracted]) == 2
    assert coord.mailbox(user, 10) == [extracted]
    assert coord.extracted([extracted]) == ["[]"]
    assert coord.claimant(user) == "token-1"
    assert coord.orphans() == []  # claimed; once the claim is gone, the reaper wakes it
    r.delete(next(k for k in r.scan_iter("memq:owner:*")))
    assert coord.orphans() == [user]
    assert coord.unprocessed(user, ["s1/t1", "s1/t3"]) == {"s1/t3"}
    assert coord.forgotten_at(user) == 10.0
    assert ShardMap(r, neo4j=2, chroma=3).of(user).chroma == 2
    assert ShardMap(r, neo4j=2, chroma=3).of(odd).neo4j == 1
    assert [d["reason"] for d in coord.dead_letters()] == ["r", "q"]  # in time order
    assert coord.statuses([queued])[0]["state"] == "queued"

    again = json.loads(memq("migrate-keys", "--json", env=env).stdout)
    assert again == {"outbox": 0, "dead letters": 0}
    r.flushdb()
