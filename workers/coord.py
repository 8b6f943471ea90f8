"""Coordination state in Redis: in-flight deliveries, the dead-letter queue, per-user locks,
the per-turn ledger and the plan cache. Keys are all under ``memq:``.

Per-user lock: ``SET memq:lock:<user> <delivery> NX PX <lease>``. It is taken by the dedupe
stage and released by the last upsert, so dedupe -> merge -> upserts of one user never
interleave with another batch of that user; other users proceed in parallel. The owner renews
the lease at every stage; a worker killed while holding it loses it when the lease runs out,
and the redelivered task (acks_late) takes it again.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, cast

import redis

INFLIGHT = "memq:inflight"
DEAD = "memq:deadletter"

_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
"""


def _lock_key(user_id: str) -> str:
    return f"memq:lock:{user_id}"


def _ledger_key(user_id: str) -> str:
    return f"memq:turns:{user_id}"


def _plan_key(batch_id: str) -> str:
    return f"memq:plan:{batch_id}"


def _plans_key(user_id: str) -> str:
    return f"memq:plans:{user_id}"  # the user's plan keys, so forgetting can find them


def _forgotten_key(user_id: str) -> str:
    return f"memq:forgotten:{user_id}"


class Coord:
    def __init__(self, client: redis.Redis) -> None:
        self.r = client

    @classmethod
    def from_url(cls, url: str) -> Coord:
        return cls(redis.Redis.from_url(url, decode_responses=True))

    # -- in-flight and dead letters ----------------------------------------------------------
    def track(self, delivery_id: str) -> None:
        self.r.sadd(INFLIGHT, delivery_id)

    def finish(self, delivery_id: str) -> None:
        self.r.srem(INFLIGHT, delivery_id)

    def inflight(self) -> int:
        return int(self.r.scard(INFLIGHT))

    def dead_letter(self, delivery_id: str, stage: str, reason: str,
                    message: dict[str, Any] | None) -> None:
        entry = {"delivery_id": delivery_id, "stage": stage, "reason": reason,
                 "at": datetime.now(UTC).isoformat(), "message": message}
        pipe = self.r.pipeline()
        pipe.rpush(DEAD, json.dumps(entry, ensure_ascii=False, default=str))
        pipe.srem(INFLIGHT, delivery_id)
        pipe.execute()

    def dead_letters(self) -> list[dict[str, Any]]:
        return [json.loads(x) for x in cast(list[str], self.r.lrange(DEAD, 0, -1))]

    def wait(self, timeout_s: float, poll_s: float = 0.2) -> bool:
        deadline = time.monotonic() + timeout_s
        while self.inflight():
            if time.monotonic() >= deadline:
                return False
            time.sleep(poll_s)
        return True

    # -- per-user lock -------------------------------------------------------------------------
    def acquire(self, user_id: str, token: str, lease_s: float) -> bool:
        lease_ms = int(lease_s * 1000)
        if self.r.set(_lock_key(user_id), token, nx=True, px=lease_ms):
            return True
        return self.renew(user_id, token, lease_s)  # re-entrant for the same delivery

    def renew(self, user_id: str, token: str, lease_s: float) -> bool:
        return bool(self.r.eval(_RENEW, 1, _lock_key(user_id), token, int(lease_s * 1000)))

    def release(self, user_id: str, token: str) -> None:
        self.r.eval(_RELEASE, 1, _lock_key(user_id), token)

    @contextmanager
    def holding(self, user_id: str, token: str, lease_s: float,
                wait_s: float) -> Iterator[bool]:
        """The user's lock for a job outside the chain (check, run, forget): waits up to
        ``wait_s``; yields whether it is held."""
        deadline = time.monotonic() + wait_s
        held = self.acquire(user_id, token, lease_s)
        while not held and time.monotonic() < deadline:
            time.sleep(0.1)
            held = self.acquire(user_id, token, lease_s)
        try:
            yield held
        finally:
            if held:
                self.release(user_id, token)

    # -- per-turn ledger: a (user, turn id) is processed once -------------------------------------
    def unprocessed(self, user_id: str, turn_ids: Sequence[str]) -> set[str]:
        if not turn_ids:
            return set()
        seen = cast(list[int], self.r.smismember(_ledger_key(user_id), list(turn_ids)))
        return {t for t, hit in zip(turn_ids, seen, strict=True) if not hit}

    def mark_processed(self, user_id: str, turn_ids: Iterable[str]) -> None:
        turn_ids = list(turn_ids)
        if turn_ids:
            self.r.sadd(_ledger_key(user_id), *turn_ids)

    # -- plan cache: a batch is planned once, applied idempotently ---------------------------------
    def save_plan(self, user_id: str, batch_id: str, plan_json: str, ttl_s: int) -> str:
        """Store the plan unless one exists; return the plan that is now authoritative."""
        key = _plan_key(batch_id)
        if self.r.set(key, plan_json, nx=True, ex=ttl_s):
            self.r.sadd(_plans_key(user_id), key)
            self.r.expire(_plans_key(user_id), ttl_s)
            return plan_json
        return cast(str, self.r.get(key)) or plan_json

    def load_plan(self, batch_id: str) -> str | None:
        return cast(str | None, self.r.get(_plan_key(batch_id)))

    # -- forgetting: a marker first, so that nothing in flight resurrects the user -------------
    def mark_forgotten(self, user_id: str, at: float, ttl_s: int = 30 * 24 * 3600) -> None:
        self.r.set(_forgotten_key(user_id), repr(at), ex=ttl_s)

    def forgotten_at(self, user_id: str) -> float | None:
        value = self.r.get(_forgotten_key(user_id))
        return float(cast(str, value)) if value else None

    def is_forgotten(self, user_id: str, enqueued_at: float) -> bool:
        """True for work enqueued before the user was forgotten: it must write nothing."""
        at = self.forgotten_at(user_id)
        return at is not None and enqueued_at <= at

    def drop_plans(self, user_id: str, which: Callable[[str], bool]) -> int:
        """Delete the user's cached plans whose JSON ``which`` selects."""
        keys = sorted(cast(set[str], self.r.smembers(_plans_key(user_id))))
        gone = [k for k in keys if which(cast(str | None, self.r.get(k)) or "")]
        if not gone:
            return 0
        self.r.srem(_plans_key(user_id), *gone)
        return int(self.r.delete(*gone))

    def forget_traces(self, user_id: str) -> int:
        """Delete what Redis holds of the user: plans (they carry content), the turn ledger."""
        plans = list(cast(set[str], self.r.smembers(_plans_key(user_id))))
        keys = [*plans, _plans_key(user_id), _ledger_key(user_id)]
        return int(self.r.delete(*keys))
