"""Chroma (server mode) for memories and episodes: one collection of each per embedding
model, so vectors of two models can never meet in one index (they may not even share a
dimension). The offline model's collections are ``memq_memories`` and ``memq_episodes``;
another model's carry its name as a suffix.

Every read and write is scoped to one user by a ``user_id`` metadata filter built here, in
the adapter: callers cannot forget it. Vectors are always passed explicitly (Chroma's default
embedding function would fetch a model from the network), in cosine space.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar

import chromadb
import chromadb.errors
import httpx
import numpy as np

from memq.pipeline import ids
from memq.pipeline.errors import TransientError
from memq.pipeline.ports import EpisodeItem, Hit, Neighbor, Vector
from memq.schemas import StoredMemory, Turn, turn_ref

T = TypeVar("T")
Where = dict[str, Any]

HNSW = {"hnsw": {"space": "cosine"}}
PAGE = 2_000  # records per page when a user's vectors are scanned
NAMES_TTL_S = 5.0
WRITE_BATCH = 1_000  # records per write request (Chroma refuses batches over ~5,400)
MEMORIES = "memq_memories"
# the model whose collections keep the plain names: the default (int8) variant's, as in every
# release but one; other models (fp32, OpenAI) get suffixed collections of their own
BASE_MODEL = "all-MiniLM-L6-v2-onnx-int8"
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
        "content_hash": ids.content_hash(m.content),
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
    """Implements MemoryStore (memories) and EpisodeStore (episodes) on one client."""

    def __init__(self, client_factory: Callable[[], Any]) -> None:
        self._factory = client_factory
        self._client: Any = None
        self._collections: dict[str, Any] = {}
        self._listed: set[str] = set()
        self._listed_at = float("-inf")

    @classmethod
    def connect(cls, host: str, port: int) -> ChromaStores:
        return cls(lambda: chromadb.HttpClient(host=host, port=port))

    # -- collections ----------------------------------------------------------------------
    @staticmethod
    def collection_name(base: str, model_id: str) -> str:
        if model_id == BASE_MODEL:
            return base
        slug = re.sub(r"[^A-Za-z0-9]+", "-", model_id).strip("-")[:40]
        return f"{base}--{slug}-{hashlib.sha256(model_id.encode()).hexdigest()[:8]}"

    def _connect(self) -> Any:
        if self._client is None:
            try:
                self._client = self._factory()
            except ValueError as exc:  # HttpClient says "Could not connect" as ValueError
                raise TransientError(f"chroma unavailable: {exc}") from exc
        return self._client

    def _col(self, name: str) -> Any:
        if name not in self._collections:
            with _transient():
                self._collections[name] = self._connect().get_or_create_collection(
                    name, configuration=HNSW, embedding_function=None)
        return self._collections[name]

    def _names(self, base: str) -> list[str]:
        """Every collection of this kind, one per embedding model in use. The server's list
        is read at most every NAMES_TTL_S (a batch reads several times; another process's
        new model collection shows up within that)."""
        now = time.monotonic()
        if now - self._listed_at > NAMES_TTL_S:
            with _transient():
                self._listed = {c if isinstance(c, str) else c.name
                                for c in self._connect().list_collections()}
            self._listed_at = now
        names = {n for n in self._listed | set(self._collections)
                 if n == base or n.startswith(base + "--")}
        return sorted(names | {base})

    def _call(self, name: str, fn: Callable[[Any], T]) -> T:
        with _transient():
            return fn(self._col(name))

    def _each(self, base: str, fn: Callable[[Any], Any]) -> list[Any]:
        return [self._call(name, fn) for name in self._names(base)]

    # -- memories -------------------------------------------------------------------------
    def upsert(self, memories: Sequence[StoredMemory], vectors: Sequence[Vector | None]) -> None:
        by_model: dict[str, list[tuple[StoredMemory, Vector | None]]] = {}
        for m, v in zip(memories, vectors, strict=True):
            by_model.setdefault(m.embedding_model, []).append((m, v))
        for model, rows in by_model.items():
            for start in range(0, len(rows), WRITE_BATCH):  # Chroma caps one request's size
                self._upsert_model(self.collection_name(MEMORIES, model),
                                   rows[start : start + WRITE_BATCH])

    def _upsert_model(self, name: str, rows: list[tuple[StoredMemory, Vector | None]]) -> None:
        full = [(m, v) for m, v in rows if v is not None]
        meta_only = [m for m, v in rows if v is None]
        if full:
            self._call(name, lambda c: c.upsert(
                ids=[m.id for m, _ in full], embeddings=[v for _, v in full],
                documents=[m.content for m, _ in full],
                metadatas=[memory_metadata(m) for m, _ in full]))
        if meta_only:
            # Same text, same vector: only the metadata changes. The caller knows the records
            # are there (pipeline.service: Chroma is caught up before a plan is made).
            self._call(name, lambda c: c.update(
                ids=[m.id for m in meta_only],
                metadatas=[memory_metadata(m) for m in meta_only]))

    def _exact_top(self, name: str, where: Where, vectors: Sequence[Vector], k: int, *,
                   full: bool = True) -> list[list[tuple[float, str, Any, Any]]]:
        """Exact cosine top-k over one user's records, for several queries in one pass.
        Chroma's filtered HNSW search misses records when the filter is selective (one user
        among many: seen returning none of a user's only memory), and dedupe must not miss a
        duplicate: so the user's vectors are scanned, page by page, once per batch."""
        if not vectors:
            return []
        queries = np.asarray(vectors, dtype=np.float32)
        queries /= np.clip(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12, None)
        best: list[list[tuple[float, str, Any, Any]]] = [[] for _ in vectors]
        offset = 0
        while True:
            res = self._page(name, where, offset, full=full)
            if not res["ids"]:
                break
            matrix = np.asarray(res["embeddings"], dtype=np.float32)
            matrix /= np.clip(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12, None)
            sims = queries @ matrix.T  # (queries, page)
            for q, row in enumerate(sims):
                top = np.argsort(-row)[:k]
                best[q] = sorted(best[q] + [(float(row[j]), res["ids"][j], res["documents"][j],
                                             res["metadatas"][j]) for j in top],
                                 key=lambda hit: (-hit[0], hit[1]))[:k]
            if len(res["ids"]) < PAGE:
                break
            offset += PAGE
        return best

    def _page(self, name: str, where: Where, offset: int, *, full: bool = True) -> Any:
        include = ["documents", "metadatas", "embeddings"] if full else ["embeddings"]
        res = self._call(name, lambda c: c.get(where=where, limit=PAGE, offset=offset,
                                               include=include))
        if not full:
            res["documents"] = res["metadatas"] = [None] * len(res["ids"])
        return res

    def nearest(self, user_id: str, vector: Vector, model_id: str, k: int) -> list[Neighbor]:
        return self.nearest_many(user_id, [vector], model_id, k)[0]

    def nearest_many(self, user_id: str, vectors: Sequence[Vector], model_id: str,
                     k: int) -> list[list[Neighbor]]:
        """The user's k nearest current memories for each vector (one scan for all)."""
        where = _user(user_id, {"status": "current"}, {"embedding_model": model_id})
        tops = self._exact_top(self.collection_name(MEMORIES, model_id), where, vectors, k)
        return [[Neighbor(memory_from(i, d, m), sim) for sim, i, d, m in top] for top in tops]

    def similar(self, user_id: str, vectors: Sequence[Vector], model_id: str,
                k: int) -> list[list[tuple[str, float]]]:
        """Ids and similarities of the user's k nearest memories of any status, per vector
        (one scan for all): vectors only, the graph holds what the memories are."""
        where = _user(user_id, {"embedding_model": model_id})
        tops = self._exact_top(self.collection_name(MEMORIES, model_id), where, vectors, k,
                               full=False)
        return [[(i, sim) for sim, i, _, _ in top] for top in tops]

    def stored_hashes(self, user_id: str, memory_ids: Sequence[str]) -> dict[str, str]:
        if not memory_ids:
            return {}
        out: dict[str, str] = {}
        for res in self._each(MEMORIES, lambda c: c.get(
                ids=list(memory_ids), where=_user(user_id), include=["metadatas"])):
            out.update({i: str(m.get("content_hash", "")) for i, m in
                        zip(res["ids"], res["metadatas"], strict=True)})
        return out

    def delete_ids(self, user_id: str, memory_ids: Sequence[str]) -> None:
        if memory_ids:
            self._each(MEMORIES, lambda c: c.delete(ids=list(memory_ids), where=_user(user_id)))

    def _find(self, where: Where, **kwargs: Any) -> list[StoredMemory]:
        found = []
        for res in self._each(MEMORIES, lambda c: c.get(
                where=where, include=["documents", "metadatas"], **kwargs)):
            found += [memory_from(i, d, m) for i, d, m in
                      zip(res["ids"], res["documents"], res["metadatas"], strict=True)]
        return found

    def exact(self, user_id: str, contents: Sequence[str]) -> dict[str, StoredMemory]:
        """Current memories of the user with the same normalised text, by content hash."""
        hashes = sorted({ids.content_hash(c) for c in contents})
        if not hashes:
            return {}
        found = self._find(_user(user_id, {"status": "current"},
                                 {"content_hash": {"$in": hashes}}))
        return {ids.content_hash(m.content): m for m in found}

    def foreign_model(self, user_id: str, model_id: str) -> str | None:
        """An embedding model other than ``model_id`` that this user's memories use, if any."""
        for m in self._find(_user(user_id, {"embedding_model": {"$ne": model_id}}), limit=1):
            return m.embedding_model
        return None

    def get(self, user_id: str, memory_ids: Sequence[str]) -> list[StoredMemory]:
        if not memory_ids:
            return []
        return self._find(_user(user_id), ids=list(memory_ids))

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
        return sorted(self._find(where), key=lambda m: (m.valid_at, m.id))

    def users(self) -> set[str]:
        """Every user with a memory (for all-user jobs)."""
        return {str(m["user_id"]) for res in self._each(MEMORIES, lambda c: c.get(
            include=["metadatas"])) for m in res["metadatas"]}

    def delete_user(self, user_id: str) -> int:
        deleted = 0
        for base in (MEMORIES, EPISODES):
            for res in self._each(base, lambda c: c.delete(where=_user(user_id))):
                deleted += int((res or {}).get("deleted", 0))
        return deleted

    def delete_memory(self, user_id: str, memory_id: str) -> int:
        return sum(int((res or {}).get("deleted", 0)) for res in self._each(
            MEMORIES, lambda c: c.delete(ids=[memory_id], where=_user(user_id))))

    # -- lifecycle --------------------------------------------------------------------------
    def record_access(self, memories: Sequence[StoredMemory]) -> None:
        """Only importance and last access: a partial update cannot undo a concurrent merge."""
        for model in {m.embedding_model for m in memories}:
            mine = [m for m in memories if m.embedding_model == model]
            for start in range(0, len(mine), WRITE_BATCH):
                self._record_access(model, mine[start : start + WRITE_BATCH])

    def _record_access(self, model: str, mine: list[StoredMemory]) -> None:
        self._call(self.collection_name(MEMORIES, model), lambda c: c.update(
            ids=[m.id for m in mine],
            metadatas=[{"importance": m.importance,
                        "last_accessed_at": _ts(m.last_accessed_at)} for m in mine]))

    def consolidation_pool(self, user_id: str, model_id: str
                           ) -> tuple[list[tuple[StoredMemory, Vector]], list[EpisodeItem]]:
        """Current episodic (event) memories and user-turn episodes not yet consolidated."""
        res = self._call(self.collection_name(MEMORIES, model_id), lambda c: c.get(
            where=_user(user_id, {"status": "current"}, {"kind": "event"},
                        {"consolidated_into": ""}),
            include=["documents", "metadatas", "embeddings"]))
        memories = [(memory_from(i, d, m), [float(x) for x in v]) for i, d, m, v in
                    zip(res["ids"], res["documents"], res["metadatas"], res["embeddings"],
                        strict=True)]
        res = self._call(self.collection_name(EPISODES, model_id), lambda c: c.get(
            where=_user(user_id, {"role": "user"}),
            include=["documents", "metadatas", "embeddings"]))
        episodes = [EpisodeItem(id=i, content=d, vector=[float(x) for x in v],
                                event_at=_dt(m["event_at"]) or datetime.now(UTC),
                                turn_id=m.get("ref") or m["turn_id"])
                    for i, d, m, v in zip(res["ids"], res["documents"], res["metadatas"],
                                          res["embeddings"], strict=True)
                    if not m.get("consolidated_into")]
        return memories, episodes

    def mark_episodes(self, episode_ids: list[str], into: str, model_id: str) -> None:
        self._call(self.collection_name(EPISODES, model_id), lambda c: c.update(
            ids=episode_ids, metadatas=[{"consolidated_into": into}] * len(episode_ids)))

    def migrate(self, user_id: str, embed: Callable[[list[str]], list[Vector]],
                model_id: str, batch: int = 256) -> int:
        """Move every memory and episode of the user into ``model_id``'s collections,
        re-embedded from their text; returns how many records moved."""
        moved = 0
        for base in (MEMORIES, EPISODES):
            target = self.collection_name(base, model_id)
            for name in self._names(base):
                if name == target:
                    continue
                while count := self._move(user_id, name, target, embed, model_id, batch):
                    moved += count
        return moved

    def _move(self, user_id: str, source: str, target: str,
              embed: Callable[[list[str]], list[Vector]], model_id: str, batch: int) -> int:
        res = self._call(source, lambda c: c.get(
            where=_user(user_id), limit=batch, include=["documents", "metadatas"]))
        if not res["ids"]:
            return 0
        metas = [{**m, "embedding_model": model_id} for m in res["metadatas"]]
        vectors = embed(list(res["documents"]))
        self._call(target, lambda c: c.upsert(
            ids=res["ids"], embeddings=vectors, documents=res["documents"], metadatas=metas))
        self._call(source, lambda c: c.delete(ids=res["ids"]))  # after: a crash only repeats
        return len(res["ids"])

    # -- episodes -------------------------------------------------------------------------
    def add(self, user_id: str, session_id: str, turns: Sequence[Turn],
            vectors: Sequence[Vector], model_id: str, now: datetime) -> int:
        if not turns:
            return 0
        refs = [turn_ref(session_id, t.turn_id) for t in turns]
        episode_ids = [ids.episode_id(user_id, ref) for ref in refs]
        self._call(self.collection_name(EPISODES, model_id), lambda c: c.upsert(
            ids=episode_ids, embeddings=list(vectors), documents=[t.content for t in turns],
            metadatas=[{
                "user_id": user_id, "session_id": session_id, "turn_id": t.turn_id,
                "ref": ref, "role": t.role, "event_at": _ts(t.timestamp), "created_at": _ts(now),
                "embedding_model": model_id, "speaker": t.speaker or "",
                "metadata": json.dumps(t.metadata, ensure_ascii=False, default=str),
            } for t, ref in zip(turns, refs, strict=True)]))
        return len(turns)

    def episodes(self, user_id: str) -> list[tuple[str, Turn, datetime]]:
        """Every episode of the user as (session id, turn, stored at)."""
        out = []
        for res in self._each(EPISODES, lambda c: c.get(where=_user(user_id),
                                                        include=["documents", "metadatas"])):
            for d, m in zip(res["documents"], res["metadatas"], strict=True):
                turn = Turn(turn_id=m["turn_id"], role=m["role"], content=d,
                            timestamp=_dt(m["event_at"]) or datetime.now(UTC),
                            metadata=json.loads(m.get("metadata") or "{}"),
                            speaker=m.get("speaker") or None)
                out.append((str(m["session_id"]), turn,
                            _dt(m["created_at"]) or datetime.now(UTC)))
        return out

    def delete_episodes(self, user_id: str, refs: Sequence[str]) -> None:
        """The episodes of these turns (``<session id>/<turn id>`` references)."""
        if refs:
            wanted = [ids.episode_id(user_id, ref) for ref in refs]

            def delete(c: Any) -> None:
                c.delete(ids=wanted, where=_user(user_id))

            self._each(EPISODES, delete)

    def search(self, user_id: str, vector: Vector, model_id: str, k: int) -> list[Hit]:
        (top,) = self._exact_top(self.collection_name(EPISODES, model_id), _user(user_id),
                                 [vector], k)
        return [
            Hit(id=i, type="episode", content=d, score=sim, event_at=_dt(m["event_at"])
                or datetime.min.replace(tzinfo=UTC), created_at=_dt(m["created_at"])
                or datetime.min.replace(tzinfo=UTC), source_turn_ids=[m.get("ref") or m["turn_id"]],
                role=m["role"], speaker=m.get("speaker") or None)
            for sim, i, d, m in top
        ]

    def count_episodes(self, user_id: str) -> int:
        return sum(len(res["ids"]) for res in self._each(
            EPISODES, lambda c: c.get(where=_user(user_id), include=[])))
