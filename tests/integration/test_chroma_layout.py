"""Chroma's layout: one collection per user (per kind, per embedding model), records packed
(a few filter keys and one JSON value)."""

from __future__ import annotations

import sqlite3
import uuid
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import chromadb
import pytest

from integration.conftest import CHROMA_PORT, memq_env
from memq.pipeline.adapters.chroma import (
    BASE_MODEL,
    MEMORIES,
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


def test_a_user_has_their_own_collections_and_a_memory_record_is_an_index_entry() -> None:
    """Per user, per kind: the user's nearest neighbour is found in their own index,
    unfiltered; a memory's record is its vector, content hash and status (the graph says
    the rest); a status change keeps the vector; an episode reads back as written."""
    client = chromadb.HttpClient(host="127.0.0.1", port=CHROMA_PORT)
    stores = ChromaStores.connect("127.0.0.1", CHROMA_PORT)
    users = [f"t-layout-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    at = datetime(2026, 11, 1, tzinfo=UTC)
    for u, user_id in enumerate(users):
        memories = [_memory(user_id, n) for n in range(3 + u)]
        stores.upsert(memories, [[float(n == i) for i in range(384)]
                                 for n in range(len(memories))])
        stores.add(user_id, "s", [Turn(turn_id="t1", role="user", content="A packed turn.",
                                       timestamp=at)], [[0.0] * 383 + [1.0]], BASE_MODEL, at)
    for u, user_id in enumerate(users):
        mine = client.get_collection(ChromaStores.collection_name(MEMORIES, BASE_MODEL, user_id))
        assert mine.count() == 3 + u and mine.metadata["user_id"] == user_id
        index = stores.index(user_id)
        assert {i: (e.status, e.content_hash, e.model) for i, e in index.items()} == {
            m.id: ("current", content_hash(m.content), BASE_MODEL)
            for m in (_memory(user_id, n) for n in range(3 + u))}
        (top,) = stores.similar(user_id, [[float(i == 1) for i in range(384)]], BASE_MODEL, 1)
        assert top[0][0] == f"m_legacy_{user_id}_1"
        assert stores.count_episodes(user_id) == 1
        (hit,) = stores.search(user_id, [0.0] * 383 + [1.0], BASE_MODEL, 1)
        assert (hit.content, hit.source_turn_ids) == ("A packed turn.", ["s/t1"])
    assert set(users) <= stores.users()

    user_id = users[0]
    old, new = _memory(user_id, 0), _memory(user_id, 1)
    superseded = old.model_copy(update={"status": Status.SUPERSEDED, "superseded_by": new.id})
    stores.upsert([superseded], [None])
    mine = client.get_collection(ChromaStores.collection_name(MEMORIES, BASE_MODEL, user_id))
    raw = mine.get(ids=[old.id], include=["metadatas", "embeddings"])
    assert raw["metadatas"][0] == {"status": "superseded", "content_hash": content_hash(
        old.content)}
    assert [float(x) for x in raw["embeddings"][0]][:2] == [1.0, 0.0]  # the vector stayed
    assert stores.stored_hashes(user_id, [old.id, "m_nope"]) == {old.id: content_hash(
        old.content)}
    for user_id in users:
        stores.delete_user(user_id)


def test_forgetting_a_user_drops_only_their_collections() -> None:
    stores = ChromaStores.connect("127.0.0.1", CHROMA_PORT)
    keep, gone = (f"t-drop-{uuid.uuid4().hex[:8]}" for _ in range(2))
    for user_id in (keep, gone):
        stores.upsert([_memory(user_id, 0)], [[1.0] + [0.0] * 383])
    assert stores.delete_user(gone) == 1
    assert stores.memory_ids(gone) == set()
    assert stores.memory_ids(keep) == {f"m_legacy_{keep}_0"}
    # another process that still holds the dropped collection writes into a new one
    other = ChromaStores.connect("127.0.0.1", CHROMA_PORT)
    assert other.memory_ids(keep)
    stores.upsert([_memory(gone, 1)], [[1.0] + [0.0] * 383])
    assert other.memory_ids(gone) == {f"m_legacy_{gone}_1"}
    stores.delete_user(keep)
    stores.delete_user(gone)


def test_chromas_write_log_is_indexed_and_stays_consistent_through_chromas_writes() -> None:
    """scripts/services gave the tests' Chroma the (topic, seq_id) index on its write log; Chroma
    keeps it in step with the table through its own inserts, reads and purges."""
    db_file = Path(memq_env()["MEMQ_HOME"]) / "chroma" / "chroma.sqlite3"

    def read(sql: str) -> list[tuple[object, ...]]:
        with closing(sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=30)) as db:
            return db.execute(sql).fetchall()

    assert read(f"SELECT name FROM sqlite_master WHERE name = '{INDEX}'") == [(INDEX,)]
    client = chromadb.HttpClient(host="127.0.0.1", port=CHROMA_PORT)
    name = f"memq_logindex_{uuid.uuid4().hex[:8]}"
    col = client.create_collection(name, embedding_function=None)
    try:
        for start in range(0, 60, 20):  # three writes: each reads and purges its log
            col.upsert(ids=[f"r{i}" for i in range(start, start + 20)],
                       embeddings=[[float(i), 1.0, 0.5] for i in range(start, start + 20)],
                       documents=[f"record {i}" for i in range(start, start + 20)])
        assert col.count() == 60
        assert col.query(query_embeddings=[[59.0, 1.0, 0.5]], n_results=1)["ids"] == [["r59"]]
        col.delete(ids=["r0", "r1"])
        assert col.count() == 58
    finally:
        client.delete_collection(name)
    assert read("PRAGMA integrity_check") == [("ok",)]  # every index matches its table
