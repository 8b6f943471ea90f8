"""A serving process keeps its read plans (workers/warm.py ``keep_reads_planned``): Neo4j plans
a statement again, in the call that runs it, once the data moved its statistics, so after a
user's first turns the next searches each waited for plans. Its searches send the read
statements with ``CYPHER replan=skip`` (they reuse the plan they find) and one thread of its
own runs them as Neo4j decides, in every size bucket a search can bring, so the plans still
follow the data."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest
from structlog.testing import capture_logs

from memq.pipeline.adapters.neo4j.session import KEPT_PLANS, KEPT_UP_TO, SKIP_REPLAN
from memq.pipeline.adapters.neo4j.store import Neo4jGraph
from memq.workers import warm

SHORT = {"user_id": "acme:u42", "ids": ["m1", "m2"]}


def graph() -> Neo4jGraph:
    return Neo4jGraph("bolt://127.0.0.1:9")  # the driver connects on first use: never here


def test_a_kept_statement_reuses_its_plan_unless_the_keeper_runs_it() -> None:
    g = graph()
    assert not g._text("search_text", SHORT).startswith("CYPHER")  # not kept: Neo4j decides
    g.keep_read_plans()
    for name in KEPT_PLANS:
        assert g._text(name, SHORT).startswith(SKIP_REPLAN), name
    assert not g._text("read_memories", SHORT).startswith("CYPHER")  # a read no one keeps
    seen: list[str] = []
    with g.replanning():
        assert not g._text("search_text", SHORT).startswith("CYPHER")
        other = threading.Thread(target=lambda: seen.append(g._text("search_text", SHORT)))
        other.start()
        other.join()
    assert seen[0].startswith(SKIP_REPLAN)  # the keeper's thread only
    assert g._text("search_text", SHORT).startswith(SKIP_REPLAN)


def test_a_parameter_longer_than_the_keeper_runs_replans_as_neo4j_decides() -> None:
    g = graph()
    g.keep_read_plans()
    query = {"user_id": "acme:u42", "memory_query": "x" * KEPT_UP_TO, "k": 50}
    assert g._text("search_text", query).startswith(SKIP_REPLAN)
    query["memory_query"] = "x" * (KEPT_UP_TO + 1)  # a bucket the keeper never runs
    assert not g._text("search_text", query).startswith("CYPHER")


class Recording(Neo4jGraph):
    """The statements a Neo4jGraph runs, with their parameters; nothing is sent."""

    def __init__(self) -> None:
        super().__init__("bolt://127.0.0.1:9")
        self.sent: list[tuple[str, str]] = []

    def _run(self, name: str, **params: Any) -> list[dict[str, Any]]:
        self.sent.append((name, self._text(name, params)))
        if name in ("search_text", "superseded_sources"):
            return [{"memories": [], "episodes": [], "superseded": [], "successors": [],
                     "mixed": []}]
        return []


def test_the_keeper_runs_every_kept_statement_and_each_as_searches_send_it() -> None:
    g = Recording()
    g.keep_read_plans()
    warm.plan_reads(g)  # the warm-up: plans what the searches will send (replan=skip)
    assert {name for name, _ in g.sent} == KEPT_PLANS
    assert all(text.startswith(SKIP_REPLAN) for _, text in g.sent)
    warmed = len(g.sent)
    assert warm.replan_reads([g]) is None  # the keeper: the same statements, Neo4j decides
    assert [name for name, _ in g.sent[warmed:]] == [name for name, _ in g.sent[:warmed]]
    assert not any(text.startswith("CYPHER") for _, text in g.sent[warmed:])


class Kept:
    """A graph as the keeper sees it: whether its reads are kept, and each round it ran."""

    def __init__(self, failures: int = 0) -> None:
        self.kept = False
        self.replanning_now = False
        self.rounds: list[bool] = []  # per plan_reads round: inside replanning()?
        self.failures = failures

    def keep_read_plans(self) -> None:
        self.kept = True

    @contextmanager
    def replanning(self) -> Iterator[None]:
        self.replanning_now = True
        try:
            yield
        finally:
            self.replanning_now = False

    def search_text(self, user_id: str, query: str, k: int) -> Any:
        if self.failures:
            self.failures -= 1
            raise ConnectionError("neo4j away")
        self.rounds.append(self.replanning_now)
        return [], [], None

    def changed(self, user_id: str) -> Any:
        return None

    def get(self, user_id: str, ids: Sequence[str]) -> list[Any]:
        return []

    def turns(self, user_id: str, ids: Sequence[str]) -> dict[str, Any]:
        return {}

    def turns_before(self, user_id: str, ids: Sequence[str]) -> dict[str, Any]:
        return {}


def test_one_graph_that_fails_does_not_stop_the_others_being_replanned() -> None:
    away, up = Kept(failures=1), Kept()
    assert warm.replan_reads([away, up]) == "ConnectionError"  # type: ignore[list-item]
    assert up.rounds and all(up.rounds)
    assert warm.replan_reads([away, up]) is None  # type: ignore[list-item]


def test_a_serving_process_keeps_its_read_plans_and_says_when_it_cannot() -> None:
    g = Kept(failures=3)  # three rounds fail (each at its first statement)
    stop = threading.Event()
    with capture_logs() as logs:
        thread = warm.keep_reads_planned([g], "test", every=0.01, stop=stop)  # type: ignore[list-item]
        assert g.kept and thread.daemon
        deadline = time.monotonic() + 30
        while len(g.rounds) < 12 and time.monotonic() < deadline:  # two rounds after
            time.sleep(0.01)
        stop.set()
        thread.join(30)
    assert len(g.rounds) >= 12 and all(g.rounds)  # each round as Neo4j decides
    events = [e["event"] for e in logs]
    assert events == ["read plans not renewed", "read plans renewed again"]  # not per round


def test_the_warm_up_of_a_server_plans_what_its_searches_will_send(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from memq.workers import search, wiring

    g = Recording()
    order: list[str] = []
    monkeypatch.setattr(wiring, "graphs", lambda: [g])
    monkeypatch.setattr(search, "search", lambda *a, **kw: order.append("search"))
    monkeypatch.setattr(warm, "keep_reads_planned",
                        lambda graphs, where: order.append("keep") or graphs[0].keep_read_plans())
    monkeypatch.setenv("MEMQ_WARM", "on")
    wiring.settings.cache_clear()
    try:
        warm.warm_reads("test")  # a Client's: Neo4j decides, as before
        assert order == ["search"] and not any(t.startswith("CYPHER") for _, t in g.sent)
        order.clear()
        g.sent.clear()
        warm.warm_reads("test", keep=True)
        assert order == ["keep", "search"]  # kept first, so the warm-up plans replan=skip
        assert g.sent and all(t.startswith(SKIP_REPLAN) for _, t in g.sent)
        monkeypatch.setenv("MEMQ_WARM", "off")
        wiring.settings.cache_clear()
        order.clear()
        warm.warm_reads("test", keep=True)
        assert order == []  # no warm-up, no keeper: Neo4j decides
    finally:
        wiring.settings.cache_clear()
