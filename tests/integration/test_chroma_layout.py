"""Chroma's layout: users share a fixed set of shard collections (per kind and embedding
model) until one grows into a collection of its own; records packed (a few filter keys and
one JSON value)."""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import chromadb
import pytest

from integration.conftest import CHROMA_PORT, memq, memq_env, stored
from memq.pipeline import ids
from memq.pipeline.adapters.chroma import (
    BASE_MODEL,
    DEMOTE_AT,
    EPISODES,
    HNSW,
    MEMORIES,
    SHARD_HNSW,
    ChromaStores,
)
from memq.pipeline.adapters.chroma_log import INDEX
from memq.pipeline.ids import content_hash
from memq.schemas import Kind, Status, StoredMemory, Turn

pytestmark = pytest.mark.integration


def _memory(user_id: str, n: int) -> StoredMemory:
    now = datetime(2026, 11, 1, tzinfo=UTC)
    return StoredMemory(id=f"m_legacy_{user_id}_{n}", user_id=user_id,
                        content=f"The user keeps legacy fact number {n}.", kind=Kind.FACT,
                        confidence=0.9, importance=0.8, triples=[], source_turn_ids=[f"s/t{n}"],
                        valid_at=now, created_at=now, updated_at=now, embedding_model=BASE_MODEL)


def _stores(**kw: int) -> ChromaStores:
    return ChromaStores(lambda: chromadb.HttpClient(host="127.0.0.1", port=CHROMA_PORT), **kw)


def _turns(n: int, at: datetime) -> list[Turn]:
    return [Turn(turn_id=f"t{i}", role="user", content=f"A packed turn number {i}.",
                 timestamp=at) for i in range(n)]


def _axis(i: int) -> list[float]:
    return [float(j == i) for j in range(384)]


def test_users_sharing_a_shard_see_only_their_own_records() -> None:
    """Two users in one shard (a store of one shard): each user's index, nearest memories,
    stored hashes, cosines, episodes and search are its own, and an id of the other's
    deletes nothing; a memory's record is its vector, content hash, status and user tag
    (the graph says the rest); a status change keeps the vector."""
    client = chromadb.HttpClient(host="127.0.0.1", port=CHROMA_PORT)
    stores = _stores(shards=1)
    users = [f"t-layout-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    at = datetime(2026, 11, 1, tzinfo=UTC)
    for u, user_id in enumerate(users):
        memories = [_memory(user_id, n) for n in range(3 + u)]
        stores.upsert(memories, [_axis(n) for n in range(len(memories))])
        stores.add(user_id, "s", _turns(1, at), [_axis(383)], BASE_MODEL, at)
    assert stores.shard_name(MEMORIES, BASE_MODEL, users[0]) == stores.shard_name(
        MEMORIES, BASE_MODEL, users[1])
    for u, user_id in enumerate(users):
        other = users[1 - u]
        index = stores.index(user_id)
        assert {i: (e.status, e.content_hash, e.model) for i, e in index.items()} == {
            m.id: ("current", content_hash(m.content), BASE_MODEL)
            for m in (_memory(user_id, n) for n in range(3 + u))}
        (top,) = stores.similar(user_id, [_axis(1)], BASE_MODEL, 10)
        assert top[0][0] == f"m_legacy_{user_id}_1" and len(top) == 3 + u
        assert all(user_id in i for i, _ in top)
        assert stores.stored_hashes(user_id, [f"m_legacy_{other}_0"]) == {}
        assert stores.cosines(user_id, [f"m_legacy_{other}_0"], _axis(0), BASE_MODEL,
                              memories=True) == {}
        assert stores.count_episodes(user_id) == 1
        (hit,) = stores.search(user_id, _axis(383), BASE_MODEL, 5)
        # the turn's words are the graph's: its record holds none
        assert (hit.content, hit.speaker, hit.source_turn_ids) == ("", None, ["s/t0"])
        (record,) = client.get_collection(stores.shard_name(EPISODES, BASE_MODEL, user_id)
                                          ).get(ids=[hit.id])["metadatas"]
        assert "packed" not in json.dumps(record)
        assert round(hit.score, 6) == 1.0
    stores.delete_ids(users[0], [f"m_legacy_{users[1]}_0"])
    assert f"m_legacy_{users[1]}_0" in stores.memory_ids(users[1])
    assert set(users) <= stores.users()

    user_id = users[0]
    old, new = _memory(user_id, 0), _memory(user_id, 1)
    superseded = old.model_copy(update={"status": Status.SUPERSEDED, "superseded_by": new.id})
    stores.upsert([superseded], [None])
    shard = client.get_collection(stores.shard_name(MEMORIES, BASE_MODEL, user_id))
    raw = shard.get(ids=[old.id], include=["metadatas", "embeddings"])
    assert raw["metadatas"][0] == {"status": "superseded", "user": user_id,
                                   "content_hash": content_hash(old.content)}
    assert [float(x) for x in raw["embeddings"][0]][:2] == [1.0, 0.0]  # the vector stayed
    assert stores.stored_hashes(user_id, [old.id, "m_nope"]) == {old.id: content_hash(
        old.content)}
    assert stores.delete_user(users[0]) == 4
    assert stores.memory_ids(users[0]) == set() and stores.count_episodes(users[0]) == 0
    assert stores.memory_ids(users[1]) == {f"m_legacy_{users[1]}_{n}" for n in range(4)}
    stores.delete_user(users[1])


def test_a_user_past_own_after_moves_into_its_own_collection_and_back() -> None:
    """Past ``own_after`` records of a kind in its shard, a user's records move into a
    collection of its own (copied, then deleted from the shard); search and counts are the
    same before, during (both places read) and after; relocate moves a small own collection
    back into the shard; forgetting drops the own collection."""
    client = chromadb.HttpClient(host="127.0.0.1", port=CHROMA_PORT)
    stores = _stores(own_after=5)
    reader = _stores(own_after=5)  # another process
    user_id = f"t-grow-{uuid.uuid4().hex[:8]}"
    at = datetime(2026, 11, 1, tzinfo=UTC)
    turns = _turns(8, at)
    stores.add(user_id, "s", turns[:4], [_axis(i) for i in range(4)], BASE_MODEL, at)
    assert stores.placement(user_id)["memq_episodes"] == [(BASE_MODEL, "shard", 4)]
    assert [h.id for h in reader.search(user_id, _axis(2), BASE_MODEL, 1)] == [
        ids.episode_id(user_id, "s/t2")]
    stores.add(user_id, "s", turns[4:], [_axis(i) for i in range(4, 8)], BASE_MODEL, at)
    assert stores.placement(user_id)["memq_episodes"] == [(BASE_MODEL, "own", 8)]
    own = client.get_collection(ChromaStores.collection_name(EPISODES, BASE_MODEL, user_id))
    assert own.count() == 8
    for probe in (stores, reader):
        assert probe.count_episodes(user_id) == 8
        (hit,) = probe.search(user_id, _axis(6), BASE_MODEL, 1)
        assert hit.id == ids.episode_id(user_id, "s/t6") and round(hit.score, 6) == 1.0
    # both places at once (a move halfway): each record once, the own copy's
    shard = client.get_collection(stores.shard_name(EPISODES, BASE_MODEL, user_id))
    got = own.get(ids=[hit.id], include=["embeddings", "metadatas"])
    shard.upsert(ids=got["ids"], embeddings=got["embeddings"], metadatas=got["metadatas"])
    assert len(reader.episode_refs(user_id)) == 8
    assert [h.id for h in reader.search(user_id, _axis(6), BASE_MODEL, 3)].count(hit.id) == 1
    assert reader.relocate(user_id) == 8  # 8 <= DEMOTE_AT: back into the shard
    assert stores.placement(user_id)["memq_episodes"] == [(BASE_MODEL, "shard", 8)]
    # the writer still holds the dropped collection: it notices, and writes into the shard
    stores.own_after = 50  # (or the write would move the user out again)
    stores.add(user_id, "s2", _turns(1, at), [_axis(9)], BASE_MODEL, at)
    for probe in (stores, reader):
        assert probe.count_episodes(user_id) == 9
    assert stores.placement(user_id)["memq_episodes"] == [(BASE_MODEL, "shard", 9)]
    assert stores.delete_user(user_id) == 9
    assert stores.placement(user_id) == {"memq_memories": [], "memq_episodes": []}


def test_a_collection_of_a_user_written_by_an_earlier_release_is_read_and_moved() -> None:
    """Stores of a collection per user (every release before the shards): the user's own
    collection, its records untagged, is read and written as it is, and relocate moves it
    into the shard with its vectors by the relocate job; a larger one stays, persisted as
    often as a new one."""
    client = chromadb.HttpClient(host="127.0.0.1", port=CHROMA_PORT)
    stores = _stores()
    name = f"t-legacy-{uuid.uuid4().hex[:8]}"
    user_id = stored(name)  # the user the CLI names `name` (memq run --user)
    legacy = client.create_collection(
        ChromaStores.collection_name(MEMORIES, BASE_MODEL, user_id), embedding_function=None,
        configuration={"hnsw": {"space": "cosine"}},
        metadata={"user_id": user_id, "kind": MEMORIES, "model": BASE_MODEL})
    old = [_memory(user_id, n) for n in range(3)]
    legacy.add(ids=[m.id for m in old], embeddings=[_axis(n) for n in range(3)],
               metadatas=[{"status": "current", "content_hash": content_hash(m.content)}
                          for m in old])
    assert set(stores.index(user_id)) == {m.id for m in old}
    stores.upsert([_memory(user_id, 3)], [_axis(3)])
    assert legacy.count() == 4  # written where the user's records are
    assert user_id in stores.users()
    out = memq("run", "relocate", "--user", name).stdout  # the job, under the user's claim
    assert f"relocate {user_id}: examined 4, changed 4" in out, out
    assert stores.placement(user_id)["memq_memories"] == [(BASE_MODEL, "shard", 4)]
    (top,) = stores.similar(user_id, [_axis(2)], BASE_MODEL, 1)
    assert top[0][0] == old[2].id and round(top[0][1], 6) == 1.0
    assert user_id in stores.users()
    stores.delete_user(user_id)

    big = f"t-legacy-{uuid.uuid4().hex[:8]}"
    legacy = client.create_collection(
        ChromaStores.collection_name(EPISODES, BASE_MODEL, big), embedding_function=None,
        configuration={"hnsw": {"space": "cosine"}},
        metadata={"user_id": big, "kind": EPISODES, "model": BASE_MODEL})
    n, at = DEMOTE_AT + 1, datetime(2026, 11, 1, tzinfo=UTC)
    stores.add(big, "s", _turns(n, at), [_axis(i % 384) for i in range(n)], BASE_MODEL, at)
    assert legacy.count() == n
    assert stores.relocate(big) == 0
    kept = client.get_collection(legacy.name)
    assert {k: kept.configuration["hnsw"][k] for k in ("sync_threshold", "ef_search")} == {
        k: HNSW["hnsw"][k] for k in ("sync_threshold", "ef_search")}
    assert stores.count_episodes(big) == n
    stores.delete_user(big)


def test_chromas_store_is_left_as_chroma_made_it_and_its_write_log_stays_short() -> None:
    """No index of memq's in Chroma's schema (scripts/services builds it only when asked), and
    after 70 writes into a shard (persisted every 20 records) Chroma's write log holds only the
    shard's last unpersisted records, not all 70."""
    db_file = Path(memq_env()["MEMQ_HOME"]) / "chroma" / "chroma.sqlite3"

    def read(sql: str, *args: object) -> list[tuple[object, ...]]:
        with closing(sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=30)) as db:
            return db.execute(sql, args).fetchall()

    if os.environ.get("MEMQ_CHROMA_LOG_INDEX", "off") != "on":
        assert read(f"SELECT name FROM sqlite_master WHERE name = '{INDEX}'") == []
    client = chromadb.HttpClient(host="127.0.0.1", port=CHROMA_PORT)
    stores = _stores()
    user_id = f"t-log-{uuid.uuid4().hex[:8]}"
    at = datetime(2026, 11, 1, tzinfo=UTC)
    turns = _turns(70, at)
    for i, turn in enumerate(turns):
        stores.add(user_id, "s", [turn], [_axis(i)], BASE_MODEL, at)
    shard = client.get_collection(stores.shard_name(EPISODES, BASE_MODEL, user_id))
    (logged,) = read("SELECT count(*) FROM embeddings_queue WHERE topic LIKE ?",
                     f"%{shard.id}")[0]
    assert isinstance(logged, int) and logged <= 2 * SHARD_HNSW["hnsw"]["sync_threshold"], logged
    assert stores.count_episodes(user_id) == 70
    assert stores.delete_user(user_id) == 70
    assert read("PRAGMA integrity_check") == [("ok",)]
