"""The outbox: a delivery is recorded before it is published, and re-published if it stops
making progress (the reaper, ``due``). A delivery's record holds its batch until it is
finished (workers.mailbox.finish) or dead-lettered (workers.deadletters); until then it is
in flight, which is what ``memq wait`` and the API's statuses read.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

from . import deadletters
from .coord import Coord, beating
from .layout import (
    FINISHED,
    delivery_bucket,
    delivery_key,
    inflight_key,
    outbox_key,
    outcome_key,
)

FINAL = ("done", "dead_lettered", "unknown")  # a delivery in one of these is finished


@dataclass(frozen=True)
class Delivery:
    delivery_id: str
    user_id: str
    batch: str  # the IngestBatch as JSON
    enqueued_at: float
    state: str  # queued | started | extracted
    trace: str | None = None  # the enqueue's traceparent, when traced (workers.tracing)


def _record(delivery_id: str, raw: dict[str, str]) -> Delivery | None:
    if not raw or "batch" not in raw:
        return None
    return Delivery(delivery_id, raw["user"], raw["batch"], float(raw["enqueued_at"]),
                    raw.get("state", "queued"), raw.get("trace"))


def accept(coord: Coord, deliveries: Sequence[tuple[str, str, str]], enqueued_at: float,
           deadline: float, messages: Sequence[tuple[str, str]] = (),
           trace: str | None = None) -> None:
    """Record (delivery id, user, batch JSON) entries, then push ``messages`` ((queue, broker
    message) pairs, workers.wire.task_message), all in one round trip. The records go first:
    a message is never read before its delivery is recorded. ``trace``: the enqueue's
    traceparent, kept on each record (workers.tracing)."""
    # one call when the queues share the state's Redis (one round trip for an agent's
    # add); else (a cluster, another broker) a call per bucket, then the messages
    together = coord.broker is coord.r and not coord.cluster
    groups: dict[int, list[tuple[str, str, str]]] = {}
    for row in deliveries:
        groups.setdefault(-1 if together else delivery_bucket(row[0]), []).append(row)
    for rows in groups.values():
        keys: list[str] = []
        args: list[str | int] = [repr(enqueued_at), repr(deadline), len(rows)]
        for row in rows:
            b = delivery_bucket(row[0])
            keys += [delivery_key(row[0]), outbox_key(b), inflight_key(b)]
            args += [*row, trace or ""]
        if together:
            keys += [queue for queue, _ in messages]
            args += [message for _, message in messages]
        coord.script("accept")(keys=keys, args=args)
    if not together and messages:
        pipe = coord.broker.pipeline(transaction=False)
        for queue, message in messages:
            pipe.lpush(queue, message)
        pipe.execute()


def delivery(coord: Coord, delivery_id: str) -> Delivery | None:
    return _record(delivery_id, cast(dict[str, str], coord.r.hgetall(delivery_key(delivery_id))))


def deliveries(coord: Coord, delivery_ids: Sequence[str]) -> list[Delivery | None]:
    pipe = coord.r.pipeline(transaction=False)
    for d in delivery_ids:
        pipe.hgetall(delivery_key(d))
    return [_record(d, raw) for d, raw in zip(delivery_ids, pipe.execute(), strict=True)]


def start(coord: Coord, delivery_id: str, deadline: float) -> None:
    """Extraction began: from now on only the heartbeat keeps it from being re-published."""
    pipe = coord.r.pipeline(transaction=False)
    pipe.hset(delivery_key(delivery_id), "state", "started")
    pipe.zadd(outbox_key(delivery_bucket(delivery_id)), {delivery_id: deadline}, xx=True)
    pipe.execute()


def touch(coord: Coord, delivery_id: str, deadline: float) -> None:
    """Progress: not due for re-publishing before ``deadline``."""
    coord.r.zadd(outbox_key(delivery_bucket(delivery_id)), {delivery_id: deadline}, xx=True)


@contextmanager
def heartbeat(coord: Coord, delivery_id: str, stall_s: float) -> Iterator[None]:
    """Keep the delivery from being re-published while this process works on it (an LLM call
    may take minutes); a dead or frozen process stops beating, and the reaper re-publishes
    the delivery ``stall_s`` later."""
    with beating(lambda: touch(coord, delivery_id, time.time() + stall_s), stall_s / 4):
        yield


def due(coord: Coord, now: float, limit: int = 500) -> list[str]:
    """Deliveries due for re-publishing, at most ``limit`` (from each bucket, the most overdue
    first)."""
    pipe = coord.r.pipeline(transaction=False)
    for b in coord.buckets():
        pipe.zrangebyscore(outbox_key(b), "-inf", now, start=0, num=limit, withscores=True)
    rows = [row for got in pipe.execute() for row in got]
    return [d for d, _ in sorted(rows, key=lambda r: r[1])[:limit]]


def remove(coord: Coord, delivery_id: str) -> None:
    """A delivery in the outbox without a record (finished meanwhile): out of the outbox."""
    coord.r.zrem(outbox_key(delivery_bucket(delivery_id)), delivery_id)


def of_user(coord: Coord, user_id: str) -> set[str]:
    """The user's deliveries in the outbox, by their records; every bucket's outbox is read:
    a delivery whose id does not name its user's bucket may be in another one than the
    user's."""
    listed = [d for got in coord.each([outbox_key(b) for b in coord.buckets()], "zrange", 0, -1)
              for d in got]
    pipe = coord.r.pipeline(transaction=False)
    for d in listed:
        pipe.hget(delivery_key(d), "user")
    return {d for d, user in zip(listed, pipe.execute(), strict=True) if user == user_id}


# -- in flight: what is not finished yet, and waiting for it -----------------------------------
def inflight(coord: Coord) -> int:
    return sum(coord.each([inflight_key(b) for b in coord.buckets()], "scard"))


def pending(coord: Coord, delivery_ids: Sequence[str]) -> int:
    """How many of these deliveries are not done yet."""
    pipe = coord.r.pipeline(transaction=False)
    for d in delivery_ids:
        pipe.sismember(inflight_key(delivery_bucket(d)), d)
    return sum(int(x) for x in pipe.execute()) if delivery_ids else 0


def statuses(coord: Coord, delivery_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Each delivery's state: queued | started | extracted | done | dead_lettered (with the
    reason) | unknown; one round trip (plus a dead-letter scan if one died)."""
    pipe = coord.r.pipeline(transaction=False)
    for d in delivery_ids:
        pipe.hmget(delivery_key(d), ["user", "state"])
        pipe.get(outcome_key(d))
    raw = pipe.execute()
    out: list[dict[str, Any]] = []
    for i, d in enumerate(delivery_ids):
        (user, state), outcome = raw[2 * i], raw[2 * i + 1]
        finished, _, finished_by = (outcome or "").partition(" ")
        out.append({"delivery_id": d, "state": state or finished or "unknown",
                    "user_id": user or finished_by or None, "reason": None})
    if any(row["state"] == "dead_lettered" for row in out):
        dead = {e.get("delivery_id"): e for e in deadletters.dead_letters(coord)}
        for row in out:
            entry = dead.get(row["delivery_id"])
            if row["state"] == "dead_lettered" and entry:
                row["user_id"], row["reason"] = entry.get("user_id"), entry.get("reason")
    return out


def wait(coord: Coord, timeout_s: float) -> bool:
    """Until nothing is in flight (True) or the timeout (False); blocks on FINISHED."""
    deadline = time.monotonic() + timeout_s
    with coord.listening(FINISHED) as heard:
        while inflight(coord):
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if heard(lambda _: True, left):
                # deliveries finish in bursts: take in the rest of one (up to 50 ms) before
                # counting again (a count reads every bucket)
                heard(lambda _: False, min(0.05, max(0.0, deadline - time.monotonic())))
    return True


def await_finished(coord: Coord, delivery_ids: Sequence[str], timeout_s: float
                   ) -> list[dict[str, Any]]:
    """The deliveries' states once every one is done or dead-lettered, or at the timeout (as
    ``statuses``); blocks on FINISHED, re-reading only when one of these finished."""
    deadline = time.monotonic() + timeout_s
    wanted = set(delivery_ids)
    with coord.listening(FINISHED) as heard:
        while True:
            rows = statuses(coord, delivery_ids)
            left = deadline - time.monotonic()
            if all(r["state"] in FINAL for r in rows) or left <= 0:
                return rows
            heard(wanted.__contains__, left)
