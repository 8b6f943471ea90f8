"""memq as a user gets it: the wheel, built from this checkout, installed into clean venvs
outside the repository. A light ``memq[client]`` agent enqueues (importing no store driver,
nor Celery or kombu), a worker from the ``memq[worker]`` install does the work, and that
install's ``memq enqueue``, ``memq wait`` and ``memq search`` read it back, on the real
services. The broker is a Redis db of its own, so no worker of the checkout can do the work
in the wheel's place."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from integration.conftest import REDIS_BASE, REPO, memq_env, start_api

pytestmark = pytest.mark.integration

LIGHT_AGENT = r"""
import json, sys
import memq
from memq import Client
ids = Client().add(sys.argv[1], [{"role": "user", "content": "I live in Reykjavik."}],
                   session_id="s-wheel")
heavy = sorted(m for m in ("chromadb", "neo4j", "onnxruntime", "numpy", "celery", "kombu")
               if m in sys.modules)
print(json.dumps({"ids": ids, "heavy": heavy, "file": memq.__file__}))
"""


HTTP_AGENT = r"""
import json, sys
from memq import HttpClient
memory = HttpClient()  # MEMQ_API_URL, MEMQ_API_KEY
user = sys.argv[1]
ids = memory.add(user, [{"role": "user", "content": "I live in Tromso."}], session_id="s-http")
states = [s.state for s in memory.wait(ids, timeout=180)]
hits = memory.search(user, "where do I live?")
block = memory.context(user, "where do I live?")
heavy = sorted(m for m in ("chromadb", "neo4j", "onnxruntime", "numpy", "celery", "kombu",
                           "redis") if m in sys.modules)
print(json.dumps({"states": states, "hits": [h.content for h in hits], "context": block,
                  "heavy": heavy}))
"""


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 600
         ) -> subprocess.CompletedProcess[str]:
    res = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=timeout, check=False)
    assert res.returncode == 0, f"{argv}:\n{res.stdout[-2000:]}\n{res.stderr[-3000:]}"
    return res


def _venv(root: Path, name: str, wheel: Path, extra: str) -> Path:
    venv = root / name
    _run([sys.executable, "-m", "venv", str(venv)], root, memq_env())
    _run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check",
          f"{wheel}[{extra}]"], root, memq_env(), timeout=900)
    return venv / "bin"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built from the sdist (build's default), as a user's pip would, which also leaves no
    build/ in the checkout."""
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", str(out), str(REPO)], out,
         memq_env(), timeout=600)
    (found,) = out.glob("memq-*.whl")
    return found


def _tree() -> set[str]:
    """Every file of the three source folders, and the root's own two, as the wheel should hold
    them."""
    out = {"memq/__init__.py", "memq/py.typed"}
    for folder in ("schemas", "pipeline", "workers"):
        for path in (REPO / folder).rglob("*"):
            rel = path.relative_to(REPO)
            if path.is_dir() or "__pycache__" in rel.parts or path.suffix == ".pyc":
                continue
            if rel.parts[:2] == ("workers", "clients"):  # other languages' (npm)
                continue
            out.add("memq/" + rel.as_posix())
    return out


def test_the_wheel_holds_every_file_of_the_tree(wheel: Path) -> None:
    """By rule, not by a list: a new module, folder or data file is in the wheel, and nothing
    else is (the packaging map of pyproject.toml)."""
    import zipfile

    with zipfile.ZipFile(wheel) as z:
        shipped = {n for n in z.namelist() if not n.startswith("memq-")}
    tree = _tree()
    assert shipped == tree, {"missing": sorted(tree - shipped)[:20],
                             "extra": sorted(shipped - tree)[:20]}
    assert {"memq/__init__.py", "memq/workers/http_client.py",
            "memq/pipeline/adapters/neo4j/cypher/fence.cypher",
            "memq/pipeline/adapters/minilm/tokenizer.json"} <= shipped


def test_wheel_outside_the_repo(wheel: Path, tmp_path: Path) -> None:
    light, full = _venv(tmp_path, "light", wheel, "client"), _venv(tmp_path, "full", wheel,
                                                                   "worker")
    env = memq_env(MEMQ_REDIS_URL=f"{REDIS_BASE}/11")  # a broker db of the wheel's own
    user = f"t-wheel-{uuid.uuid4().hex[:8]}"

    version = _run([str(full / "python"), "-c", "import memq; print(memq.__version__)"],
                   tmp_path, env).stdout.strip()
    assert version == _run([str(full / "memq"), "--version"], tmp_path, env).stdout.split()[1]

    refused = subprocess.run([str(light / "memq"), "worker"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=60, check=False)
    assert refused.returncode == 2, refused.stderr  # not "ready" and dead-lettering everything
    assert 'pip install "memq[worker]"' in refused.stderr and "Traceback" not in refused.stderr

    log = (tmp_path / "worker.log").open("wb")
    worker = subprocess.Popen([str(full / "memq"), "worker", "--concurrency", "1", "-n",
                               "wheel@%h"], cwd=tmp_path, env=env, stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while b" ready." not in (tmp_path / "worker.log").read_bytes():
            assert worker.poll() is None and time.monotonic() < deadline, \
                (tmp_path / "worker.log").read_text()[-3000:]
            time.sleep(0.3)

        agent = json.loads(_run([str(light / "python"), "-c", LIGHT_AGENT, user], tmp_path,
                                env).stdout.splitlines()[-1])
        assert agent["heavy"] == [], "the light client imported store drivers or Celery"
        assert str(tmp_path / "light") in agent["file"]  # the installed copy, not the checkout

        turns = tmp_path / "turns.jsonl"
        turns.write_text(json.dumps({
            "user_id": user, "session_id": "s-cli", "turn_id": "t1", "role": "user",
            "content": "We use Kubernetes for deployments.",
            "timestamp": "2026-11-02T10:00:00Z"}) + "\n")
        published = json.loads(_run([str(full / "memq"), "enqueue", str(turns), "--json"],
                                    tmp_path, env).stdout)["published"]
        ids = agent["ids"] + [p["delivery_id"] for p in published]
        waited = json.loads(_run([str(full / "memq"), "wait", "--delivery", *ids, "--timeout",
                                  "180", "--json"], tmp_path, env).stdout)
        assert waited["done"] and {d["state"] for d in waited["deliveries"]} == {"done"}

        hits = json.loads(_run([str(full / "memq"), "search", "--user", user, "--json",
                                "where do I live?"], tmp_path, env).stdout)
        assert any("Reykjavik" in h["content"] for h in hits), hits
        memories = json.loads(_run([str(full / "memq"), "memories", "--user", user, "--json"],
                                   tmp_path, env).stdout)
        assert {m["content"] for m in memories} >= {"The user lives in Reykjavik."}
        assert any("Kubernetes" in m["content"] for m in memories), memories

        # the light install with a URL and a key only: every read goes through memq serve
        # (the checkout's, on the wheel's broker db), Redis is out of the agent's reach
        key = json.loads(_run([str(full / "memq"), "keys", "create", "--tenant", "wheel",
                               "--scope", "read,write", "--json"], tmp_path, env).stdout)["key"]
        api = start_api(tmp_path / "serve.log", MEMQ_REDIS_URL=f"{REDIS_BASE}/11")
        try:
            agent_env = {**env, "MEMQ_API_URL": api.base, "MEMQ_API_KEY": key,
                         "MEMQ_REDIS_URL": "redis://127.0.0.1:1/0"}
            http = json.loads(_run([str(light / "python"), "-c", HTTP_AGENT, user], tmp_path,
                                   agent_env).stdout.splitlines()[-1])
            assert http["states"] == ["done"] and http["heavy"] == [], http
            assert any("Tromso" in h for h in http["hits"]) and "Tromso" in http["context"]
            cli = json.loads(_run([str(light / "memq"), "search", "--user", user, "--json",
                                   "Tromso"], tmp_path, agent_env).stdout)
            assert any("Tromso" in h["content"] for h in cli), cli
            listed = json.loads(_run([str(light / "memq"), "memories", "--user", user,
                                      "--json"], tmp_path, agent_env).stdout)
            assert any("Tromso" in m["content"] for m in listed), listed
            block = _run([str(light / "memq"), "context", "--user", user, "Tromso"], tmp_path,
                         agent_env).stdout
            assert "Tromso" in block
        finally:
            api.stop()
            _run([str(full / "memq"), "forget", "--user", f"wheel:{user}", "--purge"],
                 tmp_path, env)
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=30)
        _run([str(full / "memq"), "forget", "--user", user, "--purge"], tmp_path, env)
