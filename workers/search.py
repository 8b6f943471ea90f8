"""Search on the stores, in whichever process asks (an agent's ``Client``, ``memq serve``, the
CLI, the console, the MCP server): BM25 and similarity fused (``pipeline.search``) over the
user's shards, the reads overlapping in a thread pool; and the recall recorded, when asked."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from ..pipeline import lifecycle
from ..pipeline import search as ranking
from ..pipeline.ports import Hit
from ..pipeline.recall import Signals
from . import wiring
from .settings import policy

_pool: tuple[int, ThreadPoolExecutor] | None = None


def _reads() -> ThreadPoolExecutor:
    """Threads for a search's concurrent reads; one pool per process (a forked worker child
    gets its own: threads do not survive a fork)."""
    global _pool  # noqa: PLW0603
    if _pool is None or _pool[0] != os.getpid():
        _pool = (os.getpid(), ThreadPoolExecutor(max_workers=4, thread_name_prefix="memq-read"))
    return _pool[1]


def search(user_id: str, query: str, k: int, now: datetime, *, record: bool = False
           ) -> list[Hit]:
    """``pipeline.search.search`` on the stores, its reads overlapping in a thread pool.
    ``record``: the current memories returned count as recalled (importance up, decay clock
    reset)."""
    graph, chroma = wiring.stores_for(user_id)
    hits = ranking.search(graph, chroma, wiring.embedder_of(user_id, chroma), user_id, query, k,
                          now, policy(wiring.settings()), submit=_reads().submit)
    # what the search found by a signal, not what filled the list
    recalled = [h.id for h in hits if h.type == "memory" and h.status == "current"
                and h.score > 0]
    if record and recalled:
        _record_recall(user_id, recalled, now)
    return hits


def search_explained(user_id: str, query: str, k: int, now: datetime
                     ) -> list[tuple[Hit, Signals]]:
    """:func:`search` (never recorded as a recall), each hit with its ``recall.Signals``:
    the console's "why this answer"."""
    graph, chroma = wiring.stores_for(user_id)
    return ranking.search_explained(graph, chroma, wiring.embedder_of(user_id, chroma), user_id,
                                    query, k, now, policy(wiring.settings()),
                                    submit=_reads().submit)


def _record_recall(user_id: str, memory_ids: list[str], now: datetime) -> None:
    """Importance and last access only (partial updates, no claim): a recall racing a merge
    may lose its boost to the merge's write of the same memory, never the merge's change."""
    p = policy(wiring.settings())
    graph = wiring.graph_for(user_id)
    fresh = {m.id: m for m in graph.get(user_id, memory_ids)}
    pairs = [(m, lifecycle.recalled(m, now, p)) for m in fresh.values() if m.is_current]
    boosted = [after for _, after in pairs]
    graph.record_access(user_id, boosted, [lifecycle.recall_audit(before, after, now)
                                           for before, after in pairs])
