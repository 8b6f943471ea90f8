"""Merge: decide, for each candidate of a batch, duplicate / refinement / conflict / new, and
write down the result as a plan (memories to write, audit entries). Pure: no store, no clock.

The plan is computed once per batch and applied idempotently by the upsert stages; ids are
deterministic, so applying it twice, or planning a redelivered batch again, changes nothing.

This module holds the decisions: a candidate against its nearest memories, its slot's
timeline, the change that ended what it states. The rest, one module each:

- ``merge_plan``: what a plan is, and the edits that write it down (with their audit entries);
- ``merge_time``: when a fact holds (dated changes, what a change ends, dependent facts);
- ``merge_judge``: the judge of the ambiguous band (offline rules, judgements asked ahead).

The names callers import from this module stay importable from here.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..schemas import StoredMemory, Triple
from . import ids
from .dedupe import Closeness, classify, cosines
from .merge_judge import OfflineJudge, Prejudged, judge_key, likely_judged
from .merge_plan import BatchContext, Plan, Prepared, Write
from .merge_time import TimeRules, _same_fact, ended_on
from .policy import Thresholds
from .ports import Decision, Judge
from .predicates import Predicates
from .timeline import Action, place

__all__ = [
    "BatchContext", "OfflineJudge", "Plan", "Prejudged", "Prepared", "Write", "ended_on",
    "judge_key", "likely_judged", "plan_batch",
]


class _Planner(TimeRules):
    def __init__(self, ctx: BatchContext, thresholds: Thresholds, predicates: Predicates,
                 judge: Judge) -> None:
        super().__init__(ctx, predicates)
        self.thresholds, self.judge = thresholds, judge

    # -- views that include what earlier candidates of the batch did --------------------
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

    # -- the decisions ---------------------------------------------------------------------
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
            # Chinese sentences of one pattern in the duplicate band)
            pool = [(m, s) for m, s in pool if not self._other_slot(m, slot[0])]
        top, sim = pool[0] if pool else (None, 0.0)
        closeness = classify(sim, self.thresholds)
        if top is not None and closeness is not Closeness.DISTINCT and (
                top.id not in self.added) and set(cand.source_turn_ids) <= set(
                    top.source_turn_ids):
            return None  # folded into that memory before (a refinement): redelivery, no change
        # Slots first: "prod is Ubuntu 22.04" vs "... 24.04" are worded alike (duplicates by
        # similarity) yet state different values of a single-valued fact.
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
