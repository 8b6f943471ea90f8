"""Dead letters: a delivery that failed for good, with the stage and the reason, kept (up to
``Coord.dead_max`` a bucket) for ``memq deadletters`` to show, requeue or drop; and broker
messages quarantined as they were (workers.broker). Each bucket has its list; readers take
them all, oldest first."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import suppress
from datetime import UTC, datetime
from typing import Any

import redis

from . import event_stream
from .coord import Coord
from .layout import (
    FINISHED,
    METRICS,
    OUTCOME_TTL_S,
    dead_key,
    delivery_bucket,
    delivery_key,
    extracted_key,
    inflight_key,
    mailbox_key,
    outbox_key,
    outcome_key,
)


def dead_letter(coord: Coord, delivery_id: str, user_id: str | None, stage: str, reason: str,
                message: dict[str, Any] | None) -> bool:
    """Record the delivery as dead with the reason, and drop what it left here. Not when it is
    done already: a duplicate run (a redelivery, a reaped re-publish) that fails after another
    run finished the delivery does not undo that success. Returns whether a dead letter was
    recorded."""
    entry = {"delivery_id": delivery_id, "user_id": user_id, "stage": stage,
             "reason": reason, "at": datetime.now(UTC).isoformat(), "message": message}
    # the counter of workers.metrics (its field format), in the same round trip
    field = f"memq_dead_letters_total|stage={stage}|"
    b = delivery_bucket(delivery_id)
    recorded = bool(coord.script("dead")(
        keys=[dead_key(b), outcome_key(delivery_id), delivery_key(delivery_id),
              extracted_key(delivery_id), outbox_key(b), inflight_key(b),
              mailbox_key(user_id) if user_id else outbox_key(b)],
        args=[json.dumps(entry, ensure_ascii=False, default=str), coord.dead_max,
              delivery_id, OUTCOME_TTL_S, "1" if user_id else ""]))
    if recorded:
        # workers.metrics' counter (its field format): after the fact, in another slot,
        # best effort as every metric (workers.metrics.Metrics._send)
        with suppress(redis.RedisError):
            coord.r.hincrby(METRICS, field, 1)
        coord.announce(FINISHED, delivery_id)
        if user_id:
            event_stream.emit(coord, "delivery.dead_lettered", user_id, delivery_id=delivery_id)
    return recorded


def _raw(coord: Coord) -> list[tuple[str, str]]:
    """(list key, raw entry) of every bucket's dead letters, oldest first."""
    keys = [dead_key(b) for b in coord.buckets()]
    rows = [(key, raw) for key, got in zip(keys, coord.each(keys, "lrange", 0, -1),
                                           strict=True) for raw in got]
    return sorted(rows, key=lambda row: _at(row[1]))


def dead_count(coord: Coord) -> int:
    return sum(coord.each([dead_key(b) for b in coord.buckets()], "llen"))


def dead_letters(coord: Coord) -> list[dict[str, Any]]:
    return [json.loads(raw) for _, raw in _raw(coord)]


def take(coord: Coord, which: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    """Remove the dead letters ``which`` selects; returns them."""
    taken = []
    for key, raw in _raw(coord):
        entry = json.loads(raw)
        if which(entry) and int(coord.r.lrem(key, 1, raw)):
            taken.append(entry)
    return taken


def put(coord: Coord, entry: str) -> None:
    """Append a dead letter as it is (a quarantined message; one put back unrequeued): in its
    delivery's bucket, bucket 0 when it has none."""
    coord.r.rpush(dead_key(_bucket(entry)), entry)


def drop(coord: Coord, which: Callable[[str], bool]) -> int:
    """Remove the dead letters ``which`` selects by their raw entry; returns how many."""
    dropped = 0
    for key, raw in _raw(coord):
        if which(raw):
            dropped += int(coord.r.lrem(key, 0, raw))
    return dropped


def _bucket(raw: str) -> int:
    """A dead letter's bucket: its delivery's, 0 for one without (a quarantined message)."""
    try:
        delivery_id = json.loads(raw).get("delivery_id")
    except (ValueError, AttributeError):
        delivery_id = None
    return delivery_bucket(delivery_id) if isinstance(delivery_id, str) else 0


def _at(raw: str) -> str:
    try:
        return str(json.loads(raw).get("at") or "")
    except (ValueError, AttributeError):
        return ""


