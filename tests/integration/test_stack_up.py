"""``memq up``, ``status`` and ``down`` as a user of the wheel runs them: the wheel built from
this checkout, installed into a venv outside the repository (``--no-deps``: the dependencies are
this interpreter's, reached through a ``.pth``, so the test does not download them again), its
own ``memq`` and its own ``chroma`` beside its Python. Real Redis, Neo4j (the jars in
``MEMQ_CACHE``) and Chroma, a worker and ``memq serve``, on ports no other test uses, into a
temporary home; every process gone after ``memq down``."""

from __future__ import annotations

import os
import re
import site
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from integration.conftest import REPO
from memq.workers import procs

pytestmark = pytest.mark.integration

PORTS = {"redis": 36379, "neo4j": 37687, "chroma": 38000, "server": 38080}
COMPONENTS = ("redis", "neo4j", "chroma", "worker", "beat", "server")


def _run(argv: list[str | Path], env: dict[str, str], cwd: Path, timeout: float = 300
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in argv], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, check=False)


def _clean_env() -> dict[str, str]:
    """No MEMQ_* of the suite's, and no PYTHONPATH that would put a checkout's memq first."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith("MEMQ_") and k != "PYTHONPATH"}


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel in a venv of its own: its ``bin/`` (memq, python, chroma)."""
    root = tmp_path_factory.mktemp("stack-wheel")
    env = _clean_env()
    for argv in ([sys.executable, "-m", "build", "--outdir", root / "dist", REPO],
                 [sys.executable, "-m", "venv", root / "venv"]):
        res = _run(argv, env, root, timeout=600)
        assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
    (wheel,) = (root / "dist").glob("memq-*.whl")
    bin_dir = root / "venv" / "bin"
    res = _run([bin_dir / "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
                wheel], env, root)
    assert res.returncode == 0, res.stderr[-3000:]
    # the dependencies: this interpreter's site-packages, after the venv's own (a path line
    # in a .pth runs no .pth of that folder, so the checkout's memq is not reached through it)
    (purelib,) = (root / "venv" / "lib").glob("python3*/site-packages")
    (purelib / "zz_deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    # chromadb's console script, as pip writes it for a venv that installs chromadb
    chroma = bin_dir / "chroma"
    chroma.write_text(f"#!{bin_dir / 'python'}\nimport sys\nfrom chromadb.cli.cli import app\n"
                      "sys.exit(app())\n")
    chroma.chmod(0o755)
    return bin_dir


@pytest.fixture
def stack_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    taken = {name: port for name, port in PORTS.items() if procs.port_open(port)}
    if taken:  # not ours to stop: fail, never skip
        pytest.fail(f"ports of this test already in use: {taken}")
    env = _clean_env()
    env.update({
        "MEMQ_REDIS_PORT": str(PORTS["redis"]), "MEMQ_NEO4J_PORT": str(PORTS["neo4j"]),
        "MEMQ_CHROMA_PORT": str(PORTS["chroma"]), "MEMQ_WARM": "off",
        # a Neo4j that lives a minute: C1 only, as the suite's own (scripts/test)
        "MEMQ_NEO4J_JAVA_OPTS": "-XX:TieredStopAtLevel=1",
        "MEMQ_CACHE": os.environ.get("MEMQ_CACHE", str(Path.home() / ".cache" / "memq")),
        "PYTHONUNBUFFERED": "1"})
    yield env


def _pids(home: Path) -> dict[str, int]:
    files = {"redis": home / "redis" / "redis.pid", "neo4j": home / "neo4j" / "neo4j.pid",
             "chroma": home / "chroma" / "chroma.pid", "worker": home / "worker.pid",
             "beat": home / "beat.pid", "server": home / "server.pid"}
    return {name: int(f.read_text().strip()) for name, f in files.items() if f.exists()}


def _readme_snippet() -> str:
    """The first Python block after "From the wheel" in the README, as a user copies it."""
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    after = text[text.index("## From the wheel"):]
    start = after.index("```python\n") + len("```python\n")
    return after[start:after.index("```", start)]


def test_memq_up_status_down_from_the_wheel(venv: Path, stack_env: dict[str, str],
                                            tmp_path: Path) -> None:
    memq, home, env = venv / "memq", tmp_path / "home", stack_env
    api = str(PORTS["server"])
    try:
        up = _run([memq, "up", "--home", home, "--api-port", api], env, tmp_path)
        assert up.returncode == 0, up.stdout + up.stderr
        for name in COMPONENTS:
            assert re.search(rf"^{name}: up .*pid \d+ \(started in \d+ s\)$", up.stdout,
                             re.MULTILINE), up.stdout
        pids = _pids(home)
        assert set(pids) == set(COMPONENTS)
        # everything runs from the wheel's install: the launcher, chroma, memq itself
        site_dir = next((venv.parent / "lib").glob("python3*/site-packages"))
        neo4j = procs.command_line(pids["neo4j"]) or ""
        assert f"{site_dir}/memq/workers/neo4j/Neo4jLauncher.java" in neo4j, neo4j
        assert str(venv / "chroma") in (procs.command_line(pids["chroma"]) or "")
        for name in ("worker", "beat", "server"):
            assert (procs.command_line(pids[name]) or "").startswith(str(venv / "python"))
        where = _run([venv / "python", "-c", "import memq; print(memq.__file__)"], env, tmp_path)
        assert where.stdout.startswith(str(site_dir)), where.stdout + where.stderr

        again = _run([memq, "up", "--home", home, "--api-port", api], env, tmp_path)
        running = again.stdout.count("(already running)")
        assert again.returncode == 0 and running == len(COMPONENTS), again.stdout + again.stderr
        assert _pids(home) == pids

        status = _run([memq, "status", "--home", home], env, tmp_path)
        assert status.returncode == 0, status.stdout + status.stderr
        for name in COMPONENTS:
            assert re.search(rf"^{name} +up ", status.stdout, re.MULTILINE), status.stdout
        assert "workers     1:" in status.stdout  # the queues, from that worker's Redis

        with redis.Redis(port=PORTS["redis"]) as r:
            assert r.config_get("appendonly") == {"appendonly": "yes"}
            assert r.config_get("appendfsync") == {"appendfsync": "everysec"}
        assert (home / "redis" / "appendonlydir").is_dir()
        with urllib.request.urlopen(f"http://127.0.0.1:{api}/healthz", timeout=5) as res:
            assert res.status == 200
        for name in COMPONENTS:
            assert (home / "logs" / f"{name}.log").exists()

        # the README's first Python, from the wheel's venv, against this stack
        snippet = _readme_snippet()
        ran = _run([venv / "python", "-c", snippet], env, tmp_path)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert "CentOS 7" in ran.stdout, ran.stdout

        down = _run([memq, "down", "--home", home], env, tmp_path)
        assert down.returncode == 0, down.stdout + down.stderr
        for name, pid in pids.items():
            assert f"{name}: down (stopped pid {pid})" in down.stdout, down.stdout
            assert not procs.alive(pid) and not procs.group_members(pid), name
        assert not any(procs.port_open(p) for p in PORTS.values())

        after = _run([memq, "status", "--home", home], env, tmp_path)
        assert after.returncode == 1, after.stdout + after.stderr
        assert [line.split()[:2] for line in after.stdout.splitlines()] == [
            ["redis", "down"], ["neo4j", "down"], ["chroma", "down"]]
    finally:
        _run([memq, "down", "--home", home], env, tmp_path)


def test_a_port_taken_by_another_process_is_one_line(venv: Path, stack_env: dict[str, str],
                                                     tmp_path: Path) -> None:
    """Another home's Redis on the port: refused by name, and left running."""
    other, home = tmp_path / "other", tmp_path / "home"
    env, memq = stack_env, venv / "memq"
    try:
        assert _run([memq, "up", "--home", other, "redis"], env, tmp_path).returncode == 0
        res = _run([memq, "up", "--home", home, "redis"], env, tmp_path)
        assert res.returncode == 1
        assert res.stderr.strip().splitlines() == [
            f"redis: FAILED: port {PORTS['redis']} on 127.0.0.1 is taken by another process "
            f"(no redis of {home} runs); stop it or choose another port (MEMQ_REDIS_PORT)"]
        assert _run([memq, "down", "--home", home, "redis"], env, tmp_path).stdout == (
            "redis: down (not running)\n")
        assert procs.redis_pong(PORTS["redis"])  # the other's, untouched
    finally:
        _run([memq, "down", "--home", other], env, tmp_path)
