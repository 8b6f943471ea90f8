"""The reaper: nothing accepted is left behind.

Every worker runs it in a background thread of its main process (``start``); a Redis key lets
one of them act per interval. Each pass:

- re-publishes extract for deliveries whose outbox deadline passed and that are either
  queued but no longer on the queue (the message was lost: kombu's Redis transport pops a
  message before it records it as unacked, and a worker killed in between loses it), or
  started by a process that stopped beating (died, frozen). The extracting process pushes
  the deadline on while it works, so a long LLM call is not a stall; a delivery still
  waiting on the queue behind a backlog is not one either (its deadline just moves on);
- claims users whose mailbox holds work and whom nobody holds (a drain that died, or froze
  past its lease) and publishes their drain;
- records a point of the metrics' history (``metrics.record_sample``: the console's charts).

Repeats are harmless: extraction is idempotent, and a drain's writes are fenced.
"""

from __future__ import annotations

import threading
import time

import redis
import structlog
from kombu.exceptions import OperationalError

from . import counters, outbox, queues, section, wiring
from .coord import Coord
from .layout import REAPER
from .publish import publish_apply, publish_extract
from .wire import EXTRACT_QUEUE, QUEUE_PAGE, message_args

log = structlog.get_logger(__name__)


def reap(now: float) -> tuple[int, int]:
    """One pass; returns (deliveries re-published, users woken). Does nothing if another
    worker's reaper ran within the interval."""
    coord, s = wiring.coord(), wiring.settings()
    if not _my_turn(coord, s.reaper_interval_s):
        return 0, 0
    from .metrics import record_sample  # noqa: PLC0415

    record_sample(coord, now)  # the console's charts: one point per interval
    republished = 0
    due = outbox.due(coord, now)
    on_queue = queued_deliveries(coord) if due else set()
    for delivery_id in due:
        record = outbox.delivery(coord, delivery_id)
        if record is None:
            outbox.remove(coord, delivery_id)
            continue
        outbox.touch(coord, delivery_id, now + s.stall_s)
        if record.state == "queued" and delivery_id in on_queue:
            continue  # waiting behind a backlog, not lost
        publish_extract(delivery_id, record.user_id)
        republished += 1
    woken = section.wake_orphans(coord, s.claim_s, publish_apply)
    if republished or woken:
        log.warning("reaper: re-published stalled work", deliveries=republished, users=woken)
        counters.count(coord, "reaped", republished + woken)
    return republished, woken


def _my_turn(coord: Coord, interval_s: float) -> bool:
    """Whether this worker's reaper makes this pass (no other one did in the interval)."""
    return bool(coord.r.set(REAPER, "1", nx=True, px=max(1, int(interval_s * 900))))


def queued_deliveries(coord: Coord, queue: str = EXTRACT_QUEUE,
                      page: int = QUEUE_PAGE) -> set[str]:
    """The delivery ids of the extract messages waiting on the broker's queue, read a page at
    a time: Redis runs one command at a time, and one read of a deep backlog (thousands of
    messages, megabytes) would hold up every agent's enqueue and every worker behind it.

    Producers push at the head and workers pop from the tail, so reading from the head a
    page at a time misses nothing that was queued when it began and still is: a push moves
    what is left to read further on (some messages are read twice), a pop only shortens the
    list. A message pushed meanwhile may be missed, but ``reap`` asks only about deliveries
    due before it read, published before that."""
    found: set[str] = set()
    start = 0
    while True:
        rows = queues.page(coord, queue, start, page)
        for raw in rows:
            args = message_args(raw)
            if args and isinstance(args[0], dict) and args[0].get("delivery_id"):
                found.add(str(args[0]["delivery_id"]))
        if len(rows) < page:
            return found
        start += page


def _loop(stop: threading.Event) -> None:
    every = wiring.settings().reaper_interval_s
    while not stop.wait(every):
        try:
            reap(time.time())
        except (redis.RedisError, OperationalError, OSError) as exc:
            log.warning("reaper: pass failed; next pass retries", error=str(exc))


def start() -> threading.Event:
    """Run the reaper in a daemon thread; set the returned event to stop it."""
    stop = threading.Event()
    threading.Thread(target=_loop, args=(stop,), name="memq-reaper", daemon=True).start()
    return stop
