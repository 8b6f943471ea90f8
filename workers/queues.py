"""The broker's queues (kombu's lists, on the broker's Redis): publishing a message, and
reading them without consuming (the reaper's check for lost messages, forget's purge, the
metrics' queue lengths)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import cast

from .coord import Coord


def publish(coord: Coord, queue: str, message: str) -> None:
    """One broker message (workers.wire.task_message) onto its queue."""
    coord.broker.lpush(queue, message)


def lists(coord: Coord, queues: Sequence[str], scan_count: int = 1000) -> list[str]:
    """The broker's lists of these queues: each queue's own and kombu's priority lists of it
    (SCAN in steps of ``scan_count``: the keyspace holds a key per recent delivery)."""
    keys: set[str] = set(queues)
    for queue in queues:
        keys.update(cast(Iterator[str], coord.broker.scan_iter(
            match=f"{queue}*", count=scan_count, _type="list")))
    return sorted(keys)


def page(coord: Coord, queue: str, start: int, size: int) -> list[str]:
    return cast(list[str], coord.broker.lrange(queue, start, start + size - 1))


def remove(coord: Coord, queue: str, raw: str) -> int:
    return int(coord.broker.lrem(queue, 0, raw))


def lengths(coord: Coord, queues: Sequence[str]) -> list[int]:
    pipe = coord.broker.pipeline(transaction=False)
    for q in queues:
        pipe.llen(q)
    return [int(n) for n in pipe.execute()]
