"""Benchmarks (see scripts/bench). Each prints what it measured, one figure per line."""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import re
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np


def bench_embed(args: argparse.Namespace) -> None:
    """Sentences/s of the offline embedder's variants (int8-w8a7, the default: the packaged
    int8 weights computed in int8; int8, the same computed in fp32; fp32; w8a7, the fp32
    weights computed in int8), on 1 and 2 threads, over distinct mixed-length texts (a third
    short, a third medium, a third 40-60 words), and how closely the others agree with fp32
    and int8-w8a7 with int8. The machine's
    load average is printed: other processes on these 2 cores skew the figures."""
    from memq.pipeline.adapters.embed_local import LocalEmbedder, Variant

    rng = random.Random(1)
    words = ["user", "production", "server", "prefers", "concise", "answers", "deploys",
             "ubuntu", "team", "uses", "terraform", "likes", "jazz", "lives", "in", "lisbon",
             "works", "at", "initech", "on", "weekends", "the", "a", "and", "every", "friday",
             "after", "review", "database", "backups", "staging", "cluster", "meeting", "notes",
             "about", "quarterly", "budget", "with", "colleagues", "from", "marketing", "her",
             "daughter", "started", "school", "this", "september", "allergic", "to", "peanuts"]
    lengths = [(3, 8), (10, 25), (40, 60)]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(*lengths[i % 3])))
             for i in range(args.n)]
    short = [" ".join(rng.choice(words) for _ in range(15)) + f" {i}" for i in range(args.n)]
    mean_words = sum(len(t.split()) for t in texts) / args.n
    print(f"{args.n} mixed texts ({len(set(texts))} distinct), mean {mean_words:.0f} words, "
          f"and {args.n} 15-word sentences; load average {os.getloadavg()[0]:.2f} at start")
    vectors: dict[str, np.ndarray] = {}
    variants: tuple[Variant, ...] = ("fp32", "int8", "w8a7", "int8-w8a7")
    cache = Path(tempfile.mkdtemp(prefix="memq-bench-embed-"))  # each graph built once here
    for variant in variants:
        for threads in (1, 2):
            e = LocalEmbedder(threads=threads, batch_size=32, variant=variant, cache_dir=cache)
            e.embed(texts[:64])  # warm up
            rates = []
            for sample in (texts, short):
                t = time.perf_counter()
                out = e.embed(sample)
                rates.append(args.n / (time.perf_counter() - t))
                if sample is texts:
                    vectors[variant] = np.asarray(out)
            print(f"local {variant} ONNX ({e.model_id}), {threads} thread(s): "
                  f"{rates[0]:,.0f} sentences/s mixed, {rates[1]:,.0f} sentences/s of 15 words"
                  f"  (load average {os.getloadavg()[0]:.2f})")
    for ref, variant in (("fp32", "int8"), ("fp32", "w8a7"), ("fp32", "int8-w8a7"),
                         ("int8", "int8-w8a7")):
        cosines = (vectors[ref] * vectors[variant]).sum(axis=1)
        print(f"{ref} vs {variant} cosine: mean {cosines.mean():.4f}, "
              f"min {cosines.min():.4f}")
    shutil.rmtree(cache, ignore_errors=True)


def _plant(user: str, n: int, now: datetime, model: str) -> None:
    """n memories of one user, a quarter of each kind, importance 0.5-1, up to 30 days old,
    random unit vectors stored under ``model`` (so reembed has everything to move)."""
    from memq.schemas import Kind, StoredMemory, Triple
    from memq.workers import wiring

    rng = np.random.default_rng(7)
    kinds = [Kind.PREFERENCE, Kind.FACT, Kind.EVENT, Kind.PROFILE]
    memories, vectors = [], []
    for i in range(n):
        age = timedelta(days=float(rng.uniform(0, 30)))
        memories.append(StoredMemory(
            id=f"m_bench_{user}_{i}", user_id=user,
            content=f"The user mentioned topic {i} while talking about project {i % 97}.",
            kind=kinds[i % 4], confidence=float(rng.uniform(0.7, 1.0)),
            importance=float(rng.uniform(0.5, 1.0)),
            triples=[Triple(subject="user", predicate="mentions", object=f"topic {i}")],
            source_turn_ids=[f"t{i}"], valid_at=now - age, created_at=now - age,
            updated_at=now - age, embedding_model=model))
        v = rng.normal(size=384)
        vectors.append((v / np.linalg.norm(v)).tolist())
    chroma, graph = wiring.chroma(), wiring.graph()
    t = time.perf_counter()
    chroma.upsert(memories, vectors)
    print(f"planted {n} memories in chroma: {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    for start in range(0, n, 1000):
        graph.apply(user, memories[start:start + 1000], [], now, expected=None)
    graph.mark_projected(user, graph.version(user).version)  # chroma has them all
    print(f"planted {n} memories in neo4j: {time.perf_counter() - t:.1f} s")


def bench_lifecycle(args: argparse.Namespace) -> None:
    os.environ.setdefault("MEMQ_REDIS_DB", "11")
    os.environ["MEMQ_CAPACITY"] = str(args.memories - args.memories // 10)
    os.environ["MEMQ_TTL_DAYS"] = '{"event": 20}'
    from memq.workers import wiring
    from memq.workers.lifecycle import timed

    user = f"bench-{uuid.uuid4().hex[:8]}"
    now = datetime.now(UTC)
    _plant(user, args.memories, now, model="bench:old-model")
    steps = [("decay", 1, "nothing decayed below 0.1 yet: a full scan"),
             ("expire", 1, "events older than 20 days"),
             ("capacity", 1, "cap 90%: the lowest 10% archived"),
             ("reembed", 1, "every memory re-embedded with the offline model"),
             ("consolidate", 1, "events clustered (cosine >= 0.8)"),
             ("decay", 90, "90 days on: most decay below 0.1"),
             ("decay", 90, "again: idempotent")]
    for job, days, what in steps:
        result, seconds = timed(job, user, now + timedelta(days=days), wait_s=10)
        print(f"{job:>12}: {seconds:7.2f} s  examined {result.examined:>6}, "
              f"changed {result.changed:>6}  ({what}; load average {os.getloadavg()[0]:.2f})")
    if not args.keep:  # the real forget (memq forget USER): every store, in chunks
        from memq.workers.forget import forget_user

        t = time.perf_counter()
        report = forget_user(user)
        print(f"{'forget':>12}: {time.perf_counter() - t:7.2f} s  removed chroma "
              f"{report.chroma}, graph {report.graph} (nodes, edges and audit entries "
              f"stripped); load average {os.getloadavg()[0]:.2f}")
        wiring.graph().delete_user(user)  # and the content-free tombstones


def _dims(embedder: Any) -> int:
    """How many dimensions the embedder's vectors have (a routed model's blocks included):
    what planted vectors must have to sit in its index beside real ones."""
    return len(embedder.embed(["dimension probe"])[0])


def _clustered(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """Unit vectors shaped like sentence embeddings: near topics, not uniform noise."""
    centers = rng.normal(size=(max(8, n // 50), dim)).astype(np.float32)
    x = centers[rng.integers(len(centers), size=n)] + 0.6 * rng.normal(size=(n, dim)).astype(
        np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _plant_dedupe(user: str, vecs: Any, current: Any, now: datetime, *, graph: bool) -> float:
    """One user's store of len(vecs) memories (``current``: which are current), in Chroma and
    (``graph``) Neo4j, marked as projected; returns the seconds it took."""
    from memq.schemas import Kind, Status, StoredMemory
    from memq.workers import wiring

    chroma, store = wiring.chroma(), wiring.graph()
    model = wiring.ports().embedder.model_id
    t = time.perf_counter()
    for start in range(0, len(vecs), 1000):
        chunk = [StoredMemory(
            id=f"m_dd_{i}", user_id=user, content=f"Planted memory number {i}.",
            kind=Kind.FACT, confidence=0.9, importance=1.0, triples=[],
            source_turn_ids=[f"t{i}"], valid_at=now, created_at=now, updated_at=now,
            embedding_model=model,
            status=Status.CURRENT if current[i] else Status.SUPERSEDED,
        ) for i in range(start, min(len(vecs), start + 1000))]
        chroma.upsert(chunk, [vecs[start + j].tolist() for j in range(len(chunk))])
        if graph:
            store.apply(user, chunk, [], now, expected=None)
    if graph:
        store.mark_projected(user, store.version(user).version)  # chroma has them all
    return time.perf_counter() - t


def bench_dedupe(args: argparse.Namespace) -> None:
    """Dedupe's store reads per batch: ``pipeline.service.prepare`` itself for 8 new memories
    (model check; the graph's view of the batch beside Chroma's 20 nearest of any status;
    from the graph the nearest 5 current in full), against one
    user's store of N memories: p50/p95 over --batches batches, and the recall of the true
    nearest *current* neighbour against an exact scan. A tenth of the planted memories are
    superseded (dedupe must see past them)."""
    from memq.pipeline import service
    from memq.schemas import CandidateMemory, Kind
    from memq.workers import wiring

    chroma, graph, ports = wiring.chroma(), wiring.graph(), wiring.ports()
    thresholds, predicates = wiring.settings().thresholds(), wiring.predicates()
    model = ports.embedder.model_id
    now = datetime.now(UTC)
    print(f"load average {os.getloadavg()[0]:.2f} at start")
    base: float | None = None
    for n in (int(x) for x in args.memories.split(",")):
        user = f"bench-dedupe-{uuid.uuid4().hex[:8]}"
        rng = np.random.default_rng(n)
        vecs = _clustered(rng, n, _dims(ports.embedder))
        current = rng.random(n) >= 0.1
        plant = _plant_dedupe(user, vecs, current, now, graph=not args.chroma_only)
        time.sleep(args.settle)  # Chroma indexes what was just written in the background
        live = np.nonzero(current)[0]
        times: list[float] = []
        hits, total = {"near": 0, "far": 0}, {"near": 0, "far": 0}
        for b in range(-args.warmup, args.batches):  # the first few are not counted
            # half the batches hold near-duplicates of stored memories (cosine ~0.9: what
            # dedupe decides on), half new text on known topics (cosine ~0.6 to the nearest)
            kind = "near" if b % 2 == 0 else "far"
            picks = rng.integers(n, size=8)
            sigma = 0.025 if kind == "near" else 0.07
            queries = vecs[picks] + sigma * rng.normal(size=(8, vecs.shape[1])).astype(
                np.float32)
            queries /= np.linalg.norm(queries, axis=1, keepdims=True)
            items = [service.Candidate(CandidateMemory(
                content=f"New memory {b}-{q}.", kind=Kind.FACT, confidence=0.9, importance=0.5,
                source_turn_ids=[f"s/{b}-{q}"], valid_at=now), queries[q].tolist(), f"b{b}", "s")
                for q in range(8)]
            t = time.perf_counter()
            if args.chroma_only:
                near = chroma.similar(user, queries.tolist(), model, 20)
                found = [next((i for i, _ in top if current[int(i.rsplit("_", 1)[1])]), None)
                         for top in near]
            else:  # the real thing: pipeline.service.prepare, as a drain runs it
                prepared = service.prepare(ports, user, items, batch_ids=[f"b{b}"],
                                           thresholds=thresholds, predicates=predicates)
                found = [p.neighbors[0].memory.id if p.neighbors else None
                         for p in prepared.prepared]
            if b < 0:
                continue
            times.append(time.perf_counter() - t)
            truth = live[np.argmax(queries @ vecs[live].T, axis=1)]
            for q in range(8):
                total[kind] += 1
                hits[kind] += found[q] == f"m_dd_{truth[q]}"
        p50, p95 = (float(np.percentile(times, p)) * 1000 for p in (50, 95))
        base = base or p95
        print(f"{n:>7} memories (planted in {plant:5.1f} s): per batch p50 {p50:6.1f} ms, "
              f"p95 {p95:6.1f} ms ({p95 / base:4.2f}x the first); nearest current neighbour "
              f"found: near-duplicates {hits['near'] / total['near']:.4f}, new text "
              f"{hits['far'] / total['far']:.4f}; load average {os.getloadavg()[0]:.2f}")
        chroma.delete_user(user)
        if not args.chroma_only:
            graph.delete_user(user)


def bench_search(args: argparse.Namespace) -> None:
    """In-process ``memq.workers.search.search`` (read-only, k=10) for one user holding
    --memories memories and --episodes raw turns (random words from a 400-word vocabulary,
    clustered vectors; a tenth of the memories superseded): p50/p95 over --queries queries,
    then the wall time of ``memq search`` from the shell (a new process each time). With
    --workers N, the queries run beside N memq workers kept busy (as ``bench enqueue``): what
    an agent's read waits while the write path saturates the host."""

    from memq.schemas import Kind, Status, StoredMemory, Turn
    from memq.workers import auth, wiring
    from memq.workers.search import search

    chroma, graph = wiring.chroma(), wiring.graph()
    model = wiring.ports().embedder.model_id
    now = datetime.now(UTC)
    rng = np.random.default_rng(3)
    vocab = [f"{a}{b}" for a in ("ka", "lo", "mi", "ne", "su", "ta", "vo", "ri", "pe", "du")
             for b in ("ran", "tel", "mos", "gin", "bar", "fel", "dor", "pix", "zen", "lum",
                       "cor", "vat", "nib", "sho", "wel", "quo", "jas", "yul", "hep", "tam",
                       "ost", "bri", "cle", "dru", "eft", "fon", "gar", "hul", "ick", "jot",
                       "kep", "lyn", "mur", "nox", "orb", "pud", "qin", "rax", "sil", "tov")]

    def sentence() -> str:
        return " ".join(vocab[i] for i in rng.integers(len(vocab), size=rng.integers(6, 16)))

    # the user of a tenant, as memq serve (auth on) sees one: the HTTP rows send a read key
    # of that tenant and the bare user id; the stores and the in-process rows see its
    # internal id (tenant:user)
    external = f"bench-search-{uuid.uuid4().hex[:8]}"
    user = auth.tenant_user(TENANT, external)
    print(f"load average {os.getloadavg()[0]:.2f} at start")
    t = time.perf_counter()
    vecs = _clustered(rng, args.memories + args.episodes, _dims(wiring.ports().embedder))
    for start in range(0, args.memories, 1000):
        chunk = [StoredMemory(
            id=f"m_bs_{i}", user_id=user, content=sentence(), kind=Kind.FACT, confidence=0.9,
            importance=1.0, triples=[], source_turn_ids=[f"s{i % 50}/t{i}"], valid_at=now,
            created_at=now, updated_at=now, embedding_model=model,
            status=Status.SUPERSEDED if rng.random() < 0.1 else Status.CURRENT,
        ) for i in range(start, min(args.memories, start + 1000))]
        chroma.upsert(chunk, [vecs[int(m.id.rsplit("_", 1)[1])].tolist() for m in chunk])
        graph.apply(user, chunk, [], now, expected=None)
    for start in range(0, args.episodes, 500):
        n = min(args.episodes, start + 500) - start
        turns = [Turn(turn_id=f"t{start + j}", role="user" if j % 2 else "assistant",
                      content=sentence(), timestamp=now) for j in range(n)]
        session = f"s{start // 500}"
        chroma.add(user, session, turns, [vecs[args.memories + start + j].tolist()
                                          for j in range(n)], model, now)
        graph.add_episodes(user, session, turns, now)
    print(f"planted {args.memories} memories and {args.episodes} episodes in "
          f"{time.perf_counter() - t:.0f} s")
    queries = [" ".join(vocab[i] for i in rng.integers(len(vocab), size=4))
               for _ in range(args.queries)]
    # steady state, not a store being bulk-loaded: Chroma indexes what was just written in
    # the background for a while; and warm (model loaded, connections open)
    time.sleep(args.settle)
    for q in queries[:10]:
        search(user, q, 10, now)
    times = []
    load = (_busy_workers(args.workers, args.reps) if args.workers
            else contextlib.nullcontext())
    with load:
        for q in queries:
            t = time.perf_counter()
            search(user, q, 10, now)
            times.append(time.perf_counter() - t)
        loadavg = os.getloadavg()[0]
    p50, p95 = (float(np.percentile(times, p)) * 1000 for p in (50, 95))
    beside = f", beside {args.workers} busy workers" if args.workers else ""
    print(f"in-process search, k=10{beside}: p50 {p50:.1f} ms, p95 {p95:.1f} ms over "
          f"{len(times)} queries (load average {loadavg:.2f})")
    if not args.workers:
        keys = auth.KeyStore(wiring.coord().r)
        key, record = keys.create(TENANT, "read", "bench search")
        try:
            _search_from_shell(args, external, user, key, queries)
        finally:
            keys.revoke(record.id)
    if not args.keep:
        chroma.delete_user(user)
        graph.delete_user(user)


TENANT = "bench"  # bench search's users


def _search_from_shell(args: argparse.Namespace, user: str, internal: str, key: str,
                       queries: list[str]) -> None:
    """The wall time of ``memq search`` in a new process, on its own (the stores' id of the
    user, ``internal``) and asking memq serve (the tenant's ``user`` and its API ``key``)."""
    import subprocess

    memq = os.path.join(os.path.dirname(sys.executable), "memq")
    server = subprocess.Popen([memq, "serve", "--port", str(args.api_port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        import httpx

        url = f"http://127.0.0.1:{args.api_port}"
        with httpx.Client(base_url=url, timeout=30,
                          headers={"Authorization": f"Bearer {key}"}) as http:
            for _ in range(100):  # until it listens
                with contextlib.suppress(httpx.TransportError):
                    http.get("/healthz")
                    break
                time.sleep(0.2)
            for q in queries[:5]:  # warm: model, connections
                warm = http.post("/v1/search", json={"user_id": user, "query": q, "k": 10})
                if not warm.raise_for_status().json():
                    raise SystemExit("bench search: memq serve found nothing for the planted "
                                     "user (its tenant's key, its stores?)")
            times = []
            for q in queries:
                t = time.perf_counter()
                http.post("/v1/search", json={"user_id": user, "query": q, "k": 10}
                          ).raise_for_status()
                times.append(time.perf_counter() - t)
        p50, p95 = (float(np.percentile(times, p)) * 1000 for p in (50, 95))
        print(f"HTTP POST /v1/search, k=10: p50 {p50:.1f} ms, p95 {p95:.1f} ms over "
              f"{len(times)} queries (load average {os.getloadavg()[0]:.2f})")
        api = {**os.environ, "MEMQ_API_URL": url, "MEMQ_API_KEY": key}
        for name, env, who in (("in its own process", dict(os.environ), internal),
                               ("asking memq serve (MEMQ_API_URL)", api, user)):
            walls = []
            for q in queries[:6]:
                t = time.perf_counter()
                subprocess.run([memq, "search", "--user", who, q], check=True, env=env,
                               stdout=subprocess.DEVNULL)
                walls.append(time.perf_counter() - t)
            walls = walls[1:]  # the first warms the server (model, connections)
            print(f"memq search from the shell, {name}: median "
                  f"{float(np.median(walls)):.2f} s, max {max(walls):.2f} s over "
                  f"{len(walls)} runs")
    finally:
        server.terminate()
        server.wait()


LOAD_DB = "13"  # bench enqueue --workers: the backlog its workers drain


@contextlib.contextmanager
def _busy_workers(n: int, reps: int) -> Iterator[None]:
    """n memq worker processes (one session each, as compare and ops start them) draining a
    backlog of the compare corpus x reps (users ``bench-load-*``) in Redis db LOAD_DB, with
    the default worker priority; entered once they have finished 2n deliveries, and stopped,
    their users forgotten and the db emptied on the way out."""
    import json
    import subprocess

    from memq.workers import outbox
    from memq.workers.coord import Coord
    from memq.workers.settings import Settings

    sys.path.insert(0, os.path.dirname(__file__))
    from compare import _forget, bundled_turns
    from own_redis import flush_own, require_own

    load = Coord.from_url(Settings(redis_db=int(LOAD_DB)).redis_url)  # what the workers read
    require_own(load.r, "bench (busy workers)")  # emptied on the way out
    tag = uuid.uuid4().hex[:6]
    users = set()
    lines = []
    for rep in range(reps):
        for t in bundled_turns(4):
            users.add(user := f"bench-load-{tag}-{rep}-{t['user_id']}")
            lines.append(json.dumps({**t, "user_id": user}, ensure_ascii=False))
    env = {**os.environ, "MEMQ_REDIS_DB": LOAD_DB, "C_FORCE_ROOT": "1"}
    subprocess.run([sys.executable, "-m", "memq.workers.cli", "enqueue", "-"], env=env,
                   input="\n".join(lines), text=True, check=True, stdout=subprocess.DEVNULL)
    queued = outbox.inflight(load)
    procs = [subprocess.Popen([sys.executable, "-m", "memq.workers.cli", "worker",
                               "--concurrency", "1", "-n", f"enqload{i}@%h"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True) for i in range(n)]
    try:
        deadline = time.monotonic() + 300
        while queued - outbox.inflight(load) < 2 * n:
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                raise RuntimeError("the load workers did not start (see memq doctor)")
            time.sleep(0.5)
        yield
        if outbox.inflight(load) == 0:
            print("note: the backlog ran out during the measurement; use more --reps")
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, 15)
        for p in procs:
            p.wait(timeout=60)
        flush_own(load.r, "bench (busy workers)")
        _forget(users)


def bench_enqueue(args: argparse.Namespace) -> None:
    """What an agent waits for: ``memq.Client.add`` of one session of 10 turns (one batch),
    --n times, p50/p99, into a Redis db of its own (12) that no worker reads; emptied after.
    With --workers N, beside N memq workers kept busy on a backlog of their own (the stores
    shared): the agent's CPU per call is printed too, the rest of its wall time being waits
    for a core (its own, and Redis's). Beside each call, the floor: a round trip that does
    nothing (a Lua TIME), with how long the slowest waited for Redis to run and for the agent
    to wake (Redis's clock against the agent's: one host, one clock). And the share of the
    CPU time the hypervisor took (steal, /proc/stat): a vCPU not running is a wait no
    scheduler setting on the guest can shorten."""
    os.environ["MEMQ_REDIS_DB"] = "12"
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from own_redis import flush_own, require_own

    from memq.workers import wiring
    from memq.workers.api import StoresClient

    require_own(wiring.coord().r, "bench enqueue")  # emptied after
    client = StoresClient()  # the stores' ids: the bench names its users
    rng = random.Random(5)
    words = ["the", "user", "said", "they", "will", "move", "to", "lisbon", "next", "spring",
             "with", "their", "dog"]
    sessions = [[{"role": "user" if j % 2 == 0 else "assistant",
                  "content": " ".join(rng.choice(words) for _ in range(rng.randint(5, 30)))}
                 for j in range(10)] for _ in range(args.n)]
    client.add("bench-enqueue-warm", sessions[0], session_id="warm")
    times, cpu = [], []
    load = (_busy_workers(args.workers, args.reps) if args.workers
            else contextlib.nullcontext())
    clock = wiring.coord().r.register_script("return redis.call('TIME')")
    clock()
    trips: list[tuple[float, float, float]] = []  # (round trip, to Redis, back), seconds
    with load:
        steal0 = _steal()
        for i, messages in enumerate(sessions):
            t, c = time.perf_counter(), time.thread_time()
            client.add(f"bench-enqueue-{i % 50}", messages, session_id=f"s{i}")
            times.append(time.perf_counter() - t)
            cpu.append(time.thread_time() - c)
            sent = time.time()  # the floor, beside it: one round trip that does nothing
            sec, usec = clock()
            back = time.time()
            ran = int(sec) + int(usec) / 1e6
            trips.append((back - sent, ran - sent, back - ran))
        steal1 = _steal()
        loadavg = os.getloadavg()[0]
    p50, p99 = (float(np.percentile(times, p)) * 1000 for p in (50, 99))
    beside = f", beside {args.workers} busy workers" if args.workers else ""
    print(f"Client.add of 10 turns (one batch){beside}: p50 {p50:.2f} ms, p99 {p99:.2f} ms, max "
          f"{max(times) * 1000:.2f} ms over {len(times)}; the agent's CPU p99 "
          f"{float(np.percentile(cpu, 99)) * 1000:.2f} ms (load average {loadavg:.2f})")
    trips.sort()
    slow = trips[-max(1, len(trips) // 100):]
    rtt50, rtt99 = (float(np.percentile([t[0] for t in trips], p)) * 1000 for p in (50, 99))
    to_redis, to_wake = (np.mean([t[k] for t in slow]) * 1000 for k in (1, 2))
    print(f"the floor, a Redis round trip doing nothing (EVAL of TIME) after each call: p50 "
          f"{rtt50:.2f} ms, p99 {rtt99:.2f} ms; its slowest 1% waited {to_redis:.2f} ms on "
          f"average to run in Redis and {to_wake:.2f} ms for the agent to wake with the reply "
          f"(Redis's clock)")
    if steal0 and steal1 and steal1[1] > steal0[1]:
        share = (steal1[0] - steal0[0]) / (steal1[1] - steal0[1])
        print(f"the host: its hypervisor took {100 * share:.1f}% of this machine's CPU time "
              f"during the run (steal)")
    flush_own(wiring.coord().r, "bench enqueue")


def _steal() -> tuple[int, int] | None:
    """(steal, total) CPU ticks since boot, from /proc/stat (Linux); None elsewhere."""
    try:
        with open("/proc/stat") as f:
            ticks = [int(x) for x in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    return ticks[7], sum(ticks)


def _refs(hits: list, k: int) -> list[str]:
    """The turn refs of the top k hits, in order: a memory counts as its source turns."""
    out: list[str] = []
    for h in hits[:k]:
        out += [r for r in h.source_turn_ids if r not in out]
    return out


def _score(ranked: list[list], golds: list[list[str]], k: int) -> tuple[float, float]:
    """(mean recall@k of the gold turns, hit@k)."""
    recalls, found = [], []
    for hits, gold in zip(ranked, golds, strict=True):
        got = set(_refs(hits, k)) & set(gold)
        recalls.append(len(got) / len(gold))
        found.append(bool(got))
    return float(np.mean(recalls)), float(np.mean(found))


def _ingest(users: list[str], batches: list[Any], client: Any, workers: int = 1) -> float:
    """Batches through real worker processes (started here), from empty users (a re-run
    starts from nothing, ledger included); returns the seconds from first enqueue to done."""
    import subprocess

    from memq.workers import wiring
    from memq.workers.forget import forget_user

    env = {**os.environ, "C_FORCE_ROOT": "1"}
    procs = [subprocess.Popen([sys.executable, "-m", "memq.workers.cli", "worker",
                               "--concurrency", "2", "-n", f"bench{n}@%h"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True) for n in range(workers)]
    try:
        for user in users:
            forget_user(user)
            wiring.graph().delete_user(user)
        started = time.perf_counter()
        ids = client.enqueue(batches)
        client.wait(ids, timeout=7200)
        return time.perf_counter() - started
    finally:
        _stop(procs)


def _stop(procs: list[Any]) -> None:
    """Celery's warm shutdown (SIGTERM to the main process only): a drain finishing its last
    round lets go of its user. Killing the whole group killed that drain mid-round, and the
    next job on the user (consolidate) waited out the claim's lease: 30 s."""
    import subprocess

    for proc in procs:
        os.kill(proc.pid, 15)
    for proc in procs:
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait(timeout=10)


def _ingest_recall(convs: list[Any], client: Any) -> None:
    """The generated conversations through a real worker, from empty stores."""
    import json

    from memq.workers.client import parse_lines

    batches = []
    for conv in convs:
        parsed, errors = parse_lines(json.dumps(t, ensure_ascii=False) for t in conv.turns)
        assert not errors, errors[:3]
        batches += parsed
    took = _ingest([c.user_id for c in convs], batches, client)
    turns = sum(len(c.turns) for c in convs)
    print(f"ingested {turns} turns of {len(convs)} conversations in {took:.1f} s")


def bench_recall(args: argparse.Namespace) -> None:
    """Recall of the answer-holding turns on our generated long conversations (two speakers,
    English and Chinese, facts that change), memq's hybrid search against a plain BM25 over
    the raw turns (Lucene, through the same Neo4j full-text index). Ingests through a real
    worker with the offline extractor unless --no-ingest. Prints recall@5/10/20 and hit@10,
    per language and overall, and the context block's size."""
    os.environ.setdefault("MEMQ_REDIS_DB", "10")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from recall_corpus import corpus

    from memq.workers import wiring
    from memq.workers.api import StoresClient as Client  # the stores' ids
    from memq.workers.search import search

    convs = corpus(args.seed)
    if args.conversations:
        convs = convs[: args.conversations]
    client = Client()
    if not args.no_ingest:
        _ingest_recall(convs, client)
    now = datetime.now(UTC)
    rows = {}
    latencies = []
    for lang in ("en", "zh", "all"):
        chosen = [c for c in convs if lang in ("all", c.lang)]
        qs = [(c.user_id, q, gold) for c in chosen for q, gold in c.questions]
        if not qs:
            continue
        mem, bm25, golds = [], [], []
        for user, q, gold in qs:
            t0 = time.perf_counter()
            mem.append(search(user, q, 20, now))
            latencies.append(time.perf_counter() - t0)
            bm25.append(wiring.graph().search_episodes(user, q, 20))
            golds.append(gold)
        rows[lang] = {name: [_score(r, golds, k) for k in (5, 10, 20)]
                      for name, r in (("memq", mem), ("bm25", bm25))}
        print(f"\n{lang}: {len(qs)} questions over {len(chosen)} conversations "
              f"({sum(len(c.turns) for c in chosen)} turns)")
        print(f"{'':>6} {'R@5':>6} {'R@10':>6} {'R@20':>6} {'hit@10':>7}")
        for name, scores in rows[lang].items():
            print(f"{name:>6} " + " ".join(f"{r:6.3f}" for r, _ in scores)
                  + f" {scores[1][1]:7.3f}")
    sizes = [len(client.context(c.user_id, q, max_tokens=args.max_tokens))
             for c in convs for q, _ in c.questions[:10]]
    lat = sorted(latencies)
    print(f"\ncontext block (max_tokens={args.max_tokens}): mean {np.mean(sizes):.0f} chars, "
          f"max {max(sizes)}")
    print(f"search latency in-process: p50 {1000 * lat[len(lat) // 2]:.0f} ms, "
          f"p95 {1000 * lat[int(len(lat) * 0.95)]:.0f} ms")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    allr = rows["all"]
    print(f"summary recall10_memq={allr['memq'][1][0]:.3f} recall10_bm25={allr['bm25'][1][0]:.3f}"
          f" hit10_memq={allr['memq'][1][1]:.3f}")


_PERSON = re.compile(r"\b(?:the user's|the user|user's|i'm|i am|i|my|is|am)\b|用户|我的|我")


def _same_object(got: str, want: str) -> bool:
    """Case, punctuation and person aside ("The user is off on Fridays" = "I'm off on
    Fridays": remembered things are rewritten in the third person), or one in the other."""
    def norm(x: str) -> str:
        x = _PERSON.sub(" ", x.casefold())
        return re.sub(r"[\s.,!?;:'\"“”‘’。，！？；：]+", " ", x).strip()

    a, b = norm(got), norm(want)
    return bool(a and b) and (a == b or b in a or a in b)


def bench_extract(args: argparse.Namespace) -> None:
    """Precision and recall of the offline extractor on a hand-labelled set (tests/data/):
    the held-out set (226 turns, English and Chinese, 45% small talk that must yield
    nothing; written independently and never used to write rules) by default, or the
    development set (345 turns; its misses guided the rules). A fact counts when predicate
    and object (case, punctuation and person aside, or one containing the other) agree.
    With --dataset (LoCoMo as published): the memories extracted by real workers against
    LoCoMo's observations (scripts/extract_bench.py)."""
    import json

    if args.dataset:
        os.environ.setdefault("MEMQ_REDIS_DB", "10")
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import extract_bench

        extract_bench.run(args, _ingest)
        return
    if args.set.startswith("zh_self"):  # Chinese self-statements (scripts/self_bench.py)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import self_bench

        self_bench.run(Path(__file__).resolve().parents[1] / "tests" / "data" / args.set,
                       args.verbose)
        return

    from memq.pipeline import tools
    from memq.pipeline.rules import RuleExtractor
    from memq.schemas import Turn

    path = Path(__file__).resolve().parents[1] / "tests" / "data" / args.set
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    extractor = RuleExtractor()
    jobs = tools.predicates()
    stats: dict[str, list[int]] = {}  # lang -> [true positives, extracted, expected]
    misses: list[str] = []
    for row in rows:
        turn = Turn(turn_id="t1", role="user", content=row["content"],
                    timestamp="2026-11-20T10:00:00Z")
        got = [(t.predicate, t.object) for c in extractor.extract([turn])
               if c.confidence >= 0.7 for t in c.triples
               if t.predicate not in jobs]  # a used tool's job: derived, not a fact said
        want = [(e["predicate"], e["object"]) for e in row["expected"]]
        hits = sum(any(p == wp and _same_object(o, wo) for p, o in got) for wp, wo in want)
        right = sum(any(p == wp and _same_object(o, wo) for wp, wo in want) for p, o in got)
        for lang in (row["lang"], "all"):
            s = stats.setdefault(lang, [0, 0, 0, 0])
            s[0] += hits
            s[1] += len(got)
            s[2] += len(want)
            s[3] += right
        if args.verbose and (right < len(got) or hits < len(want)):
            misses.append(f"{row['id']}: {row['content'][:70]!r} want {want} got {got}")
    print(f"{'':>4} {'turns':>6} {'precision':>10} {'recall':>8} {'extracted':>10} "
          f"{'expected':>9}")
    for lang, (hits, got, want, right) in stats.items():
        turns = len(rows) if lang == "all" else sum(r["lang"] == lang for r in rows)
        print(f"{lang:>4} {turns:>6} {right / max(got, 1):10.3f} {hits / max(want, 1):8.3f} "
              f"{got:>10} {want:>9}")
    for line in misses:
        print(line)
    hits, got, want, right = stats["all"]
    print(f"summary precision={right / max(got, 1):.3f} recall={hits / max(want, 1):.3f}")


@contextlib.contextmanager
def _scratch_chroma() -> Iterator[tuple[Any, int, str]]:
    """A ``chroma run`` of its own (scripts/layout_bench.py: temporary directory, free port):
    (client, pid, its data directory)."""
    sys.path.insert(0, str(Path(__file__).parent))
    import layout_bench

    with layout_bench.scratch_chroma() as (client, pid, home):
        yield client, pid, os.path.join(home, "data")


def bench_chroma_log(args: argparse.Namespace) -> None:
    """Chroma's CPU per write request as the store grows, with and without the index memq adds
    to Chroma's write log (pipeline/adapters/chroma_log.py). A scratch ``chroma run`` is filled
    with users of two collections (memories, episodes) of ``--records`` each, memq's layout;
    then, at each size, 20 writes of 20 records into a new collection are timed by the
    server's CPU ticks, first with the index dropped, then with it built."""
    import sqlite3

    from memq.pipeline.adapters.chroma import HNSW
    from memq.pipeline.adapters.chroma_log import CREATE, INDEX

    tick_ms = 1000 / os.sysconf("SC_CLK_TCK")
    rng = np.random.default_rng(0)
    with _scratch_chroma() as (client, pid, home):

        def cpu_ms() -> float:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) * tick_ms

        def sql(statement: str) -> Any:
            db_file = os.path.join(home, "chroma.sqlite3")
            with contextlib.closing(sqlite3.connect(db_file, timeout=60)) as db, db:
                return db.execute(statement).fetchall()

        print(f"scratch chroma, {args.records} records per collection; "
              f"load average {os.getloadavg()[0]:.2f} at start")
        filled = 0
        for users in (int(n) for n in args.users.split(",")):
            for u in range(filled, users):
                for kind in ("memories", "episodes"):
                    col = client.create_collection(f"{kind}-u{u}", configuration=HNSW,
                                                   embedding_function=None)
                    for start in range(0, args.records, 50):
                        n = min(50, args.records - start)
                        col.upsert(ids=[f"{kind}{u}-{start + i}" for i in range(n)],
                                   embeddings=rng.standard_normal((n, 384)).tolist(),
                                   documents=["a sentence of about the length of a memory"] * n)
            filled = max(filled, users)
            rows = sql("SELECT count(*) FROM embeddings_queue")[0][0]
            per_write = []
            for indexed in (False, True):
                sql(CREATE if indexed else f"DROP INDEX IF EXISTS {INDEX}")
                probe = client.create_collection(f"probe-{uuid.uuid4().hex[:8]}",
                                                 configuration=HNSW, embedding_function=None)
                t0 = cpu_ms()
                for _ in range(20):
                    probe.upsert(ids=[uuid.uuid4().hex for _ in range(20)],
                                 embeddings=rng.standard_normal((20, 384)).tolist(),
                                 documents=["a turn of a conversation"] * 20)
                per_write.append((cpu_ms() - t0) / 20)
                client.delete_collection(probe.name)
            print(f"{users:5} users, {rows:7} log rows: {per_write[0]:6.1f} ms of Chroma CPU per "
                  f"write without the index, {per_write[1]:6.1f} ms with it "
                  f"(load average {os.getloadavg()[0]:.2f})", flush=True)

def bench_compare(args: argparse.Namespace) -> None:
    """memq against mem0 2.2.1, same turns, same stub LLM, same embedder (scripts/compare.py)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import compare

    compare.main(args)


def bench_life(args: argparse.Namespace) -> None:
    """Life changes, in-process through the shipped fakes (scripts/life_bench.py)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import life_bench

    life_bench.run(args)


def bench_changes(args: argparse.Namespace) -> None:
    """Statements of change through real workers (scripts/changes_bench.py)."""
    os.environ.setdefault("MEMQ_REDIS_DB", "10")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import changes_bench

    changes_bench.run(args, _ingest)


def bench_memory(args: argparse.Namespace) -> None:
    """Evidence recall and the context block on a public benchmark file
    (scripts/memory_bench.py)."""
    os.environ.setdefault("MEMQ_REDIS_DB", "10")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import memory_bench

    memory_bench.run(args, _ingest)


def bench_fusion(args: argparse.Namespace) -> None:
    """The fusion's lexical share swept on stored signals (scripts/memory_bench.py: sweep)."""
    os.environ.setdefault("MEMQ_REDIS_DB", "10")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import memory_bench

    memory_bench.sweep(args)


def bench_streams(args: argparse.Namespace) -> None:  # noqa: PLR0915  (two runs, in order)
    """memq's delivery bookkeeping against Redis Streams with a consumer group, on a scratch
    redis-server of its own (never the services'): N deliveries enqueued as an agent does
    (``memq.workers.client.enqueue``: record, outbox, in flight, the broker message, one Lua
    call), then consumed and finished (a BRPOP, the record read, ``mailbox.finish``); against
    XADD, XREADGROUP, XACK + XDEL, and one XAUTOCLAIM (what would replace the reaper's scan).
    Per delivery: client time, and Redis's CPU (INFO commandstats). The Streams side keeps no
    delivery state (what ``wait`` and ``status`` read) and no mailbox: a floor for it."""
    import base64
    import json
    import socket
    import subprocess

    import redis

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from own_redis import Expected, flush_own, require_own

    from memq.schemas import IngestBatch
    from memq.workers import mailbox, outbox
    from memq.workers.client import enqueue
    from memq.workers.coord import Coord

    n = args.deliveries
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    folder = tempfile.mkdtemp(prefix="memq-bench-streams-")
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--dir", folder,
                             "--appendonly", "no"], stdout=subprocess.DEVNULL)
    try:
        url = f"redis://127.0.0.1:{port}/0"
        r = redis.Redis.from_url(url, decode_responses=True)
        for _ in range(100):
            try:
                r.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        # the port was free when asked; the server answering on it must be the child above
        own = Expected(Path(folder), proc.pid, "this bench (a scratch redis-server)",
                       remedy="another process took the scratch port first: run it again")
        require_own(r, "bench streams", own)
        os.environ["MEMQ_REDIS_URL"] = url
        batch = IngestBatch.model_validate({"user_id": "u1", "session_id": "s1", "turns": [{
            "turn_id": "t", "role": "user", "content": "x" * 156,
            "timestamp": "2026-11-01T00:00:00Z"}]})

        def redis_us() -> float:
            return float(sum(v["usec"] for v in r.info("commandstats").values()))

        r.config_resetstat()
        t0 = time.perf_counter()
        for _ in range(n):
            enqueue([batch])
        enq = time.perf_counter() - t0
        coord, done = Coord(r), 0
        t0 = time.perf_counter()
        while (got := r.brpop(["memq.extract"], timeout=0.05)) is not None:
            body = json.loads(got[1])["body"]
            args_ = json.loads(base64.b64decode(body))
            delivery = args_[0][0]["delivery_id"]
            outbox.delivery(coord, delivery)
            mailbox.finish(coord, "u1", [delivery])
            done += 1
        con, cpu = time.perf_counter() - t0, redis_us()
        print(f"outbox  : {done} deliveries; enqueue {1e6 * enq / n:.0f} us, consume + finish "
              f"{1e6 * con / n:.0f} us; Redis CPU {cpu / n:.1f} us a delivery")
        flush_own(r, "bench streams", own)
        r.config_resetstat()
        r.xgroup_create("s:extract", "workers", id="0", mkstream=True)
        payload = batch.model_dump_json()
        t0 = time.perf_counter()
        for i in range(n):
            r.xadd("s:extract", {"user": "u1", "batch": payload, "delivery": str(i)})
        enq = time.perf_counter() - t0
        done = 0
        t0 = time.perf_counter()
        while got := r.xreadgroup("workers", "w1", {"s:extract": ">"}, count=1, block=50):
            for entry, _ in got[0][1]:
                pipe = r.pipeline(transaction=False)
                pipe.xack("s:extract", "workers", entry)
                pipe.xdel("s:extract", entry)
                pipe.execute()
                done += 1
        con, cpu = time.perf_counter() - t0, redis_us()
        t0 = time.perf_counter()
        r.xautoclaim("s:extract", "workers", "w2", 60_000, "0-0", count=100)
        claim = time.perf_counter() - t0
        print(f"streams : {done} deliveries; enqueue {1e6 * enq / n:.0f} us, consume + ack "
              f"{1e6 * con / n:.0f} us; Redis CPU {cpu / n:.1f} us a delivery; "
              f"XAUTOCLAIM {1e3 * claim:.2f} ms")
        print(f"load average {os.getloadavg()[0]:.2f}")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)


def bench_cold(args: argparse.Namespace) -> None:
    """The first batches after a fresh start, with the warm-up (workers/warm.py) off and on:
    Neo4j restarted (scripts/services), a new worker of one process, then the first sessions
    of a public conversation (--dataset, real turns) enqueued one at a time as new users,
    each timed from enqueue to done. The warm-up's own time is from the worker's log. Uses
    the configured services (MEMQ_*; the demo's by default) and forgets its users."""
    import subprocess

    import memory_bench

    from memq.workers import wiring
    from memq.workers.api import StoresClient as Client  # the stores' ids

    wiring.configure_logging("WARNING")  # not a line per forgotten user
    repo = Path(__file__).resolve().parents[1]
    _, convs = memory_bench.load(args.dataset, prefix=f"cold-{uuid.uuid4().hex[:6]}")
    sessions = convs[0].batches[: args.sessions]
    client = Client()
    print(f"dataset {args.dataset}: {len(sessions)} sessions of {convs[0].user_id}, "
          f"{sum(len(b.turns) for b in sessions)} turns; load {os.getloadavg()[0]:.2f}")
    rows = []
    for rep in range(args.reps):
        for warm in ("off", "on"):
            subprocess.run([str(repo / "scripts" / "services"), "down", "neo4j"], check=True,
                           capture_output=True)
            subprocess.run([str(repo / "scripts" / "services"), "up", "neo4j"], check=True,
                           capture_output=True)
            log = Path(tempfile.mkdtemp(prefix="memq-cold-")) / "worker.log"
            env = {**os.environ, "MEMQ_WARM": warm, "MEMQ_LOG_LEVEL": "INFO"}
            proc = subprocess.Popen([str(repo / ".venv" / "bin" / "memq"), "worker",
                                     "--concurrency", "1", "-n", f"cold{rep}{warm}@%h"],
                                    env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
                                    start_new_session=True)
            try:
                want = ("warmed up", "warm-up failed") if warm == "on" else (" ready.",)
                deadline = time.monotonic() + 180
                while not any(w in log.read_text(errors="replace") for w in want):
                    if time.monotonic() > deadline or proc.poll() is not None:
                        raise SystemExit(f"bench cold: the worker did not get ready: {log}")
                    time.sleep(0.1)
                text = log.read_text(errors="replace")
                warmed = [float(x) for x in re.findall(r"seconds=([0-9.]+)", text)]
                times = []
                for i, batch in enumerate(sessions):
                    user = f"{batch.user_id}-{rep}-{warm}-{i}"
                    started = time.perf_counter()
                    client.wait(client.enqueue([batch.model_copy(update={"user_id": user})]),
                                timeout=300)
                    times.append(time.perf_counter() - started)
                    client.forget(user)
                rows.append((warm, times, warmed))
                print(f"warm-up {warm:3}: " + "  ".join(
                    f"session {i + 1} {t * 1000:6.0f} ms" for i, t in enumerate(times))
                    + (f"   (warm-up took {', '.join(f'{w:.1f}' for w in warmed)} s)"
                       if warmed else ""), flush=True)
            finally:
                os.killpg(proc.pid, 15)
                proc.wait(timeout=60)
    for warm in ("off", "on"):
        firsts = [t[0] for w, t, _ in rows if w == warm]
        rest = [x for w, t, _ in rows if w == warm for x in t[1:]]
        print(f"summary warm={warm} first_ms={1000 * sum(firsts) / len(firsts):.0f} "
              f"later_ms={1000 * sum(rest) / max(1, len(rest)):.0f} "
              f"load={os.getloadavg()[0]:.2f}")


def bench_users(args: argparse.Namespace) -> None:
    """Store costs as users grow, on a stack of its own (scripts/users_bench.py)."""
    sys.path.insert(0, str(Path(__file__).parent))
    import users_bench

    users_bench.run(args)


def bench_layout(args: argparse.Namespace) -> None:
    """Chroma layouts for many users, on scratch servers (scripts/layout_bench.py)."""
    sys.path.insert(0, str(Path(__file__).parent))
    import layout_bench

    layout_bench.run(args)


def bench_freshness(args: argparse.Namespace) -> None:
    """Time from add until searchable and until current (scripts/freshness_bench.py)."""
    sys.path.insert(0, str(Path(__file__).parent))
    import freshness_bench

    freshness_bench.run(args)


def main() -> None:  # noqa: PLR0915  (a table of benchmarks)
    ap = argparse.ArgumentParser(description=__doc__)
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("embed")
    p.add_argument("--n", type=int, default=2000)
    p.set_defaults(fn=bench_embed)
    p = sub.add_parser("dedupe")
    p.add_argument("--memories", default="1000,10000,50000,100000")
    p.add_argument("--batches", type=int, default=100)
    p.add_argument("--chroma-only", action="store_true", help="plant and read Chroma only")
    p.add_argument("--settle", type=float, default=0.0, help="seconds between plant and measure")
    p.add_argument("--warmup", type=int, default=5, help="batches run first, not counted")
    p.set_defaults(fn=bench_dedupe)
    p = sub.add_parser("enqueue")
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--workers", type=int, default=0,
                   help="measure beside this many busy memq worker processes")
    p.add_argument("--reps", type=int, default=12,
                   help="--workers' backlog: the compare corpus (320 turns) this many times")
    p.set_defaults(fn=bench_enqueue)
    p = sub.add_parser("search")
    p.add_argument("--memories", type=int, default=10_000)
    p.add_argument("--episodes", type=int, default=10_000)
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--api-port", type=int, default=8765)
    p.add_argument("--settle", type=float, default=20.0, help="seconds between plant and measure")
    p.add_argument("--keep", action="store_true")
    p.add_argument("--workers", type=int, default=0,
                   help="measure beside this many busy memq worker processes (then the "
                        "shell's memq search is not timed)")
    p.add_argument("--reps", type=int, default=12,
                   help="--workers' backlog: the compare corpus (320 turns) this many times")
    p.set_defaults(fn=bench_search)
    p = sub.add_parser("lifecycle")
    p.add_argument("--memories", type=int, default=10_000)
    p.add_argument("--keep", action="store_true")
    p.set_defaults(fn=bench_lifecycle)
    p = sub.add_parser("extract")
    p.add_argument("--verbose", action="store_true", help="print every turn not fully right")
    p.add_argument("--set", default="extraction_heldout.jsonl",
                   help="extraction_heldout.jsonl (never looked at while writing rules) or "
                        "extraction_labelled.jsonl (the development set); zh_self_heldout.jsonl "
                        "or zh_self_dev.jsonl: Chinese self-statements (scripts/self_bench.py)")
    p.add_argument("--dataset", help="LoCoMo (locomo10.json as published): score the memories "
                                     "real workers extract against its observations")
    p.add_argument("--limit", type=int, default=0, help="--dataset: only the first N samples")
    p.add_argument("--no-ingest", action="store_true", help="--dataset: the stores hold them "
                                                            "already (e.g. after bench memory)")
    p.add_argument("--workers", type=int, default=1, help="--dataset: worker processes")
    p.add_argument("--sample", type=int, default=50, help="--dataset: memories to print")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--llm-base-url", help="--dataset: extract with this OpenAI-compatible "
                                          "endpoint (MEMQ_LLM_BASE_URL for the workers)")
    p.add_argument("--llm-model", help="--dataset: and this model (MEMQ_LLM_MODEL)")
    p.add_argument("--consolidate", action="store_true", help="--dataset: run the consolidation "
                   "job on each user before scoring (its memories are reported apart)")
    p.set_defaults(fn=bench_extract)
    p = sub.add_parser("recall")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--conversations", type=int, default=0, help="only the first N")
    p.add_argument("--no-ingest", action="store_true", help="the stores hold them already")
    p.add_argument("--max-tokens", type=int, default=800)
    p.set_defaults(fn=bench_recall)
    p = sub.add_parser("changes", help="statements of change (old value superseded) through "
                                         "real workers")
    p.add_argument("--dataset", default=str(Path(__file__).resolve().parents[1] / "tests" / "data"
                                            / "zh_changes_heldout.jsonl"),
                   help="JSON lines: id, before, change, old, new, is_change (default: the "
                        "Chinese held-out set, written apart from the rules)")
    p.add_argument("--limit", type=int, default=0, help="only the first N cases")
    p.add_argument("--verbose", action="store_true", help="a line for every case")
    p.set_defaults(fn=bench_changes)
    p = sub.add_parser("life", help="life changes: what is current, what comes first "
                                      "(in-process, offline)")
    p.add_argument("--dataset", default=str(Path(__file__).resolve().parents[1] / "tests"
                                            / "data" / "life_changes_dev.jsonl"))
    p.add_argument("--lang", choices=["en", "zh"], help="only this language's scenarios")
    p.add_argument("--hash", action="store_true", help="the hashing embedder (no model)")
    p.add_argument("--verbose", action="store_true", help="a line for every scenario")
    p.set_defaults(fn=bench_life)
    p = sub.add_parser("memory", help="recall and context on LoCoMo / LongMemEval as published")
    p.add_argument("--dataset", required=True,
                   help="locomo10.json or a LongMemEval instance file (../shared/data/...)")
    p.add_argument("--limit", type=int, default=0, help="only the first N users")
    p.add_argument("--workers", type=int, default=1, help="worker processes for the ingest")
    p.add_argument("--no-ingest", action="store_true", help="the stores hold them already")
    p.add_argument("--max-tokens", type=int, default=800)
    p.add_argument("--consolidate", action="store_true", help="search, run the consolidation "
                   "job on each user, search again: row 'memq unconsolidated' is the first pass")
    p.add_argument("--context-questions", type=int, default=0,
                   help="score the context block on the first N questions only (0: all)")
    bench_dir = os.path.join(os.environ.get("MEMQ_HOME", ".memq"), "bench")
    p.add_argument("--out", default=os.path.join(bench_dir, "memory.json"))
    p.add_argument("--png", default=os.path.join(bench_dir, "memory.png"))
    p.set_defaults(fn=bench_memory)
    p = sub.add_parser("fusion", help="the fusion's BM25 share swept on the stores a `bench "
                       "memory` run left (same MEMQ_HOME and ports): each question asked once")
    p.add_argument("--dataset", required=True, help="the file that run ingested")
    p.add_argument("--lexical", default="0.3,0.4,0.5,0.6,0.7,0.8",
                   help="BM25 shares to try (recall.Weights.lexical)")
    p.add_argument("--out", default=os.path.join(bench_dir, "fusion.json"))
    p.set_defaults(fn=bench_fusion)
    p = sub.add_parser("chroma-log", help="Chroma's CPU per write as users grow, with and "
                       "without memq's index on its write log")
    p.add_argument("--users", default="0,40,120,240")
    p.add_argument("--records", type=int, default=250, help="per collection (2 per user)")
    p.set_defaults(fn=bench_chroma_log)
    p = sub.add_parser("streams", help="memq's outbox and queues against Redis Streams "
                       "(a scratch redis-server)")
    p.add_argument("--deliveries", type=int, default=3000)
    p.set_defaults(fn=bench_streams)
    p = sub.add_parser("users", help="store costs as users grow (its own stack; planted turns)")
    p.add_argument("--users", default="100,1000,3000", help="sizes, comma-separated")
    p.add_argument("--png", default=os.path.join(os.environ.get("MEMQ_HOME", ".memq"), "bench",
                                                 "users.png"))
    p.set_defaults(fn=bench_users)
    p = sub.add_parser("freshness", help="add -> searchable / current, p50 and p95, at 1, 4 "
                       "and 8 workers: saturation, then paced at fractions of it")
    p.add_argument("--workers", default="1,4,8", help="worker counts, comma-separated")
    p.add_argument("--fractions", default="0.5,1.0", help="paced runs, of saturation")
    p.add_argument("--seconds", type=float, default=40.0, help="length of a paced run")
    p.add_argument("--burst", type=int, default=60, help="batches in the saturation burst")
    p.add_argument("--users", type=int, default=50)
    p.add_argument("--dataset", help="LoCoMo (locomo10.json's format); default: generated")
    p.add_argument("--stack", choices=("own", "here"), default="own",
                   help="own: scratch services; here: the configured ones (Redis db 13)")
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--timeout", type=float, default=1800)
    p.set_defaults(fn=bench_freshness)
    p = sub.add_parser("layout", help="Chroma layouts for many users compared (scratch servers)")
    p.add_argument("--users", default="1000,3000,10000", help="sizes, comma-separated")
    p.add_argument("--layouts", default="per-user,hash-32,hash-1024",
                   help="per-user and/or hash-N (N shared collections)")
    p.add_argument("--per-user-max", type=int, default=3000)
    p.add_argument("--out", default=os.path.join(os.environ.get("MEMQ_HOME", ".memq"), "bench",
                                                 "layout.json"))
    p.set_defaults(fn=bench_layout)
    p = sub.add_parser("cold", help="the first batches after a fresh start, warm-up off/on")
    p.add_argument("--dataset", default=str(Path(__file__).resolve().parents[2] / "shared"
                                            / "data" / "locomo-dev.json"))
    p.add_argument("--sessions", type=int, default=3)
    p.add_argument("--reps", type=int, default=2)
    p.set_defaults(fn=bench_cold)
    p = sub.add_parser("compare", help="memq against mem0 2.2.1 (see scripts/compare.py)")
    p.add_argument("--latencies", default="0,300", help="stub LLM latencies, ms")
    p.add_argument("--workers", default="1,4,8", help="memq worker process counts")
    p.add_argument("--mem0", default="session,async8,per-turn",
                   help="mem0 modes (session,async8,per-turn) or none")
    p.add_argument("--dataset", help="a public benchmark file as published (LoCoMo's "
                   "locomo10.json or LongMemEval's instances, e.g. ../shared/data/"
                   "locomo-dev.json); without it, the bundled generated corpus")
    p.add_argument("--users", default="1,4",
                   help="--dataset: user counts, one run each (a conversation per user)")
    p.add_argument("--turns", type=int, default=300,
                   help="--dataset: turns per run, split evenly over the users")
    p.add_argument("--sessions", type=int, default=4,
                   help="the bundled corpus: sessions of 20 turns per user (4 users)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--warmup", type=int, default=60,
                   help="at most this many memq passes before the first measured run, not "
                        "counted; they stop once Neo4j's CPU per turn has settled")
    p.add_argument("--png", default=os.path.join(os.environ.get("MEMQ_HOME", ".memq"), "bench",
                                                 "compare.png"))
    p.set_defaults(fn=bench_compare)
    args = ap.parse_args()
    try:
        args.fn(args)
    except Exception as exc:  # noqa: BLE001  (re-raised unless it is one the user can fix)
        from memq.workers.cli import one_line

        message, code = one_line(exc)
        print(f"bench {args.what}: {message}", file=sys.stderr)
        sys.exit(code)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    main()
