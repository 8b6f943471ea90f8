"""A user's mailbox: the extracted deliveries waiting for the user's drain (workers.section),
in event-time order. A delivery is posted here once extracted, and finished when its drain
applied it (or when it had nothing to apply); finishing records its turns in the user's turn
ledger, so a turn is applied once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from . import event_stream
from .coord import Coord
from .layout import (
    FINISHED,
    OUTCOME_TTL_S,
    bucket,
    claim_key,
    delivery_bucket,
    delivery_key,
    extracted_key,
    forgotten_key,
    inflight_key,
    ledger_key,
    mailbox_key,
    mailboxes_key,
    outbox_key,
    outcome_key,
    shard_key,
)


@dataclass(frozen=True)
class Posted:
    """What ``post`` did. ``posted``: the delivery is in its user's mailbox, and ``token`` is
    the claim when this post claimed the user (the caller publishes the drain; None: the
    claimant drains it). Not posted: the user was ``forgotten`` since the delivery was
    enqueued (the caller takes back what it wrote), or the delivery is gone (finished by
    another run of it)."""

    posted: bool
    token: str | None = None
    forgotten: bool = False
    moved: bool = False  # the user's data moved shards since the extraction: extract again


def post(coord: Coord, user_id: str, delivery_id: str, enqueued_at: float, event_time: float,
         extracted: str, ttl_s: int, lease_s: float, token: str,
         shard_epoch: int | None = None) -> Posted:
    """Put an extracted delivery in its user's mailbox, claiming the user with ``token`` when
    nobody has, unless the user was forgotten since ``enqueued_at``, the delivery is gone, or
    (``shard_epoch``: the placement the extraction wrote its episodes under, workers.placement)
    the user moved shards since (see :class:`Posted`)."""
    b = delivery_bucket(delivery_id)
    answer = coord.script("post")(
        keys=[extracted_key(delivery_id), mailbox_key(user_id), mailboxes_key(bucket(user_id)),
              outbox_key(b), delivery_key(delivery_id), claim_key(user_id),
              forgotten_key(user_id), shard_key(user_id)],
        args=[extracted, ttl_s, event_time, delivery_id, user_id, token,
              int(lease_s * 1000), repr(enqueued_at),
              "" if shard_epoch is None else str(shard_epoch)])
    if isinstance(answer, str):
        return Posted(posted=True, token=answer)
    return Posted(posted=answer == 1, forgotten=answer == -1, moved=answer == -2)


def waiting(coord: Coord, user_id: str, limit: int) -> list[str]:
    """The first ``limit`` deliveries in the user's mailbox, in event-time order."""
    return cast(list[str], coord.r.zrange(mailbox_key(user_id), 0, limit - 1))


def extracted(coord: Coord, delivery_ids: Sequence[str]) -> list[str | None]:
    """What extract found for each delivery (None: expired, extract again)."""
    if not delivery_ids:
        return []
    return cast(list[str | None], coord.r.mget([extracted_key(d) for d in delivery_ids]))


def requeue(coord: Coord, user_id: str, delivery_ids: Sequence[str], deadline: float) -> None:
    """Out of the mailbox, back to extraction (what extract found expired)."""
    pipe = coord.r.pipeline(transaction=False)
    for d in delivery_ids:
        pipe.zrem(mailbox_key(user_id), d)
        pipe.hset(delivery_key(d), "state", "queued")
        pipe.zadd(outbox_key(delivery_bucket(d)), {d: deadline})
    pipe.execute()


def finish(coord: Coord, user_id: str, delivery_ids: Sequence[str],
           refs: Sequence[str] = ()) -> None:
    """Done: the turns applied (``refs``), the deliveries and all they left here gone."""
    pipe = coord.r.pipeline(transaction=False)
    if refs:
        pipe.sadd(ledger_key(user_id), *refs)
        pipe.expire(ledger_key(user_id), coord.ledger_ttl_s)
    for d in delivery_ids:
        b = delivery_bucket(d)
        pipe.zrem(mailbox_key(user_id), d)
        pipe.zrem(outbox_key(b), d)
        pipe.delete(delivery_key(d))
        pipe.delete(extracted_key(d))
        pipe.srem(inflight_key(b), d)
        # "done <user>": whose it was stays known (a tenant's API key sees its own only)
        pipe.set(outcome_key(d), f"done {user_id}", ex=OUTCOME_TTL_S)
    if event_stream.hooked(coord):
        for d in delivery_ids:
            event_stream.emit_into(pipe, "delivery.done", user_id, delivery_id=d)
    pipe.execute()
    coord.announce_all(FINISHED, list(delivery_ids))


# -- the turn ledger: a turn is applied once ------------------------------------------------------
def unprocessed(coord: Coord, user_id: str, refs: Sequence[str]) -> set[str]:
    """The turns of ``refs`` (``<session>/<turn>``) not applied yet."""
    if not refs:
        return set()
    seen = cast(list[int], coord.r.smismember(ledger_key(user_id), list(refs)))
    return {t for t, hit in zip(refs, seen, strict=True) if not hit}
