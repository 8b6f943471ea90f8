"""Counters of the stress runs and benches (``memq:stats:<name>``: replans, reaped): plain
Redis integers, best effort to write, read back by scripts/stress.py and ``memq status``."""

from __future__ import annotations

from contextlib import suppress
from typing import cast

import redis

from .coord import Coord
from .layout import STATS


def count(coord: Coord, stat: str, n: int = 1) -> None:
    """Add ``n`` (best effort: on a cluster the counter's node may be down while the user's
    is up, and the work goes on)."""
    with suppress(redis.RedisError):
        coord.r.incrby(STATS + stat, n)


def stat(coord: Coord, stat: str) -> int:
    value = coord.r.get(STATS + stat)
    return int(cast(str, value)) if value else 0


def reset(coord: Coord, *stats: str) -> None:
    """Counters back to 0 (a benchmark's or a stress run's start)."""
    if stats:
        coord.r.delete(*(STATS + s for s in stats))
