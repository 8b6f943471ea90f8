"""Coordination state in Redis. Keys are all under ``memq:``.

Redis Cluster: every key a script or a transaction touches together hashes to one slot. The
slot is the user's **bucket** (``bucket``: one of BUCKETS, by the user id's CRC-32), written as
the hash tag ``{m<xx>}`` right after the key's kind, before anything a caller chose; a
delivery's id begins with its user's bucket (``new_delivery_id``), so its records land there
too. The indexes the reaper and ``memq wait`` read (outbox, in flight, mailboxes, dead letters)
are one per bucket, read all together (BUCKETS keys, one round trip per node). Keys of one
bucket (``{b}`` below) live together:

    memq:delivery:{b}:<id>   hash: user, batch (JSON), enqueued_at, state  (the outbox record)
    memq:outbox:{b}          zset: delivery id -> when to re-publish it if it made no progress
    memq:extracted:{b}:<id>  what extract found (candidates and vectors), for the user's drain
    memq:outcome:{b}:<id>    done <user> | dead_lettered, kept OUTCOME_TTL_S
    memq:mbox:{b}:<user>     zset: the user's extracted deliveries -> event time (the mailbox)
    memq:mboxes:{b}          set: users whose mailbox may hold work
    memq:owner:{b}:<user>    the claim of the one worker draining that mailbox (a lease)
    memq:turns:{b}:<user>    the turns (``<session>/<turn>``) already applied
    memq:forgotten:{b}:<user>  when the user was last forgotten (the marker)
    memq:shard:{b}:<user>    the user's store shards (workers.shards)
    memq:inflight:{b}        deliveries not yet done (``memq wait``)
    memq:deadletter:{b}      list: dead letters with their reasons (``memq deadletters``)
    memq:reaper, memq:stats:<name>, memq:metrics   the reaper's turn, counters, metrics
    memq:metrics:samples list: the metrics' recent history (the console's charts)

The broker's queues (kombu's lists) may live on another Redis (``Settings.state_url``: kombu
has no Redis Cluster transport): messages are pushed there after their records are here.
Every key of memq's own is spelled here and nowhere else (workers.auth keeps its keys under
``memq:auth:``); the Lua scripts are files of ``workers/lua/``, loaded by name (:func:`lua`).
Nothing waits by polling: a claim let go is published on ``memq:released`` and a finished
delivery on ``memq:finished``; who waits subscribes first, then checks, then blocks
(``holding``, ``await_finished``, ``wait``), never longer than the lease it waits out.

The words, here and in every module that uses this one: a delivery is **posted** to its
user's mailbox; the first poster **claims** the user (the claim: a token with a lease, kept
``memq:owner:<user>``) and **drains** the mailbox, **renewing** the claim in the background;
an empty mailbox **releases** it, a drain that yields **hands off** (publishes the next drain
with the claim); a failed drain **drops** it (the reaper claims the user again). Work outside
the pipeline (check, lifecycle jobs, forget) **holds** the claim for its span (``hold``).
A delivery's extraction asks once whether its user was **forgotten** since it was enqueued
(``is_forgotten``, before any work); its post asks again, atomically with posting (a user
forgotten meanwhile gets nothing posted), so the drain never needs to ask: what is in a
mailbox was posted before the forgetting, and forget, holding the claim, empties it.

Messages on the broker carry ids only (schemas.StageMessage). The claim is not what
keeps a user's writes correct -- the graph's version fence is (pipeline.service) -- it keeps
workers from doing the same user's work twice: a delivery that finds its user claimed is left
in the mailbox for the claimant, who drains until the mailbox is empty and only then lets go,
atomically with the check (``release``), so nothing posted meanwhile is stranded.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache, partial
from pathlib import Path
from typing import Any, cast

import redis
from redis.backoff import ExponentialWithJitterBackoff
from redis.cluster import RedisCluster
from redis.retry import Retry

BUCKETS = 256  # the users' buckets: the Redis Cluster slots memq's per-user keys use
INFLIGHT = "memq:inflight"  # one per bucket: inflight_key(b), and so on
DEAD = "memq:deadletter"
OUTBOX = "memq:outbox"
MAILBOXES = "memq:mboxes"
REAPER = "memq:reaper"  # the reaper pass of the moment (one worker's, for the interval)
METRICS = "memq:metrics"  # workers.metrics' series (a hash, one field a series)
SAMPLES = "memq:metrics:samples"  # workers.metrics.record_sample's points (a capped list)
_STATS = "memq:stats:"  # counters: replans, reaped

# Pub/Sub channels: waiting is blocking on one of these, never polling
RELEASED = "memq:released"  # a user's claim was let go (the message: the claim's key)
FINISHED = "memq:finished"  # a delivery is done or dead-lettered (the message: its id)
_LUA = Path(__file__).with_name("lua")
# A cluster's node that is down fails a call within ~0.2 s (redis-py's default retries ten
# times, up to 1 s apart: ~5 s a call): the task's backoff is the retry layer, and a worker
# goes on with the users of the other nodes meanwhile (best-effort counters, the metrics and
# the webhook lookup live on one node each).
CONNECT_TIMEOUT_S = 5.0


@cache
def lua(name: str) -> str:
    """A Lua script of ``workers/lua/`` by name (as the Cypher of pipeline/adapters/neo4j)."""
    return (_LUA / f"{name}.lua").read_text(encoding="utf-8")


def bucket(user_id: str) -> int:
    """The user's bucket: its keys' Redis Cluster slot (see the module's docstring)."""
    return zlib.crc32(user_id.encode("utf-8", "surrogatepass")) % BUCKETS


def tag(b: int) -> str:
    return f"{{m{b:02x}}}"


def user_tag(user_id: str) -> str:
    """The hash tag of the user's keys (``{m<bucket>}``), placed before the id itself, so no
    brace a user id holds can move the key to another slot."""
    return tag(bucket(user_id))


def new_delivery_id(user_id: str) -> str:
    """A fresh delivery id (32 hex digits) whose first two name the user's bucket."""
    return f"{bucket(user_id):02x}{uuid.uuid4().hex[2:]}"


def delivery_bucket(delivery_id: str) -> int:
    """The bucket a delivery's records live in: its id's first two hex digits (any other id,
    e.g. a client's typo, still has one bucket: its CRC-32's)."""
    head = delivery_id[:2]
    if len(head) == 2 and all(c in "0123456789abcdef" for c in head):
        return int(head, 16) % BUCKETS
    return bucket(delivery_id)


def _of_delivery(kind: str, delivery_id: str) -> str:
    """``memq:<kind>:{<bucket>}:<id>``: one of a delivery's keys, in its user's slot."""
    return f"memq:{kind}:{tag(delivery_bucket(delivery_id))}:{delivery_id}"


def _of_bucket(index: str, b: int) -> str:
    """``<index>:{<bucket>}``: the bucket's part of one of the indexes."""
    return f"{index}:{tag(b)}"


delivery_key = partial(_of_delivery, "delivery")
_extracted_key = partial(_of_delivery, "extracted")
_outcome_key = partial(_of_delivery, "outcome")  # done <user> | dead_lettered, OUTCOME_TTL_S
outbox_key = partial(_of_bucket, OUTBOX)
inflight_key = partial(_of_bucket, INFLIGHT)
mailboxes_key = partial(_of_bucket, MAILBOXES)
dead_key = partial(_of_bucket, DEAD)


OUTCOME_TTL_S = 7 * 24 * 3600
# events for webhooks (workers.events): the stream every worker dispatches from, the
# subscriptions (tenant -> JSON), the retries due (zset: entry -> when), the given-up list
EVENTS = "memq:events"
EVENTS_GROUP = "memq-hooks"
EVENTS_MAX = 100_000
HOOKS = "memq:hooks"
HOOK_RETRIES = "memq:hooks:retry"
HOOK_DEAD = "memq:hooks:dead"
HOOKS_CACHE_S = 5.0
FINAL = ("done", "dead_lettered", "unknown")  # a delivery in one of these is finished


def user_key(kind: str, user_id: str) -> str:
    """``memq:<kind>:{<bucket>}:<user>``: one of the user's keys, in the user's slot."""
    return f"memq:{kind}:{user_tag(user_id)}:{user_id}"


def _mbox_key(user_id: str) -> str:
    return user_key("mbox", user_id)


def _claim_key(user_id: str) -> str:
    return user_key("owner", user_id)


def _ledger_key(user_id: str) -> str:
    return user_key("turns", user_id)


def _forgotten_key(user_id: str) -> str:
    return user_key("forgotten", user_id)


def new_token() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True)
class Posted:
    """What ``Coord.post`` did. ``posted``: the delivery is in its user's mailbox, and
    ``token`` is the claim when this post claimed the user (the caller publishes the drain;
    None: the claimant drains it). Not posted: the user was ``forgotten`` since the delivery
    was enqueued (the caller takes back what it wrote), or the delivery is gone (finished by
    another run of it)."""

    posted: bool
    token: str | None = None
    forgotten: bool = False
    moved: bool = False  # the user's data moved shards since the extraction: extract again


@dataclass(frozen=True)
class Delivery:
    delivery_id: str
    user_id: str
    batch: str  # the IngestBatch as JSON
    enqueued_at: float
    state: str  # queued | started | extracted
    trace: str | None = None  # the enqueue's traceparent, when traced (workers.tracing)


class Coord:
    """``client``: the coordination state's Redis (a ``redis.cluster.RedisCluster`` too);
    ``broker``: the broker's (its queues), the same one when not given."""

    def __init__(self, client: redis.Redis, *, broker: redis.Redis | None = None,
                 ledger_ttl_s: int = 90 * 24 * 3600, dead_max: int = 10_000) -> None:
        self.r = client
        self.broker = client if broker is None else broker
        # on a cluster: a script's keys in one slot, no script or PUBLISH inside a pipeline
        self.cluster = isinstance(client, RedisCluster)
        self.ledger_ttl_s, self.dead_max = ledger_ttl_s, dead_max
        self._hooks_on, self._hooks_at = False, float("-inf")
        self._accept = self._script("accept")
        self._post = self._script("post")
        self._release = self._script("release")
        self._renew = self._script("renew")
        self._drop = self._script("drop")
        self._dead = self._script("dead")

    @classmethod
    def from_url(cls, url: str, *, broker_url: str | None = None, cluster: bool = False,
                 **limits: int) -> Coord:
        """The state at ``url`` (``cluster``: a Redis Cluster, ``url`` one of its nodes), the
        broker's queues at ``broker_url`` (default: ``url``)."""
        state: redis.Redis = (cast(redis.Redis, RedisCluster.from_url(
            url, decode_responses=True, socket_connect_timeout=CONNECT_TIMEOUT_S,
            retry=Retry(ExponentialWithJitterBackoff(base=0.01, cap=0.1), retries=3)))
            if cluster else redis.Redis.from_url(url, decode_responses=True))
        broker = (None if broker_url in (None, url) and not cluster
                  else redis.Redis.from_url(broker_url or url, decode_responses=True))
        return cls(state, broker=broker, **limits)

    def _script(self, name: str) -> Callable[..., Any]:
        """A Lua script of workers/lua by name. On a cluster not redis-py's Script, whose
        first call on a node (NOSCRIPT) loads the script into every primary and so fails
        while any one is down: EVALSHA on the keys' node, EVAL there when it lacks it."""
        if not self.cluster:
            return cast(Callable[..., Any], self.r.register_script(lua(name)))
        source = lua(name)
        sha = hashlib.sha1(source.encode()).hexdigest()  # the id Redis gives the script

        def call(keys: Sequence[str] = (), args: Sequence[Any] = ()) -> Any:
            try:
                return self.r.evalsha(sha, len(keys), *keys, *args)
            except redis.exceptions.NoScriptError:
                return self.r.eval(source, len(keys), *keys, *args)

        return call

    def _primaries(self) -> list[Any]:
        """The cluster's primaries, in random order (PUBLISH reaches every node from any)."""
        nodes = list(cast(RedisCluster, self.r).get_primaries())  # type: ignore[no-untyped-call]
        random.shuffle(nodes)
        return nodes

    def _publish(self, channel: str, message: str) -> None:
        """PUBLISH; on a cluster through the first primary that answers (redis-py sends it to
        one default node, which may be the one that is down)."""
        if not self.cluster:
            self.r.publish(channel, message)
            return
        error: redis.RedisError | None = None
        for node in self._primaries():
            try:
                self.r.execute_command(  # type: ignore[no-untyped-call]
                    "PUBLISH", channel, message, target_nodes=node)
                return
            except (redis.ConnectionError, redis.TimeoutError) as exc:
                error = exc
        raise error or redis.ConnectionError("no primary of the cluster answers")

    def buckets(self) -> range:
        return range(BUCKETS)

    def _each(self, keys: Sequence[str], command: str, *args: Any) -> list[Any]:
        """``command`` on each key, one round trip (per node on a cluster)."""
        pipe = self.r.pipeline(transaction=False)
        for key in keys:
            getattr(pipe, command)(key, *args)
        return list(pipe.execute())

    def _announce(self, channel: str, messages: Sequence[str]) -> None:
        """PUBLISH each message (a cluster refuses PUBLISH inside a pipeline)."""
        if self.cluster:
            for m in messages:
                self._publish(channel, m)
        elif messages:
            pipe = self.r.pipeline(transaction=False)
            for m in messages:
                pipe.publish(channel, m)
            pipe.execute()

    # -- the outbox: a delivery is recorded before it is published -----------------------------
    def accept(self, deliveries: Sequence[tuple[str, str, str]], enqueued_at: float,
               deadline: float, messages: Sequence[tuple[str, str]] = (),
               trace: str | None = None) -> None:
        """Record (delivery id, user, batch JSON) entries, then push ``messages`` ((queue,
        broker message) pairs, workers.wire.task_message), all in one round trip. The
        records go first: a message is never read before its delivery is recorded.
        ``trace``: the enqueue's traceparent, kept on each record (workers.tracing)."""
        # one call when the queues share the state's Redis (one round trip for an agent's
        # add); else (a cluster, another broker) a call per bucket, then the messages
        together = self.broker is self.r and not self.cluster
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
            self._accept(keys=keys, args=args)
        if not together and messages:
            pipe = self.broker.pipeline(transaction=False)
            for queue, message in messages:
                pipe.lpush(queue, message)
            pipe.execute()

    def publish(self, queue: str, message: str) -> None:
        """One broker message (workers.wire.task_message) onto its queue."""
        self.broker.lpush(queue, message)

    def delivery(self, delivery_id: str) -> Delivery | None:
        raw = cast(dict[str, str], self.r.hgetall(delivery_key(delivery_id)))
        if not raw or "batch" not in raw:
            return None
        return Delivery(delivery_id, raw["user"], raw["batch"], float(raw["enqueued_at"]),
                        raw.get("state", "queued"), raw.get("trace"))

    def start(self, delivery_id: str, deadline: float) -> None:
        """Extraction began: from now on only the heartbeat keeps it from being re-published."""
        pipe = self.r.pipeline(transaction=False)
        pipe.hset(delivery_key(delivery_id), "state", "started")
        pipe.zadd(outbox_key(delivery_bucket(delivery_id)), {delivery_id: deadline}, xx=True)
        pipe.execute()

    def touch(self, delivery_id: str, deadline: float) -> None:
        """Progress: not due for re-publishing before ``deadline``."""
        self.r.zadd(outbox_key(delivery_bucket(delivery_id)), {delivery_id: deadline}, xx=True)

    def due(self, now: float, limit: int = 500) -> list[str]:
        """Deliveries due for re-publishing, at most ``limit`` (from each bucket, the most
        overdue first)."""
        pipe = self.r.pipeline(transaction=False)
        for b in self.buckets():
            pipe.zrangebyscore(outbox_key(b), "-inf", now, start=0, num=limit, withscores=True)
        rows = [row for got in pipe.execute() for row in got]
        return [d for d, _ in sorted(rows, key=lambda r: r[1])[:limit]]

    @contextmanager
    def heartbeat(self, delivery_id: str, stall_s: float) -> Iterator[None]:
        """Keep the delivery from being re-published while this process works on it (an LLM
        call may take minutes); a dead or frozen process stops beating, and the reaper
        re-publishes the delivery ``stall_s`` later."""
        with _beating(lambda: self.touch(delivery_id, time.time() + stall_s), stall_s / 4):
            yield

    # -- the mailbox ---------------------------------------------------------------------------
    def post(self, user_id: str, delivery_id: str, enqueued_at: float, event_time: float,
             extracted: str, ttl_s: int, lease_s: float, shard_epoch: int | None = None
             ) -> Posted:
        """Put an extracted delivery in its user's mailbox, unless the user was forgotten
        since ``enqueued_at``, the delivery is gone, or (``shard_epoch``: the placement the
        extraction wrote its episodes under, workers.shards) the user moved shards since
        (see :class:`Posted`)."""
        from memq.workers.shards import entry_key  # noqa: PLC0415

        b = delivery_bucket(delivery_id)
        answer = self._post(
            keys=[_extracted_key(delivery_id), _mbox_key(user_id), mailboxes_key(bucket(user_id)),
                  outbox_key(b),
                  delivery_key(delivery_id), _claim_key(user_id), _forgotten_key(user_id),
                  entry_key(user_id)],
            args=[extracted, ttl_s, event_time, delivery_id, user_id, new_token(),
                  int(lease_s * 1000), repr(enqueued_at),
                  "" if shard_epoch is None else str(shard_epoch)])
        if isinstance(answer, str):
            return Posted(posted=True, token=answer)
        return Posted(posted=answer == 1, forgotten=answer == -1, moved=answer == -2)

    def mailbox(self, user_id: str, limit: int) -> list[str]:
        return cast(list[str], self.r.zrange(_mbox_key(user_id), 0, limit - 1))

    def extracted(self, delivery_ids: Sequence[str]) -> list[str | None]:
        if not delivery_ids:
            return []
        return cast(list[str | None], self.r.mget([_extracted_key(d) for d in delivery_ids]))

    def deliveries(self, delivery_ids: Sequence[str]) -> list[Delivery | None]:
        pipe = self.r.pipeline(transaction=False)
        for d in delivery_ids:
            pipe.hgetall(delivery_key(d))
        out: list[Delivery | None] = []
        for d, raw in zip(delivery_ids, pipe.execute(), strict=True):
            out.append(Delivery(d, raw["user"], raw["batch"], float(raw["enqueued_at"]),
                                raw.get("state", "queued"), raw.get("trace"))
                       if raw and "batch" in raw else None)
        return out

    def requeue(self, user_id: str, delivery_ids: Sequence[str], deadline: float) -> None:
        """Out of the mailbox, back to extraction (what extract found expired)."""
        pipe = self.r.pipeline(transaction=False)
        for d in delivery_ids:
            pipe.zrem(_mbox_key(user_id), d)
            pipe.hset(delivery_key(d), "state", "queued")
            pipe.zadd(outbox_key(delivery_bucket(d)), {d: deadline})
        pipe.execute()

    def finish(self, user_id: str, delivery_ids: Sequence[str],
               refs: Sequence[str] = ()) -> None:
        """Done: the turns applied (``refs``), the deliveries and all they left here gone."""
        pipe = self.r.pipeline(transaction=False)
        if refs:
            pipe.sadd(_ledger_key(user_id), *refs)
            pipe.expire(_ledger_key(user_id), self.ledger_ttl_s)
        for d in delivery_ids:
            b = delivery_bucket(d)
            pipe.zrem(_mbox_key(user_id), d)
            pipe.zrem(outbox_key(b), d)
            pipe.delete(delivery_key(d))
            pipe.delete(_extracted_key(d))
            pipe.srem(inflight_key(b), d)
            # "done <user>": whose it was stays known (a tenant's API key sees its own only)
            pipe.set(_outcome_key(d), f"done {user_id}", ex=OUTCOME_TTL_S)
        if self.hooked():
            for d in delivery_ids:
                self._emit(pipe, "delivery.done", user_id, delivery_id=d)
        pipe.execute()
        self._announce(FINISHED, list(delivery_ids))

    # -- events (workers.events): ids only, into one stream, when anyone subscribed ------------
    def hooked(self) -> bool:
        """Whether any tenant has a webhook (asked again after HOOKS_CACHE_S): the write path
        emits nothing when none has."""
        now = time.monotonic()
        if now - self._hooks_at > HOOKS_CACHE_S:
            # its node down (a cluster): as last known, asked again after HOOKS_CACHE_S
            with suppress(redis.RedisError):
                self._hooks_on = bool(self.r.exists(HOOKS))
            self._hooks_at = now
        return self._hooks_on

    @staticmethod
    def _emit(pipe: Any, kind: str, user_id: str, **ids: str) -> None:
        key = "\x1f".join([kind, user_id, *(f"{k}={v}" for k, v in sorted(ids.items()))])
        event_id = "ev_" + hashlib.sha256(key.encode()).hexdigest()[:24]
        pipe.xadd(EVENTS, {"id": event_id, "type": kind, "user": user_id,
                           "at": repr(time.time()), **ids},
                  maxlen=EVENTS_MAX, approximate=True)

    def emit(self, kind: str, user_id: str, many: Sequence[dict[str, str]] = (),
             **ids: str) -> None:
        """One event (``ids``), or one per entry of ``many``, when anyone subscribed."""
        if not self.hooked():
            return
        pipe = self.r.pipeline(transaction=False)
        for entry in many or [ids]:
            self._emit(pipe, kind, user_id, **entry)
        pipe.execute()

    def set_hook(self, tenant: str, subscription: str) -> None:
        self.r.hset(HOOKS, tenant, subscription)
        self._hooks_at = float("-inf")

    def remove_hook(self, tenant: str) -> bool:
        self._hooks_at = float("-inf")
        return bool(self.r.hdel(HOOKS, tenant))

    def hooks(self) -> dict[str, str]:
        return cast(dict[str, str], self.r.hgetall(HOOKS))

    # -- the claim on a user -------------------------------------------------------------------
    def claim(self, user_id: str, lease_s: float, token: str | None = None) -> str | None:
        token = token or new_token()
        if self.r.set(_claim_key(user_id), token, nx=True, px=int(lease_s * 1000)):
            return token
        return None

    def reclaim(self, user_id: str, token: str, lease_s: float) -> bool:
        """Whether ``token`` holds the user: a redelivered or retried drain whose claim lapsed
        takes it back if nobody else did."""
        holder = self.claimant(user_id)
        if holder is None:
            return self.claim(user_id, lease_s, token=token) is not None
        return holder == token

    def claimant(self, user_id: str) -> str | None:
        return cast(str | None, self.r.get(_claim_key(user_id)))

    def renew(self, user_id: str, token: str, lease_s: float) -> bool:
        return bool(self._renew(keys=[_claim_key(user_id)], args=[token, int(lease_s * 1000)]))

    def drop_claim(self, user_id: str, token: str) -> None:
        """Drop the claim if it is still ours, whatever waits (the reaper claims it again)."""
        self._drop(keys=[_claim_key(user_id)], args=[token])

    def release(self, user_id: str, token: str) -> int:
        """1: let go (mailbox empty); 0: work waiting, keep draining; -1: not the owner."""
        return int(self._release(
            keys=[_claim_key(user_id), _mbox_key(user_id), mailboxes_key(bucket(user_id))],
            args=[token, user_id]))

    @contextmanager
    def renewing(self, user_id: str, token: str, lease_s: float) -> Iterator[None]:
        """Renew the claim in the background while the holder works."""
        with _beating(lambda: self.renew(user_id, token, lease_s), lease_s / 3):
            yield

    def orphans(self) -> list[str]:
        """Users whose mailbox holds work and whom nobody has claimed (the claimant died, or
        was frozen past its lease); users with an empty mailbox are dropped from the set."""
        users = sorted(u for got in self._each([mailboxes_key(b) for b in self.buckets()],
                                               "smembers") for u in got)
        if not users:
            return []
        pipe = self.r.pipeline(transaction=False)
        for u in users:
            pipe.exists(_claim_key(u))
            pipe.zcard(_mbox_key(u))
        flags = pipe.execute()
        out = []
        for i, u in enumerate(users):
            owned, waiting = flags[2 * i], flags[2 * i + 1]
            if not owned and waiting:
                out.append(u)
        return out

    @contextmanager
    def hold(self, user_id: str, lease_s: float, wait_s: float,
                handoff: Callable[[str, str], None]) -> Iterator[str | None]:
        """The claim, for work outside the pipeline (check, lifecycle, forget): waits up to
        ``wait_s`` for the drain that holds it; yields the token, or None. On exit, deliveries
        posted meanwhile are handed on with the claim: ``handoff(user, token)`` publishes the
        drain."""
        token = self.claim(user_id, lease_s)
        if token is None and wait_s > 0:
            token = self._claim_when_released(user_id, lease_s, time.monotonic() + wait_s)
        try:
            if token is None:
                yield None
            else:
                with self.renewing(user_id, token, lease_s):
                    yield token
        finally:
            if token is not None and self.release(user_id, token) == 0:
                handoff(user_id, token)

    def _claim_when_released(self, user_id: str, lease_s: float, deadline: float
                             ) -> str | None:
        """Block until the user's claim is let go (its holder publishes on RELEASED) or runs
        out (a dead holder's lease: the wait never outlasts it), then claim; None at the
        deadline. Subscribed before each attempt, so a release between the two is seen."""
        key = _claim_key(user_id)
        with self._listening(RELEASED) as heard:
            while (token := self.claim(user_id, lease_s)) is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                lease_left = int(self.r.pttl(key)) / 1000
                heard(lambda message: message == key,
                      min(left, lease_left + 0.01 if lease_left > 0 else 0.01))
        return token

    def _pubsub(self) -> Any:
        """A Pub/Sub connection; on a cluster to the first primary that answers (redis-py's
        goes to the channel's slot's node, which may be down; every node hears a PUBLISH)."""
        if not self.cluster:
            return self.r.pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call, unused-ignore]
        error: redis.RedisError | None = None
        for node in self._primaries():
            try:
                pubsub = self.r.pubsub(  # type: ignore[no-untyped-call, unused-ignore]
                    node=node, ignore_subscribe_messages=True)
                pubsub.ping()
                return pubsub
            except (redis.ConnectionError, redis.TimeoutError) as exc:
                error = exc
        raise error or redis.ConnectionError("no primary of the cluster answers")

    @contextmanager
    def _listening(self, channel: str) -> Iterator[Callable[[Callable[[str], bool], float],
                                                          bool]]:
        """Subscribe to ``channel``; yields ``heard(wanted, timeout)``: True once a message
        ``wanted`` accepts arrived, False at the timeout."""
        pubsub = self._pubsub()
        pubsub.subscribe(channel)
        pubsub.get_message(timeout=1.0)  # the subscription's confirmation: it is in place

        def heard(wanted: Callable[[str], bool], timeout: float) -> bool:
            deadline = time.monotonic() + timeout
            while (left := deadline - time.monotonic()) > 0:
                message = pubsub.get_message(timeout=left)
                if message is not None and wanted(str(message["data"])):
                    return True
            return False

        try:
            yield heard
        finally:
            pubsub.close()

    # -- in flight and dead letters --------------------------------------------------------------
    def inflight(self) -> int:
        return sum(self._each([inflight_key(b) for b in self.buckets()], "scard"))

    def pending(self, delivery_ids: Sequence[str]) -> int:
        """How many of these deliveries are not done yet."""
        pipe = self.r.pipeline(transaction=False)
        for d in delivery_ids:
            pipe.sismember(inflight_key(delivery_bucket(d)), d)
        return sum(int(x) for x in pipe.execute()) if delivery_ids else 0

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
        b = delivery_bucket(delivery_id)
        recorded = bool(self._dead(
            keys=[dead_key(b), _outcome_key(delivery_id), delivery_key(delivery_id),
                  _extracted_key(delivery_id), outbox_key(b), inflight_key(b),
                  _mbox_key(user_id) if user_id else outbox_key(b)],
            args=[json.dumps(entry, ensure_ascii=False, default=str), self.dead_max,
                  delivery_id, OUTCOME_TTL_S, "1" if user_id else ""]))
        if recorded:
            # workers.metrics' counter (its field format): after the fact, in another slot,
            # best effort as every metric (workers.metrics.Metrics._send)
            with suppress(redis.RedisError):
                self.r.hincrby(METRICS, field, 1)
            self._publish(FINISHED, delivery_id)
            if user_id:
                self.emit("delivery.dead_lettered", user_id, delivery_id=delivery_id)
        return recorded

    def statuses(self, delivery_ids: Sequence[str]) -> list[dict[str, Any]]:
        """Each delivery's state: queued | started | extracted | done | dead_lettered (with
        the reason) | unknown; one round trip (plus a dead-letter scan if one died)."""
        pipe = self.r.pipeline(transaction=False)
        for d in delivery_ids:
            pipe.hmget(delivery_key(d), ["user", "state"])
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

    def _dead_raw(self) -> list[tuple[str, str]]:
        """(list key, raw entry) of every bucket's dead letters, oldest first."""
        keys = [dead_key(b) for b in self.buckets()]
        rows = [(key, raw) for key, got in zip(keys, self._each(keys, "lrange", 0, -1),
                                               strict=True) for raw in got]
        return sorted(rows, key=lambda row: _dead_at(row[1]))

    def dead_count(self) -> int:
        return sum(self._each([dead_key(b) for b in self.buckets()], "llen"))

    def dead_letters(self) -> list[dict[str, Any]]:
        return [json.loads(raw) for _, raw in self._dead_raw()]

    def take_dead_letters(self, which: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
        """Remove the dead letters ``which`` selects; returns them."""
        taken = []
        for key, raw in self._dead_raw():
            entry = json.loads(raw)
            if which(entry) and int(self.r.lrem(key, 1, raw)):
                taken.append(entry)
        return taken

    def wait(self, timeout_s: float) -> bool:
        """Until nothing is in flight (True) or the timeout (False); blocks on FINISHED."""
        deadline = time.monotonic() + timeout_s
        with self._listening(FINISHED) as heard:
            while self.inflight():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                if heard(lambda _: True, left):
                    # deliveries finish in bursts: take in the rest of one (up to 50 ms)
                    # before counting again (a count reads every bucket)
                    heard(lambda _: False, min(0.05, max(0.0, deadline - time.monotonic())))
        return True

    def await_finished(self, delivery_ids: Sequence[str], timeout_s: float
                       ) -> list[dict[str, Any]]:
        """The deliveries' states once every one is done or dead-lettered, or at the timeout
        (as ``statuses``); blocks on FINISHED, re-reading only when one of these finished."""
        deadline = time.monotonic() + timeout_s
        wanted = set(delivery_ids)
        with self._listening(FINISHED) as heard:
            while True:
                rows = self.statuses(delivery_ids)
                left = deadline - time.monotonic()
                if all(r["state"] in FINAL for r in rows) or left <= 0:
                    return rows
                heard(wanted.__contains__, left)

    # -- the dead-letter list, the broker's queues, counters -----------------------------------
    def put_dead(self, entry: str) -> None:
        """Append a dead letter as it is (a quarantined message; one put back unrequeued):
        in its delivery's bucket, bucket 0 when it has none."""
        self.r.rpush(dead_key(_dead_bucket(entry)), entry)

    def drop_dead(self, which: Callable[[str], bool]) -> int:
        """Remove the dead letters ``which`` selects by their raw entry; returns how many."""
        dropped = 0
        for key, raw in self._dead_raw():
            if which(raw):
                dropped += int(self.r.lrem(key, 0, raw))
        return dropped

    def queue_keys(self, queues: Sequence[str], scan_count: int = 1000) -> list[str]:
        """The broker's lists of these queues: each queue's own and kombu's priority lists of
        it (SCAN in steps of ``scan_count``: the keyspace holds a key per recent delivery)."""
        keys: set[str] = set(queues)
        for queue in queues:
            keys.update(cast(Iterator[str], self.broker.scan_iter(
                match=f"{queue}*", count=scan_count, _type="list")))
        return sorted(keys)

    def queue_page(self, queue: str, start: int, page: int) -> list[str]:
        return cast(list[str], self.broker.lrange(queue, start, start + page - 1))

    def unqueue(self, queue: str, raw: str) -> int:
        return int(self.broker.lrem(queue, 0, raw))

    def queue_lengths(self, queues: Sequence[str]) -> list[int]:
        pipe = self.broker.pipeline(transaction=False)
        for q in queues:
            pipe.llen(q)
        return [int(n) for n in pipe.execute()]

    def reaper_turn(self, interval_s: float) -> bool:
        """Whether this worker's reaper makes this pass (no other one did in the interval)."""
        return bool(self.r.set(REAPER, "1", nx=True, px=max(1, int(interval_s * 900))))

    def forget_delivery(self, delivery_id: str) -> None:
        """A delivery in the outbox without a record (finished meanwhile): out of the outbox."""
        self.r.zrem(outbox_key(delivery_bucket(delivery_id)), delivery_id)

    def backlog(self, now: float) -> dict[str, Any]:
        """What waits, summed over the buckets in one round trip (plus one for the ages): in
        flight, dead letters, mailboxes with work, the age of the oldest delivery in flight
        (of each bucket's next due, by its record; None when none is)."""
        pipe = self.r.pipeline(transaction=False)
        for b in self.buckets():
            pipe.scard(inflight_key(b))
            pipe.llen(dead_key(b))
            pipe.scard(mailboxes_key(b))
            pipe.zrange(outbox_key(b), 0, 0)
        got = pipe.execute()
        firsts = [d for first in got[3::4] for d in first]
        oldest = None
        if firsts:
            pipe = self.r.pipeline(transaction=False)
            for d in firsts:
                pipe.hget(delivery_key(d), "enqueued_at")
            ats = [float(at) for at in pipe.execute() if at]
            oldest = max(0.0, now - min(ats)) if ats else None
        return {"inflight": sum(got[0::4]), "dead_letters": sum(got[1::4]),
                "mailboxes": sum(got[2::4]), "oldest_inflight_s": oldest}

    def count(self, stat: str, n: int = 1) -> None:
        """A counter of the stress runs and benches (best effort: on a cluster its key's node
        may be down while the user's is up, and the work goes on)."""
        with suppress(redis.RedisError):
            self.r.incrby(_STATS + stat, n)

    def stat(self, stat: str) -> int:
        value = self.r.get(_STATS + stat)
        return int(cast(str, value)) if value else 0

    def reset_stats(self, *stats: str) -> None:
        """Counters back to 0 (a benchmark's or a stress run's start)."""
        if stats:
            self.r.delete(*(_STATS + s for s in stats))

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
        # every bucket's outbox: a delivery whose id does not name its user's bucket may be
        # in another one than the user's
        outbox = [d for got in self._each([outbox_key(b) for b in self.buckets()], "zrange",
                                          0, -1) for d in got]
        pipe = self.r.pipeline(transaction=False)
        for d in outbox:
            pipe.hget(delivery_key(d), "user")
        mine |= {d for d, owner in zip(outbox, pipe.execute(), strict=True) if owner == user_id}
        existed = int(self.r.exists(_ledger_key(user_id))) + len(mine)
        self.finish(user_id, sorted(mine))
        self.r.delete(_ledger_key(user_id))
        return existed


def _dead_bucket(raw: str) -> int:
    """A dead letter's bucket: its delivery's, 0 for one without (a quarantined message)."""
    try:
        delivery_id = json.loads(raw).get("delivery_id")
    except (ValueError, AttributeError):
        delivery_id = None
    return delivery_bucket(delivery_id) if isinstance(delivery_id, str) else 0


def _dead_at(raw: str) -> str:
    try:
        return str(json.loads(raw).get("at") or "")
    except (ValueError, AttributeError):
        return ""


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
