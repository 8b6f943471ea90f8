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

from integration.conftest import CHROMA_PORT, memq_env
from memq.pipeline.adapters.chroma import (
    BASE_MODEL,
    EPISODES,
    MEMORIES,
    RECORD,
    ChromaStores,
    memory_fields,
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


def _earlier_layout(m: StoredMemory) -> dict[str, object]:
    """A memory's metadata as releases before the packed record wrote it (text: the document)."""
    def ts(value: datetime | None) -> float:
        return value.timestamp() if value else -1.0

    return {
        "user_id": m.user_id, "kind": str(m.kind), "status": str(m.status),
        "content_hash": content_hash(m.content), "confidence": m.confidence,
        "importance": m.importance, "valid_at": ts(m.valid_at), "invalid_at": ts(m.invalid_at),
        "created_at": ts(m.created_at), "updated_at": ts(m.updated_at),
        "superseded_by": m.superseded_by or "", "embedding_model": m.embedding_model,
        "source_turn_ids": json.dumps(m.source_turn_ids), "entities": json.dumps(m.entities),
        "triples": json.dumps([t.model_dump() for t in m.triples]), "scope": m.scope,
        "session_id": m.session_id or "", "expires_at": ts(m.expires_at),
        "last_accessed_at": ts(m.last_accessed_at), "derived_from": json.dumps(m.derived_from),
        "consolidated_into": m.consolidated_into or "",
    }


def _earlier_episode(user_id: str, turn_id: str) -> dict[str, object]:
    return {"user_id": user_id, "session_id": "s", "turn_id": turn_id, "ref": f"s/{turn_id}",
            "role": "user", "event_at": 1.0, "created_at": 1.0, "speaker": "",
            "embedding_model": BASE_MODEL, "metadata": "{}"}


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
                        metadatas=[_earlier_layout(m) for m in memories],
                        embeddings=[[float(n == i) for i in range(384)]
                                    for n in range(len(memories))])
        legacy_e.upsert(ids=[f"e_legacy_{user_id}"], documents=["I keep legacy facts."],
                        embeddings=[[1.0] + [0.0] * 383],
                        metadatas=[_earlier_episode(user_id, "t0")])

    stores = ChromaStores.connect("127.0.0.1", CHROMA_PORT)
    moved = stores.upgrade_legacy()
    assert moved >= 3 + 4 + 2  # (a worker starting meanwhile may have moved some first)
    names = {c.name for c in client.list_collections()}
    assert MEMORIES not in names and EPISODES not in names
    for u, user_id in enumerate(users):
        mine = client.get_collection(ChromaStores.collection_name(MEMORIES, BASE_MODEL, user_id))
        assert mine.count() == 3 + u
        assert mine.metadata["user_id"] == user_id
        # the index's own records (agents read the graph; these were planted in Chroma only)
        shown = [m.model_dump(mode="json") for m in stores.memories(user_id,
                                                                    include_inactive=False)]
        assert sorted(m["content"] for m in shown) == sorted(
            f"The user keeps legacy fact number {n}." for n in range(3 + u))
        assert stores.count_episodes(user_id) == 1
        # the user's nearest neighbour is found in their own index, unfiltered
        (top,) = stores.similar(user_id, [[float(i == 1) for i in range(384)]], BASE_MODEL, 1)
        assert top[0][0] == f"m_legacy_{user_id}_1"
    assert stores.upgrade_legacy() == 0  # idempotent
    assert {users[0], users[1]} <= stores.users()


def test_records_of_the_earlier_layout_read_the_same_and_a_write_packs_them() -> None:
    """Records written before the packed layout (every field a metadata key, the text as the
    document) read as they did; the next write of a memory rewrites it in the packed layout,
    and the keys it leaves behind are not read."""
    client = chromadb.HttpClient(host="127.0.0.1", port=CHROMA_PORT)
    stores = ChromaStores.connect("127.0.0.1", CHROMA_PORT)
    user_id = f"t-layout-{uuid.uuid4().hex[:8]}"
    stores.upsert([_memory(user_id, 9)], [[1.0] + [0.0] * 383])  # creates the collections
    at = datetime(2026, 11, 1, tzinfo=UTC)
    stores.add(user_id, "s", [Turn(turn_id="t1", role="user", content="A packed turn.",
                                   timestamp=at)],
               [[0.0] * 383 + [1.0]], BASE_MODEL, at)
    mine = client.get_collection(ChromaStores.collection_name(MEMORIES, BASE_MODEL, user_id))
    old = [_memory(user_id, n) for n in range(2)]
    mine.upsert(ids=[m.id for m in old], documents=[m.content for m in old],
                metadatas=[_earlier_layout(m) for m in old],
                embeddings=[[0.0] * n + [1.0] + [0.0] * (383 - n) for n in (1, 2)])
    got = {m.id: m for m in stores.memories(user_id, include_inactive=False)}
    assert got[old[0].id] == old[0] and got[old[1].id] == old[1]
    (near,) = stores.nearest_many(user_id, [[0.0, 1.0] + [0.0] * 382], BASE_MODEL, 1)
    assert near[0].memory == old[0]
    assert stores.exact(user_id, [old[1].content])[content_hash(old[1].content)] == old[1]

    # a merge supersedes one: written as metadata only, in the packed layout
    superseded = old[0].model_copy(update={"status": Status.SUPERSEDED,
                                           "superseded_by": old[1].id})
    stores.upsert([superseded], [None])
    raw = mine.get(ids=[old[0].id], include=["metadatas"])["metadatas"][0]
    assert RECORD in raw and memory_fields(None, raw)["superseded_by"] == old[1].id
    assert stores.get(user_id, [old[0].id]) == [superseded]
    assert [m.id for m in stores.memories(user_id, include_inactive=False)] == sorted(
        [old[1].id, f"m_legacy_{user_id}_9"])

    episodes = client.get_collection(
        ChromaStores.collection_name(EPISODES, BASE_MODEL, user_id))
    episodes.upsert(ids=["e_old"], documents=["I kept this turn before."],
                    embeddings=[[1.0] + [0.0] * 383],
                    metadatas=[_earlier_episode(user_id, "t7")])
    assert sorted((s, t.turn_id, t.content) for s, t, _ in stores.episodes(user_id)) == [
        ("s", "t1", "A packed turn."), ("s", "t7", "I kept this turn before.")]
    (hit,) = stores.search(user_id, [1.0] + [0.0] * 383, BASE_MODEL, 1)
    assert (hit.content, hit.source_turn_ids) == ("I kept this turn before.", ["s/t7"])
    stores.delete_user(user_id)


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
