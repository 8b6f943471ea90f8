"""Store shards (workers.placement): the map in Redis, and what ops see of it. The sharded
stress run with a shard restarted is in test_concurrency.py."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections import Counter
from pathlib import Path

import pytest
import redis

from integration.conftest import (
    CHROMA_PORT,
    REDIS_URL,
    REPO,
    free_port,
    memq,
    memq_env,
    stored,
)
from memq.pipeline.errors import TransientError
from memq.workers.layout import shard_key, user_tag
from memq.workers.placement import Placement, ShardMap, home

pytestmark = pytest.mark.integration


def test_a_user_is_placed_once_and_stays_when_shards_are_added(services: None) -> None:
    r = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    user = f"shard-{uuid.uuid4().hex[:8]}"
    two = ShardMap(r, neo4j=2, chroma=3)
    assert two.of(user) == Placement(0, 0)  # never written: the first shard, nothing recorded
    assert not r.exists(shard_key(user))
    placed = two.place(user)
    assert placed == Placement(home("neo4j", user, 2), home("chroma", user, 3))
    assert two.of(user) == placed == two.place(user)
    assert ShardMap(r, neo4j=5, chroma=7).of(user) == placed  # more shards: it stays
    assert shard_key(user).startswith(f"memq:shard:{user_tag(user)}:")  # the user's slot
    r.delete(shard_key(user))


def test_a_user_on_a_shard_no_longer_configured_waits(services: None) -> None:
    r = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    user = f"shard-{uuid.uuid4().hex[:8]}"
    r.hset(shard_key(user), mapping={"neo4j": 0, "chroma": 2})
    with pytest.raises(TransientError, match="chroma shard 2, but only 2 configured"):
        ShardMap(r, neo4j=1, chroma=2).of(user)
    r.delete(shard_key(user))


def test_placement_spreads_users_and_counts_them(services: None) -> None:
    r = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    users = [f"shard-{uuid.uuid4().hex[:8]}-{i}" for i in range(300)]
    m = ShardMap(r, neo4j=2, chroma=3)
    before = m.counts()
    spread = Counter(m.place(u).chroma for u in users)
    assert min(spread.values()) >= 70  # ~100 each: a hash, not a lottery
    after = m.counts()
    assert [a - b for a, b in zip(after["chroma"], before["chroma"], strict=True)] == [
        spread[i] for i in range(3)]
    r.delete(*(shard_key(u) for u in users))


def test_status_and_doctor_show_every_shard(services: None) -> None:
    dead = free_port()
    env = memq_env(MEMQ_CHROMA_SHARDS=f"127.0.0.1:{CHROMA_PORT},127.0.0.1:{dead}")
    now = json.loads(memq("status", "--json", env=env).stdout)
    chroma = now["shards"]["chroma"]
    assert [(s["shard"], s["ok"]) for s in chroma] == [(0, True), (1, True), (2, False)]
    assert len(now["shards"]["neo4j"]) == 1
    text = memq("status", env=env).stdout
    assert "chroma[2]   DOWN" in text and "chroma[1]   up" in text
    doctor = memq("doctor", env=env, check=False)
    assert doctor.returncode != 0 and "chroma[2]" in doctor.stdout
    bad = memq("status", env=memq_env(MEMQ_CHROMA_SHARDS="nohost"), check=False)
    assert bad.returncode != 0 and "MEMQ_CHROMA_SHARDS: 'nohost' is not host:port" in bad.stderr


def test_move_user_refuses_a_shard_that_is_not_there_or_the_same_instance(
        services: None) -> None:
    """The command's refusals, one line each (moves themselves: the stress run with
    --move-every, test_concurrency.py)."""
    env = memq_env(MEMQ_CHROMA_SHARDS=f"127.0.0.1:{CHROMA_PORT}")  # shard 1 = shard 0
    user = f"shard-{uuid.uuid4().hex[:8]}"
    missing = memq("move-user", "--user", user, "--chroma", "5", env=env, check=False)
    assert missing.returncode == 1
    assert "chroma shard 5: there are 2 (MEMQ_CHROMA_SHARDS)" in missing.stderr
    same = memq("move-user", "--user", user, "--chroma", "1", env=env, check=False)
    assert same.returncode == 1 and "the same instance" in same.stderr
    stay = memq("move-user", "--user", user, "--chroma", "0", "--json", env=env)
    assert json.loads(stay.stdout)["target"] == {"neo4j": 0, "chroma": 0, "epoch": 0}
    r = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    assert not r.exists(shard_key(user))  # nothing to move: nothing recorded


def test_forget_wipes_the_user_on_every_shard(services: None, tmp_path: Path) -> None:
    """Episodes an extraction wrote to a shard that is not the user's (it read the placement
    before a move and wrote after the move deleted the source: workers.shards.move) are
    unreachable by reads; forgetting the user deletes them too."""
    from datetime import UTC, datetime

    from memq.pipeline.adapters.chroma import ChromaStores
    from memq.schemas import Turn

    port = free_port()
    second = {**memq_env(), "MEMQ_HOME": str(tmp_path / "chroma-1"),
              "MEMQ_CHROMA_PORT": str(port)}
    script = [str(REPO / "scripts" / "services")]
    subprocess.run([*script, "up", "chroma"], env=second, check=True,
                   stdout=subprocess.DEVNULL)
    try:
        env = memq_env(MEMQ_CHROMA_SHARDS=f"127.0.0.1:{port}")
        user = f"shard-{uuid.uuid4().hex[:8]}"  # unmapped: its shard is chroma 0
        held = stored(user)  # the id the stores know the CLI's `user` by
        orphan = ChromaStores.connect("127.0.0.1", port)
        now = datetime.now(UTC)
        turn = Turn(turn_id="t1", role="user", content="I live in Porto.", timestamp=now)
        assert orphan.add(held, "s1", [turn], [[0.1] * 384], "test-model", now) == 1
        assert len(orphan.episode_refs(held)) == 1
        report = json.loads(memq("forget", "--user", user, "--json", env=env).stdout)
        assert report["chroma"] >= 1, report
        assert orphan.episode_refs(held) == []
    finally:
        subprocess.run([*script, "down", "chroma"], env=second, check=False,
                       stdout=subprocess.DEVNULL)
