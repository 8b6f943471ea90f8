"""The state of record read back: a user's memories, their audit trail and facts, the Memory
nodes as ``memq check`` compares them; and a recall's importance bump, the one unfenced write.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import neo4j

from ....schemas import AuditEntry, StoredMemory
from ... import ids
from ...check import GraphMemory
from .records import _audit_row, _graph_memory, _native, stored_memory
from .session import Neo4jSession, _transient, cypher


class Neo4jMemories(Neo4jSession):
    """The reads of GraphStore (and TextIndex.get)."""

    def read_memories(self, user_id: str, *, include_inactive: bool = False,
                      as_of: datetime | None = None,
                      exclude: Sequence[str] = ()) -> list[StoredMemory]:
        """The user's memories from the state of record (ordered by valid time, then id):
        current ones, every one (``include_inactive``), or those true at ``as_of``; never
        those of ``exclude``."""
        return [stored_memory(r["m"]) for r in self._run(
            "read_memories", user_id=user_id, all=include_inactive,
            as_of=as_of.isoformat() if as_of is not None else None, exclude=list(exclude))]

    def get(self, user_id: str, memory_ids: Sequence[str]) -> list[StoredMemory]:
        if not memory_ids:
            return []
        return [stored_memory(r["m"]) for r in
                self._run("get_memories", user_id=user_id, ids=list(memory_ids))]

    def exact(self, user_id: str, contents: Sequence[str]) -> dict[str, StoredMemory]:
        """Current memories with the same normalised text, by content hash."""
        hashes = sorted({ids.content_hash(c) for c in contents})
        if not hashes:
            return {}
        found = [stored_memory(r["m"]) for r in
                 self._run("exact_memories", user_id=user_id, hashes=hashes)]
        return {ids.content_hash(m.content): m for m in sorted(found, key=lambda m: m.id)}

    def record_access(self, user_id: str, memories: Sequence[StoredMemory],
                      audit: Sequence[AuditEntry] = ()) -> None:
        """A recall's new importance and last access, with its audit entries, in one
        transaction (not fenced: it cannot undo a concurrent change, see the Cypher)."""
        rows = [{"id": m.id, "importance": m.importance, "last_accessed_at": m.last_accessed_at}
                for m in memories]
        entries = [_audit_row(e, seq) for seq, e in enumerate(audit)]

        def work(tx: neo4j.ManagedTransaction) -> None:
            tx.run(cypher("record_access"), user_id=user_id, memories=rows).consume()
            if entries:
                tx.run(cypher("upsert_audit"), user_id=user_id, entries=entries).consume()

        with _transient(), self._session() as session:
            session.execute_write(work)

    def owner(self, memory_id: str) -> str | None:
        """The user whose memory this is, if any."""
        rows = self._run("memory_owner", memory_id=memory_id)
        return str(rows[0]["user_id"]) if rows else None

    def audit(self, user_id: str, memory_id: str | None = None, *,
              batch_ids: Sequence[str] | None = None) -> list[AuditEntry]:
        entries = []
        for row in self._run("audit", user_id=user_id, memory_id=memory_id,
                             batch_ids=list(batch_ids) if batch_ids is not None else None):
            props = {k: _native(v) for k, v in row["entry"].items() if k != "seq"}
            for key in ("before", "after"):
                props[key] = json.loads(props[key]) if props.get(key) else None
            entries.append(AuditEntry.model_validate(props))
        return entries

    def facts(self, user_id: str) -> list[dict[str, Any]]:
        return [{k: _native(v) for k, v in row.items()}
                for row in self._run("facts", user_id=user_id)]

    def memories(self, user_id: str) -> list[GraphMemory]:
        """The user's Memory nodes as they are, with their open and closed FACT edges."""
        return [_graph_memory(r) for r in self._run("memories", user_id=user_id)]
