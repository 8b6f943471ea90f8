"""Store shards: which Neo4j and which Chroma hold a user's data (the map, kept in Redis).

    memq:shard:{<user>}   hash: neo4j -> index, chroma -> index (the user in a hash tag: on
                          Redis Cluster the entry lives in the user's slot)

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
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import cast

import redis

from memq.pipeline.errors import TransientError

KINDS = ("neo4j", "chroma")
PREFIX = "memq:shard:"


def entry_key(user_id: str) -> str:
    return f"{PREFIX}{{{user_id}}}"


def home(kind: str, user_id: str, shards: int) -> int:
    """Where a new user goes: its id's hash (salted per kind: the two maps are independent)."""
    digest = hashlib.sha256(f"{kind}:{user_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % shards


@dataclass(frozen=True)
class Placement:
    neo4j: int = 0
    chroma: int = 0


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
        raw = cast(list[str | None], self.r.hmget(entry_key(user_id), list(KINDS)))
        return self._checked(user_id, raw)

    def place(self, user_id: str) -> Placement:
        """``of``, recording a placement first for a user that has none (a first write)."""
        if not self.sharded:
            return Placement()
        key = entry_key(user_id)
        pipe = self.r.pipeline(transaction=True)
        for kind in KINDS:
            if self.sizes[kind] > 1:
                pipe.hsetnx(key, kind, home(kind, user_id, self.sizes[kind]))
        pipe.hmget(key, list(KINDS))
        raw = cast(list[str | None], pipe.execute()[-1])
        return self._checked(user_id, raw)

    def _checked(self, user_id: str, raw: list[str | None]) -> Placement:
        got = [int(v) if v is not None else 0 for v in raw]
        for kind, index in zip(KINDS, got, strict=True):
            if index >= self.sizes[kind]:
                # A shard taken out of the configuration: the user's data is out of reach, and
                # writing elsewhere would split it. Retried (the work waits) until ops fix it.
                raise TransientError(f"user mapped to {kind} shard {index}, but only "
                                     f"{self.sizes[kind]} configured (MEMQ_{kind.upper()}_SHARDS)")
        return Placement(*got)

    def counts(self) -> dict[str, list[int]]:
        """Users with an entry, per kind and shard (a SCAN of the map: for ``memq status``)."""
        out = {kind: [0] * n for kind, n in self.sizes.items()}
        if not self.sharded:
            return out
        keys = list(self.r.scan_iter(match=f"{PREFIX}*", count=1000))
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
