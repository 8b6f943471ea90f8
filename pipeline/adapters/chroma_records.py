"""What one of memq's Chroma records holds, and how it is read back.

A record's layout is one concern apart from where the record is placed (``chroma_layout``):
the memory and episode indexes write and read through these functions, the tests and the
scrub check records against them, and a change of layout is a change here alone.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ...schemas import StoredMemory, Turn, turn_ref
from .. import ids
from ..errors import PermanentError
from ..ports import Hit, Vector

# episode ids -> those turns with their words (the graph's: TextIndex.turns)
Words = Callable[[list[str]], dict[str, Hit]]


def _ts(value: datetime | None) -> float:
    return value.timestamp() if value else -1.0


def _dt(value: Any) -> datetime | None:
    return None if value is None or float(value) < 0 else datetime.fromtimestamp(float(value), UTC)


# Record layout. A memory's record is an index entry: its vector, the content hash the vector
# is of and the memory's status (what a memory is, the graph says). An episode's: a few
# top-level metadata keys (EPISODE_KEYS: the ones a ``where`` may filter on) and
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
EPISODE_KEYS = ("role",)
WORDS = ("content", "speaker", "metadata")
# No state either: which turns consolidation has used, and into what, is the graph's
# (``Episode.consolidated_into``). Records written before the graph held it may carry this
# top-level key (a memory id, no words): it is still read, and a re-embedding carries it
# over, so that such a turn is not consolidated twice (``jobs.unconsolidated_episodes``
# copies it into the graph); nothing else writes it.
LEGACY_CONSOLIDATED = "consolidated_into"


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
    even from a record written before they left: see WORDS), and an old record's
    consolidation mark (LEGACY_CONSOLIDATED)."""
    return {k: v for k, v in _unpack(meta, (*EPISODE_KEYS, LEGACY_CONSOLIDATED)).items()
            if k not in WORDS}


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
    for MiniLM, cosines close to float32's)."""
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
