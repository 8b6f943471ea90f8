"""Chroma (server mode) for memories and episodes: **users share a fixed set of collections
until they grow; a large user gets collections of its own**; one set per kind and embedding
model.

- **Shared** (``memq_memories-s<k>``, ``memq_episodes-s<k>``, k < SHARDS): a user's records
  live in the shard its id hashes to, each tagged with its user. A user's nearest neighbours
  are an *exact* cosine scan of its own records (``get`` with ``where user``, then numpy), so a
  selective filter never starves an approximate search, and every read carries the user's
  clause (one helper, ``_Place``): a read cannot reach another user's records. The number of
  collections stays fixed as users come, so Chroma's memory, open files and write log do not
  grow with them (``scripts/bench layout``: a collection per user costs ~2.8 MB of Chroma's
  RSS and 4 open files each; 256 shared ones hold 10,000 users in ~2 GB).
- **Own** (``memq_memories-u<hash>``, ``memq_episodes-u<hash>``): when a user's shard holds more
  than OWN_AFTER records of a kind, they move into a collection of the user's own, queried
  unfiltered by HNSW (an exact scan of thousands of records costs tens of ms). Collections
  written by earlier releases (one per user) are own collections; ``relocate`` moves small ones
  into their shard. A read takes the union of both places (own wins on an id held twice), so
  a record is never missing while it moves: it is copied before it is deleted.
- Per model: vectors of two models never meet in one index (they may not even share a
  dimension); another model's collections carry its name as a suffix. The models in use are
  listed in a tiny registry collection (``memq_models``).
- Forgetting a user drops their own collections and deletes their records from the shards.
- **No words**: a record holds ids, times, a role and vectors; a turn's text, speaker and
  metadata are the graph's (see the record layout below: why Chroma must never see them).

Vectors are always passed explicitly (Chroma's default embedding function would fetch a model
from the network), in cosine space.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
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
# episode ids -> those turns with their words (the graph's: TextIndex.turns)
Words = Callable[[list[str]], dict[str, Hit]]

# ef_search: at 100k memories of
# one user (scripts/bench dedupe's clustered vectors, 800 queries, 8 per request) the nearest
# current neighbour was found every time at 128 and 256, for near-duplicates and new text
# alike; at 64, 0.96 for new text. 8 queries took p50 13.9 ms at 128, 17.8 ms at 256. An own
# collection is queried unfiltered, so no filter starves the search.
# sync_threshold: Chroma keeps every record not yet persisted into a collection's index in its
# SQLite write log, and each write reads past the whole log (every collection's rows: its only
# index is the sequence number). Persisting every 20 (shards) or 100 (own) records keeps the
# log short whatever the number of users, without touching Chroma's schema.
# Own collections are only the large users' (past OWN_AFTER records): random unit vectors, the
# hard case, 3,000 records, top 10 of 100 random queries against an exact scan: recall 0.888 at
# ef_search 128, 0.985 at 256, 0.998 at 512 (p50 1.9, 2.6, 3.0 ms).
OWN_SYNC, OWN_EF = 100, 512
HNSW = {"hnsw": {"space": "cosine", "ef_construction": 200, "ef_search": OWN_EF,
                 "sync_threshold": OWN_SYNC, "batch_size": OWN_SYNC}}
# A shard is never searched by HNSW (reads scan the user's records exactly), so its graph is
# kept cheap to build. scripts/bench layout, 256 shards, 1,000 to 10,000 users: a 5-record
# write cost 7.8-8.0 ms of Chroma's CPU (42-75 ms with Chroma's defaults, whose write log
# held every record of collections under 1,000), a user's exact top 10 p95 9-12 ms.
SHARD_HNSW = {"hnsw": {"space": "cosine", "ef_construction": 16, "max_neighbors": 4,
                       "sync_threshold": 20, "batch_size": 20}}
SHARDS = 256  # fixed for the life of a store: a user's shard is its id's hash modulo this
OWN_AFTER = 400  # records of one kind in a shard; more and the user gets a collection of its own
DEMOTE_AT = 100  # an own collection with at most this many records moves back (relocate)
OWN_TTL_S = 2.0  # an own collection found missing is believed missing this long (per process)
PAGE = 2_000  # records per page when a user's records are listed
MODELS_TTL_S = 5.0  # the registry of models in use is re-read after this
WRITE_BATCH = 1_000  # records per write request (Chroma refuses batches over ~5,400)
MEMORIES = "memq_memories"
EPISODES = "memq_episodes"
USER = "user"  # the metadata key a record's user is under (every record, shared or own)
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
# everything else in one JSON value under RECORD (fewer keys: less of Chroma's CPU a write).
# No Chroma document: memq does not use Chroma's full-text search (BM25 is Neo4j's).
#
# No words either (text, speaker, the producer's metadata; WORDS): the graph holds them, and
# a turn's words that reach Chroma's process can outlive a forget in its files. Chroma's
# HNSW files are written from buffers it never clears (``length.bin``: a length per element
# that only a normalizing index sets), so heap bytes that once held a request's text land in
# the files of any collection, where no delete or scrub reaches. Records written before this
# layout may still hold words: readers ignore them, and a reembed rewrites them without.
RECORD = "record"
EPISODE_KEYS = ("role", "consolidated_into")
WORDS = ("content", "speaker", "metadata")


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
    """An episode record's fields: ids, role, times, model, neighbors, passages (no words,
    even from a record written before they left: see WORDS)."""
    return {k: v for k, v in _unpack(meta, EPISODE_KEYS).items() if k not in WORDS}


def memory_metadata(m: StoredMemory) -> dict[str, Any]:
    """A memory's index entry (the vector aside; the user's tag is added where it is
    written)."""
    return {"status": str(m.status), "content_hash": ids.content_hash(m.content)}


def episode_metadata(user_id: str, session_id: str, turn: Turn, model_id: str,
                     now: datetime, neighbors: Sequence[str] = (),
                     passages: Sequence[Vector] = ()) -> dict[str, Any]:
    fields = {
        "user_id": user_id, "session_id": session_id,
        "turn_id": turn.turn_id, "ref": turn_ref(session_id, turn.turn_id), "role": turn.role,
        "event_at": _ts(turn.timestamp), "created_at": _ts(now), "embedding_model": model_id,
        "neighbors": list(neighbors),
    }
    if passages:
        fields["passages"] = pack_passages(passages)
    return _pack(fields, EPISODE_KEYS)


def pack_passages(vectors: Sequence[Vector]) -> str:
    """A turn's passage vectors (``recall.passages``) as its record keeps them, beside its
    own vector, their mean (Chroma holds one per record): each unit vector as int8 with its scale
    (base64 of the n float32 scales, then the n x d int8 values; ~520 characters a passage
    for MiniLM, cosines within 0.01 of float32's)."""
    unit = _unit_rows(vectors)
    scales = np.maximum(np.abs(unit).max(axis=1), 1e-12) / 127.0
    values = np.rint(unit / scales[:, None]).astype(np.int8)
    return base64.b64encode(scales.astype("<f4").tobytes() + values.tobytes()).decode()


def passage_cosine(packed: str, unit_query: np.ndarray) -> float | None:
    """The best cosine of a unit query vector to the passages :func:`pack_passages` packed
    (None: none of its dimension)."""
    raw = base64.b64decode(packed)
    d = unit_query.shape[0]
    n = len(raw) // (4 + d)
    if n == 0 or len(raw) != n * (4 + d):
        return None
    scales = np.frombuffer(raw[:4 * n], dtype="<f4")
    values = np.frombuffer(raw[4 * n:], dtype=np.int8).reshape(n, d).astype(np.float32)
    return float(((values * scales[:, None]) @ unit_query).max())


def _turn_cosine(score: float, fields: dict[str, Any], unit_query: np.ndarray) -> float:
    """A turn's cosine: the best of its own vector's (``score``) and its passages'."""
    packed = fields.get("passages")
    best = passage_cosine(packed, unit_query) if isinstance(packed, str) and packed else None
    return score if best is None else max(score, best)


def _rows(res: Any) -> Iterator[tuple[str, Any]]:
    """(id, metadata) of a ``get`` result."""
    metas = res.get("metadatas") or [None] * len(res["ids"])
    yield from zip(res["ids"], metas, strict=True)


def _unit_rows(matrix: Any) -> np.ndarray:
    m = np.asarray(matrix, dtype=np.float32)
    out: np.ndarray = m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
    return out


Rows = tuple[list[str], list[Vector], list[dict[str, Any]]]  # ids, vectors, metadata


@dataclass(frozen=True)
class _Place:
    """Where some of a user's records of one kind and model live: a collection of the user's
    own (``where`` None) or the user's part of a shard (``where`` its user clause). Every read
    and delete of a place goes through ``clause``, so a shard read is always the user's."""

    model: str
    col: Any
    where: Where | None

    @property
    def own(self) -> bool:
        return self.where is None

    def clause(self, *more: Where) -> Where | None:
        return _and(*((self.where,) if self.where else ()), *more)


class ChromaStores:
    """Implements MemoryStore (memories) and EpisodeStore (episodes) on one client."""

    def __init__(self, client_factory: Callable[[], Any], *, shards: int = SHARDS,
                 own_after: int = OWN_AFTER) -> None:
        self._factory = client_factory
        self._client: Any = None
        self._collections: dict[str, Any] = {}
        self._models: set[str] = set()
        self._models_at = float("-inf")
        self._registered: set[str] = set()
        self._absent: dict[str, float] = {}  # collection name -> when it was last found missing
        self.shards, self.own_after = shards, own_after

    @classmethod
    def connect(cls, host: str, port: int) -> ChromaStores:
        return cls(lambda: chromadb.HttpClient(host=host, port=port))

    # -- names ----------------------------------------------------------------------------
    @staticmethod
    def _suffix(model_id: str) -> str:
        if model_id == BASE_MODEL:
            return ""
        slug = re.sub(r"[^A-Za-z0-9]+", "-", model_id).strip("-")[:40]
        return f"--{slug}-{hashlib.sha256(model_id.encode()).hexdigest()[:8]}"

    @classmethod
    def collection_name(cls, base: str, model_id: str, user_id: str) -> str:
        """One user's own collection of one kind and model (names are hashed: any user id);
        the base model's carries no model suffix."""
        user = hashlib.sha256(user_id.encode()).hexdigest()[:32]
        return f"{base}-u{user}{cls._suffix(model_id)}"

    def shard_of(self, user_id: str) -> int:
        """The user's shard: its id's hash, the same in every process and release."""
        return int(hashlib.sha256(user_id.encode()).hexdigest()[:8], 16) % self.shards

    def shard_name(self, base: str, model_id: str, user_id: str) -> str:
        return f"{base}-s{self.shard_of(user_id):03d}{self._suffix(model_id)}"

    # -- collections ----------------------------------------------------------------------
    def _connect(self) -> Any:
        if self._client is None:
            try:
                self._client = self._factory()
            except ValueError as exc:  # HttpClient says "Could not connect" as ValueError
                raise TransientError(f"chroma unavailable: {exc}") from exc
        return self._client

    def _create(self, name: str, model_id: str, metadata: dict[str, Any],
                configuration: dict[str, Any]) -> Any:
        """A collection, created if missing (writes)."""
        if name not in self._collections:
            self._register(model_id)
            with _transient():
                self._collections[name] = self._connect().get_or_create_collection(
                    name, configuration=configuration, embedding_function=None,
                    metadata=metadata)
            self._absent.pop(name, None)
        return self._collections[name]

    def _shard(self, base: str, model_id: str, user_id: str) -> Any:
        return self._create(self.shard_name(base, model_id, user_id), model_id,
                            {"kind": base, "model": model_id, "shard": self.shard_of(user_id)},
                            SHARD_HNSW)

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

    def _places(self, base: str, user_id: str, model_id: str | None = None, *,
                absence_ttl_s: float = OWN_TTL_S,
                shard_absence_ttl_s: float = 0.0) -> list[_Place]:
        """Where the user's records of one kind (and model, or every model) live: the shard
        first, then an own collection (own wins when both hold an id)."""
        out = []
        for model in [model_id] if model_id else sorted(self.models()):
            shard = self._lookup(self.shard_name(base, model, user_id),
                                 absence_ttl_s=shard_absence_ttl_s)
            if shard is not None:
                out.append(_Place(model, shard, {USER: user_id}))
            own = self._lookup(self.collection_name(base, model, user_id),
                               absence_ttl_s=absence_ttl_s)
            if own is not None:
                out.append(_Place(model, own, None))
        return out

    def _target(self, base: str, model_id: str, user_id: str) -> _Place:
        """Where a write goes: the user's own collection if it has one, else its shard."""
        own = self._lookup(self.collection_name(base, model_id, user_id),
                           absence_ttl_s=OWN_TTL_S)
        if own is not None:
            return _Place(model_id, own, None)
        return _Place(model_id, self._shard(base, model_id, user_id), {USER: user_id})

    def _run(self, col: Any, fn: Callable[[Any], T], default: T) -> T:
        """``fn(col)``. A collection dropped meanwhile by another process (the user was
        forgotten, or moved into its shard) reads as empty, or as the collection made again
        since under its name."""
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

    def _write(self, base: str, model_id: str, user_id: str,
               fn: Callable[[_Place], Any]) -> _Place:
        """``fn`` on where the user's writes go; placed again once if that collection was
        dropped meanwhile (an own collection moved back into the shard)."""
        for attempt in (1, 2):
            place = self._target(base, model_id, user_id)
            try:
                with _transient():
                    fn(place)
                return place
            except chromadb.errors.NotFoundError:
                self._forget_cached(place.col.name)
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    @staticmethod
    def _upsert(place: _Place, user_id: str, ids_: list[str], vectors: Sequence[Vector],
                metadatas: list[dict[str, Any]]) -> None:
        """Records written with their user's tag (every record carries it, shared or own)."""
        place.col.upsert(ids=ids_, embeddings=list(vectors),
                         metadatas=[{**m, USER: user_id} for m in metadatas])

    def _update(self, base: str, user_id: str, model_id: str | None, ids_: Sequence[str],
                metadatas: Sequence[dict[str, Any]]) -> None:
        """Partial metadata updates of the user's records, wherever each is held (Chroma's
        ``update`` takes no ``where``: the ids are first checked to be the user's)."""
        wanted = dict(zip(ids_, metadatas, strict=True))
        for place in self._places(base, user_id, model_id, absence_ttl_s=0.0):
            for res in self._by_ids(place, list(wanted), []):
                found = [str(i) for i in res["ids"]]

                def update(c: Any, f: list[str] = found) -> None:
                    c.update(ids=f, metadatas=[wanted[i] for i in f])

                self._run(place.col, update, None)

    def _delete(self, place: _Place, record_ids: Sequence[str]) -> None:
        if record_ids:
            self._run(place.col, lambda c: c.delete(ids=list(record_ids),
                                                    where=place.clause()), None)

    def _forget_cached(self, name: str) -> None:
        self._collections.pop(name, None)

    def _pages(self, place: _Place, where: Where | None, include: list[str]) -> Iterator[Any]:
        """The place's records (the user's, in a shard), ``where`` also holding, in pages."""
        clause = place.clause(*((where,) if where else ()))
        offset = 0
        while True:
            def page(c: Any, at: int = offset) -> Any:
                return c.get(where=clause, limit=PAGE, offset=at, include=include)

            res = self._run(place.col, page, None)
            if not res or not res["ids"]:
                return
            yield res
            if len(res["ids"]) < PAGE:
                return
            offset += PAGE

    def _by_ids(self, place: _Place, record_ids: Sequence[str], include: list[str]
                ) -> Iterator[Any]:
        """The place's records among these ids, in pages (one get of 100k ids exceeds
        SQLite's variable limit inside Chroma)."""
        wanted = list(dict.fromkeys(record_ids))
        for start in range(0, len(wanted), PAGE):
            def get(c: Any, page: list[str] = wanted[start:start + PAGE]) -> Any:
                return c.get(ids=page, where=place.clause(), include=include)

            res = self._run(place.col, get, None)
            if res and len(res["ids"]):
                yield res

    def _count(self, place: _Place) -> int:
        if place.own:
            return int(self._run(place.col, lambda c: c.count(), 0))
        return sum(len(res["ids"]) for res in self._pages(place, None, []))

    def _nearest(self, places: Sequence[_Place], vectors: Sequence[Vector], k: int,
                 include: list[str]) -> list[list[tuple[str, float, Any]]]:
        """Per vector, the k nearest of the places' records as (id, cosine, metadata): an own
        collection by its HNSW index, the user's part of a shard by an exact scan."""
        best: list[dict[str, tuple[float, Any, bool]]] = [{} for _ in vectors]
        for place in places:
            for q, (rid, score, meta) in self._place_nearest(place, vectors, k, include):
                held = best[q].get(rid)
                if held is None or (place.own and not held[2]):
                    best[q][rid] = (score, meta, place.own)
        return [sorted(((rid, s, m) for rid, (s, m, _) in found.items()),
                       key=lambda x: (-x[1], x[0]))[:k] for found in best]

    def _place_nearest(self, place: _Place, vectors: Sequence[Vector], k: int,
                       include: list[str]) -> Iterator[tuple[int, tuple[str, float, Any]]]:
        if place.own:
            def query(c: Any) -> Any:
                return c.query(query_embeddings=list(vectors), n_results=k,
                               include=["distances", *include])

            res = self._run(place.col, query, None)
            if res is None:
                return
            for q in range(len(vectors)):
                metas = res["metadatas"][q] if "metadatas" in include else [None] * len(
                    res["ids"][q])
                for rid, dist, meta in zip(res["ids"][q], res["distances"][q], metas,
                                           strict=True):
                    yield q, (str(rid), 1.0 - float(dist), meta)
            return
        rows: list[str] = []
        held: list[Any] = []
        chunks = []
        for res in self._pages(place, None, ["embeddings", *include]):
            rows.extend(str(i) for i in res["ids"])
            held.extend(res["metadatas"] if "metadatas" in include else [None] * len(
                res["ids"]))
            chunks.append(_unit_rows(res["embeddings"]))
        if not rows:
            return
        scores = _unit_rows(list(vectors)) @ np.concatenate(chunks).T
        for q in range(len(vectors)):
            for j in np.argsort(-scores[q], kind="stable")[:k]:
                yield q, (rows[j], float(scores[q][j]), held[j])

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
            place = self._write(MEMORIES, model, user_id, lambda p: self._upsert(
                p, user_id, [m.id for m, _ in full], [v for _, v in full if v is not None],
                [memory_metadata(m) for m, _ in full]))
            self._grown(MEMORIES, model, user_id, place)
        if meta_only:
            # Same text, same vector: only the metadata changes. The caller knows the records
            # are there (pipeline.service: Chroma is caught up before a plan is made).
            self._update(MEMORIES, user_id, model, [m.id for m in meta_only],
                         [memory_metadata(m) for m in meta_only])

    def similar(self, user_id: str, vectors: Sequence[Vector], model_id: str,
                k: int) -> list[list[tuple[str, float]]]:
        """Ids and similarities of the user's k nearest memories of any status, per vector
        (one request a place for all): vectors only, the graph holds what the memories are."""
        if not vectors:
            return []
        found = self._nearest(self._places(MEMORIES, user_id, model_id), vectors, k, [])
        return [[(rid, score) for rid, score, _ in top] for top in found]

    def stored_hashes(self, user_id: str, memory_ids: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        if not memory_ids:
            return out
        for place in self._places(MEMORIES, user_id):  # own last: it wins
            for res in self._by_ids(place, memory_ids, ["metadatas"]):
                out.update({i: str(m.get("content_hash", "")) for i, m in _rows(res)})
        return out

    def delete_ids(self, user_id: str, memory_ids: Sequence[str]) -> None:
        for place in self._places(MEMORIES, user_id, absence_ttl_s=0.0):
            self._delete(place, memory_ids)

    def index(self, user_id: str) -> dict[str, IndexEntry]:
        """Every memory record of the user (any model), as the index holds it."""
        out: dict[str, IndexEntry] = {}
        for place in self._places(MEMORIES, user_id):  # own last: it wins
            for res in self._pages(place, None, ["metadatas"]):
                for i, meta in _rows(res):
                    held = meta or {}
                    out[i] = IndexEntry(id=i, status=str(held.get("status", "")),
                                        content_hash=str(held.get("content_hash", "")),
                                        model=place.model)
        return out

    def foreign_model(self, user_id: str, model_id: str) -> str | None:
        """An embedding model other than ``model_id`` that this user's records use, if any."""
        # Checked before every plan: a collection of another model found missing is believed
        # missing for as long as the registry of models is (MODELS_TTL_S), not asked again.
        for base in (MEMORIES, EPISODES):
            for model in sorted(self.models() - {model_id}):
                for place in self._places(base, user_id, model, absence_ttl_s=MODELS_TTL_S,
                                          shard_absence_ttl_s=MODELS_TTL_S):
                    def one(c: Any, p: _Place = place) -> Any:
                        return c.get(where=p.clause(), limit=1, include=[])

                    res = self._run(place.col, one, None)
                    if res and res["ids"]:
                        return model
        return None

    def memory_ids(self, user_id: str) -> set[str]:
        """The ids of every memory record the user has (any model), whatever they hold."""
        return {i for place in self._places(MEMORIES, user_id)
                for res in self._pages(place, None, []) for i in res["ids"]}

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
        """Every user with memory records (for all-user jobs): the owners of own collections
        and every user tagged in a memory shard (a scan of the shards' metadata)."""
        out = set()
        for col in self._listing():
            meta = col.metadata or {}
            if meta.get("kind") != MEMORIES:
                continue
            if meta.get("user_id"):
                out.add(str(meta["user_id"]))
            elif "shard" in meta:
                place = _Place(str(meta.get("model", "")), col, None)
                for res in self._pages(place, None, ["metadatas"]):
                    out.update(str(m[USER]) for _, m in _rows(res) if m and m.get(USER))
        return out

    def delete_user(self, user_id: str) -> int:
        """Drops the user's own collections and deletes its shard records; returns records
        gone."""
        deleted = 0
        for base in (MEMORIES, EPISODES):
            for place in self._places(base, user_id, absence_ttl_s=0.0):
                deleted += self._count(place)
                if place.own:
                    self._drop(place.col.name)
                else:
                    def wipe(c: Any, p: _Place = place) -> None:
                        c.delete(where=p.clause())

                    self._run(place.col, wipe, None)
        return deleted

    def _drop(self, name: str) -> None:
        try:
            with _transient():
                self._connect().delete_collection(name)
        except (chromadb.errors.NotFoundError, ValueError):
            pass  # dropped meanwhile by another process: the same outcome
        self._forget_cached(name)
        self._absent[name] = time.monotonic()

    def delete_memory(self, user_id: str, memory_id: str) -> int:
        deleted = 0
        for place in self._places(MEMORIES, user_id, absence_ttl_s=0.0):
            for res in self._by_ids(place, [memory_id], []):
                self._delete(place, list(res["ids"]))
                deleted += len(res["ids"])
        return deleted

    # -- placement --------------------------------------------------------------------------
    def _grown(self, base: str, model_id: str, user_id: str, place: _Place) -> None:
        """After a write into the user's shard: past OWN_AFTER records of this kind, the user
        moves into a collection of its own (the writer holds the user's claim)."""
        if place.own:
            return

        def past(c: Any) -> Any:
            return c.get(where=place.clause(), limit=1, offset=self.own_after, include=[])

        res = self._run(place.col, past, None)
        if res and res["ids"]:
            self.promote(base, model_id, user_id)

    def promote(self, base: str, model_id: str, user_id: str) -> int:
        """The user's shard records of one kind and model into a collection of its own: made,
        filled, then (once every process sees it: OWN_TTL_S) the shard's copies deleted. A
        read meanwhile takes both places; a crash midway leaves both, and the next write
        repeats it. Returns the records moved."""
        own = self._create(self.collection_name(base, model_id, user_id), model_id,
                           {"user_id": user_id, "kind": base, "model": model_id}, HNSW)
        shard = self._lookup(self.shard_name(base, model_id, user_id))
        if shard is None:
            return 0
        source = _Place(model_id, shard, {USER: user_id})
        moved = self._copy(source, _Place(model_id, own, None), user_id)
        time.sleep(OWN_TTL_S)  # every reader now sees the own collection
        copied = [str(i) for res in self._pages(source, None, []) for i in res["ids"]]
        for start in range(0, len(copied), PAGE):  # listed first: deleting moves the pages
            self._delete(source, copied[start:start + PAGE])
        return moved

    def demote(self, base: str, model_id: str, user_id: str) -> int:
        """A small own collection back into the user's shard: copied, then dropped (a reader
        meanwhile takes both places). Returns the records moved."""
        own = self._lookup(self.collection_name(base, model_id, user_id))
        if own is None:
            return 0
        moved = self._copy(_Place(model_id, own, None),
                           _Place(model_id, self._shard(base, model_id, user_id),
                                  {USER: user_id}), user_id)
        self._drop(own.name)
        return moved

    def _batches(self, place: _Place) -> Iterator[Rows]:
        """The place's records (the user's) as stored, (ids, vectors, metadata), in writes of
        WRITE_BATCH: what a copy upserts elsewhere."""
        for res in self._pages(place, None, ["embeddings", "metadatas"]):
            for start in range(0, len(res["ids"]), WRITE_BATCH):
                end = start + WRITE_BATCH
                yield ([str(i) for i in res["ids"][start:end]],
                       [[float(x) for x in v] for v in res["embeddings"][start:end]],
                       [dict(m or {}) for m in res["metadatas"][start:end]])

    def _copy(self, source: _Place, target: _Place, user_id: str) -> int:
        moved = 0
        for rows in self._batches(source):
            def write(c: Any, r: Rows = rows) -> None:
                self._upsert(_Place(target.model, c, target.where), user_id, *r)

            self._run(target.col, write, None)
            moved += len(rows[0])
        return moved

    def relocate(self, user_id: str) -> int:
        """Each kind of the user's records where its size says (the ``relocate`` job, under the
        user's claim): an own collection of at most DEMOTE_AT records into the shard (stores
        written by releases of a collection per user), a shard part past OWN_AFTER into an own
        collection. An own collection kept, made by such a release, gets a new one's
        ``sync_threshold`` (Chroma's write log stays short) and ``ef_search``. Returns the
        records moved."""
        moved = 0
        for base in (MEMORIES, EPISODES):
            for place in self._places(base, user_id, absence_ttl_s=0.0):
                size = self._count(place)
                if place.own and size <= DEMOTE_AT:
                    moved += self.demote(base, place.model, user_id)
                elif place.own:
                    self._tune(place)
                elif size > self.own_after:
                    moved += self.promote(base, place.model, user_id)
        return moved

    def copy_user(self, user_id: str, target: ChromaStores) -> int:
        """Every record of the user (both kinds, every model: vectors and metadata as stored)
        into ``target``, another server, placed by its own layout; idempotent (upserts by id).
        Returns the records copied. The caller holds the user still (workers.shards.move)."""
        copied = 0
        for base in (MEMORIES, EPISODES):
            for place in self._places(base, user_id, absence_ttl_s=0.0):  # shard, then own
                for rows in self._batches(place):
                    def write(p: _Place, r: Rows = rows) -> None:
                        target._upsert(p, user_id, *r)

                    target._write(base, place.model, user_id, write)
                    copied += len(rows[0])
        return copied

    def _tune(self, place: _Place) -> None:
        held = (getattr(place.col, "configuration", None) or {}).get("hnsw") or {}
        if int(held.get("sync_threshold") or 0) > OWN_SYNC or int(
                held.get("ef_search") or 0) < OWN_EF:
            self._run(place.col, lambda c: c.modify(configuration={"hnsw": {
                "sync_threshold": OWN_SYNC, "batch_size": OWN_SYNC, "ef_search": OWN_EF}}),
                None)

    def placement(self, user_id: str) -> dict[str, list[tuple[str, str, int]]]:
        """Per kind, where the user's records are: (model, "own" or "shard", records), for
        each place that holds any."""
        return {base: [(p.model, "own" if p.own else "shard", n)
                       for p in self._places(base, user_id, absence_ttl_s=0.0)
                       if (n := self._count(p))]
                for base in (MEMORIES, EPISODES)}

    # -- lifecycle --------------------------------------------------------------------------
    def memory_vectors(self, user_id: str, model_id: str, memory_ids: Sequence[str]
                       ) -> dict[str, Vector]:
        """The vectors these memories have under ``model_id`` (ids it lacks left out)."""
        out: dict[str, Vector] = {}
        for place in self._places(MEMORIES, user_id, model_id):  # own last: it wins
            for res in self._by_ids(place, memory_ids, ["embeddings"]):
                out.update((str(i), [float(x) for x in v])
                           for i, v in zip(res["ids"], res["embeddings"], strict=True))
        return out

    def unconsolidated_episodes(self, user_id: str, model_id: str, words: Words
                                ) -> list[EpisodeItem]:
        """The user's turns (role user) not yet consolidated, with their vectors, and their
        words from ``words`` (the graph's; a turn it lacks is left out)."""
        vectors: dict[str, tuple[Vector, dict[str, Any]]] = {}
        for place in self._places(EPISODES, user_id, model_id):
            for res in self._pages(place, {"role": "user"}, ["metadatas", "embeddings"]):
                for i, m, v in zip(res["ids"], res["metadatas"], res["embeddings"],
                                   strict=True):
                    f = episode_fields(m)
                    if f.get("consolidated_into"):
                        vectors.pop(i, None)
                    else:
                        vectors[i] = ([float(x) for x in v], f)
        said = words(sorted(vectors)) if vectors else {}
        return [EpisodeItem(id=i, content=said[i].content, vector=v,
                            event_at=_dt(f["event_at"]) or datetime.now(UTC),
                            turn_id=f.get("ref") or f["turn_id"], speaker=said[i].speaker)
                for i, (v, f) in vectors.items() if i in said]

    def mark_episodes(self, user_id: str, episode_ids: list[str], into: str,
                      model_id: str) -> None:
        self._update(EPISODES, user_id, model_id, episode_ids,
                     [{"consolidated_into": into}] * len(episode_ids))

    def migrate(self, user_id: str, embed: Callable[[list[str]], list[Vector]],
                model_id: str, words: Words, batch: int = 256) -> int:
        """Move every episode of the user into ``model_id``'s collections, re-embedded from its
        words (``words``: the graph's), in chunks of ``batch``, and drop the user's memory
        records of other models (the caller wrote them under ``model_id`` first, from the
        graph); returns how many episodes moved. A turn the graph lacks has no words to embed:
        its record goes."""
        moved = 0
        for place in self._places(EPISODES, user_id, absence_ttl_s=0.0):
            if place.model != model_id:
                while count := self._move(user_id, place, embed, model_id, words, batch):
                    moved += count
        for place in self._places(MEMORIES, user_id, absence_ttl_s=0.0):
            if place.model != model_id:
                for res in list(self._pages(place, None, [])):
                    self._delete(place, list(res["ids"]))
        return moved

    def _move(self, user_id: str, source: _Place, embed: Callable[[list[str]], list[Vector]],
              model_id: str, words: Words, batch: int) -> int:
        res = self._run(source.col, lambda c: c.get(where=source.clause(), limit=batch,
                                                    include=["metadatas"]), None)
        if not res or not res["ids"]:
            return 0
        found = [str(i) for i in res["ids"]]
        said = words(found)
        kept = [(i, {**episode_fields(m), "embedding_model": model_id})
                for i, m in _rows(res) if i in said]
        vectors, parts = recall.turn_vectors(embed, [
            (said[i].content, said[i].speaker or f.get("role"),
             _dt(f["event_at"]) or datetime.now(UTC)) for i, f in kept])
        for (_, f), vs in zip(kept, parts, strict=True):  # the passages under the new model
            f.pop("passages", None)
            if vs:
                f["passages"] = pack_passages(vs)
        place = None
        if kept:
            place = self._write(EPISODES, model_id, user_id, lambda p: self._upsert(
                p, user_id, [i for i, _ in kept], vectors,
                [_pack(f, EPISODE_KEYS) for _, f in kept]))
        self._delete(source, found)  # after: a crash repeats
        if place is not None:
            self._grown(EPISODES, model_id, user_id, place)
        return len(found)

    # -- episodes -------------------------------------------------------------------------
    def add(self, user_id: str, session_id: str, turns: Sequence[Turn],
            vectors: Sequence[Vector], model_id: str, now: datetime,
            passages: Sequence[Sequence[Vector]] = ()) -> int:
        if not turns:
            return 0
        episode_ids = [ids.episode_id(user_id, turn_ref(session_id, t.turn_id)) for t in turns]
        around = recall.neighbors(episode_ids)
        metadatas = [episode_metadata(user_id, session_id, t, model_id, now, near,
                                      passages[i] if passages else ())
                     for i, (t, near) in enumerate(zip(turns, around, strict=True))]
        place = None
        for start in range(0, len(turns), WRITE_BATCH):
            def write(p: _Place, s: int = start, e: int = start + WRITE_BATCH) -> None:
                self._upsert(p, user_id, episode_ids[s:e], vectors[s:e], metadatas[s:e])

            place = self._write(EPISODES, model_id, user_id, write)
        if place is not None:
            self._grown(EPISODES, model_id, user_id, place)
        return len(turns)

    def episode_refs(self, user_id: str) -> list[tuple[str, str, datetime]]:
        """Every episode of the user as (session id, turn id, stored at); their words are the
        graph's."""
        found: dict[str, tuple[str, str, datetime]] = {}
        for place in self._places(EPISODES, user_id):  # own last: it wins
            for res in self._pages(place, None, ["metadatas"]):
                for i, m in _rows(res):
                    f = episode_fields(m)
                    found[i] = (str(f["session_id"]), str(f["turn_id"]),
                                _dt(f["created_at"]) or datetime.now(UTC))
        return list(found.values())

    def delete_episodes(self, user_id: str, refs: Sequence[str]) -> None:
        """The episodes of these turns (``<session id>/<turn id>`` references)."""
        if refs:
            wanted = [ids.episode_id(user_id, ref) for ref in refs]
            for place in self._places(EPISODES, user_id, absence_ttl_s=0.0):
                self._delete(place, wanted)

    def search(self, user_id: str, vector: Vector, model_id: str, k: int) -> list[Hit]:
        (top,) = self._nearest(self._places(EPISODES, user_id, model_id), [vector], k,
                               ["metadatas"])
        q = _unit_rows([vector])[0]
        hits = []
        for i, score, m in top:
            f = episode_fields(m)
            hits.append(Hit(  # no words: the graph's (TextIndex.turns)
                id=i, type="episode", content="", score=_turn_cosine(score, f, q),
                event_at=_dt(f["event_at"]) or datetime.min.replace(tzinfo=UTC),
                created_at=_dt(f["created_at"]) or datetime.min.replace(tzinfo=UTC),
                source_turn_ids=[f.get("ref") or f["turn_id"]],
                role=f["role"], neighbors=tuple(f.get("neighbors") or ())))
        return sorted(hits, key=lambda h: (-h.score, h.id))

    def cosines(self, user_id: str, record_ids: Sequence[str], vector: Vector, model_id: str,
                *, memories: bool = False) -> dict[str, float]:
        """The exact cosine of ``vector`` to each of these records (episodes, or memories) that
        the user has under ``model_id``, in one request a place: what a candidate found by
        BM25 alone scores on the dense signal (a turn's: the best of its own vector's and its
        passages')."""
        out: dict[str, float] = {}
        if not record_ids:
            return out
        q = _unit_rows([vector])[0]
        include = ["embeddings"] if memories else ["embeddings", "metadatas"]
        for place in self._places(MEMORIES if memories else EPISODES, user_id, model_id):
            for res in self._by_ids(place, record_ids, include):
                whole = _unit_rows(res["embeddings"]) @ q
                if memories:
                    out.update({str(i): float(c) for i, c in zip(res["ids"], whole, strict=True)})
                    continue
                out.update({str(i): _turn_cosine(float(c), episode_fields(m), q) for i, c, m in
                            zip(res["ids"], whole, res["metadatas"], strict=True)})
        return out

    def count_episodes(self, user_id: str) -> int:
        return sum(self._count(p) for p in self._places(EPISODES, user_id))
