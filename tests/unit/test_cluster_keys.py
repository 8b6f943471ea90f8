"""Redis Cluster: the keys (workers.layout) a script or a transaction touches together hash
to one slot, whatever the user id holds (braces, unicode), for every user and every delivery
of it; the bucket indexes spread over the slots. The slot rule is redis-py's (the server's)."""

from __future__ import annotations

import random
import string

from redis.crc import key_slot

from memq.workers import layout as c

USERS = ["alice", "a{b}c", "{m00}", "}{", "用户-42", "tenant:bob", "", "x" * 300,
         *("".join(random.Random(i).choices(string.printable, k=12)) for i in range(300))]


def _slot(key: str) -> int:
    return int(key_slot(key.encode("utf-8", "surrogatepass")))


def test_every_key_of_a_user_and_its_deliveries_is_in_one_slot() -> None:
    for user in USERS:
        d = c.new_delivery_id(user)
        assert len(d) == 32 and int(d, 16) >= 0
        b = c.bucket(user)
        assert c.delivery_bucket(d) == b
        keys = [c.mailbox_key(user), c.claim_key(user), c.ledger_key(user),
                c.forgotten_key(user), c.shard_key(user), c.delivery_key(d),
                c.extracted_key(d), c.outcome_key(d), c.outbox_key(b), c.inflight_key(b),
                c.mailboxes_key(b), c.dead_key(b)]
        assert len({_slot(k) for k in keys}) == 1, (user, keys)


def test_the_buckets_are_distinct_slots_and_users_spread_over_them() -> None:
    slots = {_slot(c.outbox_key(b)) for b in range(c.BUCKETS)}
    assert len(slots) == c.BUCKETS
    counts = [0] * c.BUCKETS
    for i in range(25_600):
        counts[c.bucket(f"user-{i}")] += 1
    assert min(counts) > 50 and max(counts) < 160  # ~100 each


def test_any_delivery_id_has_a_bucket() -> None:
    for d in ["", "z", "zz-not-hex", "ff" + "0" * 30, "FF00", "dead-1", "é"]:
        assert 0 <= c.delivery_bucket(d) < c.BUCKETS
    assert c.delivery_bucket("ff" + "0" * 30) == 255
