"""The mem0 side of ``scripts/bench compare``; runs in mem0's own venv (made by the bench).

``run``: feeds the turns (JSON lines, memq's enqueue format, one session after another) to
mem0 2.2.1 in one of its modes and prints one JSON line: seconds, CPU seconds of this
process, and the count of turns. mem0 keeps its vectors in its default store (Qdrant, local,
in memory) and its history in SQLite, both in a fresh folder. It embeds with the same int8
ONNX MiniLM as memq, through memq's own embedder (imported from memq's source, which the
bench puts on this venv's path), so neither side is faster for its model.

``plot``: draws the bench's results (JSON) as a bar chart (PNG).

Modes (each turn is one ``{"role": "user", "content", "name": speaker}`` message):

* ``per-turn``: ``Memory.add`` once per turn, in order;
* ``async8``: ``AsyncMemory.add`` once per turn, 8 at a time (its vector store's calls under
  one lock: local Qdrant is not thread-safe);
* ``session``: ``Memory.add`` once per session with the session's turns (mem0's best mode).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import tempfile
import threading
import time
from itertools import groupby
from pathlib import Path
from typing import Any

os.environ["MEM0_TELEMETRY"] = "false"


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _config(base_url: str, folder: str) -> dict[str, Any]:
    return {
        "llm": {"provider": "openai", "config": {
            "model": "stub", "api_key": "unused", "openai_base_url": base_url,
            "temperature": 0}},
        "embedder": {"provider": "openai", "config": {  # replaced below by the ONNX MiniLM
            "model": "stub", "api_key": "unused", "openai_base_url": base_url,
            "embedding_dims": 384}},
        "vector_store": {"provider": "qdrant", "config": {
            "collection_name": "bench", "path": os.path.join(folder, "qdrant"),
            "embedding_model_dims": 384, "on_disk": False}},
        "history_db_path": os.path.join(folder, "history.db"),
    }


def _embedder() -> Any:
    from mem0.embeddings.base import EmbeddingBase

    from memq.pipeline.adapters.embed_local import DEFAULT, MODEL_IDS, ROUTED, build

    # memq's graph of the variant memq's workers run (MEMQ_LOCAL_MODEL), built once into
    # memq's cache folder
    cache = Path(os.environ.get("MEMQ_CACHE", "~/.cache/memq")).expanduser()
    variant = os.environ.get("MEMQ_LOCAL_MODEL", DEFAULT)
    if variant not in MODEL_IDS:
        raise SystemExit(f"compare: unknown MEMQ_LOCAL_MODEL {variant!r}")
    # a routed variant's English model: these conversations are English, and mem0's index
    # is 384-dimensional
    local = build(ROUTED.get(variant, variant), threads=2,  # type: ignore[call-overload]
                  cache_dir=cache)

    class MiniLM(EmbeddingBase):
        def embed(self, text: Any, memory_action: Any = None) -> list[float]:
            return list(local.embed([text])[0])

        def embed_batch(self, texts: Any, memory_action: Any = "add") -> list[list[float]]:
            return [list(v) for v in local.embed(list(texts))]

    return MiniLM()


def _serialize(store: Any) -> None:
    """AsyncMemory calls its vector store from worker threads, 8 at a time; Qdrant's local
    mode corrupts its arrays under that (IndexError in the payload mask). One lock around
    the store's calls: the LLM calls and embeddings still overlap."""
    lock = threading.Lock()
    for name in ("search", "insert", "update", "delete", "get", "list", "keyword_search"):
        method = getattr(store, name, None)
        if callable(method):
            def locked(*a: Any, _method: Any = method, **k: Any) -> Any:
                with lock:
                    return _method(*a, **k)
            setattr(store, name, locked)


def _message(turn: dict[str, str]) -> dict[str, str]:
    out = {"role": turn["role"], "content": turn["content"]}
    if turn.get("speaker"):
        out["name"] = turn["speaker"]
    return out


def run(args: argparse.Namespace) -> None:
    from mem0 import AsyncMemory, Memory

    with open(args.turns, encoding="utf-8") as f:
        turns = [json.loads(line) for line in f if line.strip()]
    with tempfile.TemporaryDirectory(prefix="mem0-bench-") as folder:
        config = _config(args.base_url, folder)
        memory: Any = (AsyncMemory if args.mode == "async8" else Memory).from_config(config)
        memory.embedding_model = _embedder()
        if args.mode == "async8":  # local Qdrant is not thread-safe; a Qdrant server would be
            _serialize(memory.vector_store)
        memory.embedding_model.embed_batch(["warm up"])
        cpu, started = _cpu(), time.perf_counter()
        if args.mode == "per-turn":
            for t in turns:
                memory.add([_message(t)], user_id=t["user_id"])
        elif args.mode == "session":
            for (user, _session), group in groupby(
                    turns, key=lambda t: (t["user_id"], t["session_id"])):
                memory.add([_message(t) for t in group], user_id=user)
        else:
            async def all_turns() -> None:
                gate = asyncio.Semaphore(8)

                async def one(t: dict[str, str]) -> None:
                    async with gate:
                        await memory.add([_message(t)], user_id=t["user_id"])

                await asyncio.gather(*(one(t) for t in turns))

            asyncio.run(all_turns())
        seconds, cpu = time.perf_counter() - started, _cpu() - cpu
        stored = sum(len(memory_list(memory, u)) for u in {t["user_id"] for t in turns}) \
            if args.mode != "async8" else -1
    print(json.dumps({"seconds": seconds, "cpu_s": cpu, "turns": len(turns),
                      "memories": stored}))


def memory_list(memory: Any, user: str) -> list[Any]:
    got = memory.get_all(filters={"user_id": user}, top_k=100_000)
    return list(got.get("results", got) if isinstance(got, dict) else got)


def plot(args: argparse.Namespace) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(args.results, encoding="utf-8") as f:
        results = json.load(f)
    for r in results["rows"]:  # one bar per system and user count
        r["system"] = f"{r['system']}, {r.get('users', 4)} user(s)"
    latencies = sorted({r["latency_ms"] for r in results["rows"]})
    systems = sorted(dict.fromkeys(r["system"] for r in results["rows"]),
                     key=lambda s: (int(s.rsplit(", ", 1)[1].split()[0]), s))
    fig, axes = plt.subplots(1, len(latencies), figsize=(5.5 * len(latencies), 4.2),
                             squeeze=False)
    for ax, latency in zip(axes[0], latencies, strict=True):
        names, rates, colours = [], [], []
        for system in systems:
            rows = [r for r in results["rows"]
                    if r["system"] == system and r["latency_ms"] == latency]
            if rows:
                names.append(system)
                rates.append(rows[0]["turns_per_s"])
                colours.append("#2a7ab9" if system.startswith("memq") else "#c0504d")
        ax.barh(names, rates, color=colours)
        for y, rate in enumerate(rates):
            ax.text(rate, y, f" {rate:.1f}", va="center", fontsize=8)
        ax.set_title(f"LLM latency {latency} ms")
        ax.set_xlabel("turns/s (median of rounds)")
        ax.invert_yaxis()
    fig.suptitle(f"memq vs mem0 2.2.1, {results.get('dataset', 'generated')}, "
                 f"{results['turns']} turns, "
                 f"load average {results['load']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(args.png, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("run")
    p.add_argument("--turns", required=True)
    p.add_argument("--base-url", required=True)
    p.add_argument("--mode", choices=("per-turn", "async8", "session"), required=True)
    p = sub.add_parser("plot")
    p.add_argument("--results", required=True)
    p.add_argument("--png", required=True)
    args = parser.parse_args()
    run(args) if args.cmd == "run" else plot(args)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
