"""The local stack: Redis, Neo4j and Chroma on 127.0.0.1, a worker and ``memq serve`` beside
them (``memq up|down|status``; ``scripts/services`` runs the three stores through here).

One folder holds it all (``MEMQ_HOME``, ``--home``): ``redis/``, ``neo4j/`` and ``chroma/``
each store's data and pid file, ``logs/`` every log, ``worker.pid`` and ``server.pid``. A
component is ours when its pid file names a live process with the command line this module
starts (workers/procs.py); a port that answers without one is someone else's and is left alone.
Downloads (Neo4j's jars) go to ``MEMQ_CACHE``. Installing: workers/stack_setup.py.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from . import procs
from .stack_setup import (
    LAUNCHER,
    Config,
    StackError,
    ensure_chroma,
    ensure_neo4j,
    ensure_redis,
    ensure_server,
    ensure_worker,
)

SERVICES = ("redis", "neo4j", "chroma")
COMPONENTS = (*SERVICES, "worker", "beat", "server")
PORT_SETTING = {"redis": "MEMQ_REDIS_PORT", "neo4j": "MEMQ_NEO4J_PORT",
                "chroma": "MEMQ_CHROMA_PORT", "server": "memq up --api-port"}


def config(home: str | None = None, api_port: int = 8080) -> Config:
    """From the settings (MEMQ_*, .env); ``home`` (``--home``) wins over MEMQ_HOME."""
    from .settings import Settings  # noqa: PLC0415  (pydantic: only when used)

    s = Settings()
    return Config(
        home=Path(home).expanduser().absolute() if home else s.home_path, cache=s.cache_path,
        redis_port=s.redis_port, neo4j_port=s.neo4j_port, chroma_port=s.chroma_port,
        api_port=api_port, neo4j_heap=s.neo4j_heap, neo4j_pagecache=s.neo4j_pagecache,
        neo4j_checkpoint_s=s.neo4j_checkpoint_s, neo4j_java_opts=s.neo4j_java_opts,
        # the chroma of the environment memq runs in (a wheel's venv, the checkout's .venv)
        chroma_bin=(Path(s.chroma_bin).expanduser() if s.chroma_bin
                    else Path(sys.executable).parent / "chroma"),
        chroma_log_index=s.chroma_log_index == "on")


@dataclass(frozen=True)
class Component:
    name: str
    pidfile: Path
    pattern: str  # a regular expression over its command line: ours, not a reused pid
    log: Path
    port: int  # 0: none (the worker)
    grace_s: float  # SIGTERM, then SIGKILL after this
    start_s: float  # how long it may take to answer

    def owned(self) -> int | None:
        return procs.owned_pid(self.pidfile, self.pattern)


def components(cfg: Config) -> dict[str, Component]:
    h, logs = cfg.home, cfg.logs
    return {c.name: c for c in (
        Component("redis", h / "redis" / "redis.pid", "redis-server", logs / "redis.log",
                  cfg.redis_port, 10, 20),
        Component("neo4j", h / "neo4j" / "neo4j.pid", "Neo4jLauncher", logs / "neo4j.log",
                  cfg.neo4j_port, 45, 90),
        Component("chroma", h / "chroma" / "chroma.pid", "chroma run", logs / "chroma.log",
                  cfg.chroma_port, 15, 60),
        # before memq's exec into Celery, and after it (scripts/worker's `memq worker` too)
        Component("worker", h / "worker.pid",
                  r"memq\.workers\.(cli|app) (.* )?worker\b|\bmemq worker\b",
                  logs / "worker.log", 0, 10, 120),
        # the lifecycle jobs' scheduler (decay, expiry, consolidation): exactly one per stack
        Component("beat", h / "beat.pid", r"memq\.workers\.(cli|app) (.* )?beat\b",
                  logs / "beat.log", 0, 10, 60),
        # start_s: up to its read warm-up's end (the model, Neo4j's plans; what it took:
        # scripts/results/2026-12-07-figures-from-comments.md)
        Component("server", h / "server.pid", r"memq\.workers\.cli serve\b",
                  logs / "server.log", cfg.api_port, 10, 120))}


# --- command lines and files (pure) ----------------------------------------------------------

def redis_argv(cfg: Config) -> list[str]:
    # AOF, fsync every second: queues, outbox, mailboxes and the turn ledger survive a restart;
    # no RDB snapshots (the AOF is the one file a forget's scrub rewrites: workers/scrub.py)
    c = components(cfg)["redis"]
    return ["redis-server", "--port", str(cfg.redis_port), "--bind", "127.0.0.1",
            "--daemonize", "yes", "--save", "", "--appendonly", "yes",
            "--appendfsync", "everysec", "--dir", str(cfg.home / "redis"),
            "--pidfile", str(c.pidfile), "--logfile", str(c.log)]


def neo4j_argv(cfg: Config) -> list[str]:
    # Java's source-file mode: no build step. The JIT is the JVM's default (C1, then C2 for
    # what stays hot), right for a long-running Neo4j; MEMQ_NEO4J_JAVA_OPTS adds options (the
    # test suite's short-lived instance: C1 only). Checkpoints prune the transaction log.
    return ["java", f"-Xmx{cfg.neo4j_heap}", "-XX:+ExitOnOutOfMemoryError",
            *shlex.split(cfg.neo4j_java_opts), "-cp", f"{cfg.neo4j_lib}/*",
            str(LAUNCHER / "Neo4jLauncher.java"), "--home", str(cfg.home / "neo4j"),
            "--bolt", f"127.0.0.1:{cfg.neo4j_port}", "--pagecache", cfg.neo4j_pagecache,
            "--checkpoint-s", str(cfg.neo4j_checkpoint_s)]


def chroma_yaml(cfg: Config) -> str:
    """Chroma's server config. Its single-node default caches no collection, so each request
    read the collection and its segments from SQLite again; an LRU of them (what its
    distributed frontend runs with) saves that, and one process serves every request, so its
    cache sees every change. A config file also stops its per-request INFO lines."""
    return (f"persist_path: {json.dumps(str(cfg.home / 'chroma'))}\n"
            'listen_address: "127.0.0.1"\n'
            f"port: {cfg.chroma_port}\n"
            "collections_with_segments_provider:\n"
            "  cache:\n"
            "    lru:\n"
            "      capacity: 10000\n"
            "  cache_ttl_secs: 60\n"
            "  permitted_parallelism: 100\n")


def chroma_argv(cfg: Config) -> list[str]:
    return [str(cfg.chroma_bin), "run", str(cfg.home / "chroma.yaml")]


def worker_argv(cfg: Config) -> list[str]:
    return [cfg.python, "-m", "memq.workers.cli", "worker"]


def beat_argv(cfg: Config) -> list[str]:
    # its schedule's state (when each job last ran) in the stack's home, not the cwd
    return [cfg.python, "-m", "memq.workers.cli", "beat", "--schedule",
            str(cfg.home / "beat-schedule")]


def server_argv(cfg: Config) -> list[str]:
    return [cfg.python, "-m", "memq.workers.cli", "serve", "--host", "127.0.0.1",
            "--port", str(cfg.api_port)]


def child_env(cfg: Config, name: str, base: dict[str, str]) -> dict[str, str]:
    """The environment of a component: memq's own processes get the stack's ports and home
    (a --home or MEMQ_HOME given to `memq up` reaches them too)."""
    env = dict(base)
    if name == "chroma":
        env["ANONYMIZED_TELEMETRY"] = "False"
    if name in ("worker", "beat", "server"):
        env.update({"MEMQ_HOME": str(cfg.home), "MEMQ_REDIS_PORT": str(cfg.redis_port),
                    "MEMQ_NEO4J_PORT": str(cfg.neo4j_port),
                    "MEMQ_CHROMA_PORT": str(cfg.chroma_port), "C_FORCE_ROOT": "1"})
        # the stores' Chroma folder: after a forget the worker blanks its log (workers/scrub.py)
        env.setdefault("MEMQ_CHROMA_PATH", str(cfg.home / "chroma"))
    return env


def server_port(pid: int, default: int) -> int:
    """The port a running ``memq serve`` of ours was given (its command line says it)."""
    args = (procs.command_line(pid) or "").split()
    if "--port" in args[:-1]:
        value = args[args.index("--port") + 1]
        if value.isdigit():
            return int(value)
    return default


# --- health ------------------------------------------------------------------------------------

def answers(cfg: Config, c: Component) -> bool:
    if c.name == "redis":
        return procs.redis_pong(c.port)
    if c.name == "neo4j":
        return procs.port_open(c.port)
    if c.name == "chroma":
        return procs.http_ok(f"http://127.0.0.1:{c.port}/api/v2/heartbeat")
    if c.name == "server":
        return procs.http_ok(f"{_server_url(c)}/healthz")
    return c.owned() is not None  # the worker, beat: alive (the worker's readiness: its log)


def _server_url(c: Component) -> str:
    pid = c.owned()
    return f"http://127.0.0.1:{c.port if pid is None else server_port(pid, c.port)}"


def ready(cfg: Config, c: Component) -> bool:
    """Ready to be used, as ``up`` waits for it: Neo4j once its launcher printed its ready line
    (Bolt accepts TCP a little earlier), the worker once Celery says it is ready, the server
    once it is ready for reads (the stores answer, and its warm-up is over: the first search
    after ``memq up`` is not the one that loads the model and has Neo4j plan)."""
    if c.name == "server":
        return answers(cfg, c) and procs.http_ok(f"{_server_url(c)}/readyz?path=read")
    if c.name == "neo4j":
        return any(line.startswith("neo4j ready") for line in procs.tail(c.log, 400)) \
            and answers(cfg, c)
    if c.name == "worker":
        return " ready." in "\n".join(procs.tail(c.log, 400)) and answers(cfg, c)
    return answers(cfg, c)


# --- up, down, status ------------------------------------------------------------------------

def _fail(name: str, message: str, log: Path | None) -> None:
    print(f"{name}: FAILED: {message}", file=sys.stderr, flush=True)
    lines = procs.tail(log) if log else []
    if lines:
        print(f"--- last lines of {log} ---", file=sys.stderr)
        print("\n".join(lines), file=sys.stderr, flush=True)


def _address(c: Component) -> str:
    return f"127.0.0.1:{c.port} " if c.port else ""


def _spawn(cfg: Config, c: Component, argv: list[str]) -> subprocess.Popen[bytes]:
    # Each in a session of its own, as systemd or a container would run it: Linux schedules
    # sessions as groups (autogroups), and one shared with the shell that ran `memq up` would
    # make the stores compete for CPU with whatever else that shell runs. It also makes the
    # component a process group `down` can signal whole (a worker's pool).
    with c.log.open("wb") as log:
        try:
            proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True,
                                    env=child_env(cfg, c.name, dict(os.environ)))
        except OSError as exc:
            raise StackError(f"{c.name}: cannot run {argv[0]}: {exc.strerror}") from None
    c.pidfile.write_text(f"{proc.pid}\n")
    return proc


def _launch(cfg: Config, c: Component) -> subprocess.Popen[bytes] | None:
    if c.name == "redis":
        c.pidfile.unlink(missing_ok=True)
        done = subprocess.run(redis_argv(cfg), capture_output=True, text=True, check=False)
        if done.returncode != 0:  # a refused option or folder; it daemonizes once it is fine
            first = (done.stderr or done.stdout).strip().splitlines()[:1]
            raise StackError(f"redis: redis-server exited with {done.returncode}"
                             + (f": {first[0]}" if first else ""), c.log)
        return None
    if c.name == "neo4j":
        return _spawn(cfg, c, neo4j_argv(cfg))
    if c.name == "chroma":
        _chroma_log_index(cfg)
        (cfg.home / "chroma.yaml").write_text(chroma_yaml(cfg))
        return _spawn(cfg, c, chroma_argv(cfg))
    argv = {"worker": worker_argv, "beat": beat_argv, "server": server_argv}[c.name](cfg)
    return _spawn(cfg, c, argv)


def _chroma_log_index(cfg: Config) -> None:
    """MEMQ_CHROMA_LOG_INDEX=on: the index Chroma's write log lacks, built while Chroma is
    stopped when the store exists, and on a new store once Chroma has made its tables."""
    if not cfg.chroma_log_index or not (cfg.home / "chroma" / "chroma.sqlite3").exists():
        return
    import sqlite3  # noqa: PLC0415

    from ..pipeline.adapters.chroma_log import ensure_log_index  # noqa: PLC0415

    try:
        ensure_log_index(cfg.home / "chroma")
    except (OSError, sqlite3.Error) as exc:
        raise StackError(f"chroma: could not index its write log in {cfg.home / 'chroma'}: "
                         f"{exc}") from None


def _begin(cfg: Config, c: Component) -> tuple[str, subprocess.Popen[bytes] | None]:
    """Start ``c`` unless ours runs: ("already" | "started", the child if we made one)."""
    if c.owned() is not None:
        # ours and answering; or ours still starting (or stuck): the wait judges it
        return ("already" if ready(cfg, c) else "started"), None
    if c.port and procs.port_open(c.port):
        raise StackError(f"{c.name}: port {c.port} on 127.0.0.1 is taken by another process "
                         f"(no {c.name} of {cfg.home} runs); stop it or choose another port "
                         f"({PORT_SETTING[c.name]})")
    return "started", _launch(cfg, c)


def _exited(c: Component, child: subprocess.Popen[bytes] | None) -> bool:
    """Whether the component's process is gone: our child's exit status when we started it
    (a worker or server runs ``memq`` and then execs into its server, and a command line read
    while the kernel swaps it can come back empty, so a pattern missed once proves nothing);
    otherwise whether its pid file names a live process of its kind (Redis daemonizes)."""
    if child is not None:
        return child.poll() is not None
    return c.owned() is None


def _wait(cfg: Config, c: Component, child: subprocess.Popen[bytes] | None) -> bool:
    t0 = time.monotonic()
    while time.monotonic() - t0 < c.start_s:
        if child is not None:
            child.poll()  # reaps it if it exited: a zombie would pass for alive
        if ready(cfg, c):
            print(f"{c.name}: up {_address(c)}pid {c.owned() or '?'} "
                  f"(started in {int(time.monotonic() - t0)} s)", flush=True)
            return True
        if time.monotonic() - t0 >= 2 and _exited(c, child):
            where = f" on port {c.port}" if c.port else ""
            _fail(c.name, f"process exited before answering{where}", c.log)
            return False
        time.sleep(0.5)
    what = f"not answering on 127.0.0.1:{c.port}" if c.port else "not ready"
    if c.name == "server" and answers(cfg, c):  # up, but its read warm-up or a store is not
        what = f"not ready for reads on 127.0.0.1:{c.port} (/readyz?path=read)"
    _fail(c.name, f"{what} after {c.start_s:g} s", c.log)
    return False


def _finish(cfg: Config, c: Component, state: str,
            child: subprocess.Popen[bytes] | None) -> bool:
    if state == "already":
        print(f"{c.name}: up {_address(c)}pid {c.owned() or '?'} (already running)")
        return True
    if not _wait(cfg, c, child):
        return False
    if c.name == "chroma":
        try:  # a new store: its tables exist now
            _chroma_log_index(cfg)
        except StackError as exc:
            _fail(c.name, str(exc).removeprefix("chroma: "), None)
            return False
    return True


ENSURE = {"redis": ensure_redis, "neo4j": ensure_neo4j, "chroma": ensure_chroma,
          "worker": ensure_worker, "beat": ensure_worker, "server": ensure_server}


def up(cfg: Config, names: Sequence[str]) -> int:
    """Install what is missing, start, wait until each answers; the stores first (the slowest
    first, the three in parallel), then the worker and beat, then the server. 0: all up."""
    wanted = [n for n in COMPONENTS if n in names]
    comps = components(cfg)
    for folder in (cfg.home / "redis", cfg.home / "neo4j", cfg.home / "chroma", cfg.logs):
        folder.mkdir(parents=True, exist_ok=True)
    failed = False
    for name in wanted:
        try:
            ENSURE[name](cfg)
        except StackError as exc:
            _fail(name, str(exc).removeprefix(f"{name}: "), exc.log)
            failed = True
    if failed:
        return 1
    for group in (("neo4j", "redis", "chroma"), ("worker", "beat"), ("server",)):
        begun: dict[str, tuple[str, subprocess.Popen[bytes] | None]] = {}
        for name in (n for n in group if n in wanted):
            try:
                begun[name] = _begin(cfg, comps[name])
            except StackError as exc:
                _fail(name, str(exc).removeprefix(f"{name}: "), exc.log)
                failed = True
        for name in ("redis", "chroma", "neo4j", "worker", "beat", "server"):
            if name in begun and not _finish(cfg, comps[name], *begun[name]):
                failed = True
        if failed:  # a worker or server without its stores would only fail in turn
            return 1
    return 0


def down(cfg: Config, names: Sequence[str]) -> int:
    """Stop what this home started, the server first and Redis last. 0: all stopped."""
    comps = components(cfg)
    rc = 0
    for name in ("server", "beat", "worker", "chroma", "neo4j", "redis"):
        if name not in names:
            continue
        c = comps[name]
        pid = c.owned()
        if pid is None:
            c.pidfile.unlink(missing_ok=True)
            print(f"{name}: down (not running)")
            continue
        gone = procs.stop(pid, c.grace_s, f"{name}: did not stop in {c.grace_s:g} s, "
                                          f"sending SIGKILL to {pid}")
        c.pidfile.unlink(missing_ok=True)
        if gone:
            print(f"{name}: down (stopped pid {pid})", flush=True)
        else:
            print(f"{name}: FAILED: pid {pid} is still there after SIGKILL", file=sys.stderr)
            rc = 1
    return rc


@dataclass(frozen=True)
class Line:
    name: str
    up: bool
    address: str
    pid: int | None

    def text(self) -> str:
        return (f"{self.name:<7} {'up' if self.up else 'down':<5} {self.address:<16} "
                f"pid {self.pid or '-'}")

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "up": self.up, "address": self.address, "pid": self.pid}


def in_use(cfg: Config) -> bool:
    """Whether anything was started from this home (a pid file is there)."""
    return any(c.pidfile.exists() for c in components(cfg).values())


def status(cfg: Config, names: Sequence[str] = SERVICES) -> list[Line]:
    """One line per component: the stores always, the worker and the server when this home
    started them (their pid files are there)."""
    lines = []
    for name, c in components(cfg).items():
        if name not in names or (name not in SERVICES and not c.pidfile.exists()):
            continue
        pid = c.owned()
        port = server_port(pid, c.port) if name == "server" and pid else c.port
        lines.append(Line(name, answers(cfg, c), f"127.0.0.1:{port}" if port else "-", pid))
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m memq.workers.stack up|down|status [redis|neo4j|chroma ...]``: the stores
    only, as ``scripts/services`` (the checkout's tests and benchmarks) runs them."""
    args = list(sys.argv[1:] if argv is None else argv)
    usage = "usage: scripts/services up|down|status [redis|neo4j|chroma ...]"
    if not args or args[0] not in ("up", "down", "status"):
        print(usage, file=sys.stderr)
        return 2
    names = args[1:] or list(SERVICES)
    for name in names:
        if name not in SERVICES:
            print(f"unknown service: {name}", file=sys.stderr)
            return 2
    cfg = config()
    if args[0] == "up":
        rc = up(cfg, names)
        if rc:
            print("services: some services did not come up (see above)", file=sys.stderr)
        return rc
    if args[0] == "down":
        return down(cfg, names)
    lines = status(cfg, names)
    for line in lines:
        print(line.text())
    return 0 if all(line.up for line in lines) else 1


if __name__ == "__main__":
    sys.exit(main())
