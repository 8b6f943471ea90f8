"""``Client.correct`` (and mem0's ``update``): a user's correction of one memory, holding the
user's claim, as one fenced commit (the plan: ``pipeline.correct``)."""

from __future__ import annotations

from datetime import UTC, datetime

import structlog

from ..pipeline import service
from ..pipeline.correct import correction
from ..pipeline.errors import StaleVersion, TransientError, UserBusy
from ..schemas import StoredMemory
from . import event_stream, section, wiring
from .publish import publish_apply

log = structlog.get_logger(__name__)


class UnknownMemory(LookupError):
    """No current memory of that id for that user."""


def correct_memory(user_id: str, memory_id: str, text: str, *,
                   now: datetime | None = None) -> StoredMemory:
    """The memory ``memory_id`` of ``user_id`` says ``text`` from now on (see
    ``pipeline.correct``); returns the memory as it now is. The old version stays, superseded,
    with the reason in the audit trail."""
    s, now = wiring.settings(), now or datetime.now(UTC)
    with section.hold(wiring.coord(), user_id, s.claim_s, 2 * s.claim_s,
                      publish_apply) as token:
        if token is None:
            raise UserBusy(f"user {user_id} is busy; correct again in a moment")
        ports = wiring.ports_for(user_id)
        version = ports.graph.version(user_id).version
        found = ports.graph.get(user_id, [memory_id])
        if not found or not found[0].is_current:
            raise UnknownMemory(f"no current memory {memory_id} of user {user_id}")
        old = found[0]
        (vector,) = ports.embedder.embed([text.strip() or "-"])
        plan = correction(old, text, vector, now=now, model_id=ports.embedder.model_id)
        if not plan.writes:
            return old
        try:
            service.commit_plan(ports, plan, now, expected=version)
        except StaleVersion as exc:  # cannot happen while we hold the claim, unless it lapsed
            raise TransientError(f"user {user_id} changed meanwhile; correct again") from exc
        log.info("corrected memory", user_id=user_id, memory_id=memory_id,
                 into=plan.writes[0].memory.id)
        event_stream.memory_events(wiring.coord(), user_id, plan.audit)
        return plan.writes[0].memory
