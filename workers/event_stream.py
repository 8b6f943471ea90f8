"""The event stream of the webhooks (workers.events delivers it): what happened to a user's
deliveries and memories, ids only, appended to one Redis stream by the write path, and only
when some tenant has a webhook (``hooked``: a cached look at the subscriptions), so that
without subscribers the write path pays nothing. The subscriptions (tenant -> URL and secret)
are kept here too: changing them makes this process's ``hooked`` look again at once."""

from __future__ import annotations

import hashlib
import time
import weakref
from collections.abc import Sequence
from contextlib import suppress
from typing import Any, cast

import redis

from ..schemas import AuditEntry, Operation
from . import layout
from .coord import Coord

HOOKS_CACHE_S = 5.0

# per Coord: whether any tenant had a webhook, and when that was asked (monotonic)
_hooked: weakref.WeakKeyDictionary[Coord, tuple[bool, float]] = weakref.WeakKeyDictionary()


def hooked(coord: Coord) -> bool:
    """Whether any tenant has a webhook (asked again after HOOKS_CACHE_S): the write path
    emits nothing when none has."""
    on, at = _hooked.get(coord, (False, float("-inf")))
    now = time.monotonic()
    if now - at > HOOKS_CACHE_S:
        # its node down (a cluster): as last known, asked again after HOOKS_CACHE_S
        with suppress(redis.RedisError):
            on = bool(coord.r.exists(layout.HOOKS))
        _hooked[coord] = (on, now)
    return on


def emit_into(pipe: Any, kind: str, user_id: str, **ids: str) -> None:
    """One event onto a pipeline (the caller's round trip; ``hooked`` asked first)."""
    key = "\x1f".join([kind, user_id, *(f"{k}={v}" for k, v in sorted(ids.items()))])
    event_id = "ev_" + hashlib.sha256(key.encode()).hexdigest()[:24]
    pipe.xadd(layout.EVENTS, {"id": event_id, "type": kind, "user": user_id,
                            "at": repr(time.time()), **ids},
              maxlen=layout.EVENTS_MAX, approximate=True)


def emit(coord: Coord, kind: str, user_id: str, many: Sequence[dict[str, str]] = (),
         **ids: str) -> None:
    """One event (``ids``), or one per entry of ``many``, when anyone subscribed."""
    if not hooked(coord):
        return
    pipe = coord.r.pipeline(transaction=False)
    for entry in many or [ids]:
        emit_into(pipe, kind, user_id, **entry)
    pipe.execute()


def _ask_again(coord: Coord) -> None:
    """The subscriptions changed: ``hooked`` asks Redis at its next call."""
    _hooked[coord] = (_hooked.get(coord, (False, 0.0))[0], float("-inf"))


def set_hook(coord: Coord, tenant: str, subscription: str) -> None:
    coord.r.hset(layout.HOOKS, tenant, subscription)
    _ask_again(coord)


def remove_hook(coord: Coord, tenant: str) -> bool:
    _ask_again(coord)
    return bool(coord.r.hdel(layout.HOOKS, tenant))


def hooks(coord: Coord) -> dict[str, str]:
    return cast(dict[str, str], coord.r.hgetall(layout.HOOKS))


def memory_events(coord: Coord, user_id: str, audit: list[AuditEntry]) -> None:
    """memory.added / memory.superseded for what a commit wrote."""
    for kind, operations in (("memory.added", (Operation.ADD, Operation.UPDATE)),
                             ("memory.superseded", (Operation.SUPERSEDE,))):
        changed = [{"memory_id": e.memory_id, "batch_id": e.batch_id} for e in audit
                   if e.operation in operations]
        if changed:
            emit(coord, kind, user_id, many=changed)
