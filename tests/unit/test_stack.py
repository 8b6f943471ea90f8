"""The local stack's pure parts (workers/stack.py, stack_setup.py, procs.py): the command lines
and config it writes, whose a pid file is, a port taken by a stranger, stopping a process group.
The real start and stop of Redis, Neo4j and Chroma: tests/integration/test_stack_up.py."""

from __future__ import annotations

import itertools
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memq.workers import procs, stack
from memq.workers.stack_setup import (
    LAUNCHER,
    Config,
    StackError,
    java_major,
    mvn_argv,
    neo4j_missing,
)


def _cfg(tmp_path: Path, **kw: object) -> Config:
    return Config(home=tmp_path / "home", cache=tmp_path / "cache", redis_port=36379,
                  neo4j_port=37687, chroma_port=38000, api_port=38080,
                  **kw)  # type: ignore[arg-type]


def _pairs(argv: list[str]) -> dict[str, str]:
    return {a: b for a, b in itertools.pairwise(argv) if a.startswith("--")}


def test_redis_runs_with_aof_on_loopback_into_the_home(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path)
    argv = stack.redis_argv(cfg)
    opts = _pairs(argv)
    assert argv[0] == "redis-server"
    assert opts["--appendonly"] == "yes" and opts["--appendfsync"] == "everysec"
    assert opts["--save"] == ""  # no RDB snapshots beside the AOF
    assert opts["--bind"] == "127.0.0.1" and opts["--port"] == "36379"
    assert opts["--daemonize"] == "yes"
    assert opts["--dir"] == str(cfg.home / "redis")
    assert opts["--pidfile"] == str(cfg.home / "redis" / "redis.pid")  # scripts/services' path
    assert opts["--logfile"] == str(cfg.home / "logs" / "redis.log")


def test_neo4j_runs_the_packaged_launcher_from_the_cache(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, neo4j_heap="1g", neo4j_pagecache="64m", neo4j_checkpoint_s=10,
               neo4j_java_opts="-XX:TieredStopAtLevel=1 -Dx=y")
    argv = stack.neo4j_argv(cfg)
    assert argv[:5] == ["java", "-Xmx1g", "-XX:+ExitOnOutOfMemoryError",
                        "-XX:TieredStopAtLevel=1", "-Dx=y"]
    assert argv[argv.index("-cp") + 1] == f"{tmp_path}/cache/neo4j-5.26.0/lib/*"
    launcher = Path(argv[argv.index("-cp") + 2])
    assert launcher == LAUNCHER / "Neo4jLauncher.java" and launcher.is_file()
    assert _pairs(argv) == {"--home": str(cfg.home / "neo4j"), "--bolt": "127.0.0.1:37687",
                            "--pagecache": "64m", "--checkpoint-s": "10"}


def test_without_java_options_nothing_extra_is_passed(tmp_path: Path) -> None:
    assert stack.neo4j_argv(_cfg(tmp_path))[3] == "-cp"


def test_the_jars_come_from_the_packaged_pom(tmp_path: Path) -> None:
    argv = mvn_argv(tmp_path / "lib.partial")
    assert Path(argv[argv.index("-f") + 1]) == LAUNCHER / "pom.xml"
    assert (LAUNCHER / "pom.xml").is_file()
    assert "dependency:copy-dependencies" in argv and "-Dneo4j.version=5.26.0" in argv
    assert f"-DoutputDirectory={tmp_path}/lib.partial" in argv


def test_chroma_config_is_the_one_scripts_services_wrote(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path)
    assert stack.chroma_yaml(cfg) == (
        f'persist_path: "{cfg.home}/chroma"\n'
        'listen_address: "127.0.0.1"\n'
        "port: 38000\n"
        "collections_with_segments_provider:\n"
        "  cache:\n"
        "    lru:\n"
        "      capacity: 10000\n"
        "  cache_ttl_secs: 60\n"
        "  permitted_parallelism: 100\n")
    assert stack.chroma_argv(cfg)[1:] == ["run", str(cfg.home / "chroma.yaml")]


def test_chroma_is_the_one_beside_the_running_python_unless_set(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("MEMQ_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # no .env of the checkout's
    assert stack.config().chroma_bin == Path(sys.executable).parent / "chroma"
    monkeypatch.setenv("MEMQ_CHROMA_BIN", "/opt/chroma")
    assert stack.config().chroma_bin == Path("/opt/chroma")


def test_the_home_is_flag_then_setting_then_xdg(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("MEMQ_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert stack.config().home == tmp_path / "xdg" / "memq"
    monkeypatch.setenv("MEMQ_HOME", str(tmp_path / "env"))
    monkeypatch.setenv("MEMQ_REDIS_PORT", "36379")
    cfg = stack.config()
    assert cfg.home == tmp_path / "env" and cfg.redis_port == 36379
    assert stack.config(str(tmp_path / "flag")).home == tmp_path / "flag"


def test_worker_and_server_get_the_stack_and_the_chroma_folder(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path)
    env = stack.child_env(cfg, "worker", {"PATH": "/bin"})
    assert env["MEMQ_CHROMA_PATH"] == str(cfg.home / "chroma")  # the scrub blanks its log
    assert env["MEMQ_HOME"] == str(cfg.home) and env["MEMQ_REDIS_PORT"] == "36379"
    assert env["MEMQ_NEO4J_PORT"] == "37687" and env["MEMQ_CHROMA_PORT"] == "38000"
    assert env["C_FORCE_ROOT"] == "1" and env["PATH"] == "/bin"
    kept = stack.child_env(cfg, "worker", {"MEMQ_CHROMA_PATH": "/mnt/chroma"})
    assert kept["MEMQ_CHROMA_PATH"] == "/mnt/chroma"  # a folder set by the operator wins
    assert stack.child_env(cfg, "chroma", {})["ANONYMIZED_TELEMETRY"] == "False"
    assert "MEMQ_HOME" not in stack.child_env(cfg, "redis", {})
    assert stack.worker_argv(cfg)[1:] == ["-m", "memq.workers.cli", "worker"]
    assert _pairs(stack.server_argv(cfg)) == {"--host": "127.0.0.1", "--port": "38080"}


def test_the_patterns_know_our_command_lines_and_no_others(tmp_path: Path) -> None:
    import re

    comps = stack.components(_cfg(tmp_path))
    worker, server = comps["worker"].pattern, comps["server"].pattern
    for line in ("/v/bin/python -m memq.workers.cli worker",
                 "/v/bin/python -m celery -A memq.workers.app worker --loglevel=INFO -Q a,b",
                 "/repo/.venv/bin/python /repo/.venv/bin/memq worker --concurrency 1"):
        assert re.search(worker, line) and not re.search(server, line), line
    serve = "/v/bin/python -m memq.workers.cli serve --host 127.0.0.1 --port 8080"
    assert re.search(server, serve) and not re.search(worker, serve)
    assert not re.search(worker, "/v/bin/python -m memq.workers.cli beat")
    beat = comps["beat"].pattern
    for line in ("/v/bin/python -m memq.workers.cli beat --schedule /h/beat-schedule",
                 "/v/bin/python -m celery -A memq.workers.app beat --loglevel=INFO -s /h/b"):
        assert re.search(beat, line) and not re.search(worker, line), line
    assert not re.search(beat, serve)


def test_beat_keeps_its_schedule_in_the_stack_home(tmp_path: Path) -> None:
    """Beat remembers when each job last ran in a file: the stack's, not the cwd's; it
    publishes to the stack's Redis, as the worker reads it."""
    cfg = _cfg(tmp_path)
    beat, worker = (stack.child_env(cfg, n, {}) for n in ("beat", "worker"))
    assert beat["MEMQ_REDIS_PORT"] == worker["MEMQ_REDIS_PORT"] == str(cfg.redis_port)
    assert stack.beat_argv(cfg)[1:] == ["-m", "memq.workers.cli", "beat", "--schedule",
                                        str(cfg.home / "beat-schedule")]


def _sleeper(*, new_session: bool = True, ignore_term: bool = False) -> subprocess.Popen[bytes]:
    code = ("import signal, time\n"
            + ("signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" if ignore_term else "")
            + "time.sleep(60)  # memq-stack-test\n")
    proc = subprocess.Popen([sys.executable, "-c", code], start_new_session=new_session)
    deadline = time.monotonic() + 10
    while "memq-stack-test" not in (procs.command_line(proc.pid) or ""):  # exec'd, not forked
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return proc


def test_a_pid_file_counts_only_for_a_live_process_with_our_command_line(
        tmp_path: Path) -> None:
    pidfile = tmp_path / "x.pid"
    assert procs.owned_pid(pidfile, "memq-stack-test") is None  # no file
    pidfile.write_text("not a pid\n")
    assert procs.owned_pid(pidfile, "memq-stack-test") is None
    proc = _sleeper()
    try:
        pidfile.write_text(f"{proc.pid}\n")
        assert procs.owned_pid(pidfile, "memq-stack-test") == proc.pid
        # a live process that is not ours: a pid the kernel gave to another program
        assert procs.owned_pid(pidfile, "redis-server") is None
    finally:
        proc.kill()
        proc.wait()
    assert procs.owned_pid(pidfile, "memq-stack-test") is None  # gone


def test_stop_terms_the_group_and_kills_what_ignores_it(tmp_path: Path) -> None:
    polite, stubborn = _sleeper(), _sleeper(ignore_term=True)
    time.sleep(0.3)  # its handler is set
    try:
        t0 = time.monotonic()
        assert procs.stop(polite.pid, grace_s=5)
        assert time.monotonic() - t0 < 4  # SIGTERM was enough
        polite.wait(timeout=5)
        assert procs.stop(stubborn.pid, grace_s=0.5)
        assert stubborn.wait(timeout=5) == -9
        assert not procs.group_members(stubborn.pid)
    finally:
        for p in (polite, stubborn):
            if p.poll() is None:
                p.kill()
                p.wait()


def test_a_port_held_by_a_stranger_is_refused_by_name(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert procs.port_open(port)
        cfg = _cfg(tmp_path)
        cfg = Config(**{**cfg.__dict__, "redis_port": port})
        (cfg.home / "redis").mkdir(parents=True)
        with pytest.raises(StackError) as err:
            stack._begin(cfg, stack.components(cfg)["redis"])
    text = str(err.value)
    assert f"port {port}" in text and "MEMQ_REDIS_PORT" in text and "\n" not in text
    assert not procs.port_open(port)


def test_java_versions_and_what_neo4j_lacks() -> None:
    assert java_major('openjdk version "17.0.13" 2024-10-15') == 17
    assert java_major('openjdk version "21" 2023-09-19') == 21
    assert java_major('java version "1.8.0_412"') == 8
    assert java_major("command not found") is None
    assert neo4j_missing(17, have_jars=True, have_mvn=False) == []
    assert neo4j_missing(17, have_jars=False, have_mvn=True) == []
    assert neo4j_missing(None, have_jars=False, have_mvn=False) == ["java 17+", "mvn"]
    assert neo4j_missing(11, have_jars=True, have_mvn=True) == ["java 17+ (found java 11)"]


def test_status_lines_read_as_scripts_services_printed_them() -> None:
    assert stack.Line("redis", True, "127.0.0.1:6379", 42).text() == (
        "redis   up    127.0.0.1:6379   pid 42")
    assert stack.Line("chroma", False, "127.0.0.1:18000", None).text() == (
        "chroma  down  127.0.0.1:18000  pid -")


def test_importing_the_stack_builds_no_app_and_loads_no_store_driver() -> None:
    code = ("import sys, memq.workers.stack\n"
            "heavy = [m for m in ('celery', 'kombu', 'chromadb', 'neo4j', 'redis', 'pydantic',"
            " 'memq.workers.app', 'memq.workers.settings') if m in sys.modules]\n"
            "print(heavy)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_a_child_that_runs_is_not_taken_for_gone_by_its_command_line(tmp_path: Path) -> None:
    """A worker runs `memq` and then execs into Celery: a command line read meanwhile can miss
    its pattern. Its own exit status says whether it is gone, not one reading of it."""
    comps = stack.components(_cfg(tmp_path))
    worker = comps["worker"]
    worker.pidfile.parent.mkdir(parents=True, exist_ok=True)
    child = _sleeper()  # alive, and no command line a worker's pattern knows
    worker.pidfile.write_text(f"{child.pid}\n")
    try:
        assert worker.owned() is None
        assert not stack._exited(worker, child)
    finally:
        child.kill()
        child.wait()
    assert stack._exited(worker, child)
    assert stack._exited(worker, None)  # started by someone else: its pid file decides
