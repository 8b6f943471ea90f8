"""The read warm-up's shapes (workers/warm.py ``plan_reads``): Neo4j plans a statement once per
size bucket of each string and list parameter (1, 2-10, 11-100, 101-1000, ...), so the warm-up
runs each read statement of search and of the context block once in every bucket a request
can bring, on ids no user has; and ``memq serve`` is not ready for reads until it is done
(workers/http.py ``/readyz?path=read``, workers/stack.py: what ``memq up`` waits for)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from memq.pipeline import recall
from memq.workers import stack, warm
from memq.workers.auth import tenant_user
from memq.workers.stack_setup import Config


def bucket(size: int) -> int:
    """Neo4j 5's size bucket of a string or list parameter: 1, 2-10, 11-100, 101-1000, ..."""
    return 0 if size <= 1 else len(str(size - 1))


# every length a stores id can have: "<tenant>:<user>", 3 to 128 characters
ID_BUCKETS = {bucket(n) for n in range(3, 129)}
# a Lucene query of a question with words: its user key and field, then up to MAX_TERMS words
# (a query of 1000 characters or more needs words of 15 letters on average: not warmed)
QUERY_BUCKETS = {bucket(len(recall.lucene_query("acme:u42", text) or ""))
                 for text in ("tea", " ".join(["production"] * recall.MAX_TERMS))}


class Recorder:
    """The read statements plan_reads runs, with the sizes of their parameters."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, int]] = []

    def search_text(self, user_id: str, query: str, k: int) -> Any:
        memory_query = recall.lucene_query(user_id, query, field="content") or ""
        episode_query = recall.lucene_query(user_id, query) or ""
        assert bucket(len(memory_query)) == bucket(len(episode_query))  # one plan, not two
        self.calls.append(("search_text", user_id, len(episode_query)))
        return [], [], None

    def changed(self, user_id: str) -> Any:
        self.calls.append(("superseded_sources", user_id, 0))

    def get(self, user_id: str, memory_ids: Sequence[str]) -> list[Any]:
        self.calls.append(("get_memories", user_id, len(memory_ids)))
        return []

    def turns(self, user_id: str, episode_ids: Sequence[str]) -> dict[str, Any]:
        self.calls.append(("episodes_by_ref", user_id, len(episode_ids)))
        return {}

    def turns_before(self, user_id: str, episode_ids: Sequence[str]) -> dict[str, Any]:
        self.calls.append(("turns_before", user_id, len(episode_ids)))
        return {}


def test_every_read_statement_is_planned_in_every_bucket_a_request_can_bring() -> None:
    graph = Recorder()
    ran = warm.plan_reads(graph)  # type: ignore[arg-type]
    assert ran == len(graph.calls)
    shapes = {(name, bucket(len(user)), bucket(size)) for name, user, size in graph.calls}
    assert {(u, q) for name, u, q in shapes if name == "search_text"} == {
        (u, q) for u in ID_BUCKETS for q in QUERY_BUCKETS}
    assert {u for name, u, _ in shapes if name == "superseded_sources"} == ID_BUCKETS
    # a search reads up to POOL memories by id and the words of up to POOL turns; a context
    # block the turns before its hits
    lists = {bucket(n) for n in range(1, recall.POOL + 1)}
    for name in ("get_memories", "episodes_by_ref", "turns_before"):
        assert {(u, n) for s, u, n in shapes if s == name} == {
            (u, n) for u in ID_BUCKETS for n in lists}


def test_the_warm_up_ids_are_no_users() -> None:
    """The stores see ``<tenant>:<user>`` for every user, whichever door it came in by; the
    warm-up's ids have no ``:``, so no key, Client or CLI can name them."""
    graph = Recorder()
    warm.plan_reads(graph)  # type: ignore[arg-type]
    users = {user for _, user, _ in graph.calls}
    assert users and not any(":" in user for user in users)
    assert all(":" in tenant_user("local", user) for user in ("u42", "x" * 100))


def test_reads_are_not_ready_while_the_server_warms(monkeypatch: pytest.MonkeyPatch) -> None:
    from fastapi.testclient import TestClient

    from memq.workers import http, ops, wiring

    monkeypatch.setenv("MEMQ_AUTH", "off")
    monkeypatch.setenv("MEMQ_WARM", "on")
    wiring.settings.cache_clear()
    checks = [ops.Check(name, True, "ok", 1.0) for name in ("redis", "neo4j", "chroma")]
    monkeypatch.setattr(ops, "doctor", lambda *a, **kw: checks)
    release, entered = threading.Event(), threading.Event()

    kept: list[bool] = []

    def slow_warm_up(where: str, *, keep: bool = False) -> None:
        kept.append(keep)
        entered.set()
        release.wait(30)

    monkeypatch.setattr(warm, "warm_reads", slow_warm_up)
    try:
        app = http.create_app()
        client = TestClient(app)
        assert client.get("/readyz", params={"path": "read"}).status_code == 200  # no warm-up
        thread = http.warm_reads_in_background(app)
        assert entered.wait(30)
        reads = client.get("/readyz", params={"path": "read"})
        assert reads.status_code == 503
        assert reads.json()["warming"] is True and reads.json()["read"] is True
        writes = client.get("/readyz")  # enqueue needs nothing warm
        assert writes.status_code == 200 and writes.json()["warming"] is True
        release.set()
        thread.join(30)
        reads = client.get("/readyz", params={"path": "read"})
        assert reads.status_code == 200 and "warming" not in reads.json()
        assert kept == [True]  # a server keeps its read plans (test_read_plans_kept.py)
    finally:
        release.set()
        wiring.settings.cache_clear()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_failed_warm_up_does_not_keep_the_server_unready(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from fastapi import FastAPI

    from memq.workers import http

    # warm_reads logs its failures; this one even raises
    def broken(where: str, *, keep: bool = False) -> None:
        raise RuntimeError("neo4j went away")

    monkeypatch.setattr(warm, "warm_reads", broken)
    app = FastAPI()
    app.state.warming = threading.Event()
    thread = http.warm_reads_in_background(app)
    thread.join(30)
    assert not app.state.warming.is_set()


def test_memq_up_waits_for_the_server_to_be_ready_for_reads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = Config(home=tmp_path / "home", cache=tmp_path / "cache", redis_port=36379,
                 neo4j_port=37687, chroma_port=38000, api_port=38080)
    server = stack.components(cfg)["server"]
    asked: list[str] = []
    warming = [True]

    def http_ok(url: str, timeout: float = 3.0) -> bool:
        asked.append(url)
        return not (url.endswith("/readyz?path=read") and warming[0])

    monkeypatch.setattr(stack.procs, "http_ok", http_ok)
    assert stack.answers(cfg, server)  # it answers (status says up) ...
    assert not stack.ready(cfg, server)  # ... but up waits until reads are warm
    warming[0] = False
    assert stack.ready(cfg, server)
    assert "http://127.0.0.1:38080/readyz?path=read" in asked
