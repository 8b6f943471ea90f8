"""The connection to one Neo4j database: the driver, the schema, and the way every statement
runs. The base of the store's classes (``store.Neo4jGraph``).

Cypher lives in ``cypher/*.cypher``, loaded by name, parameters only. The write path's
statements (a plan's fenced write, episodes, Chroma's mark, the plan's reads) each run as one
auto-commit transaction: one round trip, where a managed transaction takes three (BEGIN, RUN,
COMMIT). A plan's write is one statement (``apply_plan``), so it stays one transaction.
Neo4j's retryable errors (a deadlock) are retried here as the driver retries a managed
transaction; connection loss surfaces as :class:`TransientError` so the task retries with
backoff.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from importlib import resources
from typing import Any

import neo4j
import neo4j.exceptions as nx

from ...errors import StaleVersion, TransientError

INCLUDE = "// include: "
RETRIES = 5  # of a statement that hit a retryable error (a deadlock)
# Search's and the context block's statements, which a reading process may keep planned
# itself (``keep_read_plans``; workers/warm.py runs them under ``replanning``). Neo4j plans a
# statement again, in the call that runs it, once the statistics its plan used have moved: a
# graph's first memories move them all at once, so the first searches after a user's first
# turns each waited for plans. The plans must follow the data (one made on an empty graph
# reads all of a user's turns per turn asked for), so the keeper's runs replan as Neo4j
# decides, and every other run of a kept statement reuses the plan it finds (Cypher's
# ``replan=skip``), which is the keeper's newest.
KEPT_PLANS = frozenset({"search_text", "superseded_sources", "get_memories", "episodes_by_ref",
                        "turns_before"})
# Neo4j plans per size of each string or list parameter, by bucket (1, 2-10, 11-100, 101-1000,
# ...); the keeper runs each bucket up to this one, so a longer parameter (a Lucene query of
# long words) replans as Neo4j decides rather than keep a plan no one renews.
KEPT_UP_TO = 1000
SKIP_REPLAN = "CYPHER replan=skip "


@cache
def cypher(name: str) -> str:
    """``cypher/<name>.cypher``; a line ``// include: <other>`` stands for that file."""
    text = resources.files(__package__).joinpath("cypher", f"{name}.cypher").read_text()
    return "\n".join(cypher(line.strip().removeprefix(INCLUDE))
                     if line.strip().startswith(INCLUDE) else line
                     for line in text.splitlines())


@contextmanager
def _transient() -> Iterator[None]:
    try:
        yield
    except (nx.ServiceUnavailable, nx.SessionExpired, nx.TransientError, OSError) as exc:
        raise TransientError(f"neo4j unavailable: {exc}") from exc


def _rows(result: neo4j.Result) -> list[dict[str, Any]]:
    """The rows as they came: every query returns maps, lists and values, never nodes, so
    Record.data()'s walk of each value would cost time a batch and change nothing (figures:
    scripts/results/2026-12-07-figures-from-comments.md)."""
    keys = result.keys()
    return [dict(zip(keys, r, strict=True)) for r in result]


DRIVER_RETRY_S = 2.0  # a managed transaction's retries (deadlocks, a leader change)
CONNECT_TIMEOUT_S = 5.0
ACQUIRE_TIMEOUT_S = 10.0


class Neo4jSession:
    """One database's driver, its schema, and the running of ``cypher/*.cypher``."""

    def __init__(self, uri: str, auth: tuple[str, str] | None = None,
                 database: str | None = None) -> None:
        # An instance that is down fails a call within seconds (the task's backoff is the one
        # retry layer): with the driver's defaults a managed transaction retried for 30 s, so
        # a worker holding work of a store shard that was down served no other user
        # meanwhile (workers.shards: only that shard's users are to wait).
        self._driver = neo4j.GraphDatabase.driver(
            uri, auth=auth, notifications_min_severity="OFF",
            max_transaction_retry_time=DRIVER_RETRY_S, connection_timeout=CONNECT_TIMEOUT_S,
            connection_acquisition_timeout=ACQUIRE_TIMEOUT_S)
        self._database = database
        self._schema_ready = False
        # one schema setup at a time in this process: two threads' at once (a request and the
        # warm-up) deadlocked each other in Neo4j (DeadlockDetected)
        self._schema_lock = threading.Lock()
        self._local = threading.local()  # .rehearsal: this thread's rolled-back transaction;
        # .replanning: this thread keeps the read plans (keep_read_plans)
        self._plans_kept = False

    def close(self) -> None:
        self._driver.close()

    def _session(self) -> neo4j.Session:
        return self._driver.session(database=self._database)

    def ensure_schema(self) -> None:
        if self._schema_ready:
            return
        with self._schema_lock:
            if not self._schema_ready:
                self._create_schema()

    def _create_schema(self) -> None:
        with _transient(), self._session() as session:
            body = "\n".join(
                line for line in cypher("schema").splitlines() if not line.startswith("//")
            )
            for statement in filter(None, (s.strip() for s in body.split(";"))):
                try:
                    session.run(statement).consume()
                except nx.ClientError as exc:  # another process created it at the same time
                    if "EquivalentSchemaRuleAlreadyExists" not in (exc.code or ""):
                        raise
        self._schema_ready = True

    @contextmanager
    def rehearsal(self) -> Iterator[None]:
        """What this thread runs inside goes to one transaction, rolled back at the end:
        statements planned, compiled and run on sample data, nothing kept. Other threads'
        statements are not in it. (``workers.warm``: a fresh Neo4j's first plans cost
        hundreds of milliseconds each.)"""
        self.ensure_schema()
        with _transient(), self._session() as session:
            tx = session.begin_transaction()
            self._local.rehearsal = tx
            try:
                yield
            finally:
                self._local.rehearsal = None
                tx.rollback()

    def keep_read_plans(self) -> None:
        """From now on ``KEPT_PLANS`` reuse the plan they find: the caller runs them under
        ``replanning`` often enough that Neo4j's own replanning happens there."""
        self._plans_kept = True

    @contextmanager
    def replanning(self) -> Iterator[None]:
        """This thread's statements replan as Neo4j decides (the keeper of the read plans)."""
        self._local.replanning = True
        try:
            yield
        finally:
            self._local.replanning = False

    def _text(self, name: str, params: dict[str, Any]) -> str:
        """``cypher/<name>.cypher`` as sent: with ``SKIP_REPLAN`` when its plan is kept."""
        if (self._plans_kept and name in KEPT_PLANS
                and not getattr(self._local, "replanning", False)
                and all(len(v) <= KEPT_UP_TO for v in params.values()
                        if isinstance(v, str | list))):
            return SKIP_REPLAN + cypher(name)
        return cypher(name)

    def _run(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """``cypher/<name>.cypher`` as one auto-commit transaction (atomic, like any
        transaction), its rows as dicts. A retryable error (a deadlock: nothing was written)
        runs it again after a short, growing, jittered wait, as the driver does for a managed
        transaction. (The driver retries no auto-commit: after a lost connection it cannot
        know whether one committed. An error Neo4j reports was rolled back; and none of these
        statements commits in parts, as ``CALL {} IN TRANSACTIONS`` would.)"""
        self.ensure_schema()
        query = neo4j.Query(self._text(name, params))
        rehearsal = getattr(self._local, "rehearsal", None)
        if rehearsal is not None:
            with _transient():
                return _rows(rehearsal.run(query.text, params))
        for attempt in range(RETRIES + 1):
            try:
                with _transient(), self._session() as session:
                    return _rows(session.run(query, params))
            except TransientError as exc:
                cause = exc.__cause__
                if not (isinstance(cause, nx.TransientError) and cause.is_retryable()) \
                        or attempt == RETRIES:
                    raise
                time.sleep(0.01 * 2**attempt * random.uniform(0.8, 1.2))
        raise AssertionError("unreachable")

    # -- statements of their own: a file of several, a fenced write ---------------------------
    @staticmethod
    def _statements(name: str) -> list[str]:
        body = "\n".join(line for line in cypher(name).splitlines()
                         if not line.lstrip().startswith("//"))
        return [s for s in (part.strip() for part in body.split(";")) if s]

    def _write_counted(self, name: str, *, record_last: bool = True, **params: Any) -> int:
        """Every statement of ``cypher/<name>.cypher`` in one write transaction, fenced: the
        user's version moves on, so a plan made before it can never be applied after it.
        Returns the sum of the ``n`` each statement returns. ``record_last`` False: the last
        statement (a FORGET entry) runs only when the ones before it changed something."""
        self.ensure_schema()
        statements = self._statements(name)

        def work(tx: neo4j.ManagedTransaction) -> int:
            tx.run(cypher("fence_only"), user_id=params["user_id"], expected=None).consume()
            total = 0
            for i, statement in enumerate(statements):
                if i == len(statements) - 1 and not record_last and total == 0:
                    break
                record = tx.run(statement, params).single()
                total += int(record["n"] or 0) if record else 0
            return total

        with _transient(), self._session() as session:
            return session.execute_write(work)


def fenced_version(found: list[dict[str, Any]], user_id: str, read_at: str) -> int:
    """The user's new version from a fenced statement's row (``// include: fence``), or
    StaleVersion when the fence refused it: the user is gone, or at another version than the
    one the write was made from (``read_at`` says when that was)."""
    if not found:
        raise StaleVersion(f"user {user_id} has no version any more (forgotten?), {read_at}")
    if found[0]["version"] is None:
        raise StaleVersion(f"user {user_id} is at version {found[0]['was']}, {read_at}")
    return int(found[0]["version"])
