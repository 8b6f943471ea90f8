"""The episode index on Chroma (``EpisodeStore``): a turn's vector, its passages' and its
ids, times and role, never its words nor its state (which turns were consolidated): both
are the graph's. A turn's cosine is the best of its own vector's and its passages'. A write
into the user's shard may move the user into a collection of its own (``chroma_moves``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from ...schemas import Turn, turn_ref
from .. import ids, recall
from ..ports import EpisodeVector, Hit, Vector
from .chroma_layout import EPISODES, MEMORIES, WRITE_BATCH, _Place
from .chroma_moves import ChromaMoves
from .chroma_records import (
    LEGACY_CONSOLIDATED,
    _dt,
    _rows,
    _turn_cosine,
    _unit_rows,
    episode_fields,
    episode_metadata,
)


class ChromaEpisodes(ChromaMoves):
    """Implements EpisodeStore."""

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

    def episode_vectors(self, user_id: str, model_id: str, episode_ids: Sequence[str]
                        ) -> dict[str, EpisodeVector]:
        """The vectors these turns have under ``model_id`` (ids it lacks left out), each with
        the consolidation mark an old record may carry (``EpisodeVector.legacy_into``)."""
        out: dict[str, EpisodeVector] = {}
        for place in self._places(EPISODES, user_id, model_id):  # own last: it wins
            for res in self._by_ids(place, episode_ids, ["embeddings", "metadatas"]):
                for i, m, v in zip(res["ids"], res["metadatas"], res["embeddings"],
                                   strict=True):
                    into = episode_fields(m).get(LEGACY_CONSOLIDATED)
                    out[str(i)] = EpisodeVector([float(x) for x in v],
                                                str(into) if into else None)
        return out
