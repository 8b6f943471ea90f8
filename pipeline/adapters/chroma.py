"""Chroma (server mode) for memories and episodes: **one collection per user, per kind, per
embedding model**.

- Per user: a user's nearest neighbours are an unfiltered HNSW query inside the user's own
  index, so dedupe and search cost what the index costs (flat in the size of the store and of
  the user's store, no scan) and never miss because of a selective filter (Chroma's filtered
  HNSW can return none of a user's records when they are few among many). Users are isolated
  by construction: a read cannot reach another user's records, whatever its ``where``.
- Per model: vectors of two models never meet in one index (they may not even share a
  dimension). The offline model's collections are ``memq_memories-u<hash>`` and
  ``memq_episodes-u<hash>``; another model's carry its name as a suffix. The models in use are
  listed in a tiny registry collection (``memq_models``), so finding a user's collections is a
  lookup, not a listing of every collection.
- Forgetting a user drops their collections: bounded work whatever their size.

Vectors are always passed explicitly (Chroma's default embedding function would fetch a model
from the network), in cosine space.
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

from memq.pipeline import ids, recall
from memq.pipeline.errors import PermanentError, TransientError
from memq.pipeline.ports import EpisodeItem, Hit, IndexEntry, Vector
from memq.schemas import StoredMemory, Turn, turn_ref

T = TypeVar("T")
Where = dict[str, Any]

# ef_search, fixed when a collection is made (a loaded index keeps it): at 100k memories of
# one user (scripts/bench dedupe's clustered vectors, 800 queries, 8 per request) the nearest
# current neighbour was found every time at 128 and 256, for near-duplicates and new text
# alike; at 64, 0.96 for new text. 8 queries took p50 13.9 ms at 128, 17.8 ms at 256. One
# user's index is unfiltered, so no filter starves the search.
HNSW = {"hnsw": {"space": "cosine", "ef_construction": 200, "ef_search": 128}}
PAGE = 2_000  # records per page when a user's records are listed
MODELS_TTL_S = 5.0  # the registry of models in use is re-read after this
WRITE_BATCH = 1_000  # records per write request (Chroma refuses batches over ~5,400)
MEMORIES = "memq_memories"
EPISODES = "memq_episodes"
REGISTRY = "memq_models"  # one record per embedding model in use (id = model id)
# the model whose collections keep the plain names: the default (int8) variant's, as in every
# release but one; other models (fp32, OpenAI) get suffixed collections of their own
BASE_MODEL = "all-MiniLM-L6-v2-onnx-int8"


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


def _and(*clauses: Where) -> Where | None:
    return None if not clauses else clauses[0] if len(clauses) == 1 else {"$and": list(clauses)}


# Record layout. A memory's record is an index entry: its vector, the content hash the vector
# is of and the memory's status (what a memory is, the graph says). An episode's: a few
# top-level metadata keys (the ones a ``where`` filters on or a partial update writes) and
# everything else, the text included, in one JSON value under RECORD. No Chroma document:
# Chroma indexes documents for its full-text search (trigrams), which memq does not use (BM25
# is Neo4j's). On a scratch Chroma, an episode written this way cost 0.9-1.2 ms of Chroma CPU
# against 1.4-1.9 (10 keys and a document).
RECORD = "record"
EPISODE_KEYS = ("role", "consolidated_into")


def _pack(fields: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    top = {k: fields[k] for k in keys if k in fields}
    rest = {k: v for k, v in fields.items() if k not in top}
    return {**top, RECORD: json.dumps(rest, ensure_ascii=False, default=str)}


class UnreadableRecord(PermanentError):
    """A Chroma record not in this layout (written by a build before it was released)."""


def _unpack(meta: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    if RECORD not in (meta or {}):
        raise UnreadableRecord("a Chroma episode record not in memq's layout (written by a "
                               "build before release): forget the user (memq forget) or "
                               "start from empty stores")
    return {**json.loads(meta[RECORD]), **{k: meta[k] for k in keys if k in meta}}


def episode_fields(meta: dict[str, Any]) -> dict[str, Any]:
    """An episode record's fields (text under ``content``)."""
    return _unpack(meta, EPISODE_KEYS)


def memory_metadata(m: StoredMemory) -> dict[str, Any]:
    """A memory's index entry (the vector aside)."""
    return {"status": str(m.status), "content_hash": ids.content_hash(m.content)}


def episode_metadata(user_id: str, session_id: str, turn: Turn, model_id: str,
                     now: datetime, neighbors: Sequence[str] = ()) -> dict[str, Any]:
    return _pack({
        "content": turn.content, "user_id": user_id, "session_id": session_id,
        "turn_id": turn.turn_id, "ref": turn_ref(session_id, turn.turn_id), "role": turn.role,
        "event_at": _ts(turn.timestamp), "created_at": _ts(now), "embedding_model": model_id,
        "speaker": turn.speaker or "", "metadata": turn.metadata, "neighbors": list(neighbors),
    }, EPISODE_KEYS)


def _rows(res: Any) -> Iterator[tuple[str, Any]]:
    """(id, metadata) of a ``get`` result."""
    metas = res.get("metadatas") or [None] * len(res["ids"])
    yield from zip(res["ids"], metas, strict=True)


class ChromaStores:
    """Implements MemoryStore (memories) and EpisodeStore (episodes) on one client."""

    def __init__(self, client_factory: Callable[[], Any]) -> None:
        self._factory = client_factory
        self._client: Any = None
        self._collections: dict[str, Any] = {}
        self._models: set[str] = set()
        self._models_at = float("-inf")
        self._registered: set[str] = set()
        self._absent: dict[str, float] = {}  # collection name -> when it was last found missing

    @classmethod
    def connect(cls, host: str, port: int) -> ChromaStores:
        return cls(lambda: chromadb.HttpClient(host=host, port=port))

    # -- names ----------------------------------------------------------------------------
    @staticmethod
    def collection_name(base: str, model_id: str, user_id: str) -> str:
        """One user's collection of one kind and model (names are hashed: any user id); the
        base model's carries no model suffix."""
        user = hashlib.sha256(user_id.encode()).hexdigest()[:32]
        if model_id == BASE_MODEL:
            return f"{base}-u{user}"
        slug = re.sub(r"[^A-Za-z0-9]+", "-", model_id).strip("-")[:40]
        return f"{base}-u{user}--{slug}-{hashlib.sha256(model_id.encode()).hexdigest()[:8]}"

    # -- collections ----------------------------------------------------------------------
    def _connect(self) -> Any:
        if self._client is None:
            try:
                self._client = self._factory()
            except ValueError as exc:  # HttpClient says "Could not connect" as ValueError
                raise TransientError(f"chroma unavailable: {exc}") from exc
        return self._client

    def _create(self, base: str, model_id: str, user_id: str) -> Any:
        """The user's collection, created if missing (writes)."""
        name = self.collection_name(base, model_id, user_id)
        if name not in self._collections:
            self._register(model_id)
            with _transient():
                self._collections[name] = self._connect().get_or_create_collection(
                    name, configuration=HNSW, embedding_function=None,
                    metadata={"user_id": user_id, "kind": base, "model": model_id})
        return self._collections[name]

    def _lookup(self, name: str, *, absence_ttl_s: float = 0.0) -> Any | None:
        """An existing collection or None (reads never create). Absence is not cached (another
        process may create it any moment), except for ``absence_ttl_s`` when asked."""
        if name in self._collections:
            return self._collections[name]
        if absence_ttl_s and time.monotonic() - self._absent.get(name, float("-inf")) \
                < absence_ttl_s:
            return None
        try:
            with _transient():
                self._collections[name] = self._connect().get_collection(
                    name, embedding_function=None)
        except (chromadb.errors.NotFoundError, ValueError):
            self._absent[name] = time.monotonic()
            return None
        self._absent.pop(name, None)
        return self._collections[name]

    def _register(self, model_id: str) -> None:
        if model_id in self._registered:
            return
        with _transient():
            self._connect().get_or_create_collection(
                REGISTRY, embedding_function=None).upsert(
                ids=[model_id], embeddings=[[0.0]], metadatas=[{"model": model_id}])
        self._registered.add(model_id)
        self._models.add(model_id)

    def models(self) -> set[str]:
        """Every embedding model with collections (re-read at most every MODELS_TTL_S)."""
        now = time.monotonic()
        if now - self._models_at > MODELS_TTL_S:
            with _transient():
                res = self._connect().get_or_create_collection(
                    REGISTRY, embedding_function=None).get(include=[])
            self._models = set(res["ids"]) | self._registered
            self._models_at = now
        return self._models

    def _cols(self, base: str, user_id: str, *,
              absence_ttl_s: float = 0.0) -> list[tuple[str, Any]]:
        """The user's existing collections of one kind, as (model id, collection)."""
        out = []
        for model in sorted(self.models()):
            col = self._lookup(self.collection_name(base, model, user_id),
                               absence_ttl_s=absence_ttl_s)
            if col is not None:
                out.append((model, col))
        return out

    def _run(self, col: Any, fn: Callable[[Any], T], default: T) -> T:
        """``fn(col)``. A collection dropped meanwhile by another process (the user was
        forgotten) reads as empty, or as the collection made again since under its name."""
        try:
            with _transient():
                return fn(col)
        except chromadb.errors.NotFoundError:
            self._forget_cached(col.name)
        fresh = self._lookup(col.name)
        if fresh is None:
            return default
        try:
            with _transient():
                return fn(fresh)
        except chromadb.errors.NotFoundError:
            self._forget_cached(col.name)
            return default

    def _write(self, base: str, model_id: str, user_id: str, fn: Callable[[Any], Any]) -> None:
        """``fn`` on the user's collection; re-created once if it was dropped meanwhile."""
        for attempt in (1, 2):
            col = self._create(base, model_id, user_id)
            try:
                with _transient():
                    fn(col)
                return
            except chromadb.errors.NotFoundError:
                self._forget_cached(col.name)
                if attempt == 2:
                    raise

    def _put(self, base: str, model_id: str, user_id: str, verb: str, **fields: Any) -> None:
        """``upsert`` or ``update`` of records in the user's collection."""
        self._write(base, model_id, user_id, lambda c: getattr(c, verb)(**fields))

    def _delete(self, col: Any, record_ids: list[str]) -> None:
        self._run(col, lambda c: c.delete(ids=record_ids), None)

    def _forget_cached(self, name: str) -> None:
        self._collections.pop(name, None)

    def _each(self, base: str, user_id: str, fn: Callable[[Any], Any]) -> list[Any]:
        return [r for _, col in self._cols(base, user_id)
                if (r := self._run(col, fn, None)) is not None]

    def _pages(self, col: Any, where: Where | None, include: list[str]) -> Iterator[Any]:
        offset = 0
        while True:
            def page(c: Any, at: int = offset) -> Any:
                return c.get(where=where, limit=PAGE, offset=at, include=include)

            res = self._run(col, page, None)
            if not res or not res["ids"]:
                return
            yield res
            if len(res["ids"]) < PAGE:
                return
            offset += PAGE

    # -- memories -------------------------------------------------------------------------
    def upsert(self, memories: Sequence[StoredMemory], vectors: Sequence[Vector | None]) -> None:
        groups: dict[tuple[str, str], list[tuple[StoredMemory, Vector | None]]] = {}
        for m, v in zip(memories, vectors, strict=True):
            groups.setdefault((m.user_id, m.embedding_model), []).append((m, v))
        for (user_id, model), rows in groups.items():
            for start in range(0, len(rows), WRITE_BATCH):  # Chroma caps one request's size
                self._upsert_rows(user_id, model, rows[start : start + WRITE_BATCH])

    def _upsert_rows(self, user_id: str, model: str,
                     rows: list[tuple[StoredMemory, Vector | None]]) -> None:
        full = [(m, v) for m, v in rows if v is not None]
        meta_only = [m for m, v in rows if v is None]
        if full:
            self._write(MEMORIES, model, user_id, lambda c: c.upsert(
                ids=[m.id for m, _ in full], embeddings=[v for _, v in full],
                metadatas=[memory_metadata(m) for m, _ in full]))
        if meta_only:
            # Same text, same vector: only the metadata changes. The caller knows the records
            # are there (pipeline.service: Chroma is caught up before a plan is made).
            self._write(MEMORIES, model, user_id, lambda c: c.update(
                ids=[m.id for m in meta_only],
                metadatas=[memory_metadata(m) for m in meta_only]))

    def _query(self, base: str, user_id: str, model_id: str, vectors: Sequence[Vector], n: int,
               include: list[str]) -> Any:
        """The n nearest of each vector in the user's collection, unfiltered (None: none)."""
        col = self._lookup(self.collection_name(base, model_id, user_id))
        if col is None or not vectors:
            return None

        def query(c: Any) -> Any:
            return c.query(query_embeddings=list(vectors), n_results=n, include=include)

        return self._run(col, query, None)

    def similar(self, user_id: str, vectors: Sequence[Vector], model_id: str,
                k: int) -> list[list[tuple[str, float]]]:
        """Ids and similarities of the user's k nearest memories of any status, per vector
        (one request for all): vectors only, the graph holds what the memories are."""
        res = self._query(MEMORIES, user_id, model_id, vectors, k, ["distances"])
        if res is None:
            return [[] for _ in vectors]
        return [[(i, 1.0 - float(dist)) for i, dist in zip(res["ids"][q], res["distances"][q],
                                                          strict=True)]
                for q in range(len(vectors))]

    def stored_hashes(self, user_id: str, memory_ids: Sequence[str]) -> dict[str, str]:
        if not memory_ids:
            return {}
        out: dict[str, str] = {}
        ids = list(memory_ids)
        # in pages: one get of 100k ids exceeds SQLite's variable limit inside Chroma
        for start in range(0, len(ids), PAGE):
            def get(c: Any, page: list[str] = ids[start : start + PAGE]) -> Any:
                return c.get(ids=page, include=["metadatas"])

            for res in self._each(MEMORIES, user_id, get):
                out.update({i: str(m.get("content_hash", "")) for i, m in _rows(res)})
        return out

    def delete_ids(self, user_id: str, memory_ids: Sequence[str]) -> None:
        if memory_ids:
            self._each(MEMORIES, user_id, lambda c: c.delete(ids=list(memory_ids)))

    def index(self, user_id: str) -> dict[str, IndexEntry]:
        """Every memory record of the user (any model), as the index holds it."""
        out: dict[str, IndexEntry] = {}
        for model, col in self._cols(MEMORIES, user_id):
            for res in self._pages(col, None, ["metadatas"]):
                for i, meta in _rows(res):
                    held = meta or {}
                    out[i] = IndexEntry(id=i, status=str(held.get("status", "")),
                                        content_hash=str(held.get("content_hash", "")),
                                        model=model)
        return out

    def foreign_model(self, user_id: str, model_id: str) -> str | None:
        """An embedding model other than ``model_id`` that this user's records use, if any."""
        # Checked before every plan: a collection of another model found missing is believed
        # missing for as long as the registry of models is (MODELS_TTL_S), not asked again.
        for base in (MEMORIES, EPISODES):
            for model, col in self._cols(base, user_id, absence_ttl_s=MODELS_TTL_S):
                if model != model_id and self._run(col, lambda c: c.count(), 0):
                    return model
        return None

    def memory_ids(self, user_id: str) -> set[str]:
        """The ids of every memory record the user has (any model), whatever they hold."""
        return {i for _, col in self._cols(MEMORIES, user_id)
                for res in self._pages(col, None, []) for i in res["ids"]}

    def _listing(self) -> Iterator[Any]:
        """Every collection (paged): for all-user jobs only."""
        offset = 0
        while True:
            with _transient():
                page = self._connect().list_collections(limit=500, offset=offset)
            yield from page
            if len(page) < 500:
                return
            offset += 500

    def users(self) -> set[str]:
        """Every user with a memory collection (for all-user jobs)."""
        out = set()
        for col in self._listing():
            meta = col.metadata or {}
            if meta.get("kind") == MEMORIES and meta.get("user_id"):
                out.add(str(meta["user_id"]))
        return out

    def delete_user(self, user_id: str) -> int:
        """Drops the user's collections (bounded work at any size); returns records gone."""
        deleted = 0
        for base in (MEMORIES, EPISODES):
            for _, col in self._cols(base, user_id):
                deleted += self._run(col, lambda c: c.count(), 0)
                try:
                    with _transient():
                        self._connect().delete_collection(col.name)
                except (chromadb.errors.NotFoundError, ValueError):
                    pass  # dropped meanwhile by another process: the same outcome
                self._forget_cached(col.name)
        return deleted

    def delete_memory(self, user_id: str, memory_id: str) -> int:
        deleted = 0
        for _, col in self._cols(MEMORIES, user_id):
            found = self._run(col, lambda c: c.get(ids=[memory_id], include=[]), None)
            if found and found["ids"]:
                self._run(col, lambda c: c.delete(ids=[memory_id]), None)
                deleted += len(found["ids"])
        return deleted

    # -- lifecycle --------------------------------------------------------------------------
    def memory_vectors(self, user_id: str, model_id: str, memory_ids: Sequence[str]
                       ) -> dict[str, Vector]:
        """The vectors these memories have under ``model_id`` (ids it lacks left out)."""
        col = self._lookup(self.collection_name(MEMORIES, model_id, user_id))
        wanted = list(dict.fromkeys(memory_ids))
        out: dict[str, Vector] = {}
        if col is None:
            return out
        for start in range(0, len(wanted), PAGE):
            def get(c: Any, page: list[str] = wanted[start : start + PAGE]) -> Any:
                return c.get(ids=page, include=["embeddings"])

            res = self._run(col, get, None)
            if res and len(res["ids"]):
                out.update((str(i), [float(x) for x in v])
                           for i, v in zip(res["ids"], res["embeddings"], strict=True))
        return out

    def unconsolidated_episodes(self, user_id: str, model_id: str) -> list[EpisodeItem]:
        """The user's turns (role user) not yet consolidated, with their vectors."""
        episodes: list[EpisodeItem] = []
        col = self._lookup(self.collection_name(EPISODES, model_id, user_id))
        if col is None:
            return episodes
        for res in self._pages(col, {"role": "user"}, ["metadatas", "embeddings"]):
            for i, m, v in zip(res["ids"], res["metadatas"], res["embeddings"], strict=True):
                f = episode_fields(m)
                if not f.get("consolidated_into"):
                    episodes.append(EpisodeItem(
                        id=i, content=f["content"], vector=[float(x) for x in v],
                        event_at=_dt(f["event_at"]) or datetime.now(UTC),
                        turn_id=f.get("ref") or f["turn_id"]))
        return episodes

    def mark_episodes(self, user_id: str, episode_ids: list[str], into: str,
                      model_id: str) -> None:
        for start in range(0, len(episode_ids), WRITE_BATCH):
            chunk = episode_ids[start : start + WRITE_BATCH]
            self._put(EPISODES, model_id, user_id, "update", ids=chunk,
                      metadatas=[{"consolidated_into": into}] * len(chunk))

    def migrate(self, user_id: str, embed: Callable[[list[str]], list[Vector]],
                model_id: str, batch: int = 256) -> int:
        """Move every episode of the user into ``model_id``'s collection, re-embedded from its
        text, in chunks of ``batch``, and drop the user's memory records of other models (the
        caller wrote them under ``model_id`` first, from the graph); returns how many
        episodes moved."""
        moved = 0
        for model, col in self._cols(EPISODES, user_id):
            if model != model_id:
                while count := self._move(user_id, col, embed, model_id, batch):
                    moved += count
        for model, col in self._cols(MEMORIES, user_id):
            if model != model_id:
                while res := self._run(col, lambda c: c.get(limit=PAGE, include=[]), None):
                    if not res["ids"]:
                        break
                    self._delete(col, list(res["ids"]))
        return moved

    def _move(self, user_id: str, source: Any, embed: Callable[[list[str]], list[Vector]],
              model_id: str, batch: int) -> int:
        res = self._run(source, lambda c: c.get(limit=batch, include=["metadatas"]), None)
        if not res or not res["ids"]:
            return 0
        fields = [{**_unpack(m, EPISODE_KEYS), "embedding_model": model_id}
                  for _, m in _rows(res)]
        vectors = embed([recall.episode_text(str(f["content"]), f.get("speaker") or f.get("role"),
                                             _dt(f["event_at"]) or datetime.now(UTC))
                         for f in fields])
        self._write(EPISODES, model_id, user_id, lambda c: c.upsert(
            ids=res["ids"], embeddings=vectors,
            metadatas=[_pack(f, EPISODE_KEYS) for f in fields]))
        self._run(source, lambda c: c.delete(ids=res["ids"]), None)  # after: a crash repeats
        return len(res["ids"])

    # -- episodes -------------------------------------------------------------------------
    def add(self, user_id: str, session_id: str, turns: Sequence[Turn],
            vectors: Sequence[Vector], model_id: str, now: datetime) -> int:
        if not turns:
            return 0
        episode_ids = [ids.episode_id(user_id, turn_ref(session_id, t.turn_id)) for t in turns]
        around = recall.neighbors(episode_ids)
        self._write(EPISODES, model_id, user_id, lambda c: c.upsert(
            ids=episode_ids, embeddings=list(vectors),
            metadatas=[episode_metadata(user_id, session_id, t, model_id, now, near)
                       for t, near in zip(turns, around, strict=True)]))
        return len(turns)

    def episodes(self, user_id: str) -> list[tuple[str, Turn, datetime]]:
        """Every episode of the user as (session id, turn, stored at)."""
        out = []
        for _, col in self._cols(EPISODES, user_id):
            for res in self._pages(col, None, ["metadatas"]):
                for _, m in _rows(res):
                    f = episode_fields(m)
                    turn = Turn(turn_id=f["turn_id"], role=f["role"], content=f["content"],
                                timestamp=_dt(f["event_at"]) or datetime.now(UTC),
                                metadata=f.get("metadata") or {},
                                speaker=f.get("speaker") or None)
                    out.append((str(f["session_id"]), turn,
                                _dt(f["created_at"]) or datetime.now(UTC)))
        return out

    def delete_episodes(self, user_id: str, refs: Sequence[str]) -> None:
        """The episodes of these turns (``<session id>/<turn id>`` references)."""
        if refs:
            wanted = [ids.episode_id(user_id, ref) for ref in refs]
            self._each(EPISODES, user_id, lambda c: c.delete(ids=wanted))

    def search(self, user_id: str, vector: Vector, model_id: str, k: int) -> list[Hit]:
        res = self._query(EPISODES, user_id, model_id, [vector], k, ["metadatas", "distances"])
        if res is None:
            return []
        hits = []
        for i, m, dist in zip(res["ids"][0], res["metadatas"][0], res["distances"][0],
                              strict=True):
            f = episode_fields(m)
            hits.append(Hit(
                id=i, type="episode", content=f["content"], score=1.0 - float(dist),
                event_at=_dt(f["event_at"]) or datetime.min.replace(tzinfo=UTC),
                created_at=_dt(f["created_at"]) or datetime.min.replace(tzinfo=UTC),
                source_turn_ids=[f.get("ref") or f["turn_id"]],
                role=f["role"], speaker=f.get("speaker") or None,
                neighbors=tuple(f.get("neighbors") or ())))
        return hits

    def cosines(self, user_id: str, record_ids: Sequence[str], vector: Vector, model_id: str,
                *, memories: bool = False) -> dict[str, float]:
        """The exact cosine of ``vector`` to each of these records (episodes, or memories) that
        the user has under ``model_id``, in one request: what a candidate found by BM25 alone
        scores on the dense signal."""
        col = self._lookup(self.collection_name(MEMORIES if memories else EPISODES, model_id,
                                                user_id))
        wanted = list(dict.fromkeys(record_ids))
        if col is None or not wanted:
            return {}
        res = self._run(col, lambda c: c.get(ids=wanted, include=["embeddings"]), None)
        if not res or not len(res["ids"]):
            return {}
        q = np.asarray(vector, dtype=np.float32)
        q /= float(np.linalg.norm(q)) or 1.0
        m = np.asarray(res["embeddings"], dtype=np.float32)
        m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
        return {str(i): float(c) for i, c in zip(res["ids"], m @ q, strict=True)}

    def count_episodes(self, user_id: str) -> int:
        return sum(self._each(EPISODES, user_id, lambda c: c.count()))
