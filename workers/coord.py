"""Coordination state in Redis. Keys are all under ``memq:``.

A delivery (one enqueued batch) lives here from the moment it is accepted until it is done:

    memq:delivery:<id>   hash: user, batch (JSON), enqueued_at, state      (the outbox record)
    memq:outbox          zset: delivery id -> when to re-publish it if it made no progress
    memq:extracted:<id>  what extract found (candidates and vectors), for the user's drain
    memq:mbox:<user>     zset: the user's extracted deliveries -> event time (the mailbox)
    memq:mboxes          set: users whose mailbox may hold work
    memq:owner:<user>    the claim of the one worker draining that mailbox (a lease)
    memq:turns:<user>    the turns (``<session>/<turn>``) already applied
    memq:inflight        deliveries not yet done (``memq wait``)

Messages on the broker carry ids only (schemas.StageMessage). The owner claim is not what
keeps a user's writes correct -- the graph's version fence is (pipeline.service) -- it keeps
workers from doing the same user's work twice: a delivery that finds its user claimed is left
in the mailbox for the claimant, who drains until the mailbox is empty and only then lets go,
atomically with the check (``release``), so nothing posted meanwhile is stranded.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

import redis

INFLIGHT = "memq:inflight"
DEAD = "memq:deadletter"
OUTBOX = "memq:outbox"
MAILBOXES = "memq:mboxes"

_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""
_DROP = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""
# KEYS: dead letters, outcome, delivery, extracted, outbox, inflight, metrics, mailbox (or "");
# ARGV: entry, cap, delivery id, ttl, metrics field. 0: the delivery was done already (a stale
# duplicate failed after another run finished it: nothing to record), 1: dead-lettered.
_DEAD = """
local outcome = redis.call('get', KEYS[2])
if outcome and string.sub(outcome, 1, 4) == 'done' and redis.call('exists', KEYS[3]) == 0 then
  return 0
end
redis.call('rpush', KEYS[1], ARGV[1])
redis.call('ltrim', KEYS[1], -tonumber(ARGV[2]), -1)
if KEYS[8] ~= '' then redis.call('zrem', KEYS[8], ARGV[3]) end
redis.call('zrem', KEYS[5], ARGV[3])
redis.call('del', KEYS[3], KEYS[4])
redis.call('srem', KEYS[6], ARGV[3])
redis.call('set', KEYS[2], 'dead_lettered', 'EX', tonumber(ARGV[4]))
redis.call('hincrby', KEYS[7], ARGV[5], 1)
return 1
"""
# KEYS: owner, mailbox, mailboxes; ARGV: token, user. 1: released; 0: work is waiting, keep
# draining; -1: not the owner.
_RELEASE = """
if redis.call('get', KEYS[1]) ~= ARGV[1] then return -1 end
if redis.call('zcard', KEYS[2]) > 0 then return 0 end
redis.call('del', KEYS[1])
redis.call('srem', KEYS[3], ARGV[2])
return 1
"""
# Post an extracted delivery to its user's mailbox and claim the user if nobody has.
# KEYS: extracted, mailbox, mailboxes, outbox, delivery, owner
# ARGV: extracted json, ttl s, score, delivery id, user, new token, lease ms
_POST = """
redis.call('set', KEYS[1], ARGV[1], 'EX', ARGV[2])
redis.call('zadd', KEYS[2], ARGV[3], ARGV[4])
redis.call('sadd', KEYS[3], ARGV[5])
redis.call('zrem', KEYS[4], ARGV[4])
redis.call('hset', KEYS[5], 'state', 'extracted')
if redis.call('set', KEYS[6], ARGV[6], 'NX', 'PX', ARGV[7]) then return ARGV[6] end
return false
"""

# Accept deliveries and publish their messages: the records first, so a message is never read
# before its delivery is recorded. One command, not a pipeline of 3n + m: an agent's
# Client.add packs and parses one request and one reply.
# KEYS: outbox, inflight, each delivery's record, each message's queue
# ARGV: enqueued_at, deadline, n, then per delivery: id, user, batch; then the m messages
_ACCEPT = """
local n = tonumber(ARGV[3])
for i = 1, n do
  local id = ARGV[1 + 3 * i]
  redis.call('hset', KEYS[2 + i], 'user', ARGV[2 + 3 * i], 'batch', ARGV[3 + 3 * i],
             'enqueued_at', ARGV[1], 'state', 'queued')
  redis.call('zadd', KEYS[1], ARGV[2], id)
  redis.call('sadd', KEYS[2], id)
end
for j = 3 + n, #KEYS do
  redis.call('lpush', KEYS[j], ARGV[4 + 3 * n + j - (3 + n)])
end
return n
"""


def _delivery_key(delivery_id: str) -> str:
    return f"memq:delivery:{delivery_id}"


def _extracted_key(delivery_id: str) -> str:
    return f"memq:extracted:{delivery_id}"


def _outcome_key(delivery_id: str) -> str:
    return f"memq:outcome:{delivery_id}"  # done | dead_lettered, kept OUTCOME_TTL_S


OUTCOME_TTL_S = 7 * 24 * 3600


def _mbox_key(user_id: str) -> str:
    return f"memq:mbox:{user_id}"


def _owner_key(user_id: str) -> str:
    return f"memq:owner:{user_id}"


def _ledger_key(user_id: str) -> str:
    return f"memq:turns:{user_id}"


def _forgotten_key(user_id: str) -> str:
    return f"memq:forgotten:{user_id}"


def new_token() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True)
class Delivery:
    delivery_id: str
    user_id: str
    batch: str  # the IngestBatch as JSON
    enqueued_at: float
    state: str  # queued | started | extracted


class Coord:
    def __init__(self, client: redis.Redis, *, ledger_ttl_s: int = 90 * 24 * 3600,
                 dead_max: int = 10_000) -> None:
        self.r = client
        self.ledger_ttl_s, self.dead_max = ledger_ttl_s, dead_max
        self._accept = self.r.register_script(_ACCEPT)
        self._post = self.r.register_script(_POST)
        self._release = self.r.register_script(_RELEASE)
        self._renew = self.r.register_script(_RENEW)
        self._drop = self.r.register_script(_DROP)
        self._dead = self.r.register_script(_DEAD)

    @classmethod
    def from_url(cls, url: str, **limits: int) -> Coord:
        return cls(redis.Redis.from_url(url, decode_responses=True), **limits)

    # -- the outbox: a delivery is recorded before it is published -----------------------------
    def accept(self, deliveries: Sequence[tuple[str, str, str]], enqueued_at: float,
               deadline: float, messages: Sequence[tuple[str, str]] = ()) -> None:
        """Record (delivery id, user, batch JSON) entries, then push ``messages`` ((queue,
        broker message) pairs, workers.wire.task_message), all in one round trip. The
        records go first: a message is never read before its delivery is recorded."""
        keys = [OUTBOX, INFLIGHT, *(_delivery_key(d) for d, _, _ in deliveries),
                *(queue for queue, _ in messages)]
        args: list[str | int] = [repr(enqueued_at), repr(deadline), len(deliveries)]
        for row in deliveries:
            args += row
        args += [message for _, message in messages]
        self._accept(keys=keys, args=args)

    def publish(self, queue: str, message: str) -> None:
        """One broker message (workers.wire.task_message) onto its queue."""
        self.r.lpush(queue, message)

    def delivery(self, delivery_id: str) -> Delivery | None:
        raw = cast(dict[str, str], self.r.hgetall(_delivery_key(delivery_id)))
        if not raw or "batch" not in raw:
            return None
        return Delivery(delivery_id, raw["user"], raw["batch"], float(raw["enqueued_at"]),
                        raw.get("state", "queued"))

    def start(self, delivery_id: str, deadline: float) -> None:
        """Extraction began: from now on only the heartbeat keeps it from being re-published."""
        pipe = self.r.pipeline(transaction=False)
        pipe.hset(_delivery_key(delivery_id), "state", "started")
        pipe.zadd(OUTBOX, {delivery_id: deadline}, xx=True)
        pipe.execute()

    def touch(self, delivery_id: str, deadline: float) -> None:
        """Progress: not due for re-publishing before ``deadline``."""
        self.r.zadd(OUTBOX, {delivery_id: deadline}, xx=True)

    def due(self, now: float, limit: int = 500) -> list[str]:
        return cast(list[str], self.r.zrangebyscore(OUTBOX, "-inf", now, start=0, num=limit))

    @contextmanager
    def heartbeat(self, delivery_id: str, stall_s: float) -> Iterator[None]:
        """Keep the delivery from being re-published while this process works on it (an LLM
        call may take minutes); a dead or frozen process stops beating, and the reaper
        re-publishes the delivery ``stall_s`` later."""
        with _beating(lambda: self.touch(delivery_id, time.time() + stall_s), stall_s / 4):
            yield

    # -- the mailbox ---------------------------------------------------------------------------
    def post(self, user_id: str, delivery_id: str, event_time: float, extracted: str,
             ttl_s: int, lease_s: float) -> str | None:
        """Put an extracted delivery in its user's mailbox; returns a claim token when this
        call claimed the user (the caller then publishes the drain), None when someone holds
        it (and will drain this too)."""
        token = self._post(
            keys=[_extracted_key(delivery_id), _mbox_key(user_id), MAILBOXES, OUTBOX,
                  _delivery_key(delivery_id), _owner_key(user_id)],
            args=[extracted, ttl_s, event_time, delivery_id, user_id, new_token(),
                  int(lease_s * 1000)])
        return cast(str | None, token)

    def mailbox(self, user_id: str, limit: int) -> list[str]:
        return cast(list[str], self.r.zrange(_mbox_key(user_id), 0, limit - 1))

    def extracted(self, delivery_ids: Sequence[str]) -> list[str | None]:
        if not delivery_ids:
            return []
        return cast(list[str | None], self.r.mget([_extracted_key(d) for d in delivery_ids]))

    def deliveries(self, delivery_ids: Sequence[str]) -> list[Delivery | None]:
        pipe = self.r.pipeline(transaction=False)
        for d in delivery_ids:
            pipe.hgetall(_delivery_key(d))
        out: list[Delivery | None] = []
        for d, raw in zip(delivery_ids, pipe.execute(), strict=True):
            out.append(Delivery(d, raw["user"], raw["batch"], float(raw["enqueued_at"]),
                                raw.get("state", "queued")) if raw and "batch" in raw else None)
        return out

    def requeue(self, user_id: str, delivery_ids: Sequence[str], deadline: float) -> None:
        """Out of the mailbox, back to extraction (what extract found expired)."""
        pipe = self.r.pipeline(transaction=False)
        for d in delivery_ids:
            pipe.zrem(_mbox_key(user_id), d)
            pipe.hset(_delivery_key(d), "state", "queued")
            pipe.zadd(OUTBOX, {d: deadline})
        pipe.execute()

    def finish(self, user_id: str, delivery_ids: Sequence[str],
               refs: Sequence[str] = ()) -> None:
        """Done: the turns applied (``refs``), the deliveries and all they left here gone."""
        pipe = self.r.pipeline(transaction=False)
        if refs:
            pipe.sadd(_ledger_key(user_id), *refs)
            pipe.expire(_ledger_key(user_id), self.ledger_ttl_s)
        for d in delivery_ids:
            pipe.zrem(_mbox_key(user_id), d)
            pipe.zrem(OUTBOX, d)
            pipe.delete(_delivery_key(d), _extracted_key(d))
            pipe.srem(INFLIGHT, d)
            # "done <user>": whose it was stays known (a tenant's API key sees its own only)
            pipe.set(_outcome_key(d), f"done {user_id}", ex=OUTCOME_TTL_S)
        pipe.execute()

    # -- the claim on a user -------------------------------------------------------------------
    def claim(self, user_id: str, lease_s: float, token: str | None = None) -> str | None:
        token = token or new_token()
        if self.r.set(_owner_key(user_id), token, nx=True, px=int(lease_s * 1000)):
            return token
        return None

    def owner(self, user_id: str) -> str | None:
        return cast(str | None, self.r.get(_owner_key(user_id)))

    def renew(self, user_id: str, token: str, lease_s: float) -> bool:
        return bool(self._renew(keys=[_owner_key(user_id)], args=[token, int(lease_s * 1000)]))

    def let_go(self, user_id: str, token: str) -> None:
        """Drop the claim if it is still ours, whatever waits (the reaper claims it again)."""
        self._drop(keys=[_owner_key(user_id)], args=[token])

    def release(self, user_id: str, token: str) -> int:
        """1: let go (mailbox empty); 0: work waiting, keep draining; -1: not the owner."""
        return int(self._release(keys=[_owner_key(user_id), _mbox_key(user_id), MAILBOXES],
                                 args=[token, user_id]))

    @contextmanager
    def keeping(self, user_id: str, token: str, lease_s: float) -> Iterator[None]:
        """Renew the claim in the background while the holder works."""
        with _beating(lambda: self.renew(user_id, token, lease_s), lease_s / 3):
            yield

    def orphans(self) -> list[str]:
        """Users whose mailbox holds work and whom nobody has claimed (the claimant died, or
        was frozen past its lease); users with an empty mailbox are dropped from the set."""
        users = sorted(cast(set[str], self.r.smembers(MAILBOXES)))
        if not users:
            return []
        pipe = self.r.pipeline(transaction=False)
        for u in users:
            pipe.exists(_owner_key(u))
            pipe.zcard(_mbox_key(u))
        flags = pipe.execute()
        out = []
        for i, u in enumerate(users):
            owned, waiting = flags[2 * i], flags[2 * i + 1]
            if not owned and waiting:
                out.append(u)
        return out

    @contextmanager
    def holding(self, user_id: str, lease_s: float, wait_s: float,
                handoff: Callable[[str, str], None]) -> Iterator[str | None]:
        """The claim, for work outside the pipeline (check, lifecycle, forget): waits up to
        ``wait_s`` for the drain that holds it; yields the token, or None. On exit, deliveries
        posted meanwhile are handed on with the claim: ``handoff(user, token)`` publishes the
        drain."""
        deadline = time.monotonic() + wait_s
        token = self.claim(user_id, lease_s)
        pause = 0.05
        while token is None and time.monotonic() < deadline:
            time.sleep(pause)
            pause = min(1.0, pause * 2)
            token = self.claim(user_id, lease_s)
        try:
            if token is None:
                yield None
            else:
                with self.keeping(user_id, token, lease_s):
                    yield token
        finally:
            if token is not None and self.release(user_id, token) == 0:
                handoff(user_id, token)

    # -- in flight and dead letters --------------------------------------------------------------
    def inflight(self) -> int:
        return int(self.r.scard(INFLIGHT))

    def pending(self, delivery_ids: Sequence[str]) -> int:
        """How many of these deliveries are not done yet."""
        if not delivery_ids:
            return 0
        return sum(cast(list[int], self.r.smismember(INFLIGHT, list(delivery_ids))))

    def dead_letter(self, delivery_id: str, user_id: str | None, stage: str, reason: str,
                    message: dict[str, Any] | None) -> bool:
        """Record the delivery as dead with the reason, and drop what it left here. Not when
        it is done already: a duplicate run (a redelivery, a reaped re-publish) that fails
        after another run finished the delivery does not undo that success. Returns whether
        a dead letter was recorded."""
        entry = {"delivery_id": delivery_id, "user_id": user_id, "stage": stage,
                 "reason": reason, "at": datetime.now(UTC).isoformat(), "message": message}
        # the counter of workers.metrics (its field format), in the same round trip
        field = f"memq_dead_letters_total|stage={stage}|"
        return bool(self._dead(
            keys=[DEAD, _outcome_key(delivery_id), _delivery_key(delivery_id),
                  _extracted_key(delivery_id), OUTBOX, INFLIGHT, "memq:metrics",
                  _mbox_key(user_id) if user_id else ""],
            args=[json.dumps(entry, ensure_ascii=False, default=str), self.dead_max,
                  delivery_id, OUTCOME_TTL_S, field]))

    def statuses(self, delivery_ids: Sequence[str]) -> list[dict[str, Any]]:
        """Each delivery's state: queued | started | extracted | done | dead_lettered (with
        the reason) | unknown; one round trip (plus a dead-letter scan if one died)."""
        pipe = self.r.pipeline(transaction=False)
        for d in delivery_ids:
            pipe.hmget(_delivery_key(d), ["user", "state"])
            pipe.get(_outcome_key(d))
        raw = pipe.execute()
        out: list[dict[str, Any]] = []
        for i, d in enumerate(delivery_ids):
            (user, state), outcome = raw[2 * i], raw[2 * i + 1]
            finished, _, finished_by = (outcome or "").partition(" ")
            out.append({"delivery_id": d, "state": state or finished or "unknown",
                        "user_id": user or finished_by or None, "reason": None})
        if any(row["state"] == "dead_lettered" for row in out):
            dead = {e.get("delivery_id"): e for e in self.dead_letters()}
            for row in out:
                entry = dead.get(row["delivery_id"])
                if row["state"] == "dead_lettered" and entry:
                    row["user_id"], row["reason"] = entry.get("user_id"), entry.get("reason")
        return out

    def dead_letters(self) -> list[dict[str, Any]]:
        return [json.loads(x) for x in cast(list[str], self.r.lrange(DEAD, 0, -1))]

    def take_dead_letters(self, which: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
        """Remove the dead letters ``which`` selects; returns them."""
        taken = []
        for raw in cast(list[str], self.r.lrange(DEAD, 0, -1)):
            entry = json.loads(raw)
            if which(entry) and int(self.r.lrem(DEAD, 1, raw)):
                taken.append(entry)
        return taken

    def wait(self, timeout_s: float, poll_s: float = 0.2) -> bool:
        deadline = time.monotonic() + timeout_s
        while self.inflight():
            if time.monotonic() >= deadline:
                return False
            time.sleep(poll_s)
        return True

    # -- the turn ledger: a turn is applied once -------------------------------------------------
    def unprocessed(self, user_id: str, refs: Sequence[str]) -> set[str]:
        if not refs:
            return set()
        seen = cast(list[int], self.r.smismember(_ledger_key(user_id), list(refs)))
        return {t for t, hit in zip(refs, seen, strict=True) if not hit}

    # -- forgetting: a marker first, so that nothing in flight resurrects the user ---------------
    def mark_forgotten(self, user_id: str, at: float, ttl_s: int = 30 * 24 * 3600) -> None:
        self.r.set(_forgotten_key(user_id), repr(at), ex=ttl_s)

    def forgotten_at(self, user_id: str) -> float | None:
        value = self.r.get(_forgotten_key(user_id))
        return float(cast(str, value)) if value else None

    def is_forgotten(self, user_id: str, enqueued_at: float) -> bool:
        """True for work enqueued before the user was forgotten: it must write nothing."""
        at = self.forgotten_at(user_id)
        return at is not None and enqueued_at <= at

    def forget_traces(self, user_id: str) -> int:
        """Delete what Redis holds of the user: the turn ledger, and every delivery of the
        user (batches carry content) in the mailbox or the outbox; they count as done."""
        mine = set(self.mailbox(user_id, 1_000_000))
        outbox = cast(list[str], self.r.zrange(OUTBOX, 0, -1))
        pipe = self.r.pipeline(transaction=False)
        for d in outbox:
            pipe.hget(_delivery_key(d), "user")
        mine |= {d for d, owner in zip(outbox, pipe.execute(), strict=True) if owner == user_id}
        existed = int(self.r.exists(_ledger_key(user_id))) + len(mine)
        self.finish(user_id, sorted(mine))
        self.r.delete(_ledger_key(user_id))
        return existed


@contextmanager
def _beating(beat: Any, every_s: float) -> Iterator[None]:
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(every_s):
            try:
                beat()
            except redis.RedisError:
                continue  # the next beat tries again; the work itself will see Redis down

    thread = threading.Thread(target=loop, name="memq-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)
