"""Chroma's layout: one collection per user (per kind, per embedding model). Stores written
by releases before it (one shared collection per kind, the user in a metadata filter) are
moved over when a worker starts, and read the same afterwards."""

from __future__ import annotations

import json
import sqlite3
import uuid
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import chromadb
import pytest

from integration.conftest import CHROMA_PORT, memq, memq_env
from memq.pipeline.adapters.chroma import (
    BASE_MODEL,
    EPISODES,
    MEMORIES,
    ChromaStores,
    memory_metadata,
)
from memq.pipeline.adapters.chroma_log import INDEX
from memq.schemas import Kind, StoredMemory

pytestmark = pytest.mark.integration


def _memory(user_id: str, n: int) -> StoredMemory:
    now = datetime(2026, 11, 1, tzinfo=UTC)
    return StoredMemory(id=f"m_legacy_{user_id}_{n}", user_id=user_id,
                        content=f"The user keeps legacy fact number {n}.", kind=Kind.FACT,
                        confidence=0.9, importance=0.8, triples=[], source_turn_ids=[f"s/t{n}"],
                        valid_at=now, created_at=now, updated_at=now, embedding_model=BASE_MODEL)


def test_legacy_shared_collections_move_to_per_user_ones() -> None:
    client = chromadb.HttpClient(host="127.0.0.1", port=CHROMA_PORT)
    users = [f"t-legacy-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    # what an older release wrote: one shared collection per kind
    legacy_m = client.get_or_create_collection(MEMORIES, embedding_function=None,
                                               configuration={"hnsw": {"space": "cosine"}})
    legacy_e = client.get_or_create_collection(EPISODES, embedding_function=None,
                                               configuration={"hnsw": {"space": "cosine"}})
    for u, user_id in enumerate(users):
        memories = [_memory(user_id, n) for n in range(3 + u)]
        legacy_m.upsert(ids=[m.id for m in memories], documents=[m.content for m in memories],
                        metadatas=[memory_metadata(m) for m in memories],
                        embeddings=[[float(n == i) for i in range(384)]
                                    for n in range(len(memories))])
        legacy_e.upsert(ids=[f"e_legacy_{user_id}"], documents=["I keep legacy facts."],
                        embeddings=[[1.0] + [0.0] * 383], metadatas=[{
                            "user_id": user_id, "session_id": "s", "turn_id": "t0", "ref": "s/t0",
                            "role": "user", "event_at": 1.0, "created_at": 1.0, "speaker": "",
                            "embedding_model": BASE_MODEL, "metadata": "{}"}])

    stores = ChromaStores.connect("127.0.0.1", CHROMA_PORT)
    moved = stores.upgrade_legacy()
    assert moved >= 3 + 4 + 2  # (a worker starting meanwhile may have moved some first)
    names = {c.name for c in client.list_collections()}
    assert MEMORIES not in names and EPISODES not in names
    for u, user_id in enumerate(users):
        mine = client.get_collection(ChromaStores.collection_name(MEMORIES, BASE_MODEL, user_id))
        assert mine.count() == 3 + u
        assert mine.metadata["user_id"] == user_id
        shown = json.loads(memq("memories", "--user", user_id, "--json").stdout)
        assert sorted(m["content"] for m in shown) == sorted(
            f"The user keeps legacy fact number {n}." for n in range(3 + u))
        assert stores.count_episodes(user_id) == 1
        # the user's nearest neighbour is found in their own index, unfiltered
        (top,) = stores.similar(user_id, [[float(i == 1) for i in range(384)]], BASE_MODEL, 1)
        assert top[0][0] == f"m_legacy_{user_id}_1"
    assert stores.upgrade_legacy() == 0  # idempotent
    assert {users[0], users[1]} <= stores.users()


def test_forgetting_a_user_drops_only_their_collections() -> None:
    stores = ChromaStores.connect("127.0.0.1", CHROMA_PORT)
    keep, gone = (f"t-drop-{uuid.uuid4().hex[:8]}" for _ in range(2))
    for user_id in (keep, gone):
        stores.upsert([_memory(user_id, 0)], [[1.0] + [0.0] * 383])
    assert stores.delete_user(gone) == 1
    assert stores.get(gone, [f"m_legacy_{gone}_0"]) == []
    assert [m.id for m in stores.get(keep, [f"m_legacy_{keep}_0"])] == [f"m_legacy_{keep}_0"]
    # another process that still holds the dropped collection writes into a new one
    other = ChromaStores.connect("127.0.0.1", CHROMA_PORT)
    assert other.get(keep, [f"m_legacy_{keep}_0"])
    stores.upsert([_memory(gone, 1)], [[1.0] + [0.0] * 383])
    assert [m.id for m in other.get(gone, [f"m_legacy_{gone}_1"])] == [f"m_legacy_{gone}_1"]


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
