"""Integration fixtures: the real Redis, Neo4j and Chroma server (scripts/services), and real
worker processes started here. Nothing is mocked.

Locally a missing service skips these tests; under scripts/test (MEMQ_REQUIRE_SERVICES=1,
so in CI) a missing service is a failure.
"""

from __future__ import annotations

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

import pytest

REPO = Path(__file__).resolve().parents[2]
MEMQ = [sys.executable, "-m", "workers.cli"]
REDIS_URL = "redis://127.0.0.1:6379/15"  # its own database: the demo's state is left alone
DEMO = REPO / "workers" / "demo" / "conversation.jsonl"


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="session")
def services() -> None:
    missing = [name for name, port in (("redis", 6379), ("neo4j", 7687), ("chroma", 8000))
               if not _port_open(port)]
    if missing:
        message = f"services not running: {missing} (scripts/services up)"
        if os.environ.get("MEMQ_REQUIRE_SERVICES"):
            pytest.fail(message)
        pytest.skip(message)


def memq_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMQ_")}
    env.update({"MEMQ_REDIS_URL": REDIS_URL, "C_FORCE_ROOT": "1", "PYTHONUNBUFFERED": "1"})
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
                 extra: Sequence[str] = ()) -> Worker:
    log = tmp / f"{name}.log"
    proc = subprocess.Popen(
        [*MEMQ, "worker", "--concurrency", str(concurrency), "-n", f"{name}@%h", *extra],
        cwd=REPO, env=env or memq_env(), stdout=log.open("wb"), stderr=subprocess.STDOUT,
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


def episodes(user_id: str) -> list[str]:
    """The user's raw turns as stored in Chroma (read directly: search is approximate)."""
    import chromadb

    got = chromadb.HttpClient(host="127.0.0.1", port=8000).get_collection(
        "memq_episodes").get(where={"user_id": user_id}, include=["documents"])
    return sorted(got["documents"])


@pytest.fixture
def user_id() -> str:
    return f"t-{uuid.uuid4().hex[:12]}"
