"""Where memq's Chroma records live: **users share a fixed set of collections until they
grow; a large user gets collections of its own**; one set per kind and embedding model. This
module names the collections, connects, looks them up and registers the models in use, and
gives every read and write its place (``_Place``, with the user's clause); what a record holds
is ``chroma_records``, the indexes over the places ``chroma_memories`` and ``chroma_episodes``,
moving a user between places ``chroma_moves``; ``chroma.ChromaStores`` puts them together.

- **Shared** (``memq_memories-s<k>``, ``memq_episodes-s<k>``, k < SHARDS): a user's records
  live in the shard its id hashes to, each tagged with its user. A user's nearest neighbours
  are an *exact* cosine scan of its own records (``get`` with ``where user``, then numpy), so a
  selective filter never starves an approximate search, and every read carries the user's
  clause (one helper, ``_Place``): a read cannot reach another user's records. The number of
  collections stays fixed as users come, so Chroma's memory, open files and write log do not
  grow with them (each collection costs Chroma memory and open files of its own;
  ``scripts/bench layout`` compares the layouts).
- **Own** (``memq_memories-u<hash>``, ``memq_episodes-u<hash>``): when a user's shard holds more
  than OWN_AFTER records of a kind, they move into a collection of the user's own, queried
  unfiltered by HNSW (an exact scan's cost grows with every record it reads). Collections
  written by earlier releases (one per user) are own collections; ``relocate`` moves small ones
  into their shard. A read takes the union of both places (own wins on an id held twice), so
  a record is never missing while it moves: it is copied before it is deleted.
- Per model: vectors of two models never meet in one index (they may not even share a
  dimension); another model's collections carry its name as a suffix. The models in use are
  listed in a tiny registry collection (``memq_models``).
- Forgetting a user drops their own collections and deletes their records from the shards.
- **No words**: a record holds ids, times, a role and vectors; a turn's text, speaker and
  metadata are the graph's (``chroma_records``: why Chroma must never see them).

Vectors are always passed explicitly (Chroma's default embedding function would fetch a model
from the network), in cosine space.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Self, TypeVar

import chromadb
import chromadb.errors
import httpx
import numpy as np

from ..errors import TransientError
from ..ports import Vector
from .chroma_records import _unit_rows

T = TypeVar("T")
Where = dict[str, Any]

# ef_search: an own collection is queried unfiltered, so no filter starves the search. Own
# collections are only the large users' (past OWN_AFTER records); on the hard case for HNSW
# (random unit vectors, top 10 against an exact scan) recall still rose from 256 to 512 at a
# small cost in latency, hence 512 (scripts/bench dedupe measures the clustered case).
# sync_threshold: Chroma keeps every record not yet persisted into a collection's index in its
# SQLite write log, and each write reads past the whole log (every collection's rows: its only
# index is the sequence number). Persisting every 20 (shards) or 100 (own) records keeps the
# log short whatever the number of users, without touching Chroma's schema.
OWN_SYNC, OWN_EF = 100, 512
HNSW = {"hnsw": {"space": "cosine", "ef_construction": 200, "ef_search": OWN_EF,
                 "sync_threshold": OWN_SYNC, "batch_size": OWN_SYNC}}
# A shard is never searched by HNSW (reads scan the user's records exactly), so its graph is
# kept cheap to build: with Chroma's defaults (whose write log held every record of
# collections under 1,000) a shard write cost Chroma several times the CPU
# (scripts/bench layout).
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


def _and(*clauses: Where) -> Where | None:
    return None if not clauses else clauses[0] if len(clauses) == 1 else {"$and": list(clauses)}


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


class ChromaLayout:
    """The places of a user's records on one Chroma client, and the reads and writes every
    index makes of a place."""

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
    def connect(cls, host: str, port: int) -> Self:
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
