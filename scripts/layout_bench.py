"""`scripts/bench layout --users 1000,3000,10000`: Chroma layouts for many users, compared.

Issue 30 asks for a layout whose cost stays flat in the number of users without touching a
store's internals. This bench measures the candidates on scratch ``chroma run`` servers of
their own (memq's server config, temporary folders, free ports; removed afterwards), one
server per layout, filled with the same users:

* ``per-user``: a collection per user (what memq does today, per kind and model);
* ``hash-N``: users hashed into N shared collections, each record tagged with its user.

Each user gets a long tail of records (scripts/users_bench.py's sizes: lognormal, median 20,
at most 3,000), with vectors clustered per user (three topics and noise, as a person's turns
are) and an episode-sized packed metadata value, written in requests of up to 1,000 records.
Only one kind is planted (memq keeps two: memories and episodes, so its collection counts are
twice these).

At each size, per layout:

* **write**: Chroma's CPU (its /proc ticks) and the client's time for a 5-record upsert into
  an existing user, over 40 users;
* **new user**: the client's time for a new user's first write (its collection created, in
  ``per-user``);
* **query**, top 10 of a vector near one of the user's records, over 100 users drawn at
  random (most are small) and over the 10 largest: p50/p95 ms, and recall against an exact
  cosine scan of the user's planted vectors. ``hash-N`` is read two ways:
  ``filtered`` (Chroma's HNSW query with ``where user``) and ``exact`` (``get`` of the
  user's records with ``where user``, cosine in numpy);
* Chroma's RSS, open files and disk.

The per-user layout stops at ``--per-user-max`` users (its memory grows per user). Prints a
row per (layout, mode, size) and a summary line per layout:
``summary layout=<name> users=<largest> write_ratio=<at the largest ÷ at the smallest>
query_p95_ratio=<same, random users> recall=<lowest>``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from users_bench import _disk, _free_port, _proc, pct, sizes_of

DIM = 384
K = 10
WRITE_BATCH = 1_000
HNSW = {"hnsw": {"space": "cosine", "ef_construction": 200, "ef_search": 128}}
FILLER = "x" * 300  # an episode's packed JSON value is a few hundred characters


def shard_of(user: str, shards: int) -> int:
    """The user's shared collection: a stable hash, the same in every process."""
    return int(hashlib.sha256(user.encode()).hexdigest()[:8], 16) % shards


def vectors_for(user_index: int, n: int, seed: int = 11) -> np.ndarray:
    """n unit vectors around three centres of the user's own (deterministic per user)."""
    rng = np.random.default_rng([seed, user_index])
    centres = rng.standard_normal((3, DIM))
    v = centres[rng.integers(0, 3, n)] + rng.standard_normal((n, DIM))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def exact_top(matrix: np.ndarray, ids: Sequence[str], query: np.ndarray, k: int) -> list[str]:
    return [ids[i] for i in np.argsort(-(matrix @ query))[:k]]


def recall_of(got: Sequence[str], exact: Sequence[str]) -> float:
    return len(set(got) & set(exact)) / max(1, len(exact))


def ratio(first: float, last: float) -> float:
    return last / max(first, 1e-9)


def summary(layout: str, rows: Sequence[dict[str, Any]]) -> str:
    mine = [r for r in rows if r["layout"] == layout]
    first, last = mine[0], mine[-1]
    return (f"summary layout={layout} users={last['users']} "
            f"write_ratio={ratio(first['write_cpu_ms'], last['write_cpu_ms']):.2f} "
            f"query_p95_ratio={ratio(first['query_p95_ms'], last['query_p95_ms']):.2f} "
            f"recall={min(min(r['recall'], r['big_recall']) for r in mine):.3f}")


@contextlib.contextmanager
def scratch_chroma(pool: int = 0) -> Iterator[tuple[Any, int, str]]:
    """``chroma run`` with memq's server config (scripts/services), on a folder and port of
    its own: (client, pid, folder). ``pool``: how many HNSW indexes the server keeps loaded
    (its ``segment_manager.hnsw_index_pool_cache_config``; 0 leaves its default, 65,536)."""
    import chromadb

    home, port = tempfile.mkdtemp(prefix="memq-bench-layout-"), _free_port()
    config = Path(home, "chroma.yaml")
    config.write_text(f'persist_path: "{home}/data"\nlisten_address: "127.0.0.1"\n'
                      f"port: {port}\ncollections_with_segments_provider:\n  cache:\n"
                      "    lru:\n      capacity: 10000\n  cache_ttl_secs: 60\n"
                      "  permitted_parallelism: 100\n" + (
                          "segment_manager:\n  hnsw_index_pool_cache_config:\n    memory:\n"
                          f"      capacity: {pool}\n" if pool else ""))
    binary = os.path.join(os.path.dirname(sys.executable), "chroma")
    server = subprocess.Popen([binary, "run", str(config)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL,
                              env={**os.environ, "ANONYMIZED_TELEMETRY": "False"})
    try:
        for _ in range(120):
            with contextlib.suppress(Exception):
                client = chromadb.HttpClient(host="127.0.0.1", port=port)
                client.heartbeat()
                break
            time.sleep(0.5)
        else:
            raise SystemExit(f"bench layout: the scratch chroma did not answer on port {port}")
        yield client, server.pid, home
    finally:
        server.terminate()
        server.wait(60)
        shutil.rmtree(home, ignore_errors=True)


def parse(name: str) -> tuple[str, dict[str, int]]:
    """``per-user`` or ``hash-N``, with options: ``hash-256/pool=512/sync=100/m=4/efc=16``
    (``pool``: the server's HNSW index pool; ``sync``, ``m``, ``efc``: the collections'
    ``sync_threshold``, ``max_neighbors`` and ``ef_construction``)."""
    base, *rest = name.split("/")
    return base, {k: int(v) for k, v in (o.split("=", 1) for o in rest)}


class Layout:
    """Where a user's records go, and how a user's top k is read."""

    def __init__(self, name: str, client: Any, pid: int, home: str) -> None:
        self.name, self.client, self.pid, self.home = name, client, pid, home
        base, options = parse(name)
        self.shards = int(base.split("-")[1]) if base.startswith("hash-") else 0
        names = {"sync": "sync_threshold", "m": "max_neighbors", "efc": "ef_construction"}
        self.config = {"hnsw": {**HNSW["hnsw"], **{
            names[k]: v for k, v in options.items() if k in names}}}
        if "sync" in options:  # Chroma wants batch_size <= sync_threshold
            self.config["hnsw"]["batch_size"] = min(100, options["sync"])
        self._cols: dict[str, Any] = {}

    def modes(self) -> tuple[str, ...]:
        return ("filtered", "exact") if self.shards else ("own",)

    def _col(self, name: str) -> Any:
        if name not in self._cols:
            self._cols[name] = self.client.get_or_create_collection(
                name, configuration=self.config, embedding_function=None)
        return self._cols[name]

    def collection(self, user: str) -> Any:
        if self.shards:
            return self._col(f"shard-{shard_of(user, self.shards):04d}")
        return self._col(f"u-{hashlib.sha256(user.encode()).hexdigest()[:24]}")

    def write(self, user: str, ids: list[str], vectors: np.ndarray) -> None:
        self.collection(user).upsert(
            ids=ids, embeddings=vectors.tolist(),
            metadatas=[{"user": user, "record": FILLER}] * len(ids))

    def top(self, user: str, query: np.ndarray, mode: str) -> list[str]:
        col = self.collection(user)
        if mode == "exact":
            got = col.get(where={"user": user}, include=["embeddings"])
            if not len(got["ids"]):
                return []
            return exact_top(np.asarray(got["embeddings"], dtype=np.float32),
                             got["ids"], query, K)
        where = {"user": user} if mode == "filtered" else None
        res = col.query(query_embeddings=[query.tolist()], n_results=K, where=where,
                        include=["distances"])
        return list(res["ids"][0])

    def cpu_ms(self) -> float:
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def plant(layout: Layout, users: Sequence[str], counts: Sequence[int], first: int) -> float:
    """Users ``first..`` with their records; requests of up to WRITE_BATCH records, grouped by
    collection (a shared collection takes many users' records in one request)."""
    started = time.perf_counter()
    pending: dict[str, tuple[list[str], list[np.ndarray], list[str]]] = {}

    def flush(key: str) -> None:
        ids, vecs, owners = pending.pop(key)
        matrix = np.concatenate(vecs)
        layout.collection(owners[0]).upsert(
            ids=ids, embeddings=matrix.tolist(),
            metadatas=[{"user": o, "record": FILLER} for o in owners])

    for index in range(first, len(users)):
        user, n = users[index], counts[index]
        key = layout.collection(user).name
        for start in range(0, n, WRITE_BATCH):
            chunk = vectors_for(index, n)[start:start + WRITE_BATCH]
            ids, vecs, owners = pending.setdefault(key, ([], [], []))
            ids.extend(f"{user}-{start + i}" for i in range(len(chunk)))
            vecs.append(chunk)
            owners.extend([user] * len(chunk))
            if len(ids) >= WRITE_BATCH:
                flush(key)
    for key in list(pending):
        flush(key)
    return time.perf_counter() - started


def measure(layout: Layout, users: Sequence[str], counts: Sequence[int], size: int,
            rng: np.random.Generator, tag: int) -> list[dict[str, Any]]:
    """One row per read mode at this size."""
    existing = rng.choice(size, min(40, size), replace=False)
    cpu0, t0 = layout.cpu_ms(), time.perf_counter()
    for i in existing:
        layout.write(users[i], [f"{users[i]}-w{tag}-{j}" for j in range(5)],
                     vectors_for(int(i), 5, seed=1000 + tag))
    write_cpu = (layout.cpu_ms() - cpu0) / len(existing)
    write_ms = 1000 * (time.perf_counter() - t0) / len(existing)
    new_ms = []
    for j in range(10):
        started = time.perf_counter()
        layout.write(f"new-{tag}-{j}", [f"new-{tag}-{j}-{i}" for i in range(5)],
                     vectors_for(10**6 + tag * 10 + j, 5))
        new_ms.append(1000 * (time.perf_counter() - started))
    sample = [int(i) for i in rng.choice(size, min(100, size), replace=False)]
    biggest = [int(i) for i in np.argsort(-np.asarray(counts[:size]))[:10]]
    rss, files = _proc(layout.pid)
    rows = []
    for mode in layout.modes():
        stats: dict[str, Any] = {}
        for label, group in (("", sample), ("big_", biggest)):
            times, found = [], []
            for i in group:
                planted = vectors_for(i, counts[i])
                ids = [f"{users[i]}-{r}" for r in range(counts[i])]
                pick = planted[rng.integers(0, counts[i])]
                query = pick + 0.5 * rng.standard_normal(DIM).astype(np.float32) / np.sqrt(DIM)
                query /= np.linalg.norm(query)
                started = time.perf_counter()
                got = layout.top(users[i], query, mode)
                times.append(1000 * (time.perf_counter() - started))
                # the writes above added 5 records to some users: they are not in `ids`
                got = [g for g in got if "-w" not in g]
                found.append(recall_of(got, exact_top(planted, ids, query, min(K, len(got)))))
            stats.update({f"{label}query_p50_ms": pct(times, 50),
                          f"{label}query_p95_ms": pct(times, 95),
                          f"{label}recall": float(np.mean(found))})
        rows.append({"layout": layout.name, "mode": mode, "users": size,
                     "records": int(sum(counts[:size])), "write_cpu_ms": write_cpu,
                     "write_ms": write_ms, "new_user_ms": pct(new_ms, 50),
                     "chroma_rss_mb": rss, "chroma_files": files,
                     "disk_mb": _disk(layout.home), **stats,
                     "load": os.getloadavg()[0]})
    return rows


def line(r: dict[str, Any]) -> str:
    return (f"{r['layout']:>9} {r['mode']:>8} {r['users']:6} users {r['records']:8} records | "
            f"write {r['write_cpu_ms']:5.1f} ms CPU {r['write_ms']:5.1f} ms | new "
            f"{r['new_user_ms']:5.1f} ms | query p50/p95 {r['query_p50_ms']:5.1f}/"
            f"{r['query_p95_ms']:5.1f} ms recall {r['recall']:.3f} | 10 largest "
            f"{r['big_query_p50_ms']:5.1f}/{r['big_query_p95_ms']:5.1f} ms recall "
            f"{r['big_recall']:.3f} | RSS {r['chroma_rss_mb']:6.0f} MB files "
            f"{r['chroma_files']:5} disk {r['disk_mb']:6.0f} MB | load {r['load']:.2f}")


def run(args: Any) -> list[dict[str, Any]]:
    targets = sorted({int(x) for x in args.users.split(",") if x.strip()})
    users = [f"user-{i:06d}" for i in range(targets[-1])]
    counts = sizes_of(targets[-1])
    rows: list[dict[str, Any]] = []
    print(f"bench layout: sizes {targets}; {sum(counts)} records at the largest "
          f"(median {int(np.median(counts))}, max {max(counts)} per user); load average "
          f"{os.getloadavg()[0]:.2f}", flush=True)
    for name in args.layouts.split(","):
        rng = np.random.default_rng(3)
        with scratch_chroma(parse(name)[1].get("pool", 0)) as (client, pid, home):
            layout = Layout(name, client, pid, home)
            filled = 0
            for tag, size in enumerate(targets):
                if name.startswith("per-user") and size > args.per_user_max:
                    print(f"{name:>9}: stops at {args.per_user_max} users (--per-user-max)")
                    break
                took = plant(layout, users[:size], counts[:size], filled)
                filled = size
                print(f"{name:>9}: planted up to {size} users in {took:.0f} s", flush=True)
                for row in measure(layout, users, counts, size, rng, tag):
                    rows.append(row)
                    print(line(row), flush=True)
        for mode in ("filtered", "exact", "own"):
            mine = [r for r in rows if r["layout"] == name and r["mode"] == mode]
            if mine:
                print(summary(name, mine).replace("summary ", f"summary mode={mode} "))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=1))
    print(f"rows: {out}")
    return rows
