"""The TypeScript client (workers/clients/typescript): its committed OpenAPI document and types
are what the API's code makes now, it compiles, and Node drives a real ``memq serve`` (and
worker) with it: add, wait, search, context, memories, correct, forget."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from integration.conftest import REPO, Worker, memq_env, new_key, start_api

pytestmark = pytest.mark.integration

PKG = REPO / "workers" / "clients" / "typescript"

AGENT = """
import { MemqClient, MemqError } from "%s";
const [base, key, user] = process.argv.slice(2);
const memq = new MemqClient(base, key);
const ids = await memq.add(user, [{ role: "user", content: "I live in Lisbon.", name: null,
                                   timestamp: "2026-11-20T10:00:00Z" }]);
const states = await memq.wait(ids);
const hits = await memq.search(user, "where does the user live?", 5);
const context = await memq.context(user, "where does the user live?", 200);
const memories = await memq.memories(user);
const corrected = await memq.correct(user, memories[0].id, "The user lives in Porto.");
const after = await memq.memories(user);
let refused = null;
try { await new MemqClient(base, "mq_nope").memories(user); }
catch (e) { refused = e instanceof MemqError ? e.status : String(e); }
const forgot = await memq.forget(user);
console.log(JSON.stringify({ states: states.map((s) => s.state), hits: hits.map((h) => h.content),
  context, memories: memories.map((m) => m.content), corrected: corrected.content,
  after: after.map((m) => m.content), refused, forgot: forgot.total }));
"""


@pytest.fixture(scope="module")
def built() -> Path:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("the TypeScript client's tests need Node and npm (Debian: nodejs, npm)")
    res = subprocess.run([str(REPO / "scripts" / "ts-client"), "--check"], cwd=REPO,
                         env=memq_env(), capture_output=True, text=True, timeout=600,
                         check=False)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
    return PKG / "dist" / "index.js"


def test_node_drives_memq_serve_with_the_typed_client(built: Path, worker: Worker,
                                                      tmp_path: Path, user_id: str) -> None:
    api = start_api(tmp_path / "api.log")
    try:
        key = new_key("t-ts", "read,write,forget")
        script = tmp_path / "agent.mjs"
        script.write_text(AGENT % built.as_uri())
        res = subprocess.run(["node", str(script), api.base, key, user_id], cwd=tmp_path,
                             capture_output=True, text=True, timeout=300, check=False)
        assert res.returncode == 0, res.stderr[-3000:]
        out = json.loads(res.stdout.strip().splitlines()[-1])
    finally:
        api.stop()
    assert out["states"] == ["done"]
    assert any("Lisbon" in h for h in out["hits"]), out["hits"]
    assert "Lisbon" in out["context"]
    assert out["memories"] == ["The user lives in Lisbon."]
    assert out["corrected"] == "The user lives in Porto."
    assert out["after"] == ["The user lives in Porto."]
    assert out["refused"] == 401
    assert out["forgot"] > 0
