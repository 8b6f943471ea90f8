"""The coordination state's key layout in Redis, and its Lua scripts. Keys are all under
``memq:``.

Redis Cluster: every key a script or a transaction touches together hashes to one slot. The
slot is the user's **bucket** (``bucket``: one of BUCKETS, by the user id's CRC-32), written as
the hash tag ``{m<xx>}`` right after the key's kind, before anything a caller chose; a
delivery's id begins with its user's bucket (``new_delivery_id``), so its records land there
too. The indexes the reaper and ``memq wait`` read (outbox, in flight, mailboxes, dead letters)
are one per bucket, read all together (BUCKETS keys, one round trip per node). Keys of one
bucket (``{b}`` below) live together:

    memq:delivery:{b}:<id>   hash: user, batch (JSON), enqueued_at, state  (workers.outbox)
    memq:outbox:{b}          zset: delivery id -> when to re-publish it if it made no progress
    memq:extracted:{b}:<id>  what extract found (candidates and vectors), for the user's drain
    memq:outcome:{b}:<id>    done <user> | dead_lettered, kept OUTCOME_TTL_S
    memq:mbox:{b}:<user>     zset: the user's extracted deliveries -> event time (the mailbox,
                             workers.mailbox)
    memq:mboxes:{b}          set: users whose mailbox may hold work
    memq:owner:{b}:<user>    the claim's key: the claimant's token, the one worker draining
                             the user's mailbox (a lease; workers.section)
    memq:turns:{b}:<user>    the turns (``<session>/<turn>``) already applied (the ledger)
    memq:forgotten:{b}:<user>  when the user was last forgotten (the marker, workers.forgotten)
    memq:shard:{b}:<user>    the user's store shards (workers.placement)
    memq:inflight:{b}        deliveries not yet done (``memq wait``)
    memq:deadletter:{b}      list: dead letters with their reasons (workers.deadletters)
    memq:reaper, memq:stats:<name>, memq:metrics   the reaper's turn, counters, metrics
    memq:metrics:samples list: the metrics' recent history (the console's charts)
    memq:events, memq:hooks, memq:hooks:retry, memq:hooks:dead   webhooks (workers.events)

The broker's queues (kombu's lists) may live on another Redis (``Settings.state_url``: kombu
has no Redis Cluster transport): messages are pushed there after their records are here.
Every key of memq's own is spelled here and nowhere else (workers.auth keeps its keys under
``memq:auth:``); the Lua scripts are files of ``workers/lua/``, loaded by name (:func:`lua`,
:func:`script`). Some key strings predate the words the code uses for them (``owner`` for
the claim, ``mbox``): they are what deployments have stored, so they stay.
"""

from __future__ import annotations

import hashlib
import uuid
import zlib
from collections.abc import Callable, Sequence
from functools import cache, partial
from pathlib import Path
from typing import Any, cast

import redis

BUCKETS = 256  # the users' buckets: the Redis Cluster slots memq's per-user keys use
INFLIGHT = "memq:inflight"  # one per bucket: inflight_key(b), and so on
DEAD = "memq:deadletter"
OUTBOX = "memq:outbox"
MAILBOXES = "memq:mboxes"
REAPER = "memq:reaper"  # the reaper pass of the moment (one worker's, for the interval)
METRICS = "memq:metrics"  # workers.metrics' series (a hash, one field a series)
SAMPLES = "memq:metrics:samples"  # workers.metrics.record_sample's points (a capped list)
STATS = "memq:stats:"  # counters (workers.counters): replans, reaped
SHARDS = "memq:shard:"  # the shard map's entries (workers.placement), one per placed user

# Pub/Sub channels: waiting is blocking on one of these, never polling
RELEASED = "memq:released"  # a user's claim was let go (the message: the claim's key)
FINISHED = "memq:finished"  # a delivery is done or dead-lettered (the message: its id)

OUTCOME_TTL_S = 7 * 24 * 3600
# events for webhooks (workers.event_stream, workers.events): the stream every worker
# dispatches from, the subscriptions (tenant -> JSON), the retries due (zset: entry -> when),
# the given-up list
EVENTS = "memq:events"
EVENTS_GROUP = "memq-hooks"
EVENTS_MAX = 100_000
HOOKS = "memq:hooks"
HOOK_RETRIES = "memq:hooks:retry"
HOOK_DEAD = "memq:hooks:dead"

_LUA = Path(__file__).with_name("lua")


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
extracted_key = partial(_of_delivery, "extracted")
outcome_key = partial(_of_delivery, "outcome")  # done <user> | dead_lettered, OUTCOME_TTL_S
outbox_key = partial(_of_bucket, OUTBOX)
inflight_key = partial(_of_bucket, INFLIGHT)
mailboxes_key = partial(_of_bucket, MAILBOXES)
dead_key = partial(_of_bucket, DEAD)


def user_key(kind: str, user_id: str) -> str:
    """``memq:<kind>:{<bucket>}:<user>``: one of the user's keys, in the user's slot."""
    return f"memq:{kind}:{user_tag(user_id)}:{user_id}"


def mailbox_key(user_id: str) -> str:
    return user_key("mbox", user_id)


def claim_key(user_id: str) -> str:
    """The user's claim (workers.section). Its key says ``owner``, the claim's old name: claims
    stored under it are live, so it stays."""
    return user_key("owner", user_id)


def ledger_key(user_id: str) -> str:
    return user_key("turns", user_id)


def forgotten_key(user_id: str) -> str:
    return user_key("forgotten", user_id)


def shard_key(user_id: str) -> str:
    return user_key("shard", user_id)


@cache
def lua(name: str) -> str:
    """A Lua script of ``workers/lua/`` by name (as the Cypher of pipeline/adapters/neo4j)."""
    return (_LUA / f"{name}.lua").read_text(encoding="utf-8")


def script(client: redis.Redis, name: str, *, cluster: bool) -> Callable[..., Any]:
    """A Lua script of workers/lua by name, callable as ``(keys=[...], args=[...])``. On a
    cluster not redis-py's Script, whose first call on a node (NOSCRIPT) loads the script into
    every primary and so fails while any one is down: EVALSHA on the keys' node, EVAL there
    when it lacks it."""
    if not cluster:
        return cast(Callable[..., Any], client.register_script(lua(name)))
    source = lua(name)
    sha = hashlib.sha1(source.encode()).hexdigest()  # the id Redis gives the script

    def call(keys: Sequence[str] = (), args: Sequence[Any] = ()) -> Any:
        try:
            return client.evalsha(sha, len(keys), *keys, *args)
        except redis.exceptions.NoScriptError:
            return client.eval(source, len(keys), *keys, *args)

    return call
