"""Store shards' placement: which Neo4j and which Chroma hold a user's data (the map, kept in
Redis).

    memq:shard:{<bucket>}:<user>   hash: neo4j -> index, chroma -> index, epoch, moving (the
                          user's bucket as the hash tag: on Redis Cluster the entry is in the
                          slot of the user's other keys, workers.layout)

The shards of a kind are the configured instances in order (``Settings.graph_uris``,
``chroma_addresses``); the first is the single instance of an unsharded deployment. A user
without an entry is on shard 0 of each kind, so every user written before the deployment had
shards stays where it was. When a kind has more than one shard, a user's first write (its
first extraction: ``place``) records where it goes: the hash of its id over that kind's shards
(HSETNX in one transaction: two first writes at once agree). Recorded, a user never moves when
shards are added. With one shard of each kind nothing here touches Redis.

Every store call for a user goes through the user's placement (``workers.wiring.graph_for``,
``chroma_for``, ``ports_for``): a user's records are never split over two instances, and an
instance that is down stops only the users it holds (their work retries; the others go on).
``workers.shards.move`` takes a user to other shards (fenced: see there); the entry's ``epoch``
counts the moves, ``moving`` is set while one is under way.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import cast

import redis

from ..pipeline.errors import TransientError
from .layout import SHARDS, shard_key

KINDS = ("neo4j", "chroma")
FIELDS = (*KINDS, "epoch", "moving")


def home(kind: str, user_id: str, shards: int) -> int:
    """Where a new user goes: its id's hash (salted per kind: the two maps are independent)."""
    digest = hashlib.sha256(f"{kind}:{user_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % shards


@dataclass(frozen=True)
class Placement:
    neo4j: int = 0
    chroma: int = 0
    epoch: int = 0  # moves so far (``shards.move``): an extraction's post is refused across one


class ShardMap:
    def __init__(self, client: redis.Redis, neo4j: int, chroma: int) -> None:
        self.r, self.sizes = client, {"neo4j": neo4j, "chroma": chroma}

    @property
    def sharded(self) -> bool:
        return any(n > 1 for n in self.sizes.values())

    def of(self, user_id: str) -> Placement:
        """Where the user's data is (shard 0 of a kind without an entry)."""
        if not self.sharded:
            return Placement()
        raw = cast(list[str | None], self.r.hmget(shard_key(user_id), list(FIELDS)))
        return self._checked(user_id, raw)

    def place(self, user_id: str) -> Placement:
        """``of``, recording a placement first for a user that has none (a first write)."""
        if not self.sharded:
            return Placement()
        key = shard_key(user_id)
        pipe = self.r.pipeline(transaction=True)
        for kind in KINDS:
            if self.sizes[kind] > 1:
                pipe.hsetnx(key, kind, home(kind, user_id, self.sizes[kind]))
        pipe.hmget(key, list(FIELDS))
        raw = cast(list[str | None], pipe.execute()[-1])
        if raw[3] is not None:  # being moved (shards.move): its writes wait until it is there
            raise TransientError("the user is being moved between store shards")
        return self._checked(user_id, raw)

    def _checked(self, user_id: str, raw: list[str | None]) -> Placement:
        got = [int(v) if v is not None else 0 for v in raw[:3]]
        for kind, index in zip(KINDS, got, strict=False):
            if index >= self.sizes[kind]:
                # A shard taken out of the configuration: the user's data is out of reach, and
                # writing elsewhere would split it. Retried (the work waits) until ops fix it.
                raise TransientError(f"user mapped to {kind} shard {index}, but only "
                                     f"{self.sizes[kind]} configured (MEMQ_{kind.upper()}_SHARDS)")
        return Placement(*got)

    def mark_moving(self, user_id: str, now: Placement) -> None:
        """Writes of the user wait (``place`` refuses), posts of extractions made before are
        refused (workers.mailbox.post); its placement recorded as it is (an unmapped user's too)."""
        self.r.hset(shard_key(user_id), mapping={"neo4j": now.neo4j, "chroma": now.chroma,
                                                 "moving": 1})

    def moved(self, user_id: str, to: Placement) -> Placement:
        """The user is at ``to`` from now on, under a new epoch; its writes go on."""
        key = shard_key(user_id)
        pipe = self.r.pipeline(transaction=True)
        pipe.hset(key, mapping={"neo4j": to.neo4j, "chroma": to.chroma})
        pipe.hincrby(key, "epoch", 1)
        pipe.hdel(key, "moving")
        epoch = int(pipe.execute()[1])
        return Placement(to.neo4j, to.chroma, epoch)

    def not_moving(self, user_id: str) -> None:
        """A move given up: the user stays where it was (its epoch moves on: posts made
        during the attempt are refused and extracted again)."""
        key = shard_key(user_id)
        pipe = self.r.pipeline(transaction=True)
        pipe.hincrby(key, "epoch", 1)
        pipe.hdel(key, "moving")
        pipe.execute()

    def counts(self) -> dict[str, list[int]]:
        """Users with an entry, per kind and shard (a SCAN of the map: for ``memq status``)."""
        out = {kind: [0] * n for kind, n in self.sizes.items()}
        if not self.sharded:
            return out
        keys = list(self.r.scan_iter(match=f"{SHARDS}*", count=1000))
        for at in range(0, len(keys), 500):
            pipe = self.r.pipeline(transaction=False)
            for key in keys[at:at + 500]:
                pipe.hmget(key, list(KINDS))
            for raw in pipe.execute():
                for kind, value in zip(KINDS, raw, strict=True):
                    index = int(value) if value is not None else 0
                    if index < len(out[kind]):
                        out[kind][index] += 1
        return out
