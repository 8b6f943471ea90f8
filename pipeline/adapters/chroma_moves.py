"""Moving a user's Chroma records between places: into a collection of its own when its
shard part grows (``promote``, after any write), back into the shard when small
(``demote``, the ``relocate`` job), to another server (``copy_user``, a shard move) and into
another embedding model's collections (``migrate``, reembed). Apart from the indexes because
a move has its own rule, whatever it moves: copy first, delete after, so that a reader taking
both places never misses a record and a crash midway is repeated, not lost.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from .. import recall
from ..ports import Vector
from .chroma_layout import (
    DEMOTE_AT,
    EPISODES,
    HNSW,
    MEMORIES,
    OWN_EF,
    OWN_SYNC,
    OWN_TTL_S,
    PAGE,
    USER,
    WRITE_BATCH,
    ChromaLayout,
    _Place,
)
from .chroma_records import (
    EPISODE_KEYS,
    Words,
    _dt,
    _pack,
    _rows,
    episode_fields,
    pack_passages,
)

Rows = tuple[list[str], list[Vector], list[dict[str, Any]]]  # ids, vectors, metadata


class ChromaMoves(ChromaLayout):
    """Placement by size and the copies between places, servers and models."""

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

    def copy_user(self, user_id: str, target: ChromaLayout) -> int:
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
