"""Integration fixtures: the real Redis, Neo4j and Chroma server (scripts/services), and real
worker processes started here. Nothing is mocked.

Tests never touch a user's data: they talk to their own Redis, Neo4j and Chroma, on the test
ports below (scripts/test starts them, with their own data folder), never to the demo's.
Locally a missing service skips these tests; under scripts/test (MEMQ_REQUIRE_SERVICES=1,
so in CI) a missing service is a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import faults
import pytest
import redis

REPO = Path(__file__).resolve().parents[2]
MEMQ = [sys.executable, "-m", "memq.workers.cli"]
# The tests' services (scripts/test): the same names scripts/services and memq read, with
# the test ports as defaults, so a bare `pytest` never reaches the demo's services either.
REDIS_PORT = int(os.environ.get("MEMQ_REDIS_PORT", "16379"))
NEO4J_PORT = int(os.environ.get("MEMQ_NEO4J_PORT", "17687"))
CHROMA_PORT = int(os.environ.get("MEMQ_CHROMA_PORT", "18000"))
DEMO_PORTS = (6379, 7687, 8000)
assert not {REDIS_PORT, NEO4J_PORT, CHROMA_PORT} & set(DEMO_PORTS), "tests on demo ports"
REDIS_BASE = f"redis://127.0.0.1:{REDIS_PORT}"
REDIS_URL = f"{REDIS_BASE}/15"
NEO4J_URI = f"bolt://127.0.0.1:{NEO4J_PORT}"
DEMO = REPO / "workers" / "demo" / "conversation.jsonl"


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="session")
def services() -> None:
    missing = [name for name, port in (("redis", REDIS_PORT), ("neo4j", NEO4J_PORT),
                                       ("chroma", CHROMA_PORT)) if not _port_open(port)]
    if missing:
        message = f"services not running: {missing} (scripts/services up)"
        if os.environ.get("MEMQ_REQUIRE_SERVICES"):
            pytest.fail(message)
        pytest.skip(message)
    # the tests' own Redis db starts empty: a delivery left in flight by an interrupted earlier
    # run would otherwise hold every later `memq wait` until its timeout
    with redis.Redis.from_url(REDIS_URL) as r:
        r.flushdb()


def memq_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMQ_")}
    env.update({"MEMQ_REDIS_URL": REDIS_URL, "MEMQ_REDIS_PORT": str(REDIS_PORT),
                "MEMQ_NEO4J_PORT": str(NEO4J_PORT), "MEMQ_CHROMA_PORT": str(CHROMA_PORT),
                "MEMQ_REAPER_INTERVAL_S": "1",
                # the tests' Neo4j lives the whole suite: a rehearsal per worker start would
                # only take CPU from the tests (test_warm.py turns it on)
                "MEMQ_WARM": "off",
                "MEMQ_HOME": os.environ.get("MEMQ_HOME", str(REPO / ".memq-test")),
                "C_FORCE_ROOT": "1", "PYTHONUNBUFFERED": "1"})
    if "MEMQ_NEO4J_JAVA_OPTS" in os.environ:  # the JIT scripts/test chose for the tests' Neo4j,
        env["MEMQ_NEO4J_JAVA_OPTS"] = os.environ["MEMQ_NEO4J_JAVA_OPTS"]  # kept on a restart
    env.update(extra)
    return env


@dataclass
class Worker:
    proc: subprocess.Popen[bytes]
    log: Path

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)


def start_worker(tmp: Path, name: str, *, concurrency: int = 2, env: dict[str, str] | None = None,
                 extra: Sequence[str] = (), delay: tuple[str, float] | None = None) -> Worker:
    """``delay``: (point, seconds), the worker stalls there (tests/faults.py), logging "fault
    injection: delaying" first."""
    log = tmp / f"{name}.log"
    env = env or memq_env()
    if delay is not None:
        env, more = faults.worker(env, *delay)
        extra = [*extra, *more]
    proc = subprocess.Popen(
        [*MEMQ, "worker", "--concurrency", str(concurrency), "-n", f"{name}@%h", *extra],
        cwd=REPO, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if b" ready." in log.read_bytes():
            return Worker(proc, log)
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    raise RuntimeError(f"worker {name} did not start:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="session")
def worker(services: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worker]:
    tmp = tmp_path_factory.mktemp("workers")
    w = start_worker(tmp, "w1")
    yield w
    w.stop()


def memq(*args: str, stdin: str | None = None, check: bool = True,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    res = subprocess.run([*MEMQ, *args], check=False, cwd=REPO, env=env or memq_env(),
                         input=stdin,
                         capture_output=True, text=True, timeout=180)
    if check and res.returncode != 0:
        raise AssertionError(f"memq {args} failed ({res.returncode}):\n{res.stderr[-3000:]}")
    return res


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Api:
    """A ``memq serve`` of the tests' own (a free port, its log in the test's folder)."""

    base: str
    log: Path
    proc: subprocess.Popen[bytes]

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=20)


def start_api(log: Path, *, base_env: dict[str, str] | None = None, **env: str) -> Api:
    """``base_env``: the whole environment instead of memq_env()'s (``env`` is added)."""
    import httpx

    port = free_port()
    proc = subprocess.Popen([*MEMQ, "serve", "--port", str(port)], cwd=REPO,
                            env={**(base_env or memq_env()), "MEMQ_LOG_FORMAT": "json", **env},
                            stdout=log.open("wb"), stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return Api(base, log, proc)
        except httpx.TransportError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"memq serve did not start:\n{log.read_text()[-3000:]}")


def new_key(tenant: str, scope: str, **env: str) -> str:
    """A key made the way an operator makes one (memq keys create --json)."""
    res = memq("keys", "create", "--tenant", tenant, "--scope", scope, "--json",
               env=memq_env(**env) if env else None)
    return str(json.loads(res.stdout)["key"])


def memq_json(*args: str) -> Any:
    return json.loads(memq(*args, "--json").stdout)


def wait_done(timeout: float = 120) -> None:
    memq("wait", "--timeout", str(timeout))


def demo_lines(user_id: str) -> str:
    """The bundled demo conversation, re-owned by a fresh user (tests never share users)."""
    out = []
    for raw in DEMO.read_text().splitlines():
        line = json.loads(raw)
        line["user_id"] = user_id
        out.append(json.dumps(line, ensure_ascii=False))
    return "\n".join(out) + "\n"


LOCAL = "local"  # MEMQ_TENANT's default: the tenant of the CLI's and memq.Client's users


def stored(user_id: str) -> str:
    """The stores' id of a user the CLI or memq.Client named (``local:<user>``): one namespace
    rule for every door (workers/api.py)."""
    return f"{LOCAL}:{user_id}"


def episode_texts(user_id: str, episode_ids: Sequence[str]) -> list[str]:
    """The words of these episodes of a stored user id, from the graph (Chroma holds none),
    in the order given; "" for an episode the graph does not have."""
    import neo4j

    with neo4j.GraphDatabase.driver(NEO4J_URI) as driver, driver.session() as session:
        words = {str(r["id"]): str(r["text"]) for r in session.run(
            "MATCH (e:Episode) WHERE e.id IN $ids AND e.user_id = $user "
            "RETURN e.id AS id, e.text AS text", ids=list(episode_ids), user=user_id)}
    return [words.get(i, "") for i in episode_ids]


def episodes(user_id: str) -> list[str]:
    """The raw turns of a user the CLI or memq.Client named: its records in Chroma (read
    directly: search is approximate), with their words from the graph."""
    got = user_collection(stored(user_id), "memq_episodes").get(include=[])
    return sorted(episode_texts(stored(user_id), got["ids"]))


class UserRecords:
    """One user's Chroma records of one kind and model, where they are (an own collection, or
    the user's part of its shard): what a test reaches past the adapter for, never another
    user's records."""

    def __init__(self, user_id: str, col: Any, own: bool) -> None:
        self.user_id, self.col, self.own = user_id, col, own
        self.where = None if own else {"user": user_id}
        self.name = col.name

    def get(self, ids: list[str] | None = None, include: list[str] | None = None) -> Any:
        return self.col.get(ids=ids, where=self.where,
                            include=["metadatas"] if include is None else include)

    def delete(self, ids: list[str]) -> None:
        self.col.delete(ids=ids, where=self.where)

    def add(self, ids: list[str], embeddings: list[Any], metadatas: list[dict[str, Any]]) -> None:
        self.col.add(ids=ids, embeddings=embeddings,
                     metadatas=[{**m, "user": self.user_id} for m in metadatas])

    def count(self) -> int:
        return len(self.get(include=[])["ids"])

    def drop(self) -> None:
        """Every one of these records gone (a lost volume, for this user)."""
        import chromadb

        if self.own:
            chromadb.HttpClient(host="127.0.0.1", port=CHROMA_PORT).delete_collection(self.name)
        else:
            self.col.delete(where=self.where)


def user_collection(user_id: str, base: str = "memq_memories",
                    model: str | None = None) -> UserRecords:
    """The user's Chroma records of one kind (memories or episodes) and model (the default
    one unless given): its own collection if it has one, else its shard's."""
    import chromadb

    from memq.pipeline.adapters.chroma import ChromaStores
    from memq.pipeline.adapters.embed_local import MODEL_ID

    client = chromadb.HttpClient(host="127.0.0.1", port=CHROMA_PORT)
    model = model or MODEL_ID
    with contextlib.suppress(chromadb.errors.NotFoundError):
        return UserRecords(user_id, client.get_collection(
            ChromaStores.collection_name(base, model, user_id)), own=True)
    stores = ChromaStores.connect("127.0.0.1", CHROMA_PORT)
    return UserRecords(user_id, client.get_collection(stores.shard_name(base, model, user_id)),
                       own=False)


@pytest.fixture
def user_id() -> str:
    return f"t-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session", autouse=True)
def demo_data_untouched() -> Iterator[None]:
    """The demo's services (default ports), when running, hold a sentinel user for the whole
    suite: an old, never-recalled memory that any stray global job (decay weeks ahead,
    capacity, forget, a flush) would change. It must come out exactly as it went in.
    scripts/test starts the demo's services and sets MEMQ_CHECK_DEMO, so CI always checks."""
    if not all(_port_open(p) for p in DEMO_PORTS):
        if os.environ.get("MEMQ_CHECK_DEMO"):
            pytest.fail("the demo's services are not running: cannot prove the suite "
                        "leaves them alone (scripts/services up)")
        yield
        return
    from datetime import UTC, datetime, timedelta

    from memq.pipeline.adapters.chroma import BASE_MODEL, ChromaStores
    from memq.pipeline.adapters.neo4j.store import Neo4jGraph
    from memq.pipeline.ids import content_hash
    from memq.schemas import Kind, StoredMemory

    user = f"demo-sentinel-{uuid.uuid4().hex[:8]}"
    old = (datetime.now(UTC) - timedelta(days=400)).replace(microsecond=0)
    memory = StoredMemory(
        id=f"m_sentinel_{user}", user_id=user, content="The sentinel prefers green tea.",
        kind=Kind.PREFERENCE, confidence=0.9, importance=0.5, source_turn_ids=["s/t1"],
        valid_at=old, created_at=old, updated_at=old, embedding_model=BASE_MODEL)
    graph = Neo4jGraph(f"bolt://127.0.0.1:{DEMO_PORTS[1]}")
    chroma = ChromaStores.connect("127.0.0.1", DEMO_PORTS[2])
    r = redis.Redis(port=DEMO_PORTS[0], decode_responses=True)
    graph.apply(user, [memory], [], old, expected=None)
    chroma.upsert([memory], [[1.0] + [0.0] * 383])
    r.set(f"memq:sentinel:{user}", "1")
    try:
        yield
        assert graph.get(user, [memory.id]) == [memory], "the suite changed the demo's Neo4j"
        assert chroma.index(user)[memory.id].content_hash == content_hash(memory.content), \
            "the suite changed the demo's Chroma"
        assert r.get(f"memq:sentinel:{user}") == "1", "the suite changed the demo's Redis"
    finally:
        graph.delete_user(user)
        chroma.delete_user(user)
        r.delete(f"memq:sentinel:{user}")
        graph.close()
