"""Forgetting, as the coordination state sees it: a marker first (when the user was last
forgotten), so that nothing in flight resurrects the user, then everything Redis holds of the
user gone (``forget_traces``). The forget request itself (every store, in order) is
workers.forget."""

from __future__ import annotations

from typing import cast

from . import mailbox, outbox
from .coord import Coord
from .layout import forgotten_key, ledger_key


def mark(coord: Coord, user_id: str, at: float, ttl_s: int = 30 * 24 * 3600) -> None:
    coord.r.set(forgotten_key(user_id), repr(at), ex=ttl_s)


def forgotten_at(coord: Coord, user_id: str) -> float | None:
    value = coord.r.get(forgotten_key(user_id))
    return float(cast(str, value)) if value else None


def is_forgotten(coord: Coord, user_id: str, enqueued_at: float) -> bool:
    """True for work enqueued before the user was forgotten: it must write nothing."""
    at = forgotten_at(coord, user_id)
    return at is not None and enqueued_at <= at


def forget_traces(coord: Coord, user_id: str) -> int:
    """Delete what Redis holds of the user: the turn ledger, and every delivery of the user
    (batches carry content) in the mailbox or the outbox; they count as done."""
    mine = set(mailbox.waiting(coord, user_id, 1_000_000)) | outbox.of_user(coord, user_id)
    existed = int(coord.r.exists(ledger_key(user_id))) + len(mine)
    mailbox.finish(coord, user_id, sorted(mine))
    coord.r.delete(ledger_key(user_id))
    return existed
