"""Episodes: a user's raw turns with their words (Neo4j holds them; Chroma only their vectors),
written beside the extraction and read back by reference, by episode id and by position in
their session; and which of them consolidation has used, and into what (the graph's state,
as the rest of the user's).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ....schemas import Turn, turn_ref
from ... import ids, recall
from ...ports import Hit
from .records import _episode_hit, _iso, _time
from .session import Neo4jSession, _transient, cypher, fenced_version


class Neo4jEpisodes(Neo4jSession):
    """The episodes' part of GraphStore and TextIndex."""

    def add_episodes(self, user_id: str, session_id: str, turns: Sequence[Turn],
                     now: datetime) -> int:
        if not turns:
            return 0
        key = recall.user_key(user_id)
        rows = []
        episode_ids = [ids.episode_id(user_id, turn_ref(session_id, t.turn_id)) for t in turns]
        for i, (t, near) in enumerate(zip(turns, recall.neighbors(episode_ids), strict=True)):
            ref = turn_ref(session_id, t.turn_id)
            previous = recall.replied_to(turns, i)
            rows.append({"id": episode_ids[i], "props": {
                "user_id": user_id, "user_key": key, "session_id": session_id, "ref": ref,
                "text": t.content, "role": t.role, "speaker": t.speaker,
                "search_text": recall.search_text(t.content, t.speaker, previous, t.timestamp),
                "neighbors": near,
                "metadata_json": json.dumps(t.metadata, ensure_ascii=False, sort_keys=True)
                if t.metadata else None,
                "event_at": _iso(t.timestamp), "created_at": _iso(now)}})
        self._run("add_episodes", episodes=rows)
        return len(rows)

    def latest_turn(self, user_id: str, prefix: str) -> dict[str, Any] | None:
        """The newest turn whose reference starts with ``prefix``: ref, text, metadata (a
        dict), created_at and event_at (datetimes); None when there is none."""
        rows = self._run("latest_episode", user_id=user_id, prefix=prefix)
        if not rows:
            return None
        row = rows[0]
        return {"ref": row["ref"], "text": row["text"],
                "metadata": json.loads(row["metadata"]) if row["metadata"] else {},
                "created_at": _time(row["created_at"]), "event_at": _time(row["event_at"])}

    def turn_refs(self, user_id: str, prefix: str) -> list[str]:
        return sorted(str(r["ref"]) for r in self._run("episode_refs", user_id=user_id,
                                                         prefix=prefix))

    def turn_metadata(self, user_id: str, refs: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The metadata the producer gave these turns (``<session>/<turn>``), those that had
        any."""
        if not refs:
            return {}
        wanted = sorted({ids.episode_id(user_id, ref) for ref in refs})
        return {str(r["ref"]): json.loads(r["metadata"]) for r in self._run(
            "turn_metadata", user_id=user_id, ids=wanted)}

    def episodes(self, user_id: str, refs: Sequence[str]) -> list[Hit]:
        """These turns of the user (``<session>/<turn>``), as stored, by event time; a ref
        that names no turn of the user is left out."""
        if not refs:
            return []
        wanted = sorted({ids.episode_id(user_id, ref) for ref in refs})
        return [_episode_hit(r) for r in self._run("episodes_by_ref", user_id=user_id,
                                                   ids=wanted)]

    def turns(self, user_id: str, episode_ids: Sequence[str]) -> dict[str, Hit]:
        """These turns of the user by episode id, with their words (TextIndex.turns)."""
        if not episode_ids:
            return {}
        return {str(r["id"]): _episode_hit(r) for r in self._run(
            "episodes_by_ref", user_id=user_id, ids=sorted(set(episode_ids)))}

    def unconsolidated_turns(self, user_id: str) -> list[Hit]:
        """The user's turns of role user not yet consolidated, with their words, by event
        time (GraphStore.unconsolidated_turns)."""
        return [_episode_hit(r) for r in self._run("unconsolidated_turns", user_id=user_id)]

    def mark_consolidated(self, user_id: str, marks: Mapping[str, str], *,
                          expected: int | None) -> int:
        """These turns marked consolidated into their memories, fenced on the user's version
        (mark_consolidated.cypher says why); returns the new version, raises StaleVersion
        (nothing marked) when the user moved on since ``expected``."""
        found = self._run("mark_consolidated", user_id=user_id, expected=expected,
                          marks=[{"id": i, "into": into} for i, into in sorted(marks.items())])
        return fenced_version(found, user_id, f"the consolidation read it at {expected}")

    def delete_episodes(self, user_id: str, refs: Sequence[str]) -> int:
        wanted = [ids.episode_id(user_id, ref) for ref in refs]
        if not wanted:
            return 0
        self.ensure_schema()
        with _transient(), self._session() as session:
            record = session.execute_write(lambda tx: tx.run(
                cypher("delete_episodes"), user_id=user_id, ids=wanted).single())
        return int(record["n"]) if record else 0

    def turns_before(self, user_id: str, episode_ids: Sequence[str]) -> dict[str, Hit]:
        """The turn before each of these episodes in its session, by the episode's id."""
        if not episode_ids:
            return {}
        return {str(r["of"]): _episode_hit(r)
                for r in self._run("turns_before", user_id=user_id, ids=list(episode_ids))}
