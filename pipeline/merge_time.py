"""When a fact holds: the rules of world time a plan applies besides a slot's timeline
(``timeline.place``). Pure: no store, no clock.

A change said with an earlier time holds from then (``_dated``); a change ends the facts it
names as replaced (``replaced``, matched by ``_same_fact``; ``ended_on`` is what the graph keeps
of them on the change's edge) and, through ``Predicates.closes_with``, its dependent facts
(``dependents``); a dependent fact said again after the change that ended it holds on
(``_reopen``, ``_restated``). Each rule gives the same outcome whatever order a user's
statements arrive in.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from itertools import pairwise

from ..schemas import Operation, Status, StoredMemory, Triple
from .merge_plan import PlanBuilder, Prepared


class TimeRules(PlanBuilder):
    """The time rules, over the plan being made."""

    def _restated(self, p: Prepared, target: StoredMemory, triple: Triple) -> None:
        """A dependent fact said again later keeps when (its employer's change, arriving
        later, does not end what was said after it)."""
        said = p.candidate.said_at or p.candidate.valid_at
        held = self._view(target)
        if not self._dependent(triple) or said <= _last_said(held):
            return
        again = held.with_changes(restated_at=said, updated_at=self.ctx.now)
        self._put(again, None)

    def _reopen(self, p: Prepared, triple: Triple, timeline: list[StoredMemory]
                ) -> str | None:
        """A dependent fact said again after its employer's change ended it holds on: the
        ended span is reopened (as when the statement arrived before the change)."""
        if not self._dependent(triple):
            return None
        t = p.candidate.valid_at
        spans = sorted((self._view(m) for m in timeline if self._view(m).valid_at <= t),
                       key=lambda m: (m.valid_at, m.id))
        last = spans[-1] if spans else None
        if (last is None or last.is_current or last.invalid_at is None
                or last.invalid_at > t or last.superseded_by in {m.id for m in timeline}
                or not any(h.slot == triple.slot and h.object.casefold()
                           == triple.object.casefold() for h in last.triples)):
            return None
        reopened = last.with_changes(status=Status.CURRENT, invalid_at=None, superseded_by=None,
                                     restated_at=t, updated_at=self.ctx.now)
        self._put(reopened, None)
        self._log(Operation.UPDATE, last.id, p.candidate,
                  f"said again after the change that ended it ({triple.predicate} = "
                  f"{triple.object!r})", last, reopened)
        return last.id

    @staticmethod
    def _ended_too_soon(m: StoredMemory, said: Triple, at: datetime,
                        memories: Sequence[StoredMemory]) -> bool:
        """A dependent fact that a change ended (superseded by a memory of another slot), is
        the last of its slot, and was said after the slot's last change as it is now known
        (a change known earlier, from a statement applied before the ones that moved it)."""
        if m.is_current or m.superseded_by is None or _last_said(m) < at:
            return False
        mine = [x for x in memories if any(t.slot == said.slot for t in x.triples)]
        later = [x for x in mine if x.id != m.id and x.valid_at > m.valid_at]
        return not later and m.superseded_by not in {x.id for x in mine}

    def _reopen_span(self, p: Prepared, m: StoredMemory, said: Triple) -> None:
        reopened = m.with_changes(status=Status.CURRENT, invalid_at=None, superseded_by=None,
                                  updated_at=self.ctx.now)
        self._put(reopened, None)
        self._log(Operation.UPDATE, m.id, p.candidate,
                  f"said after the change that ended it ({said.predicate} = {said.object!r})",
                  m, reopened)

    def dependents(self, prepared: Sequence[Prepared]) -> None:
        """A change of a predicate's value also ends the current facts of its dependent
        predicates held since before it (``Predicates.closes_with``): a new employer, or
        leaving one, ends the role held there; a promotion changes the role only. Computed
        from the slots' timelines after the plan's other decisions, so the outcome is the
        same whatever order the statements arrive in: the last change of the slot is the
        later of its spans' changes of object and its ends, and whatever dependent fact is
        current and older than it is closed then, superseded by the memory that changed it."""
        if not prepared:
            return
        seen: dict[str, StoredMemory] = {}
        for p in prepared:
            seen.update({m.id: self._view(m) for m in p.slot_memories})
        seen.update(self.state)
        memories = [m for m in seen.values() if m.status is not Status.ARCHIVED]
        for master, wanted in self.predicates.closes_with.items():
            for subject in {t.subject.casefold() for m in memories for t in m.triples
                            if t.predicate == master}:
                last = _last_change(memories, master, subject)
                if last is None:
                    continue
                at, by = last
                for old in sorted(memories, key=lambda m: m.id):
                    said = next((t for t in old.triples if t.predicate in wanted
                                 and t.subject.casefold() == subject), None)
                    now = self._view(old)
                    if said is None:
                        continue
                    if now.is_current and now.valid_at < at and _last_said(now) <= at:
                        self._close_at(prepared[-1], now, by, at, f"{said.predicate}: "
                                       f"{said.object!r} ends with the change of {master}")
                    elif self._ended_too_soon(now, said, at, memories):
                        self._reopen_span(prepared[-1], now, said)

    def replaced(self, p: Prepared, successor: str | None) -> None:
        """A change ends the facts it names as replaced ("switched from MySQL"): the current
        memories stating them, older by event time, are superseded by ``successor`` (the
        memory that now states the candidate: new, extended or the duplicate it met)."""
        gone, cand = p.candidate.replaces, p.candidate
        if not gone or successor is None:
            return
        new = next((t.object for t in cand.triples), cand.content)
        holders = {m.id: self._view(m) for m in p.slot_memories}
        holders.update({mid: self.state[mid] for mid in self.added})
        for old in sorted(holders.values(), key=lambda m: m.id):
            said = next((t for t in old.triples for g in gone if _same_fact(t, g)), None)
            if (said is None or old.id == successor or not old.is_current
                    or old.valid_at > cand.valid_at):
                continue
            self._close(p, old, successor, f"{said.predicate}: {said.object!r} replaced by "
                                           f"{new!r}")

    def _dated(self, p: Prepared) -> Prepared:
        """A change said with an earlier time ("moved to Stockholm in January", said in
        April) holds from that time, or from just after the last statement of another value
        of its slot made before it was said, whichever is later: that statement ("I live in
        Lyon", said in February) was older knowledge than the change, and never outlives it."""
        cand = p.candidate
        slots = {t.slot: t.object.casefold() for t in cand.triples
                 if self.predicates.is_single(t.predicate)}
        slots.update({t.slot: "" for t in cand.replaces if t.slot not in slots})
        holders = {m.id: self._view(m) for m in p.slot_memories}
        holders.update({mid: self.state[mid] for mid in self.added})
        other = [m for m in holders.values() if any(
            t.slot in slots and t.object.casefold() != slots[t.slot] for t in m.triples)]
        said = cand.said_at or cand.valid_at
        inside = [m.valid_at for m in other if cand.valid_at < m.valid_at <= said]
        if inside:
            later = cand.model_copy(update={"valid_at": max(inside) + timedelta(seconds=1)})
            return p.model_copy(update={"candidate": later})
        # the other way round: this statement was said before a dated change was, inside the
        # span that change is dated in ("We use MySQL", applied after "switched from MySQL
        # last month" though said before it): the change now holds from just after it, as
        # when they arrive in order
        for m in other:
            if m.is_current and m.valid_at < cand.valid_at <= (m.said_at or m.valid_at):
                moved = m.with_changes(valid_at=cand.valid_at + timedelta(seconds=1),
                                       updated_at=self.ctx.now)
                self._put(moved, None)
                self._log(Operation.UPDATE, m.id, cand, "a dated change holds from after "
                          "what was said before it was said", m, moved)
        return p


def _last_said(m: StoredMemory) -> datetime:
    """The last time a memory's fact is known to have been said."""
    return max(t for t in (m.valid_at, m.restated_at, m.said_at) if t is not None)


def _last_change(memories: Sequence[StoredMemory], predicate: str, subject: str
                 ) -> tuple[datetime, str] | None:
    """When the slot (``subject``, ``predicate``) last changed, and the memory that changed
    it: a span followed by one of another object changes at that one's start; a span closed
    by something else (leaving a job) ends at its end."""
    def held(m: StoredMemory) -> str | None:
        return next((t.object.casefold() for t in m.triples if t.predicate == predicate
                     and t.subject.casefold() == subject), None)

    spans = sorted((m for m in memories if held(m) is not None), key=lambda m: (m.valid_at, m.id))
    changes: list[tuple[datetime, str]] = []
    for before, after in pairwise(spans):
        if held(before) != held(after):
            changes.append((after.valid_at, after.id))
    for span in spans:
        nxt = next((m for m in spans if m.valid_at > span.valid_at), None)
        if (span.invalid_at is not None and span.superseded_by is not None
                and (nxt is None or span.superseded_by != nxt.id)
                and span.superseded_by not in {m.id for m in spans}):
            changes.append((span.invalid_at, span.superseded_by))
    return max(changes) if changes else None


def ended_on(memory: StoredMemory, triple: Triple) -> list[str]:
    """The objects of the facts ``memory``'s change ended on the slot of one of its own
    ``triple``s ("uses": MySQL, for "switched from MySQL to Postgres"): what the graph keeps on
    that triple's edge, so a plan finds the memory by the slot of a late statement."""
    return [g.object for g in memory.replaces if g.slot == triple.slot]


def _same_fact(stated: Triple, replaced: Triple) -> bool:
    """Whether a stored triple is the one a change names as replaced: same subject and
    predicate, and the object named the same or by its first words ("CentOS" ends "CentOS
    7"; "Java" does not end "JavaScript")."""
    if (stated.subject.casefold(), stated.predicate) != (replaced.subject.casefold(),
                                                         replaced.predicate):
        return False
    a, b = stated.object.casefold().strip(), replaced.object.casefold().strip()
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    if not short:
        return False
    if short[0] > "\u2e7f":  # CJK: no spaces between words
        return long.startswith(short)
    return long.startswith(short + " ")
