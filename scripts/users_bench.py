"""`scripts/bench users --users 100,1000,3000`: what a store costs as the users grow.

On a stack of its own (Redis, Neo4j and Chroma started by scripts/services in a temporary
folder, on free ports; removed afterwards), users are added up to each size with a long-tail
number of turns (lognormal: median 20, a few in the thousands, at most 3,000), then measured:

* **write**: a batch of 5 turns for an existing user, through a real worker (extract,
  dedupe, merge, both stores), enqueue to done: mean and p95 over 10 users;
* **new user**: the same for a user the stores have never seen (its collections created);
* **search**: ``Client.search`` in-process for 20 users, p50/p95, *cold* (the user's first
  query since the size was reached) and *hot* (the same query again);
* **nn_recall**: the episodes Chroma returns for a vector (top 10) against an exact cosine
  scan of the user's vectors, over 10 random users (most in a shard) and the 10 largest (in
  collections of their own);
* each store's RSS, open files and disk, and Chroma's number of collections.

Five throwaway users go through the same work first, so that the smallest size is not
measured on a stack that is still starting.

**Planted, not ingested**: the turns are written through memq's store adapters (the calls
extraction makes: ``ChromaStores.add`` and ``Neo4jGraph.add_episodes``) with random unit
vectors, no extraction: ingesting 100k turns through the path at ~50 turns/s would take the
better part of an hour per size. The measured batches go through the whole path. Prints a row
per size, a PNG, and last ``summary users=<largest> write_ratio=<write at the largest ÷ at the
smallest> search_p95_ratio=<hot search p95, same> nn_recall=<lowest>``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
TAIL_MEDIAN, TAIL_SIGMA, TAIL_MAX = 20, 1.3, 3_000
PHRASES = ("I live in {}.", "We moved to {} last month.", "I love {} tea.",
           "My sister works at {}.", "I started learning the {}.")
WORDS = ("Berlin", "Lisbon", "green", "Initech", "cello", "Oslo", "jasmine", "Globex", "piano")


def sizes_of(n_users: int, seed: int = 7) -> list[int]:
    """Turns per user, long-tailed: most tens, a few thousands."""
    rng = np.random.default_rng(seed)
    raw = rng.lognormal(np.log(TAIL_MEDIAN), TAIL_SIGMA, n_users)
    return [int(min(TAIL_MAX, max(1, round(x)))) for x in raw]


def pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else 0.0


def summary(rows: Sequence[dict[str, Any]]) -> str:
    first, last = rows[0], rows[-1]
    return (f"summary users={last['users']} "
            f"write_ratio={last['write_ms'] / max(first['write_ms'], 1e-9):.2f} "
            f"search_p95_ratio={last['hot_p95_ms'] / max(first['hot_p95_ms'], 1e-9):.2f} "
            f"nn_recall={min(r['nn_recall'] for r in rows):.3f}")


def _free_port() -> int:
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def scratch_stack() -> Iterator[dict[str, str]]:
    """Redis, Neo4j and Chroma of the bench's own (scripts/services, a temporary MEMQ_HOME,
    free ports): the environment that names them."""
    home = tempfile.mkdtemp(prefix="memq-bench-users-")
    env = {"MEMQ_HOME": home, "MEMQ_REDIS_PORT": str(_free_port()),
           "MEMQ_NEO4J_PORT": str(_free_port()), "MEMQ_CHROMA_PORT": str(_free_port())}
    env["MEMQ_REDIS_URL"] = f"redis://127.0.0.1:{env['MEMQ_REDIS_PORT']}/0"
    full = {**os.environ, **env}
    services = str(REPO / "scripts" / "services")
    try:
        subprocess.run([services, "up"], env=full, check=True, stdout=subprocess.DEVNULL)
        yield env
    finally:
        subprocess.run([services, "down"], env=full, check=False, stdout=subprocess.DEVNULL)
        shutil.rmtree(home, ignore_errors=True)


def _pid(home: str, name: str) -> int | None:
    try:
        return int(Path(home, name, f"{name}.pid").read_text().strip())
    except (OSError, ValueError):
        return None


def _proc(pid: int | None) -> tuple[float, int]:
    """(RSS in MB, open files) of a process."""
    if pid is None:
        return 0.0, 0
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        rss = next(int(line.split()[1]) for line in status.splitlines()
                   if line.startswith("VmRSS:")) / 1024
        return rss, len(os.listdir(f"/proc/{pid}/fd"))
    except (OSError, StopIteration):
        return 0.0, 0


def _disk(path: str) -> float:
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.path.getsize(os.path.join(root, f))
    return total / 1e6


def _unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def plant(users: Sequence[str], counts: Sequence[int], rng: np.random.Generator) -> float:
    """The users' turns through the store adapters (random vectors): seconds taken."""
    from memq.schemas import Turn
    from memq.workers import wiring

    chroma, graph, model = wiring.chroma(), wiring.graph(), wiring.embedder()
    dim = len(model.embed(["x"])[0])
    now = datetime.now(UTC)
    started = time.perf_counter()
    for user, n in zip(users, counts, strict=True):
        at = datetime(2025, 1, 1, tzinfo=UTC)
        for chunk in range(0, n, 500):
            turns = [Turn(turn_id=f"p{i}", role="user",
                          content=PHRASES[i % len(PHRASES)].format(WORDS[i % len(WORDS)]),
                          timestamp=at + timedelta(minutes=i))
                     for i in range(chunk, min(n, chunk + 500))]
            vectors = [list(map(float, v)) for v in _unit(rng, len(turns), dim)]
            chroma.add(user, "planted", turns, vectors, model.model_id, now)
            graph.add_episodes(user, "planted", turns, now)
    return time.perf_counter() - started


def _batch(user: str, n: int) -> Any:
    from memq.schemas import IngestBatch, Turn

    at = datetime(2026, 6, 1, 9, tzinfo=UTC) + timedelta(minutes=n)
    texts = [PHRASES[(n + i) % len(PHRASES)].format(WORDS[(n + 2 * i) % len(WORDS)])
             for i in range(5)]
    return IngestBatch(user_id=user, session_id=f"m{n}", turns=[
        Turn(turn_id=f"t{i}", role="user", content=t, timestamp=at + timedelta(seconds=i))
        for i, t in enumerate(texts)])


def _timed_batches(client: Any, users: Sequence[str], tag: int) -> list[float]:
    out = []
    for i, user in enumerate(users):
        started = time.perf_counter()
        client.wait(client.enqueue([_batch(user, tag * 100 + i)]), timeout=300)
        out.append(1000 * (time.perf_counter() - started))
    return out


def _nn_recall(users: Sequence[str], rng: np.random.Generator, port: int) -> float:
    """Top 10 of Chroma's search against an exact scan of the user's episode vectors (read
    where they are: the user's own collection, else its part of its shard)."""
    import chromadb

    from memq.pipeline.adapters.chroma import EPISODES, USER, ChromaStores
    from memq.workers import wiring

    chroma, model = wiring.chroma(), wiring.embedder().model_id
    http = chromadb.HttpClient(host="127.0.0.1", port=port)
    found = []
    for user in users:
        try:
            col, where = http.get_collection(
                ChromaStores.collection_name(EPISODES, model, user)), None
        except chromadb.errors.NotFoundError:
            col, where = http.get_collection(chroma.shard_name(EPISODES, model, user)), {
                USER: user}
        got = col.get(where=where, include=["embeddings"])
        if len(got["ids"]) < 10:
            continue
        matrix = np.asarray(got["embeddings"], dtype=np.float32)
        query = _unit(rng, 1, matrix.shape[1])[0]
        exact = {got["ids"][i] for i in np.argsort(-(matrix @ query))[:10]}
        hits = chroma.search(user, [float(x) for x in query], model, 10)
        found.append(len(exact & {h.id for h in hits}) / 10)
    return float(np.mean(found)) if found else 1.0


def _largest(users: Sequence[str], counts: Sequence[int], n: int) -> list[str]:
    return [users[i] for i in np.argsort(-np.asarray(counts[:len(users)]))[:n]]


def _collections(port: int) -> int:
    import chromadb

    return int(chromadb.HttpClient(host="127.0.0.1", port=port).count_collections())


def run(args: Any) -> list[dict[str, Any]]:
    targets = sorted({int(x) for x in args.users.split(",") if x.strip()})
    rng = np.random.default_rng(1)
    rows: list[dict[str, Any]] = []
    with scratch_stack() as env:
        os.environ.update(env)  # before memq's settings are first read
        from memq.workers import wiring
        from memq.workers.api import StoresClient as Client  # the stores' ids

        wiring.configure_logging("WARNING")
        worker = subprocess.Popen([sys.executable, "-m", "memq.workers.cli", "worker",
                                   "--concurrency", "1", "-n", "users@%h"],
                                  env={**os.environ, "C_FORCE_ROOT": "1"},
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True)
        try:
            client, users, counts = Client(), [], sizes_of(max(targets))
            tag = uuid.uuid4().hex[:6]
            # the first measurements would otherwise carry the stack's start (Neo4j's JIT,
            # the worker's model): a few users' worth of the same work first, not counted
            warm = [f"bench-users-{tag}-warm-{i}" for i in range(5)]
            plant(warm, [20] * len(warm), rng)
            _timed_batches(client, warm, 99)
            for user in warm:
                client.search(user, "where does the user live", 10)
            for target in targets:
                new = [f"bench-users-{tag}-{n}" for n in range(len(users), target)]
                took = plant(new, counts[len(users):target], rng)
                users += new
                sample = [users[int(i)] for i in rng.choice(len(users), 20, replace=False)]
                cold, hot = [], []
                for user in sample:
                    for out in (cold, hot):
                        started = time.perf_counter()
                        client.search(user, "where does the user live", 10)
                        out.append(1000 * (time.perf_counter() - started))
                writes = _timed_batches(client, sample[:10], len(rows))
                fresh = _timed_batches(client, [f"bench-users-{tag}-new-{len(rows)}-{i}"
                                                for i in range(5)], 50 + len(rows))
                chroma_rss, chroma_files = _proc(_pid(env["MEMQ_HOME"], "chroma"))
                neo_rss, neo_files = _proc(_pid(env["MEMQ_HOME"], "neo4j"))
                row = {"users": target, "turns": sum(counts[:target]), "plant_s": took,
                       "write_ms": float(np.mean(writes)), "write_p95_ms": pct(writes, 95),
                       "new_user_ms": float(np.mean(fresh)),
                       "cold_p50_ms": pct(cold, 50), "cold_p95_ms": pct(cold, 95),
                       "hot_p50_ms": pct(hot, 50), "hot_p95_ms": pct(hot, 95),
                       # random users (most in a shard) and the largest (own collections)
                       "nn_recall": _nn_recall(sample[:10] + _largest(users, counts, 10), rng,
                                               int(env["MEMQ_CHROMA_PORT"])),
                       "chroma_collections": _collections(int(env["MEMQ_CHROMA_PORT"])),
                       "chroma_rss_mb": chroma_rss, "chroma_files": chroma_files,
                       "chroma_disk_mb": _disk(os.path.join(env["MEMQ_HOME"], "chroma")),
                       "neo4j_rss_mb": neo_rss, "neo4j_files": neo_files,
                       "neo4j_disk_mb": _disk(os.path.join(env["MEMQ_HOME"], "neo4j")),
                       "load": os.getloadavg()[0]}
                rows.append(row)
                print(" ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}"
                               for k, v in row.items()), flush=True)
        finally:
            os.killpg(worker.pid, 15)
            worker.wait(timeout=60)
    if args.png:
        _png(rows, args.png)
    print(summary(rows))
    return rows


def _png(rows: Sequence[dict[str, Any]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [r["users"] for r in rows]
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    panels = [("write ms (batch of 5 turns)", ("write_ms", "write_p95_ms", "new_user_ms")),
              ("search ms", ("hot_p50_ms", "hot_p95_ms", "cold_p95_ms")),
              ("RSS MB", ("chroma_rss_mb", "neo4j_rss_mb")),
              ("disk MB / open files", ("chroma_disk_mb", "neo4j_disk_mb", "chroma_files"))]
    for ax, (title, keys) in zip(axes.flat, panels, strict=True):
        for key in keys:
            ax.plot(x, [r[key] for r in rows], marker="o", label=key)
        ax.set_xscale("log")
        ax.set_title(title)
        ax.set_xlabel("users")
        ax.legend(fontsize=7)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    print(f"chart: {path}")
