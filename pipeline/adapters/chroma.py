"""Chroma (server mode) for memories and episodes, one collection each.

Every read and write is scoped to one user by a ``user_id`` metadata filter built here, in
the adapter: callers cannot forget it. Vectors are always passed explicitly (Chroma's default
embedding function would fetch a model from the network), in cosine space.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar

import chromadb
import chromadb.errors
import httpx

from pipeline import ids
from pipeline.errors import TransientError
from pipeline.ports import Hit, Neighbor, Vector
from schemas import StoredMemory, Turn

T = TypeVar("T")
Where = dict[str, Any]

MEMORIES = "memq_memories"
EPISODES = "memq_episodes"


@contextmanager
def _transient() -> Iterator[None]:
    try:
        yield
    except (httpx.HTTPError, ConnectionError, chromadb.errors.InternalError) as exc:
        raise TransientError(f"chroma unavailable: {exc}") from exc


def _ts(value: datetime | None) -> float:
    return value.timestamp() if value else -1.0


def _dt(value: Any) -> datetime | None:
    return None if value is None or float(value) < 0 else datetime.fromtimestamp(float(value), UTC)


def _user(user_id: str, *more: Where) -> Where:
    clauses: list[Where] = [{"user_id": user_id}, *more]
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def memory_metadata(m: StoredMemory) -> dict[str, Any]:
    return {
        "user_id": m.user_id, "kind": str(m.kind), "status": str(m.status),
        "confidence": m.confidence, "importance": m.importance,
        "valid_at": _ts(m.valid_at), "invalid_at": _ts(m.invalid_at),
        "created_at": _ts(m.created_at), "updated_at": _ts(m.updated_at),
        "superseded_by": m.superseded_by or "", "embedding_model": m.embedding_model,
        "source_turn_ids": json.dumps(m.source_turn_ids),
        "entities": json.dumps(m.entities, ensure_ascii=False),
        "triples": json.dumps([t.model_dump() for t in m.triples], ensure_ascii=False),
        "scope": m.scope, "session_id": m.session_id or "", "expires_at": _ts(m.expires_at),
        "last_accessed_at": _ts(m.last_accessed_at), "derived_from": json.dumps(m.derived_from),
        "consolidated_into": m.consolidated_into or "",
    }


def memory_from(record_id: str, document: str, meta: dict[str, Any]) -> StoredMemory:
    return StoredMemory.model_validate({
        "id": record_id, "user_id": meta["user_id"], "content": document, "kind": meta["kind"],
        "status": meta["status"], "confidence": meta["confidence"],
        "importance": meta["importance"], "valid_at": _dt(meta["valid_at"]),
        "invalid_at": _dt(meta["invalid_at"]), "created_at": _dt(meta["created_at"]),
        "updated_at": _dt(meta["updated_at"]), "superseded_by": meta["superseded_by"] or None,
        "embedding_model": meta["embedding_model"],
        "source_turn_ids": json.loads(meta["source_turn_ids"]),
        "entities": json.loads(meta["entities"]), "triples": json.loads(meta["triples"]),
        "scope": meta.get("scope", "long_term"), "session_id": meta.get("session_id") or None,
        "expires_at": _dt(meta.get("expires_at")),
        "last_accessed_at": _dt(meta.get("last_accessed_at")),
        "derived_from": json.loads(meta.get("derived_from", "[]")),
        "consolidated_into": meta.get("consolidated_into") or None,
    })


class ChromaStores:
    """Implements MemoryStore (``memories``) and EpisodeStore (``episodes``) on one client."""

    def __init__(self, client_factory: Callable[[], Any]) -> None:
        self._factory = client_factory
        self._client: Any = None
        self._collections: dict[str, Any] = {}

    @classmethod
    def connect(cls, host: str, port: int) -> ChromaStores:
        return cls(lambda: chromadb.HttpClient(host=host, port=port))

    def _col(self, name: str) -> Any:
        if name not in self._collections:
            try:
                if self._client is None:
                    self._client = self._factory()
                self._collections[name] = self._client.get_or_create_collection(
                    name, configuration={"hnsw": {"space": "cosine"}}, embedding_function=None
                )
            except ValueError as exc:  # HttpClient says "Could not connect" as ValueError
                raise TransientError(f"chroma unavailable: {exc}") from exc
        return self._collections[name]

    def _call(self, name: str, fn: Callable[[Any], T]) -> T:
        with _transient():
            return fn(self._col(name))

    # -- memories -------------------------------------------------------------------------
    def upsert(self, memories: Sequence[StoredMemory], vectors: Sequence[Vector | None]) -> None:
        full = [(m, v) for m, v in zip(memories, vectors, strict=True) if v is not None]
        meta_only = [m for m, v in zip(memories, vectors, strict=True) if v is None]
        if full:
            self._call(MEMORIES, lambda c: c.upsert(
                ids=[m.id for m, _ in full], embeddings=[v for _, v in full],
                documents=[m.content for m, _ in full],
                metadatas=[memory_metadata(m) for m, _ in full]))
        if meta_only:
            # Status changes keep the stored vector: read it back, write the full record.
            res = self._call(MEMORIES, lambda c: c.get(ids=[m.id for m in meta_only],
                                                       include=["embeddings"]))
            stored = dict(zip(res["ids"], res["embeddings"], strict=True))
            missing = [m.id for m in meta_only if m.id not in stored]
            if missing:
                raise TransientError(f"memories {missing} not in chroma yet; retrying")
            self._call(MEMORIES, lambda c: c.upsert(
                ids=[m.id for m in meta_only], embeddings=[stored[m.id] for m in meta_only],
                documents=[m.content for m in meta_only],
                metadatas=[memory_metadata(m) for m in meta_only]))

    def nearest(self, user_id: str, vector: Vector, model_id: str, k: int) -> list[Neighbor]:
        where = _user(user_id, {"status": "current"}, {"embedding_model": model_id})
        res = self._call(MEMORIES, lambda c: c.query(
            query_embeddings=[vector], n_results=k, where=where,
            include=["documents", "metadatas", "distances"]))
        return [
            Neighbor(memory_from(i, d, m), 1.0 - dist)
            for i, d, m, dist in zip(res["ids"][0], res["documents"][0], res["metadatas"][0],
                                     res["distances"][0], strict=True)
        ]

    def foreign_model(self, user_id: str, model_id: str) -> str | None:
        """An embedding model other than ``model_id`` that this user's memories use, if any."""
        res = self._call(MEMORIES, lambda c: c.get(
            where=_user(user_id, {"embedding_model": {"$ne": model_id}}), limit=1,
            include=["metadatas"]))
        return str(res["metadatas"][0]["embedding_model"]) if res["ids"] else None

    def get(self, user_id: str, memory_ids: Sequence[str]) -> list[StoredMemory]:
        if not memory_ids:
            return []
        res = self._call(MEMORIES, lambda c: c.get(
            ids=list(memory_ids), where=_user(user_id), include=["documents", "metadatas"]))
        return [memory_from(i, d, m) for i, d, m in
                zip(res["ids"], res["documents"], res["metadatas"], strict=True)]

    def memories(self, user_id: str, *, include_inactive: bool,
                 as_of: datetime | None = None) -> list[StoredMemory]:
        """The user's memories; ``as_of``: those true at that world time, as known now."""
        if as_of is not None:
            t = as_of.timestamp()
            where = _user(user_id, {"status": {"$ne": "archived"}}, {"valid_at": {"$lte": t}},
                          {"$or": [{"invalid_at": {"$lt": 0}}, {"invalid_at": {"$gt": t}}]})
        elif include_inactive:
            where = _user(user_id)
        else:
            where = _user(user_id, {"status": "current"})
        res = self._call(MEMORIES, lambda c: c.get(where=where, include=["documents",
                                                                         "metadatas"]))
        found = [memory_from(i, d, m) for i, d, m in
                 zip(res["ids"], res["documents"], res["metadatas"], strict=True)]
        return sorted(found, key=lambda m: (m.valid_at, m.id))

    def search_memories(self, user_id: str, vector: Vector, model_id: str, k: int) -> list[Hit]:
        return [
            Hit(id=n.memory.id, type="memory", content=n.memory.content, score=n.similarity,
                event_at=n.memory.valid_at, created_at=n.memory.created_at,
                source_turn_ids=n.memory.source_turn_ids, kind=str(n.memory.kind),
                confidence=n.memory.confidence, status=str(n.memory.status))
            for n in self.nearest(user_id, vector, model_id, k)
        ]

    def users(self) -> set[str]:
        """Every user with a memory (for all-user jobs)."""
        res = self._call(MEMORIES, lambda c: c.get(include=["metadatas"]))
        return {str(m["user_id"]) for m in res["metadatas"]}

    def delete_user(self, user_id: str) -> int:
        deleted = 0
        for name in (MEMORIES, EPISODES):
            res = self._call(name, lambda c: c.delete(where=_user(user_id)))
            deleted += int((res or {}).get("deleted", 0))
        return deleted

    # -- episodes -------------------------------------------------------------------------
    def add(self, user_id: str, session_id: str, turns: Sequence[Turn],
            vectors: Sequence[Vector], model_id: str, now: datetime) -> int:
        if not turns:
            return 0
        episode_ids = [ids.episode_id(user_id, t.turn_id) for t in turns]
        self._call(EPISODES, lambda c: c.upsert(
            ids=episode_ids, embeddings=list(vectors), documents=[t.content for t in turns],
            metadatas=[{
                "user_id": user_id, "session_id": session_id, "turn_id": t.turn_id,
                "role": t.role, "event_at": _ts(t.timestamp), "created_at": _ts(now),
                "embedding_model": model_id,
                "metadata": json.dumps(t.metadata, ensure_ascii=False, default=str),
            } for t in turns]))
        return len(turns)

    def delete_memory(self, user_id: str, memory_id: str) -> int:
        res = self._call(MEMORIES, lambda c: c.delete(ids=[memory_id], where=_user(user_id)))
        return int((res or {}).get("deleted", 0))

    def delete_episodes(self, user_id: str, turn_ids: Sequence[str]) -> None:
        if turn_ids:
            wanted = [ids.episode_id(user_id, t) for t in turn_ids]
            self._call(EPISODES, lambda c: c.delete(ids=wanted, where=_user(user_id)))

    def episode_ids_present(self, user_id: str, turn_ids: Sequence[str]) -> set[str]:
        wanted = [ids.episode_id(user_id, t) for t in turn_ids]
        res = self._call(EPISODES, lambda c: c.get(ids=wanted, where=_user(user_id),
                                                   include=["metadatas"]))
        return {m["turn_id"] for m in res["metadatas"]}

    def search(self, user_id: str, vector: Vector, model_id: str, k: int) -> list[Hit]:
        where = _user(user_id, {"embedding_model": model_id})
        res = self._call(EPISODES, lambda c: c.query(
            query_embeddings=[vector], n_results=k, where=where,
            include=["documents", "metadatas", "distances"]))
        return [
            Hit(id=i, type="episode", content=d, score=1.0 - dist, event_at=_dt(m["event_at"])
                or datetime.min.replace(tzinfo=UTC), created_at=_dt(m["created_at"])
                or datetime.min.replace(tzinfo=UTC), source_turn_ids=[m["turn_id"]],
                role=m["role"])
            for i, d, m, dist in zip(res["ids"][0], res["documents"][0], res["metadatas"][0],
                                     res["distances"][0], strict=True)
        ]

    def count_episodes(self, user_id: str) -> int:
        res = self._call(EPISODES, lambda c: c.get(where=_user(user_id), include=[]))
        return len(res["ids"])
