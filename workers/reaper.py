"""The reaper: nothing accepted is left behind.

Every worker runs it in a background thread of its main process (``start``); a Redis key lets
one of them act per interval. Each pass:

- re-publishes extract for deliveries whose outbox deadline passed: never extracted (the
  message was lost: kombu's Redis transport pops a message before it records it as unacked,
  and a worker killed in between loses it) or whose extracting process stopped beating (died,
  frozen). Deadlines are pushed on by the extracting process while it works, so a long LLM
  call is not mistaken for a stall;
- claims users whose mailbox holds work and whom nobody holds (a drain that died, or froze
  past its lease) and publishes their drain.

Repeats are harmless: extraction is idempotent, and a drain's writes are fenced.
"""

from __future__ import annotations

import threading
import time

import redis
import structlog
from kombu.exceptions import OperationalError

from workers import wiring

log = structlog.get_logger(__name__)
LEADER = "memq:reaper"


def reap(now: float) -> tuple[int, int]:
    """One pass; returns (deliveries re-published, users woken). Does nothing if another
    worker's reaper ran within the interval."""
    from workers.tasks import publish_apply, publish_extract  # noqa: PLC0415

    coord, s = wiring.coord(), wiring.settings()
    if not coord.r.set(LEADER, "1", nx=True, px=max(1, int(s.reaper_interval_s * 900))):
        return 0, 0
    republished = 0
    for delivery_id in coord.due(now):
        record = coord.delivery(delivery_id)
        if record is None:
            coord.r.zrem("memq:outbox", delivery_id)
            continue
        coord.touch(delivery_id, now + s.stall_s)
        publish_extract(delivery_id, record.user_id)
        republished += 1
    woken = 0
    for user_id in coord.orphans():
        token = coord.claim(user_id, s.lock_lease_s)
        if token is not None:
            publish_apply(user_id, token)
            woken += 1
    if republished or woken:
        log.warning("reaper: re-published stalled work", deliveries=republished, users=woken)
        coord.r.incrby("memq:stats:reaped", republished + woken)
    return republished, woken


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
