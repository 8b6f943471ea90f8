"""Search's reads of the graph (TextIndex): BM25 over memories and raw turns through the
full-text indexes, and what is no longer true (``changed``).
"""

from __future__ import annotations

from ....schemas import StoredMemory
from ... import recall
from ...ports import Changed, Hit
from .records import _changed, _episode_hit, stored_memory
from .session import Neo4jSession


class Neo4jSearch(Neo4jSession):
    """TextIndex's search."""

    def search_episodes(self, user_id: str, query: str, k: int, *,
                        field: str = "search_text") -> list[Hit]:
        """Up to k of the user's raw turns by BM25 (Lucene); none for a query of no words.
        ``field``: as searched (``search_text``), or ``text`` / ``text+speaker`` for plain
        keyword search over the raw turns (the benchmarks' baseline)."""
        lucene = recall.lucene_query(user_id, query, field=field)
        if lucene is None:
            return []
        return [_episode_hit(r) for r in
                self._run("episode_text", user_id=user_id, query=lucene, k=k)]

    def search_text(self, user_id: str, query: str, k: int
                    ) -> tuple[list[tuple[StoredMemory, float]], list[Hit], Changed]:
        """What search needs from the graph in one round trip: up to k memories and up to k
        raw turns by BM25 (as ``search_episodes``), and what is no longer true
        (``changed``)."""
        memory_query = recall.lucene_query(user_id, query, field="content")
        episode_query = recall.lucene_query(user_id, query)
        if memory_query is None or episode_query is None:  # no words: no BM25
            return [], [], self.changed(user_id)
        (row,) = self._run("search_text", user_id=user_id, memory_query=memory_query,
                           episode_query=episode_query, k=k)
        memories = [(stored_memory(r["m"]), float(r["score"]))
                    for r in sorted(row["memories"], key=lambda r: -r["score"])]
        episodes = [_episode_hit(r)
                    for r in sorted(row["episodes"], key=lambda r: -r["score"])]
        return memories, episodes, _changed(row)

    def changed(self, user_id: str) -> Changed:
        """What is no longer true: superseded memories, the turns that stated them, and the
        current memory that holds each one's place now."""
        (row,) = self._run("superseded_sources", user_id=user_id)
        return _changed(row)
