"""Benchmarks (see scripts/bench). Each prints what it measured, one figure per line."""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta

import numpy as np


def bench_embed(args: argparse.Namespace) -> None:
    """Sentences/s of the offline embedder, int8 (default) vs fp32, on 1 and 2 threads, over
    distinct mixed-length texts (a third short, a third medium, a third 40-60 words), and how
    closely the two variants agree. The machine's load average is printed: other processes
    on these 2 cores skew the figures."""
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
    mean_words = sum(len(t.split()) for t in texts) / args.n
    print(f"{args.n} texts ({len(set(texts))} distinct), mean {mean_words:.0f} words; "
          f"load average {os.getloadavg()[0]:.2f} at start")
    vectors: dict[str, np.ndarray] = {}
    variants: tuple[Variant, ...] = ("fp32", "int8")
    for variant in variants:
        for threads in (1, 2):
            e = LocalEmbedder(threads=threads, batch_size=32, variant=variant)
            e.embed(texts[:64])  # warm up
            t = time.perf_counter()
            out = e.embed(texts)
            dt = time.perf_counter() - t
            vectors[variant] = np.asarray(out)
            print(f"local {variant} ONNX ({e.model_id}), {threads} thread(s): "
                  f"{args.n / dt:,.0f} sentences/s  (load average {os.getloadavg()[0]:.2f})")
    cosines = (vectors["fp32"] * vectors["int8"]).sum(axis=1)
    print(f"fp32 vs int8 cosine: mean {cosines.mean():.4f}, min {cosines.min():.4f}")


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
              f"changed {result.changed:>6}  ({what})")
    if not args.keep:
        wiring.chroma().delete_user(user)
        wiring.graph().delete_user(user)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("embed")
    p.add_argument("--n", type=int, default=2000)
    p.set_defaults(fn=bench_embed)
    p = sub.add_parser("lifecycle")
    p.add_argument("--memories", type=int, default=10_000)
    p.add_argument("--keep", action="store_true")
    p.set_defaults(fn=bench_lifecycle)
    args = ap.parse_args()
    args.fn(args)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    main()
