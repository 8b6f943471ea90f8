"""The judge of the ambiguous band: the offline rules used when no LLM is configured, and
the judgements asked ahead of planning, in parallel (``likely_judged``, ``Prejudged``). Pure:
no store, no clock.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..schemas import CandidateMemory, StoredMemory
from . import ids
from .dedupe import Closeness, classify
from .merge_plan import Prepared
from .policy import Thresholds
from .ports import Decision, Judge, Judgement
from .predicates import Predicates


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
