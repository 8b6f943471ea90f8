"""A user's correction of one memory, as a plan. Pure: no store, no clock.

A correction changes what memq records, not what happened when: the corrected memory keeps
the old one's valid time, kind and source turns, and takes the new text; the old one is kept,
superseded by it, its validity closed where it began (as stated, it was never true), so an
``as of`` read never shows it. Both are audited with the reason. The new memory's id follows
from (user, text, source turns): correcting twice to the same text changes nothing more.
"""

from __future__ import annotations

from datetime import datetime

from ..schemas import AuditEntry, Operation, Status, StoredMemory
from . import ids
from .merge import Plan, Write
from .ports import Vector

REASON = "corrected by the user"
EXTRACTOR = "memq correct"


def correction(old: StoredMemory, text: str, vector: Vector, *, now: datetime,
               model_id: str) -> Plan:
    """The plan that replaces ``old`` (a current memory) by the same memory saying ``text``.
    Nothing to write when ``text`` is what it already says."""
    text = text.strip()
    if not text:
        raise ValueError("the corrected text is empty")
    if not old.is_current:
        raise ValueError(f"memory {old.id} is {old.status}: only a current memory is corrected")
    batch_id = f"correct:{old.id}:{ids.content_hash(text)}"
    if ids.content_hash(text) == ids.content_hash(old.content):
        return Plan(batch_id=batch_id, user_id=old.user_id, writes=[], audit=[])
    new = StoredMemory(
        id=ids.memory_id(old.user_id, text, old.source_turn_ids), user_id=old.user_id,
        content=text, kind=old.kind, confidence=1.0, importance=old.importance,
        entities=[], triples=[], source_turn_ids=list(old.source_turn_ids),
        valid_at=old.valid_at, created_at=now, updated_at=now, embedding_model=model_id,
        scope=old.scope, session_id=old.session_id, expires_at=old.expires_at)
    closed = old.with_changes(status=Status.SUPERSEDED, superseded_by=new.id,
                              invalid_at=old.valid_at, updated_at=now)

    def entry(op: Operation, memory: StoredMemory, before: StoredMemory | None) -> AuditEntry:
        return AuditEntry(
            id=ids.audit_id(batch_id, memory.id, str(op)), user_id=old.user_id,
            memory_id=memory.id, operation=op,
            before=before.model_dump(mode="json") if before else None,
            after=memory.model_dump(mode="json"), reason=REASON,
            source_turn_ids=list(old.source_turn_ids), batch_id=batch_id,
            extractor=EXTRACTOR, at=now)

    return Plan(batch_id=batch_id, user_id=old.user_id,
                writes=[Write(memory=new, vector=vector), Write(memory=closed, vector=None)],
                audit=[entry(Operation.ADD, new, None),
                       entry(Operation.SUPERSEDE, closed, old)])
