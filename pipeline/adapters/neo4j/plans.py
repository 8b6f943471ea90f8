"""A plan's way into the graph: the user's version (the fence of every write), what a plan is
made from (``plan_view``, ``near_current``), its one fenced write (``apply``), and how far
Chroma holds the graph (``mark_projected``, ``changed_since``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from ....schemas import AuditEntry, StoredMemory
from ... import ids
from ...ports import PlanView, SlotHolder, UserVersion
from .records import _audit_row, _fact_rows, _memory_row, _time, stored_memory
from .session import Neo4jSession, fenced_version


class Neo4jPlans(Neo4jSession):
    """The write path's part of GraphStore."""

    # -- the user's version: the fence of every write ----------------------------------------
    def version(self, user_id: str) -> UserVersion:
        (row,) = self._run("user_version", user_id=user_id)
        return UserVersion(version=int(row["version"]), projected=int(row["projected"]))

    def apply(self, user_id: str, memories: Sequence[StoredMemory],
              audit: Sequence[AuditEntry], now: datetime, *, expected: int | None) -> int:
        """Write a plan in one transaction fenced on the user's version: it commits only if the
        version is still ``expected`` (the one the plan was made from; None: any) and moves it
        on by one. Returns the new version; raises StaleVersion (nothing written) otherwise."""
        rows = [_memory_row(m) for m in memories]
        facts = [f for m in memories for f in _fact_rows(m)]
        entries = [_audit_row(e, seq) for seq, e in enumerate(audit)]
        found = self._run("apply_plan", user_id=user_id, expected=expected, now=now,
                          memories=rows, facts=facts, entries=entries)
        return fenced_version(found, user_id, f"the plan was made at {expected}")

    def mark_projected(self, user_id: str, version: int, *, if_at: int | None = None) -> int:
        rows = self._run("mark_projected", user_id=user_id, version=version, if_at=if_at)
        return int(rows[0]["version"]) if rows else 0

    def plan_view(self, user_id: str, *, batch_ids: Sequence[str],
                  slots: Sequence[tuple[str, str]], memory_ids: Sequence[str],
                  contents: Sequence[str], ends: Sequence[tuple[str, str]] = ()) -> PlanView:
        (row,) = self._run(
            "plan_view", user_id=user_id, batch_ids=list(batch_ids),
            slots=[{"subject_key": ids.entity_key(s), "predicate": p} for s, p in slots],
            ends=[{"subject_key": ids.entity_key(s), "predicate": p} for s, p in ends],
            ids=list(memory_ids), hashes=sorted({ids.content_hash(c) for c in contents}))
        exact = {ids.content_hash(m.content): m for m in sorted(
            (stored_memory(m) for m in row["exact"]), key=lambda m: m.id)}
        memories = {m.id: m for m in (stored_memory(m) for m in row["memories"])}
        holders = [SlotHolder(memory_id=h["memory_id"], subject=h["subject"],
                              predicate=h["predicate"], object=h["object"],
                              valid_at=_time(h["valid_at"]))
                   for h in sorted(row["holders"], key=lambda h: (
                       h["memory_id"], h["subject"], h["predicate"], h["object"]))]
        return PlanView(version=UserVersion(version=int(row["version"]),
                                            projected=int(row["projected"])),
                        applied=frozenset(str(b) for b in row["applied"]), holders=holders,
                        memories=memories, exact=exact,
                        enders=sorted(str(e) for e in row["enders"]),
                        ended=sorted(str(e) for e in row["ended"]))

    def near_current(self, user_id: str, near: Sequence[Sequence[str]],
                     k: int) -> list[StoredMemory]:
        if not any(near):
            return []
        (row,) = self._run("near_current", user_id=user_id, near=[list(top) for top in near],
                           k=k)
        return [stored_memory(m) for m in row["memories"]]

    def changed_since(self, user_id: str, version: int) -> list[StoredMemory]:
        return [stored_memory(r["m"]) for r in
                self._run("changed_since", user_id=user_id, since=version)]
