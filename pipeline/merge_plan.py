"""What a merge plan is, and how the planner writes one down. Pure: no store, no clock.

``Prepared`` is a candidate with what the stores know around it; ``Plan`` is what the upsert
stages apply: the full new state of every memory the batch touches (``Write``) and the audit
entries that say why. ``PlanBuilder`` holds the plan while it is being made: each memory's
latest state in this batch, the vectors to write, the audit trail, and the edits a decision
makes (add, drop, refine, close, insert, extend). What is decided is ``merge``'s; when a
fact holds, ``merge_time``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..schemas import AuditEntry, CandidateMemory, Operation, Status, StoredMemory, Triple
from . import ids
from .dedupe import unit
from .ports import Judgement, Neighbor, Vector
from .predicates import Predicates


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


def _snapshot(memory: StoredMemory) -> dict[str, Any]:
    return memory.model_dump(mode="json")


class PlanBuilder:
    """The plan being made for one batch, and the edits that make it."""

    def __init__(self, ctx: BatchContext, predicates: Predicates) -> None:
        self.ctx, self.predicates = ctx, predicates
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

    # -- a memory as this batch has left it so far ------------------------------------
    def _view(self, memory: StoredMemory) -> StoredMemory:
        return self.state.get(memory.id, memory)

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

    # -- the edits a decision makes --------------------------------------------------------
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

    def _dependent(self, triple: Triple) -> bool:
        return any(triple.predicate in deps for deps in self.predicates.closes_with.values())
