"""The coordination state's connections, shared by every concern that keeps state in Redis.

One :class:`Coord` per process (``workers.wiring.coord``) holds what they all need: the
state's Redis (a ``redis.cluster.RedisCluster`` too), the broker's (its queues), whether the
state is a cluster (a script's keys in one slot, no script or PUBLISH inside a pipeline), the
limits the deployment set, the Lua scripts as loaded on this client, and the Pub/Sub plumbing
every wait uses. What is done with the state lives with its concern, as functions of a Coord:

    workers.layout       the key layout, the Lua scripts' loading
    workers.section      the per-user section: claim, renew, release, hold, the drain loop,
                         hand-off, orphan wake
    workers.outbox       delivery records and the outbox, in flight, statuses, waiting
    workers.mailbox      posting to a user's mailbox, finishing deliveries, the turn ledger
    workers.forgotten    the forgotten marker, and what forgetting removes here
    workers.deadletters  dead letters
    workers.event_stream webhook events: emitting them, the subscriptions (delivered by
                         workers.events)
    workers.queues       the broker's queues: publishing, inspection
    workers.counters     the benches' and stress runs' counters

The words, here and in every module that uses these: a delivery is **posted** to its user's
mailbox; the first poster **claims** the user's section (the claim: a token with a lease,
kept under ``memq:owner:<user>``) and **drains** the mailbox, **renewing** the claim in the
background; an empty mailbox **releases** it, a drain that yields **hands off** (publishes
the next drain with the claim); a failed drain **drops** it (the reaper claims the user
again). Work outside the pipeline (check, lifecycle jobs, forget, a shard move) **holds** the
claim for its span (``section.hold``). A delivery's extraction asks once whether its user
was **forgotten** since it was enqueued (``forgotten.is_forgotten``, before any work); its
post asks again, atomically with posting (a user forgotten meanwhile gets nothing posted), so
the drain never needs to ask: what is in a mailbox was posted before the forgetting, and
forget, holding the claim, empties it.

Messages on the broker carry ids only (schemas.StageMessage). The claim is not what keeps a
user's writes correct -- the graph's version fence is (pipeline.service) -- it keeps workers
from doing the same user's work twice: a delivery that finds its user claimed is left in the
mailbox for the claimant, who drains until the mailbox is empty and only then lets go,
atomically with the check (``section.release``), so nothing posted meanwhile is stranded.

Nothing waits by polling: a claim let go is published on ``layout.RELEASED`` and a finished
delivery on ``layout.FINISHED``; who waits subscribes first (:meth:`Coord.listening`), then
checks, then blocks, never longer than the lease it waits out.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, cast

import redis
from redis.backoff import ExponentialWithJitterBackoff
from redis.cluster import RedisCluster
from redis.retry import Retry

from .layout import BUCKETS, script

# A cluster's node that is down fails a call within ~0.2 s (redis-py's default retries ten
# times, up to 1 s apart: ~5 s a call): the task's backoff is the retry layer, and a worker
# goes on with the users of the other nodes meanwhile (best-effort counters, the metrics and
# the webhook lookup live on one node each).
CONNECT_TIMEOUT_S = 5.0

Heard = Callable[[Callable[[str], bool], float], bool]


class Coord:
    """``client``: the coordination state's Redis (a ``redis.cluster.RedisCluster`` too);
    ``broker``: the broker's (its queues), the same one when not given. Shared rather than
    each concern holding its own client: a process keeps one connection pool per Redis, and
    the cluster's quirks (scripts, PUBLISH, Pub/Sub) are handled once, here."""

    def __init__(self, client: redis.Redis, *, broker: redis.Redis | None = None,
                 ledger_ttl_s: int = 90 * 24 * 3600, dead_max: int = 10_000) -> None:
        self.r = client
        self.broker = client if broker is None else broker
        # on a cluster: a script's keys in one slot, no script or PUBLISH inside a pipeline
        self.cluster = isinstance(client, RedisCluster)
        self.ledger_ttl_s, self.dead_max = ledger_ttl_s, dead_max
        self._scripts: dict[str, Callable[..., Any]] = {}

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

    def script(self, name: str) -> Callable[..., Any]:
        """The Lua script of workers/lua ``name`` on this client (``layout.script``), made
        once: redis-py's Script keeps its SHA and loads the source only when Redis lacks it."""
        found = self._scripts.get(name)
        if found is None:
            found = self._scripts[name] = script(self.r, name, cluster=self.cluster)
        return found

    def buckets(self) -> range:
        return range(BUCKETS)

    def each(self, keys: Sequence[str], command: str, *args: Any) -> list[Any]:
        """``command`` on each key, one round trip (per node on a cluster)."""
        pipe = self.r.pipeline(transaction=False)
        for key in keys:
            getattr(pipe, command)(key, *args)
        return list(pipe.execute())

    # -- Pub/Sub: how waits block instead of polling ------------------------------------------
    def _primaries(self) -> list[Any]:
        """The cluster's primaries, in random order (PUBLISH reaches every node from any)."""
        nodes = list(cast(RedisCluster, self.r).get_primaries())  # type: ignore[no-untyped-call]
        random.shuffle(nodes)
        return nodes

    def announce(self, channel: str, message: str) -> None:
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

    def announce_all(self, channel: str, messages: Sequence[str]) -> None:
        """PUBLISH each message (a cluster refuses PUBLISH inside a pipeline)."""
        if self.cluster:
            for m in messages:
                self.announce(channel, m)
        elif messages:
            pipe = self.r.pipeline(transaction=False)
            for m in messages:
                pipe.publish(channel, m)
            pipe.execute()

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
    def listening(self, channel: str) -> Iterator[Heard]:
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


@contextmanager
def beating(beat: Callable[[], object], every_s: float) -> Iterator[None]:
    """``beat`` every ``every_s`` in a background thread while the block runs (a claim's
    renewal, a delivery's heartbeat); a beat that finds Redis down is tried at the next."""
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
