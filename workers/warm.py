"""Warm-up: the write path rehearsed on a sample conversation before the first user's batch.

A fresh Neo4j plans each Cypher statement the first time it sees it (hundreds of
milliseconds for the write path's larger ones) and its JVM has compiled none of it; a fresh
process has not loaded the embedding model. The first user to arrive paid for all of it (the
first drain of a fresh start took 1.1-1.3 s against tens of milliseconds later). Each
process of a worker's pool now runs the path itself when it starts (in the background: a
batch that comes meanwhile is served at once), on a sample conversation: the rule
extractor, the configured embedder, the real Neo4j inside one rolled-back transaction
(``Neo4jGraph.rehearsal``: nothing is kept, no user id is taken) and the in-memory index
for Chroma's part, several rounds so that the JIT sees each statement more than once.
``MEMQ_WARM=off`` skips it.

A process that reads (``memq serve``, ``memq mcp``, ``Client(warm=True)``) warms the read
path instead (``warm_reads``): one search, then ``plan_reads``. Neo4j keeps a plan per
statement *and per size of each string or list parameter, by bucket* (1, 2-10, 11-100,
101-1000, ...), so one search on one user warms only the users whose ids are about as long
as its own and the queries about as long as its query: a short id's first search, a long
question, a user's first memories each planned their statement again, a cost far above a
search's (scripts/results/2026-12-07-first-call.md). ``plan_reads`` runs the search's
statements once per bucket a request can bring, on ids that are no user's.

Neo4j also plans a statement again once the data has changed enough, in the call that runs
it: a user's first turns made the next searches wait for their plans. A process that serves
reads (``keep=True``: ``memq serve``, ``memq mcp``) therefore keeps those plans itself: its
searches reuse the plans they find (``Neo4jGraph.keep_read_plans``), and a thread of its own
runs ``plan_reads`` every ``REPLAN_EVERY_S`` as Neo4j decides (``Neo4jGraph.replanning``), so
the plans follow the data there.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import structlog

from ..pipeline import recall, service
from ..pipeline.merge import OfflineJudge
from ..pipeline.policy import Thresholds
from ..pipeline.predicates import Predicates
from ..pipeline.rules import RuleExtractor
from ..pipeline.testing import InMemoryIndex
from ..schemas import ExtractedBatch, Turn

if TYPE_CHECKING:
    from ..pipeline.adapters.neo4j.store import Neo4jGraph

log = structlog.get_logger(__name__)
USER = "memq-warm-up"  # never committed: every statement is rolled back (with the pid: no
# two processes' rehearsals wait on each other's locks)
# a user's sessions as the write path meets them: new facts, a change, a preference, chat
SAMPLE = (
    ("I live in Berlin and work as a data engineer.", "I love green tea."),
    ("We moved to Lisbon last month.", "My sister Ana plays the cello."),
    ("Our production servers run Ubuntu 22.04.", "Haha, that was a fun weekend."),
    ("I switched from PostgreSQL to MySQL.", "我喜欢简洁的回答。"),
)
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def rehearse(rounds: int = 3, user: str | None = None, shard: int = 0) -> float:
    """The write path on the sample, ``rounds`` times, in Neo4j shard ``shard``; returns the
    seconds it took."""
    from . import wiring  # noqa: PLC0415

    started = time.perf_counter()
    user = user or f"{USER}-{os.getpid()}"
    graph = wiring.graphs()[shard]
    index = InMemoryIndex()
    ports = service.Ports(embedder=wiring.embedder(), extractor=RuleExtractor(),
                          judge=OfflineJudge(), memories=index, episodes=index, graph=graph)
    thresholds, predicates = Thresholds(), Predicates.default()
    now = datetime.now(UTC)
    with graph.rehearsal():
        for _ in range(rounds):
            for n, texts in enumerate(SAMPLE):
                session = f"warm-{n}"
                at = T0 + timedelta(days=7 * n)
                turns = [Turn(turn_id=f"t{i}", role="user", content=text,
                              timestamp=at + timedelta(minutes=i))
                         for i, text in enumerate(texts)]
                out = service.extract(ports, user, session, turns, thresholds=thresholds,
                                      now=now)
                batch = ExtractedBatch(
                    batch_id=f"warm-{n}", session_id=session,
                    refs=[f"{session}/{t.turn_id}" for t in turns], candidates=out.candidates,
                    vectors=[service.pack(v) for v in out.vectors])
                service.apply_round(ports, user, [batch], thresholds=thresholds,
                                    predicates=predicates, now=now)
            graph.search_text(user, "where does the user live", 50)
            graph.read_memories(user, include_inactive=True)
    return time.perf_counter() - started


def warm(where: str) -> None:
    """``rehearse`` unless ``MEMQ_WARM=off``; a failure is logged, never raised (the worker
    serves cold rather than not at all)."""
    from . import wiring  # noqa: PLC0415

    if not wiring.settings().warm:
        return
    try:
        took = sum(rehearse(shard=i) for i in range(len(wiring.graphs())))
    except Exception as exc:  # noqa: BLE001  (any failure: serve cold, say why)
        log.warning("warm-up failed; serving cold", where=where, error=type(exc).__name__)
        return
    log.info("warmed up", where=where, seconds=round(took, 3))


def warm_reads(where: str, *, force: bool = False, keep: bool = False) -> None:
    """The read path once, for a process that will search (``memq serve``, ``memq mcp``, a
    ``Client(warm=True)``): the embedding model loaded, Neo4j's and Chroma's connections and
    Neo4j's plans of search for every size of id and query (``plan_reads``), on ids that have
    nothing (read-only). Unless ``MEMQ_WARM=off`` (``force``: asked for by the caller, so done
    anyway); a failure is logged. ``keep``: a long-running server's, which then keeps those
    plans itself (``keep_reads_planned``)."""
    from . import wiring  # noqa: PLC0415
    from .search import search  # noqa: PLC0415

    if not (force or wiring.settings().warm):
        return
    started = time.perf_counter()
    try:
        if keep:  # first: the warm-up plans the statements as its searches will send them
            keep_reads_planned(wiring.graphs(), where)
        search(f"{USER}-reads", "where does the user live now?", 10, datetime.now(UTC))
        searched = time.perf_counter()
        planned = sum(plan_reads(graph) for graph in wiring.graphs())
    except Exception as exc:  # noqa: BLE001  (any failure: serve cold, say why)
        log.warning("read warm-up failed; serving cold", where=where,
                    error=type(exc).__name__)
        return
    log.info("warmed up", where=where, path="read",
             seconds=round(time.perf_counter() - started, 3),
             search_s=round(searched - started, 3), statements=planned)


# The sizes a read's parameters come in, one of each of Neo4j's buckets (see the module's
# docstring): a stores id (``<tenant>:<user>``, 3 to 128 characters), a Lucene query (its user
# key and field are 43-47 characters, then up to recall.MAX_TERMS words), a list of ids (a
# search's memories to read, at most recall.POOL; a context block's turns).
ID_SIZES = (8, 18, 110)
QUERY_SIZES = (60, 450)
LIST_SIZES = (1, 5, 50)


def shapes() -> list[tuple[str, str]]:
    """(stores id, query text) pairs: each size of ``ID_SIZES`` with a query whose Lucene
    queries (over memories and over turns) fall in each bucket of ``QUERY_SIZES``. The ids have
    no ``:``, so they are no tenant's user; the words are one made-up word."""
    out = []
    for size in ID_SIZES:
        user = (USER + "-" + "r" * size)[:size]
        for target in QUERY_SIZES:
            words = ["warmword"]
            while len(recall.lucene_query(user, " ".join(words), field="content") or "") \
                    < target:
                words.append("warmword")
            out.append((user, " ".join(words)))
    return out


def plan_reads(graph: Neo4jGraph) -> int:
    """Every read statement of search and of the context block, once in each size bucket of
    its parameters (``shapes``, ``LIST_SIZES``), on ids no user has: read-only, nothing is
    found. A bucket already planned costs a few milliseconds. Returns the statements run."""
    ran = 0
    for user, query in shapes():
        graph.search_text(user, query, recall.POOL)
        ran += 1
    for size in ID_SIZES:
        user = (USER + "-" + "r" * size)[:size]
        graph.changed(user)  # a question of question words only: no BM25
        ran += 1
        for n in LIST_SIZES:
            ids = [f"memq-warm-up-{i}" for i in range(n)]
            graph.get(user, ids)
            graph.turns(user, ids)  # the words of the turns dense search found
            graph.turns_before(user, ids)
            ran += 3
    return ran


# How often a serving process runs its read statements as Neo4j decides: a plan that has gone
# stale serves that much longer. Neo4j looks at a plan's statistics at most once per
# dbms.cypher.min_replan_interval, so an interval shorter than that setting buys nothing.
REPLAN_EVERY_S = 30.0


def replan_reads(graphs: Sequence[Neo4jGraph]) -> str | None:
    """``plan_reads`` on each graph, replanning what Neo4j finds stale (a plan that is not
    costs a lookup); the type of the first error, if one failed (tried again next round)."""
    error = None
    for graph in graphs:
        try:
            with graph.replanning():
                plan_reads(graph)
        except Exception as exc:  # noqa: BLE001  (Neo4j away: next round)
            error = error or type(exc).__name__
    return error


def keep_reads_planned(graphs: Sequence[Neo4jGraph], where: str,
                       every: float = REPLAN_EVERY_S,
                       stop: threading.Event | None = None) -> threading.Thread:
    """The read statements of ``graphs`` reuse the plans they find from now on, and a daemon
    thread replans them every ``every`` seconds (until ``stop`` is set, if given): this
    process's searches no longer wait for Neo4j to plan again after the data changed."""
    for graph in graphs:
        graph.keep_read_plans()
    stopped = stop or threading.Event()

    def keep() -> None:
        failing = False
        while not stopped.wait(every):
            error = replan_reads(graphs)
            if error and not failing:  # said once a run of failures starts, once it ends
                log.warning("read plans not renewed", where=where, error=error)
            elif failing and not error:
                log.info("read plans renewed again", where=where)
            failing = error is not None

    thread = threading.Thread(target=keep, name="memq-replan", daemon=True)
    thread.start()
    return thread
