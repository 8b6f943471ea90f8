"""The memory index on Chroma (``MemoryStore``): a memory's vector, content hash and status
per record; what a memory is, the graph says. A write into the user's shard may move the user
into a collection of its own (``chroma_moves``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ...schemas import StoredMemory
from ..ports import IndexEntry, Vector
from .chroma_layout import (
    MEMORIES,
    USER,
    WRITE_BATCH,
    _Place,
    _transient,
)
from .chroma_moves import ChromaMoves
from .chroma_records import _rows, memory_metadata


class ChromaMemories(ChromaMoves):
    """Implements MemoryStore."""

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

    def memory_ids(self, user_id: str) -> set[str]:
        """The ids of every memory record the user has (any model), whatever they hold."""
        return {i for place in self._places(MEMORIES, user_id)
                for res in self._pages(place, None, []) for i in res["ids"]}

    def delete_memory(self, user_id: str, memory_id: str) -> int:
        deleted = 0
        for place in self._places(MEMORIES, user_id, absence_ttl_s=0.0):
            for res in self._by_ids(place, [memory_id], []):
                self._delete(place, list(res["ids"]))
                deleted += len(res["ids"])
        return deleted

    def memory_vectors(self, user_id: str, model_id: str, memory_ids: Sequence[str]
                       ) -> dict[str, Vector]:
        """The vectors these memories have under ``model_id`` (ids it lacks left out)."""
        out: dict[str, Vector] = {}
        for place in self._places(MEMORIES, user_id, model_id):  # own last: it wins
            for res in self._by_ids(place, memory_ids, ["embeddings"]):
                out.update((str(i), [float(x) for x in v])
                           for i, v in zip(res["ids"], res["embeddings"], strict=True))
        return out

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
