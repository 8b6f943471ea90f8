"""Merge: decide, for each candidate of a batch, duplicate / refinement / conflict / new, and
write down the result as a plan (memories to write, audit entries). Pure: no store, no clock.

The plan is computed once per batch and applied idempotently by the upsert stages; ids are
deterministic, so applying it twice, or planning a redelivered batch again, changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import pairwise
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..schemas import AuditEntry, CandidateMemory, Operation, Status, StoredMemory, Triple
from . import ids
from .dedupe import Closeness, classify, cosines, unit
from .policy import Thresholds
from .ports import Decision, Judge, Judgement, Neighbor, Vector
from .predicates import Predicates
from .timeline import Action, place


class Prepared(BaseModel):
    """A candidate with what the stores know around it (gathered by the service)."""

    model_config = ConfigDict(frozen=True)

    candidate: CandidateMemory
    vector: Vector
    neighbors: Sequence[Neighbor]  # nearest current memories of the same user and model
    # current memories holding its single-valued slots, or the facts it replaces
    slot_memories: Sequence[StoredMemory]
    already_stored: bool = False  # its deterministic id exists: a redelivery
    exact: StoredMemory | None = None  # a current memory with the same normalised text
    # Where it came from, when one plan covers several batches (a drained mailbox); None: the
    # plan's own (BatchContext).
    batch_id: str | None = None
    session_id: str | None = None
    # current memories that, as changes, ended a fact of one of its triples' slots
    # (StoredMemory.replaces): what makes a late statement of an ended fact history
    enders: Sequence[StoredMemory] = ()
    ended: Sequence[StoredMemory] = ()  # the memories those changes closed


@dataclass(frozen=True)
class BatchContext:
    user_id: str
    batch_id: str
    model_id: str
    extractor: str
    prompt_version: str | None
    now: datetime
    session_id: str | None = None


class Write(BaseModel):
    """The full new state of one memory; ``vector`` is None when its content did not change."""

    model_config = ConfigDict(frozen=True)

    memory: StoredMemory
    vector: Vector | None = None


class Plan(BaseModel):
    model_config = ConfigDict(frozen=True)

    batch_id: str
    user_id: str
    writes: list[Write]
    audit: list[AuditEntry]


class OfflineJudge:
    """Rules for the 0.92–0.95 band when no LLM is configured."""

    def judge(self, new: CandidateMemory, existing: StoredMemory) -> Judgement:
        a, b = ids.normalize(new.content), ids.normalize(existing.content)
        if a == b or a in b:
            return Judgement(Decision.DUPLICATE, "says nothing the existing memory does not")
        if b in a:
            return Judgement(Decision.REFINEMENT, "adds detail to the existing memory",
                             merged_content=new.content)
        return Judgement(Decision.NEW, "close in wording but a different statement")


def _snapshot(memory: StoredMemory) -> dict[str, Any]:
    return memory.model_dump(mode="json")


class _Planner:
    def __init__(self, ctx: BatchContext, thresholds: Thresholds, predicates: Predicates,
                 judge: Judge) -> None:
        self.ctx, self.thresholds, self.predicates, self.judge = ctx, thresholds, predicates, judge
        self.state: dict[str, StoredMemory] = {}  # every memory this batch touches, latest
        self.vectors: dict[str, Vector | None] = {}
        self.added: list[str] = []  # memories added by this batch
        self._added_units: list[Any] = []  # their vectors, as dedupe.unit
        self.audit: list[AuditEntry] = []
        self.source: Prepared | None = None  # the candidate being decided

    @property
    def batch_id(self) -> str:
        return (self.source.batch_id if self.source else None) or self.ctx.batch_id

    @property
    def session_id(self) -> str | None:
        return (self.source.session_id if self.source else None) or self.ctx.session_id

    # -- views that include what earlier candidates of the batch did --------------------
    def _view(self, memory: StoredMemory) -> StoredMemory:
        return self.state.get(memory.id, memory)

    def _pool(self, p: Prepared) -> list[tuple[StoredMemory, float]]:
        pool = [(self._view(n.memory), n.similarity) for n in p.neighbors]
        pool += [(self.state[mid], sim)
                 for mid, sim in zip(self.added, cosines(p.vector, self._added_units),
                                     strict=True)]
        return sorted(((m, s) for m, s in pool if m.is_current), key=lambda ms: -ms[1])

    def _slot(self, p: Prepared) -> tuple[Triple, list[StoredMemory]] | None:
        """The candidate's first single-valued triple and every memory on that slot's timeline
        (as stored, overlaid with what this batch did)."""
        triple = next((t for t in p.candidate.triples if self.predicates.is_single(t.predicate)),
                      None)
        if triple is None:
            return None
        holders = {m.id: self._view(m) for m in p.slot_memories}
        holders.update({mid: self.state[mid] for mid in self.added})
        return triple, [m for m in holders.values()
                        if any(h.slot == triple.slot for h in m.triples)]

    # -- recording ------------------------------------------------------------------------
    def _put(self, memory: StoredMemory, vector: Vector | None) -> None:
        """Record a memory's new state. A vector of None keeps the one recorded earlier in this
        batch only while the content is unchanged; new content without a vector gets embedded."""
        prior = self.state.get(memory.id)
        self.state[memory.id] = memory
        same_text = prior is not None and prior.content == memory.content
        if vector is not None or not same_text:
            self.vectors[memory.id] = vector

    def _log(self, op: Operation, memory_id: str, cand: CandidateMemory, reason: str,
             before: StoredMemory | None, after: StoredMemory | None,
             turns: Sequence[str] | None = None) -> None:
        ctx, batch_id = self.ctx, self.batch_id
        self.audit.append(AuditEntry(
            id=ids.audit_id(batch_id, memory_id, f"{op}:{ids.content_hash(cand.content)}"),
            user_id=ctx.user_id, memory_id=memory_id, operation=op,
            before=_snapshot(before) if before else None,
            after=_snapshot(after) if after else {"candidate": cand.model_dump(mode="json")},
            reason=reason, source_turn_ids=list(turns or cand.source_turn_ids),
            batch_id=batch_id,
            extractor=ctx.extractor, prompt_version=ctx.prompt_version, at=ctx.now,
        ))

    def _new_memory(self, cand: CandidateMemory, **changes: Any) -> StoredMemory:
        ctx = self.ctx
        return StoredMemory(
            id=ids.memory_id(ctx.user_id, cand.content, cand.source_turn_ids),
            user_id=ctx.user_id, content=cand.content, kind=cand.kind,
            confidence=cand.confidence, importance=cand.importance,
            entities=list(cand.entities), triples=list(cand.triples),
            source_turn_ids=list(cand.source_turn_ids), valid_at=cand.valid_at,
            created_at=ctx.now, updated_at=ctx.now, embedding_model=ctx.model_id,
            scope=cand.scope, session_id=self.session_id, expires_at=cand.expires_at,
            replaces=list(cand.replaces), said_at=cand.said_at,
        ).with_changes(**changes)

    def _added(self, memory_id: str, vector: Vector) -> None:
        self.added.append(memory_id)
        self._added_units.append(unit(vector))

    # -- the decisions ---------------------------------------------------------------------
    def add(self, p: Prepared, reason: str) -> StoredMemory:
        memory = self._new_memory(p.candidate)
        self._put(memory, p.vector)
        self._added(memory.id, p.vector)
        self._log(Operation.ADD, memory.id, p.candidate, reason, None, memory)
        return memory

    def drop(self, p: Prepared, existing: StoredMemory, reason: str) -> None:
        self._log(Operation.DROP_DUPLICATE, existing.id, p.candidate, reason, None, None)

    def refine(self, p: Prepared, existing: StoredMemory, judgement: Judgement) -> None:
        cand = p.candidate
        content = judgement.merged_content or cand.content
        updated = existing.with_changes(
            content=content,
            triples=[t.model_dump() for t in (cand.triples or existing.triples)],
            entities=list(dict.fromkeys([*existing.entities, *cand.entities])),
            source_turn_ids=list(dict.fromkeys([*existing.source_turn_ids,
                                                *cand.source_turn_ids])),
            confidence=max(existing.confidence, cand.confidence),
            importance=max(existing.importance, cand.importance),
            valid_at=max(existing.valid_at, cand.valid_at), updated_at=self.ctx.now,
        )
        # A merged sentence other than the candidate's needs a fresh vector (the service
        # embeds writes whose vector is None and whose content changed).
        self._put(updated, p.vector if content == cand.content else None)
        self._log(Operation.UPDATE, existing.id, cand, f"refinement: {judgement.reason}",
                  existing, updated)

    def _close(self, p: Prepared, old: StoredMemory, successor: str, why: str) -> None:
        self._close_at(p, old, successor, p.candidate.valid_at, why)

    def _close_at(self, p: Prepared, old: StoredMemory, successor: str, at: datetime,
                  why: str) -> None:
        closed = old.with_changes(status=Status.SUPERSEDED, invalid_at=at,
                                  superseded_by=successor, updated_at=self.ctx.now)
        self._put(closed, None)
        self._log(Operation.SUPERSEDE, old.id, p.candidate,
                  f"conflict, newer by event time wins: {why}", old, closed)

    def insert(self, p: Prepared, cut: StoredMemory | None, following: StoredMemory | None,
               why: str) -> str | None:
        """A new span at the candidate's event time: it closes ``cut`` and, when something
        newer is already known (a late arrival), is itself history closed by ``following``."""
        cand = p.candidate
        if following is None:
            memory = self.add(p, f"new fact: {why}" if cut else "new memory")
        else:
            memory = self._new_memory(cand, status=Status.SUPERSEDED,
                                      invalid_at=following.valid_at, superseded_by=following.id)
            self._put(memory, p.vector)
            self._added(memory.id, p.vector)
            self._log(Operation.ADD, memory.id, cand, f"late arrival, kept as history: {why}",
                      None, memory)
            # The same trail as if it had arrived in order: superseded by the newer turns.
            self._log(Operation.SUPERSEDE, memory.id, cand,
                      f"conflict, newer by event time wins: {why}; followed by {following.id}",
                      None, memory, turns=following.source_turn_ids)
        if cut is not None:
            self._close(p, cut, memory.id, why)
        return memory.id if following is None else None

    def extend(self, p: Prepared, target: StoredMemory, cut: StoredMemory | None,
               why: str) -> str:
        """Earlier evidence of a fact already known: it now holds from the earlier time."""
        cand = p.candidate
        held = self._view(target)
        # it was also said at its old start: that saying is the later one now
        later = max(held.valid_at, held.restated_at or held.valid_at)
        moved = target.with_changes(
            valid_at=cand.valid_at, updated_at=self.ctx.now,
            restated_at=later if any(self._dependent(t) for t in held.triples) else None,
            source_turn_ids=list(dict.fromkeys([*cand.source_turn_ids,
                                                *target.source_turn_ids])))
        self._put(moved, None)
        self._log(Operation.UPDATE, target.id, cand, f"earlier evidence of the same fact: {why}",
                  target, moved)
        if cut is not None:
            self._close(p, cut, target.id, why)
        return target.id

    def on_slot(self, p: Prepared, triple: Triple, timeline: list[StoredMemory]) -> str | None:
        placement = place(timeline, triple, p.candidate.valid_at)
        held = placement.cut or placement.target or placement.following
        was = next((h.object for h in (held.triples if held else []) if h.slot == triple.slot),
                   None)
        why = f"{triple.predicate}: {was!r} -> {triple.object!r}"
        if placement.action is Action.DUPLICATE and placement.target is not None:
            self.drop(p, placement.target,
                      f"duplicate: states the same single-valued fact ({triple.predicate} = "
                      f"{triple.object!r})")
            self._restated(p, placement.target, triple)
            return placement.target.id
        reopened = self._reopen(p, triple, timeline)
        if reopened is not None:
            return reopened
        if placement.action is Action.EXTEND and placement.target is not None:
            return self.extend(p, placement.target, placement.cut, why)
        return self.insert(p, placement.cut, placement.following, why)

    def _dependent(self, triple: Triple) -> bool:
        return any(triple.predicate in deps for deps in self.predicates.closes_with.values())

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

    def plan(self, p: Prepared) -> None:
        p = self._dated(p)
        self.source = p
        cand = p.candidate
        if p.already_stored or ids.memory_id(
            self.ctx.user_id, cand.content, cand.source_turn_ids
        ) in self.state:
            return  # applied before: redelivery changes nothing
        self.replaced(p, self._decide(p))

    def _ended(self, p: Prepared) -> tuple[StoredMemory, Triple] | None:
        """The current memory, newer by event time, whose change ended a fact this candidate
        states (a statement delivered after the change that ended it: sessions of one user
        may be applied in any order), and that fact; None when no such change is known."""
        cand = p.candidate
        for ender in sorted((self._view(m) for m in p.enders), key=lambda m: (m.valid_at, m.id)):
            # a change said with an earlier time ends what was said before it was said
            if not ender.is_current or (ender.said_at or ender.valid_at) <= cand.valid_at:
                continue
            said = next((t for t in cand.triples for g in ender.replaces if _same_fact(t, g)),
                        None)
            if said is not None:
                return ender, said
        return None

    def _other_slot(self, memory: StoredMemory, triple: Triple) -> bool:
        """Whether the memory states single-valued facts, none of them of ``triple``'s slot."""
        single = [t for t in memory.triples if self.predicates.is_single(t.predicate)]
        return bool(single) and all(t.slot != triple.slot for t in single)

    def _again(self, p: Prepared, existing: StoredMemory, why: str) -> str:
        """A fact already known, said again: a duplicate, or (said before the memory's time: a
        session applied late) earlier evidence that it held from then, as in event order."""
        if p.candidate.valid_at < existing.valid_at:
            return self.extend(p, existing, None, f"said before, {why}")
        self.drop(p, existing, f"duplicate: {why}")
        return existing.id

    def _history(self, p: Prepared, ender: StoredMemory, said: Triple) -> StoredMemory | None:
        """A memory ``ender`` closed that states ``said`` (stored, or closed by this plan)."""
        seen = {m.id: self._view(m) for m in p.ended}
        seen.update({mid: self.state[mid] for mid in self.added})
        return next((m for _, m in sorted(seen.items()) if m.superseded_by == ender.id and any(
            t.predicate == said.predicate and t.object.casefold() == said.object.casefold()
            for t in m.triples)), None)

    def _decide(self, p: Prepared) -> str | None:
        """Add, extend, refine, drop or close; the id of the memory that states the candidate
        afterwards (None when it is only history, a late arrival)."""
        cand = p.candidate
        pool = self._pool(p)
        slot = self._slot(p)
        if slot is not None:
            # a single-valued fact is no duplicate, nor a refinement, of another slot's
            # memory ("用户是律师助理" beside "用户在律所工作", said in one turn: MiniLM puts
            # Chinese sentences of one pattern at 0.95+)
            pool = [(m, s) for m, s in pool if not self._other_slot(m, slot[0])]
        top, sim = pool[0] if pool else (None, 0.0)
        closeness = classify(sim, self.thresholds)
        if top is not None and closeness is not Closeness.DISTINCT and (
                top.id not in self.added) and set(cand.source_turn_ids) <= set(
                    top.source_turn_ids):
            return None  # folded into that memory before (a refinement): redelivery, no change
        # Slots first: "prod is Ubuntu 22.04" vs "... 24.04" are worded alike (similarity
        # ~0.96) yet state different values of a single-valued fact.
        if slot is not None and slot[1]:
            return self.on_slot(p, *slot)
        ended = self._ended(p)
        if ended is not None:  # "uses MySQL" after "switched from MySQL to Postgres" was applied
            ender, said = ended
            why = (f"{said.predicate}: {said.object!r} replaced by "
                   f"{next((t.object for t in ender.triples), '')!r}")
            twin = self._history(p, ender, said)
            if twin is None:
                return self.insert(p, None, ender, why)
            return self._again(p, twin, f"the same fact, already history ({why})")
        exact = self._view(p.exact) if p.exact is not None else None
        if exact is not None and exact.is_current:  # not left to approximate search
            return self._again(p, exact, "the same sentence is already a current memory")
        if top is not None and closeness is Closeness.DUPLICATE:
            return self._again(p, top, f"similarity {sim:.3f} >= {self.thresholds.duplicate}")
        if top is not None and closeness is Closeness.AMBIGUOUS:
            judgement = self.judge.judge(cand, top)
            if judgement.decision is Decision.DUPLICATE:
                self.drop(p, top, f"duplicate (similarity {sim:.3f}): {judgement.reason}")
                return top.id
            if judgement.decision is Decision.REFINEMENT:
                self.refine(p, top, judgement)
                return top.id
            if judgement.decision is Decision.CONFLICT:
                newer = p.candidate.valid_at >= top.valid_at
                return self.insert(p, top if newer else None, None if newer else top,
                                   judgement.reason)
        return self.add(p, "new memory" if top is None else f"new memory (closest {sim:.3f})").id


def likely_judged(prepared: Sequence[Prepared], *, thresholds: Thresholds,
                  predicates: Predicates) -> list[tuple[CandidateMemory, StoredMemory]]:
    """The (candidate, stored memory) pairs the planner will ask the judge about, as far as
    the stored state tells before planning: a candidate whose nearest current neighbour is in
    the ambiguous band, that no slot, exact copy or earlier fold decides first. What an
    earlier candidate of the same plan does can change a later one's nearest; the planner
    then asks about another pair itself, and the answer got ahead goes unused."""
    out = []
    for p in prepared:
        cand = p.candidate
        single = any(predicates.is_single(t.predicate) for t in cand.triples)
        if p.already_stored or (single and p.slot_memories) or (
                p.exact is not None and p.exact.is_current):
            continue
        current = [n for n in p.neighbors if n.memory.is_current]
        if not current:
            continue
        top = max(current, key=lambda n: n.similarity)
        if classify(top.similarity, thresholds) is Closeness.AMBIGUOUS and not set(
                cand.source_turn_ids) <= set(top.memory.source_turn_ids):
            out.append((cand, top.memory))
    return out


def judge_key(new: CandidateMemory, existing: StoredMemory) -> tuple[str, ...]:
    """What a judgement depends on: the two statements (and which memory the second is)."""
    return (new.content, *new.source_turn_ids, "\x1f", existing.id, existing.content)


class Prejudged:
    """A Judge that answers from judgements made ahead (``answers``, by ``judge_key``) and asks
    ``judge`` about anything else: the plan is the one the sequential planner makes, with
    its judge calls made at once."""

    def __init__(self, judge: Judge, answers: dict[tuple[str, ...], Judgement]) -> None:
        self._judge, self._answers = judge, answers
        self.asked = 0  # calls that were not answered ahead

    def judge(self, new: CandidateMemory, existing: StoredMemory) -> Judgement:
        known = self._answers.get(judge_key(new, existing))
        if known is not None:
            return known
        self.asked += 1
        return self._judge.judge(new, existing)


def plan_batch(prepared: Sequence[Prepared], ctx: BatchContext, *, thresholds: Thresholds,
               predicates: Predicates, judge: Judge) -> Plan:
    """Candidates are decided in event order, each seeing what the earlier ones did."""
    planner = _Planner(ctx, thresholds, predicates, judge)
    ordered = sorted(prepared, key=lambda p: (p.candidate.valid_at, p.candidate.source_turn_ids))
    for p in ordered:
        planner.plan(p)
    planner.dependents(ordered)
    writes = [Write(memory=m, vector=planner.vectors.get(mid)) for mid, m in planner.state.items()]
    return Plan(batch_id=ctx.batch_id, user_id=ctx.user_id, writes=writes, audit=planner.audit)


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
