"""Keys, tenants and scopes on the real ``memq serve`` (its own process, the tests' Redis and
stores, a real worker): every route against no key, a malformed, a revoked, a wrong-scope and
the right key; cross-tenant probes; a fuzz of the Authorization header; limits; readiness with
a store down; forgetting a memory with its source turns; and an agent that has only the URL
and a key (memq.HttpClient, with Redis out of its reach)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.parse
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from integration.conftest import Api, Worker, free_port, memq, memq_env, new_key, start_api

pytestmark = pytest.mark.integration

A, B = "acme", "beta"  # two tenants
USER = "alice"


@pytest.fixture(scope="module")
def server(worker: Worker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    api = start_api(tmp_path_factory.mktemp("serve-auth") / "serve.log")
    yield api
    api.stop()


@pytest.fixture(scope="module")
def keys(server: Api) -> dict[str, str]:
    made = {scope: new_key(A, scope) for scope in ("read", "write", "forget", "admin")}
    made["b_admin"] = new_key(B, "admin")
    made["revoked"] = new_key(A, "admin")
    memq("keys", "revoke", made["revoked"].split("_")[1])  # by its id
    return made


def _call(api: Api, method: str, path: str, body: Any = None, key: str | None = None,
          headers: dict[str, str] | None = None, content: bytes | None = None,
          **params: Any) -> httpx.Response:
    sent = dict(headers or {})
    if "?" in path:  # httpx's params replace a query in the URL
        path, query = path.split("?", 1)
        params = {**dict(urllib.parse.parse_qsl(query)), **params}
    if key is not None:
        sent["Authorization"] = f"Bearer {key}"
    if content is not None:
        return httpx.request(method, api.base + path, content=content, headers=sent,
                             params=params, timeout=120)
    return httpx.request(method, api.base + path, json=body, headers=sent, params=params,
                         timeout=120)


def _user(tag: str) -> str:
    return f"{tag}-{uuid.uuid4().hex[:8]}"


# (method, path, body, scope): every route that touches a user or the operator's data
def _routes(user: str) -> list[tuple[str, str, Any, str]]:
    return [
        ("POST", "/v1/turns", {"user_id": user, "messages": [
            {"role": "user", "content": "I prefer green tea."}]}, "write"),
        ("POST", "/v1/turns", [{"user_id": user, "session_id": "s", "turn_id": "t1",
                                "role": "user", "content": "I prefer green tea.",
                                "timestamp": "2026-11-01T09:00:00Z"}], "write"),
        ("GET", "/v1/deliveries/d-none", None, "read"),
        ("POST", "/v1/deliveries", {"delivery_ids": ["d-none"]}, "read"),
        ("GET", "/v1/deliveries/d-none", None, "write"),  # a writer waits on its own
        ("POST", "/v1/deliveries", {"delivery_ids": ["d-none"]}, "write"),
        ("GET", f"/v1/users/{user}/memories", None, "read"),
        ("GET", f"/v1/users/{user}/facts", None, "read"),
        ("GET", f"/v1/users/{user}/audit", None, "read"),
        ("GET", "/v1/memories/m_none/owner", None, "read"),
        ("POST", f"/v1/users/{user}/turn-metadata", {"refs": ["s/t1"]}, "read"),
        ("GET", "/v1/users", None, "read"),
        ("GET", f"/v1/users/{user}/turns/latest?prefix=s/", None, "read"),
        ("DELETE", f"/v1/users/{user}/turns?prefix=s/", None, "forget"),
        ("POST", "/v1/search", {"user_id": user, "query": "tea"}, "read"),
        ("POST", "/v1/context", {"user_id": user, "query": "tea"}, "read"),
        ("DELETE", f"/v1/users/{user}/memories/m_none", None, "forget"),
        ("DELETE", f"/v1/users/{user}", None, "forget"),
        ("GET", "/v1/access", None, "admin"),
        ("GET", "/metrics", None, "admin"),
    ]


def _problem(resp: httpx.Response, status: int, what: str = "") -> dict[str, Any]:
    """The response's RFC 9457 problem document, checked to be one (the API's only error
    shape: README "Errors")."""
    assert resp.status_code == status, f"{what}: {resp.status_code} {resp.text}"
    assert resp.headers["content-type"] == "application/problem+json", what
    body: dict[str, Any] = resp.json()
    assert body["type"] == "about:blank" and body["status"] == status, what
    assert isinstance(body["title"], str) and body["title"], what
    assert isinstance(body["detail"], str) and "\n" not in body["detail"], what
    assert set(body) <= {"type", "title", "status", "detail", "errors"}, what
    return body


OTHER_SCOPE = {"read": "write", "write": "read", "forget": "read", "admin": "forget"}
PUBLIC = {"/healthz", "/readyz", "/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json"}


def test_every_route_is_in_the_matrix(server: Api) -> None:
    paths = set(httpx.get(server.base + "/openapi.json").json()["paths"])
    covered = {p.split("?")[0].replace(USER, "{user_id}").replace("m_none", "{memory_id}")
               .replace("d-none", "{delivery_id}") for _, p, _, _ in _routes(USER)}
    assert paths - PUBLIC <= covered, f"routes without an auth test: {paths - PUBLIC - covered}"


def test_each_route_against_each_kind_of_key(server: Api, keys: dict[str, str]) -> None:
    for method, path, body, scope in _routes(_user("matrix")):
        what = f"{method} {path} ({scope})"
        none = _call(server, method, path, body)
        assert "no API key" in _problem(none, 401, what)["detail"], what
        assert none.headers.get("www-authenticate") == "Bearer", what
        assert _call(server, method, path, body, key="mq_nope").status_code == 401, what
        assert _call(server, method, path, body, key=keys["revoked"]).status_code == 401, what
        lacking = "forget" if path.startswith("/v1/deliveries") else OTHER_SCOPE[scope]
        wrong = _problem(_call(server, method, path, body, key=keys[lacking]), 403, what)
        assert "may not" in wrong["detail"] and scope in wrong["detail"], what
        right = _call(server, method, path, body, key=keys[scope])
        assert right.status_code in (200, 202), f"{what}: {right.status_code} {right.text}"
        admin = _call(server, method, path, body, key=keys["admin"])  # admin may everything
        assert admin.status_code in (200, 202), f"{what}: {admin.status_code}"


def test_correcting_a_memory_over_http(server: Api, keys: dict[str, str]) -> None:
    """PATCH /v1/users/{id}/memories/{mid} is a write: refused without a key or with a read
    key, 404 for a memory the user does not have (another tenant's included), and an audited
    correction through the HTTP client."""
    from memq import HttpClient

    user = _user("correct")
    path = f"/v1/users/{user}/memories/m_none"
    body = {"text": "The user lives in Porto."}
    assert _call(server, "PATCH", path, body).status_code == 401
    assert _call(server, "PATCH", path, body, key=keys["read"]).status_code == 403
    assert _call(server, "PATCH", path, body, key=keys["write"]).status_code == 404
    _write_and_wait(server, keys["write"], user, ["I live in Lisbon."])
    mine = _call(server, "GET", f"/v1/users/{user}/memories", key=keys["read"]).json()
    (lisbon,) = [m for m in mine if "Lisbon" in m["content"]]
    other = _call(server, "PATCH", f"/v1/users/{user}/memories/{lisbon['id']}", body,
                  key=keys["b_admin"])
    assert other.status_code == 404, other.text  # tenant B's "user" is B's own: no such memory
    memory = HttpClient(server.base, api_key=keys["write"]).correct(
        user, lisbon["id"], "The user lives in Porto.")
    assert memory.content == "The user lives in Porto." and memory.user_id == user
    now = _call(server, "GET", f"/v1/users/{user}/memories", key=keys["read"]).json()
    assert [m["content"] for m in now] == ["The user lives in Porto."]
    trail = _call(server, "GET", f"/v1/users/{user}/audit", key=keys["read"],
                  memory_id=lisbon["id"]).json()
    assert trail[-1]["operation"] == "supersede"
    assert trail[-1]["reason"] == "corrected by the user"


def test_the_authorization_header_fuzzed(server: Api, keys: dict[str, str]) -> None:
    good = keys["read"]
    path = f"/v1/users/{_user('fuzz')}/memories"
    refused = ["", "Bearer", "Basic " + good, "Token " + good, good,
               f"Bearer {good}x", f"Bearer {good[:-1]}", f"Bearer {good.upper()}",
               f"Bearer {good} {good}", "Bearer " + "A" * 8000, f"Bearer \t{good}x",
               "Bearer mq_0123456789abcdef_" + "A" * 43, f"Bearer {good[:3]}..{good[3:]}",
               "Bearer " + good.replace("_", "%5F")]
    for header in refused:
        res = httpx.get(server.base + path, headers={"Authorization": header}, timeout=30)
        assert res.status_code == 401, (header[:60], res.status_code)
    for header in (f"Bearer {good}", f"bearer {good}", f"BEARER  {good}"):
        assert httpx.get(server.base + path, headers={"Authorization": header},
                         timeout=30).status_code == 200, header
    raw = httpx.get(server.base + path, timeout=30,
                    headers=[(b"Authorization", "Bearer clé-ünïcode".encode("latin-1"))])
    assert raw.status_code == 401


def _write_and_wait(server: Api, key: str, user: str, texts: list[str]) -> list[str]:
    res = _call(server, "POST", "/v1/turns", {"user_id": user, "messages": [
        {"role": "user", "content": t, "timestamp": f"2026-11-2{i}T10:00:00Z"}
        for i, t in enumerate(texts)]}, key=key)
    assert res.status_code == 202, res.text
    done = _call(server, "POST", "/v1/deliveries", {"delivery_ids": res.json()["delivery_ids"],
                                                   "wait_s": 30}, key=key)
    for _ in range(8):  # the first deliveries of a suite pay the worker's cold start
        if all(d["finished"] for d in done.json()):
            break
        done = _call(server, "POST", "/v1/deliveries", {
            "delivery_ids": res.json()["delivery_ids"], "wait_s": 30}, key=key)
    assert {d["state"] for d in done.json()} == {"done"}, done.json()
    assert {d["user_id"] for d in done.json()} == {user}  # as the tenant names it
    return list(res.json()["delivery_ids"])


def test_a_tenant_cannot_reach_another_tenants_user(server: Api, keys: dict[str, str]) -> None:
    user = _user("cross")
    deliveries = _write_and_wait(server, keys["admin"], user, ["I live in Lisbon.",
                                                 "We use Terraform for our infrastructure."])
    mine = _call(server, "GET", f"/v1/users/{user}/memories", key=keys["read"]).json()
    assert {m["user_id"] for m in mine} == {user} and len(mine) == 2, mine
    b = keys["b_admin"]
    for probe in (user, f"{A}:{user}", f"{A.upper()}:{user}", f":{user}", f"{B}:{A}:{user}"):
        for path in ("memories", "facts", "audit"):
            got = _call(server, "GET", f"/v1/users/{probe}/{path}", key=b)
            assert got.status_code == 200 and got.json() == [], (probe, path, got.text)
        hits = _call(server, "POST", "/v1/search", {"user_id": probe, "query": "Lisbon"}, key=b)
        assert hits.status_code == 200 and hits.json() == [], (probe, hits.text)
        block = _call(server, "POST", "/v1/context", {"user_id": probe, "query": "Lisbon"},
                      key=b).json()["context"]
        assert "Lisbon" not in block, probe
    for trick in (f"..%2f{A}:{user}", f"%2e%2e/{A}:{user}", f"{user}%00", "%C3%A5lice",
                  f"{A}%3A{user}/..", "x" * 200):
        got = _call(server, "GET", f"/v1/users/{trick}/memories", key=b)
        assert got.status_code in (400, 404, 405) or got.json() == [], (trick, got.status_code)
    # another tenant's deliveries read as unknown, and forgetting "the same" user forgets B's
    states = _call(server, "POST", "/v1/deliveries", {"delivery_ids": deliveries}, key=b).json()
    assert [(s["state"], s["user_id"]) for s in states] == [("unknown", None)] * len(deliveries)
    assert _call(server, "DELETE", f"/v1/users/{user}/memories/{mine[0]['id']}",
                 key=b).status_code == 200
    assert _call(server, "DELETE", f"/v1/users/{user}", key=b).status_code == 200
    after = _call(server, "GET", f"/v1/users/{user}/memories", key=keys["read"]).json()
    assert [m["id"] for m in after] == [m["id"] for m in mine]
    # the access record: A's tenant sees who read its user (ids and routes, never content)
    record = _call(server, "GET", "/v1/access", key=keys["admin"], limit=1000).json()
    assert any(e["route"] == "/v1/users/{user_id}/memories" and e["user"] == user
               and e["key"] == keys["read"].split("_")[1] and e["status"] == "200"
               for e in record), record[:5]
    assert "Lisbon" not in json.dumps(record)
    theirs = _call(server, "GET", "/v1/access", key=b, limit=10_000).json()
    assert all(e["key"] == b.split("_")[1] for e in theirs)
    cli = json.loads(memq("keys", "access", "--tenant", A, "--limit", "1000", "--json").stdout)
    ours = {k.split("_")[1] for name, k in keys.items() if name != "b_admin"}
    assert cli and {e["key"] for e in cli} <= ours


def test_forgetting_a_memory_with_its_source_turns(server: Api, keys: dict[str, str]) -> None:
    user = _user("gouda")
    said = "I love all cheeses, but gouda is my favourite."
    _write_and_wait(server, keys["write"], user, [said, "I live in Porto."])
    memories = _call(server, "GET", f"/v1/users/{user}/memories", key=keys["read"]).json()
    gouda = [m for m in memories if "gouda" in m["content"].lower()]
    porto = [m for m in memories if "Porto" in m["content"]]
    assert gouda and porto, memories

    def quoted(query: str) -> str:
        block = _call(server, "POST", "/v1/context", {"user_id": user, "query": query},
                      key=keys["read"]).json()["context"]
        return str(block)

    # the default keeps the turn: forgetting Porto's memory leaves the turn that said it
    plain = _call(server, "DELETE", f"/v1/users/{user}/memories/{porto[0]['id']}",
                  key=keys["forget"]).json()
    assert plain["episodes"] == 0 and "Porto" in quoted("where do I live?")
    report = _call(server, "DELETE", f"/v1/users/{user}/memories/{gouda[0]['id']}",
                   key=keys["forget"], with_sources="true").json()
    assert report["episodes"] == 1 and report["user_id"] == user, report
    assert "gouda" not in quoted("which cheese is my favourite?").lower()
    hits = _call(server, "POST", "/v1/search", {"user_id": user, "query": "gouda cheese"},
                 key=keys["read"]).json()
    assert not [h for h in hits if "gouda" in h["content"].lower()], hits


def test_bad_input_gets_a_one_line_400(server: Api, keys: dict[str, str]) -> None:
    naive = _call(server, "POST", "/v1/turns", {"user_id": _user("naive"), "messages": [
        {"role": "user", "content": "hi", "timestamp": "2026-11-01T09:00:00"}]},
        key=keys["write"])
    assert naive.status_code == 400 and "time zone" in naive.json()["detail"], naive.text
    long_id = _call(server, "GET", f"/v1/users/{'u' * 124}/memories", key=keys["read"])
    assert long_id.status_code == 400 and "1-123 characters" in long_id.json()["detail"]
    res = memq("serve", "--port", "99999", check=False)
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "1-65535" in res.stderr


def test_every_kind_of_error_has_one_shape(server: Api, keys: dict[str, str]) -> None:
    """Refusals made by a route, by request validation, by routing and before routing (the
    body's size and depth) are all problem documents; a batch's and a field's parts are
    listed in ``errors``."""
    user = _user("shape")
    batch = _problem(_call(server, "POST", "/v1/turns", [
        {"user_id": user, "session_id": "s", "turn_id": "t1", "role": "user",
         "content": "fine", "timestamp": "2026-11-01T09:00:00Z"},
        {"user_id": user, "session_id": "s", "turn_id": "t2", "role": "user", "content": " ",
         "timestamp": "2026-11-01T09:00:00Z"}], key=keys["write"]), 400)
    assert [e["item"] for e in batch["errors"]] == [1] and batch["errors"][0]["reason"]
    assert batch["detail"].startswith("1 refused; item 1: ")
    field = _problem(_call(server, "POST", "/v1/search", {"user_id": user, "query": "tea",
                                                          "k": "many"}, key=keys["read"]), 422)
    assert field["errors"][0]["loc"] == "body.k" and field["detail"].startswith("body.k: ")
    query = _problem(_call(server, "GET", "/v1/users?limit=nope", key=keys["read"]), 422)
    assert query["errors"][0]["loc"] == "query.limit"
    assert "not JSON" in _problem(_call(server, "POST", "/v1/turns", key=keys["write"],
                                        headers={"content-type": "application/json"},
                                        content=b"{nope"), 400)["detail"]
    _problem(_call(server, "GET", "/v1/nowhere", key=keys["read"]), 404)
    _problem(_call(server, "PUT", "/v1/search", {}, key=keys["read"]), 405)
    deep = _call(server, "POST", "/v1/turns", headers={"content-type": "application/json"},
                 key=keys["write"], content=b"[" * 5_000 + b"]" * 5_000)
    assert "nested deeper" in _problem(deep, 400)["detail"]
    naive = _call(server, "POST", "/v1/turns", {"user_id": user, "messages": [
        {"role": "user", "content": "hi", "timestamp": "2026-11-01T09:00:00"}]},
        key=keys["write"])
    assert "time zone" in _problem(naive, 400)["detail"]


def test_limits_per_tenant(worker: Worker, tmp_path: Any) -> None:
    api = start_api(tmp_path / "serve.log", MEMQ_RATE_REQUESTS_PER_S="0.2",
                    MEMQ_RATE_REQUESTS_BURST="3", MEMQ_RATE_INGEST_CHARS_PER_S="1",
                    MEMQ_RATE_INGEST_BURST_CHARS="100")
    try:
        tenant = f"rl-{uuid.uuid4().hex[:8]}"
        key, other = new_key(tenant, "admin"), new_key(f"{tenant}-2", "admin")
        ingest = new_key(f"{tenant}-3", "write")
        path = f"/v1/users/{_user('rate')}/memories"
        assert [_call(api, "GET", path, key=key).status_code for _ in range(3)] == [200] * 3
        over = _call(api, "GET", path, key=key)
        assert over.status_code == 429 and int(over.headers["retry-after"]) >= 1, over.text
        assert _call(api, "GET", path, key=other).status_code == 200  # per tenant
        big = _call(api, "POST", "/v1/turns", {"user_id": "u", "messages": [
            {"role": "user", "content": "x" * 150}]}, key=ingest)
        assert big.status_code == 413, big.text
        fits = _call(api, "POST", "/v1/turns", {"user_id": "u", "messages": [
            {"role": "user", "content": "y" * 70}]}, key=ingest)
        assert fits.status_code == 202
        again = _call(api, "POST", "/v1/turns", {"user_id": "u", "messages": [
            {"role": "user", "content": "z" * 70}]}, key=ingest)
        assert again.status_code == 429 and int(again.headers["retry-after"]) >= 30
    finally:
        api.stop()


def test_a_store_shard_down_leaves_reads_ready_degraded(worker: Worker, tmp_path: Any) -> None:
    """One Chroma shard of two down: its users' reads fail, the others' go on, so the API
    stays in rotation for reads (``degraded``), the check names the shard."""
    api = start_api(tmp_path / "serve.log",
                    MEMQ_CHROMA_SHARDS=f"127.0.0.1:{free_port()}")
    try:
        key = new_key(A, "admin")
        reads = httpx.get(api.base + "/readyz", params={"path": "read"}, timeout=30)
        assert reads.status_code == 200, reads.text
        assert reads.json() | {"checked_at": ""} == {"ready": True, "write": True, "read": True,
                                                     "degraded": True, "checked_at": ""}
        detailed = _call(api, "GET", "/readyz", key=key).json()
        assert [c["name"] for c in detailed["checks"] if not c["ok"]] == ["chroma[1]"]
    finally:
        api.stop()


def test_a_store_down_leaves_the_write_path_ready(worker: Worker, tmp_path: Any) -> None:
    api = start_api(tmp_path / "serve.log", MEMQ_CHROMA_PORT=str(free_port()))
    try:
        key = new_key(A, "admin")
        ready = httpx.get(api.base + "/readyz", timeout=30)
        assert ready.status_code == 200, ready.text
        assert ready.json() | {"checked_at": ""} == {  # no details
            "ready": True, "write": True, "read": False, "degraded": True, "checked_at": ""}
        reads = httpx.get(api.base + "/readyz", params={"path": "read"}, timeout=30)
        assert reads.status_code == 503
        detailed = _call(api, "GET", "/readyz", key=key).json()
        assert [c["name"] for c in detailed["checks"] if not c["ok"]] == ["chroma"]
        res = _call(api, "POST", "/v1/turns", {"user_id": _user("down"), "messages": [
            {"role": "user", "content": "I prefer tea."}]}, key=key)
        assert res.status_code == 202, res.text
        assert _call(api, "POST", "/v1/search", {"user_id": "u", "query": "tea"},
                     key=key).status_code == 503
    finally:
        api.stop()


def test_auth_off_is_explicit_and_loud(worker: Worker, tmp_path: Any) -> None:
    api = start_api(tmp_path / "serve.log", MEMQ_AUTH="off")
    try:
        assert httpx.get(f"{api.base}/v1/users/{_user('off')}/memories").status_code == 200
    finally:
        api.stop()
    assert "MEMQ_AUTH=off" in api.log.read_text()


HTTP_AGENT = r"""
import asyncio, json, sys
from memq import AsyncHttpClient, HttpClient, ApiError

user = sys.argv[1]
memory = HttpClient()  # MEMQ_API_URL and MEMQ_API_KEY; no Redis reachable from here
ids = memory.add(user, [
    {"role": "user", "content": "I live in Lisbon.", "timestamp": "2026-11-20T10:00:00Z"},
    {"role": "user", "content": "We use Terraform for all our infrastructure.",
     "timestamp": "2026-11-20T10:01:00Z"}], session_id="s1")
statuses = memory.wait(ids, timeout=300)
hits = memory.search(user, "where does the user live?", k=5)
mems = memory.memories(user)
out = {"states": [s.state for s in statuses], "memories": [m.content for m in mems],
       "hit_types": sorted({h.type for h in hits}), "facts": len(memory.facts(user)),
       "audit": len(memory.audit(user)),
       "context": memory.context(user, "where does the user live?"),
       "access": len(memory.access(10))}

async def more():
    async with AsyncHttpClient() as m:
        found = await m.search(user, "Terraform", k=3)
        return [h.type for h in found]

out["async"] = asyncio.run(more())
out["forgot"] = memory.forget(user).total
out["after"] = len(memory.memories(user, include_inactive=True))
try:
    HttpClient(api_key="mq_0000000000000000_" + "A" * 43).memories(user)
except ApiError as exc:
    out["bad_key"] = exc.status
print(json.dumps(out))
"""


def test_an_agent_with_only_a_url_and_a_key(server: Api, keys: dict[str, str]) -> None:
    dead_redis = f"redis://127.0.0.1:{free_port()}/0"
    env = memq_env(MEMQ_API_URL=server.base, MEMQ_API_KEY=keys["admin"],
                   MEMQ_REDIS_URL=dead_redis)
    user = _user("agent")
    res = subprocess.run([sys.executable, "-c", HTTP_AGENT, user], cwd="/", env=env,
                         capture_output=True, text=True, timeout=420, check=False)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["states"] == ["done"]
    assert any("Lisbon" in m for m in out["memories"]), out
    assert "memory" in out["hit_types"] and out["facts"] >= 1 and out["audit"] >= 2
    assert "Lisbon" in out["context"] and out["access"] >= 5
    assert out["async"] and out["forgot"] > 0 and out["after"] == 0
    assert out["bad_key"] == 401
    # the CLI reads through the same client when MEMQ_API_URL is set
    cli = memq("search", "--user", user, "Lisbon", "--json", env=env)
    assert json.loads(cli.stdout) == []  # forgotten
    refused = memq("memories", "--user", user, check=False,
                   env={**env, "MEMQ_API_KEY": keys["write"]})
    assert refused.returncode == 1 and "403" in refused.stderr


def test_the_openapi_document_types_every_route(server: Api) -> None:
    """A generated client gets a request and a response schema for every /v1 route, and
    every schema they refer to is in the document."""
    doc = httpx.get(server.base + "/openapi.json").json()
    refs: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            refs.update([node["$ref"]] if isinstance(node.get("$ref"), str) else [])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc)
    assert {r.rsplit("/", 1)[-1] for r in refs} <= set(doc["components"]["schemas"])
    for path, ops in doc["paths"].items():
        if not path.startswith("/v1/"):
            continue
        for method, op in ops.items():
            ok = next(c for c in ("200", "202") if c in op["responses"])
            schema = op["responses"][ok]["content"]["application/json"]["schema"]
            assert schema.get("$ref") or schema.get("items", {}).get("$ref") or \
                schema.get("type") == "array" or "additionalProperties" in schema, \
                (method, path, schema)
            if method in ("post", "patch"):
                assert op["requestBody"]["content"]["application/json"]["schema"], (method, path)
    turns = doc["paths"]["/v1/turns"]["post"]["requestBody"]["content"]["application/json"]
    assert {s.get("$ref") or s["items"]["$ref"] for s in turns["schema"]["anyOf"]} == {
        "#/components/schemas/AddRequest", "#/components/schemas/TurnLine"}


def test_metadata_search_filters_and_paging_over_http(server: Api, keys: dict[str, str]) -> None:
    """The HTTP client's add takes metadata (kept on the turns), search takes filters, and
    memories pages."""
    from memq import HttpClient

    user = _user("filters")
    memory = HttpClient(server.base, api_key=keys["admin"])
    ids = memory.add(user, [{"role": "user", "content": "I live in Lisbon."},
                            {"role": "user", "content": "I love green tea."}],
                     metadata={"channel": "web"})
    memory.wait(ids)
    everything = memory.search(user, "where do I live and what do I drink?", k=10)
    assert {h.type for h in everything} == {"memory", "episode"}
    only = memory.search(user, "where do I live and what do I drink?", k=10,
                         types=["memory"])
    assert only and {h.type for h in only} == {"memory"}
    high = max(h.score for h in everything)
    assert all(h.score >= high for h in memory.search(
        user, "where do I live and what do I drink?", threshold=high))
    current = memory.search(user, "where do I live and what do I drink?", k=10,
                            statuses=["current"])
    assert current and all(h.type == "memory" and h.status == "current" for h in current)
    pages = [memory.memories(user, limit=1, offset=i) for i in range(3)]
    assert [len(p) for p in pages] == [1, 1, 0]
    assert {pages[0][0].id, pages[1][0].id} == {m.id for m in memory.memories(user)}
    one = memory.memory(user, pages[0][0].id)
    assert one == pages[0][0] and memory.memory(user, "m_none") is None
    other = HttpClient(server.base, api_key=keys["b_admin"])  # tenant B's "user" is B's own
    assert other.memory(user, pages[0][0].id) is None
    assert _call(server, "GET", f"/v1/users/{user}/memories/{one.id}").status_code == 401
    assert _call(server, "GET", f"/v1/users/{user}/memories/{one.id}",
                 key=keys["write"]).status_code == 403


def test_a_read_key_changes_nothing(server: Api, keys: dict[str, str]) -> None:
    """record=true is a recall (importance up, the decay clock reset, an audit entry): a read
    key may not ask for it; a key that may write may, and only what a signal found is
    recorded."""
    user = _user("rec")
    _write_and_wait(server, keys["write"], user, ["I live in Porto.", "I like green tea."])
    before = _call(server, "GET", f"/v1/users/{user}/audit", key=keys["read"]).json()
    ask = {"user_id": user, "query": "where do I live?", "k": 10, "record": True}
    refused = _call(server, "POST", "/v1/search", ask, key=keys["read"])
    assert refused.status_code == 403 and "may not write" in refused.text
    assert _call(server, "GET", f"/v1/users/{user}/audit", key=keys["read"]).json() == before
    hits = _call(server, "POST", "/v1/search", ask, key=keys["admin"]).json()  # read+write
    assert hits and all(h["score"] > 0 for h in hits)
    after = _call(server, "GET", f"/v1/users/{user}/audit", key=keys["read"]).json()
    recalled = {e["memory_id"] for e in after if e not in before}
    assert recalled and recalled <= {h["id"] for h in hits if h["type"] == "memory"}


def test_hostile_bodies_are_refused_before_any_work(server: Api, keys: dict[str, str]) -> None:
    """JSON nested 100,000 deep: 400, not 500; a body over the limit: 413 before the key is
    looked at (no key sent); the server still answers after both."""
    deep = _call(server, "POST", "/v1/turns", headers={"content-type": "application/json"},
                 key=keys["write"], content=b"[" * 100_000 + b"]" * 100_000)
    assert deep.status_code == 400 and "nested deeper" in deep.json()["detail"]
    big = httpx.post(server.base + "/v1/search", content=b" " * (17 * 1024 * 1024),
                     headers={"content-type": "application/json"}, timeout=120)
    assert big.status_code == 413 and "MEMQ_MAX_BODY_BYTES" in big.json()["detail"]
    assert _call(server, "GET", "/healthz").status_code == 200


# -- the console's sessions -------------------------------------------------------------------
COOKIE = "memq_console"


def _sign_in(api: Api, key: str) -> httpx.Response:
    return httpx.post(f"{api.base}/ui/login", data={"key": key, "next": "/ui/"},
                      follow_redirects=False, timeout=60)


def _form_token(api: Api, session: str, user: str) -> str:
    page = httpx.get(f"{api.base}/ui/users/{user}/forget", cookies={COOKIE: session},
                     timeout=60)
    assert page.status_code == 200, page.text[:300]
    return page.text.split('name="token" value="', 1)[1].split('"', 1)[0]


def test_a_console_session_is_not_the_key(server: Api, keys: dict[str, str]) -> None:
    user = _user("console")
    first = _sign_in(server, keys["admin"])
    assert first.status_code == 303
    session = first.cookies[COOKIE]
    assert keys["admin"] not in first.headers["set-cookie"] and len(session) >= 40
    assert "httponly" in first.headers["set-cookie"].lower()
    # the key itself as the cookie signs no one in
    raw = httpx.get(f"{server.base}/ui/", cookies={COOKIE: keys["admin"]},
                    follow_redirects=False)
    assert raw.status_code == 303 and "/ui/login" in raw.headers["location"]
    # each session has its own form token: another session's is refused
    other = _sign_in(server, keys["admin"]).cookies[COOKIE]
    mine, theirs = _form_token(server, session, user), _form_token(server, other, user)
    assert mine != theirs
    refused = httpx.post(f"{server.base}/ui/users/{user}/forget", cookies={COOKIE: session},
                         data={"token": theirs}, follow_redirects=False)
    assert refused.status_code == 403, refused.text[:300]
    # logout ends the session on the server: a copied cookie opens nothing afterwards
    out = httpx.post(f"{server.base}/ui/logout", cookies={COOKIE: session},
                     follow_redirects=False)
    assert out.status_code == 303
    after = httpx.get(f"{server.base}/ui/", cookies={COOKIE: session}, follow_redirects=False)
    assert after.status_code == 303 and "/ui/login" in after.headers["location"]
    assert httpx.get(f"{server.base}/ui/", cookies={COOKIE: other}).status_code == 200
    # revoking the key ends its sessions at once
    doomed = new_key(A, "read")
    held = _sign_in(server, doomed).cookies[COOKIE]
    assert httpx.get(f"{server.base}/ui/", cookies={COOKIE: held}).status_code == 200
    memq("keys", "revoke", doomed)
    gone = httpx.get(f"{server.base}/ui/", cookies={COOKIE: held}, follow_redirects=False)
    assert gone.status_code == 303


def test_console_sign_in_attempts_are_throttled(server: Api, keys: dict[str, str]) -> None:
    import redis

    from integration.conftest import REDIS_URL

    bucket = "memq:auth:rate:sign-in:address:127.0.0.1"
    r = redis.Redis.from_url(REDIS_URL)
    r.delete(bucket)
    try:
        bad = "mq_0000000000000000_" + "x" * 43
        statuses = [_sign_in(server, bad).status_code for _ in range(25)]
        assert statuses[:20] == [401] * 20 and statuses[-1] == 429, statuses
        # a good key waits too: the address is throttled, not the key
        throttled = _sign_in(server, keys["read"])
        assert throttled.status_code == 429 and "Retry-After" in throttled.headers
    finally:
        r.delete(bucket)
    assert _sign_in(server, keys["read"]).status_code == 303


def test_refused_calls_are_in_the_access_record(server: Api, keys: dict[str, str]) -> None:
    user = _user("refused")
    # a scope the key lacks: its tenant's record, with the user of the path
    assert _call(server, "DELETE", f"/v1/users/{user}", key=keys["read"]).status_code == 403
    # a revoked key: still its tenant's
    revoked = _call(server, "GET", f"/v1/users/{user}/memories", key=keys["revoked"])
    assert revoked.status_code == 401
    # a key id no tenant has: the operator's record of refusals, with the caller's address
    ghost_id = uuid.uuid4().hex[:16]
    ghost = f"mq_{ghost_id}_" + "y" * 43
    assert _call(server, "GET", f"/v1/users/{user}/memories", key=ghost).status_code == 401
    record = _call(server, "GET", "/v1/access", key=keys["admin"], limit=200).json()
    mine = {(e["status"], e["key"]) for e in record if e["user"] == user}
    assert ("403", keys["read"].split("_")[1]) in mine, record[:5]
    assert ("401", keys["revoked"].split("_")[1]) in mine, record[:5]
    assert not any(e["key"] == ghost_id for e in record)
    refused = json.loads(memq("keys", "access", "--refused", "--json").stdout)
    (entry,) = [e for e in refused if e["key"] == ghost_id]
    assert entry["status"] == "401" and entry["user"] == user and entry["address"]
    assert memq("keys", "access", check=False).returncode != 0  # --tenant or --refused


def test_readyz_probes_the_stores_at_most_once_in_a_while(server: Api) -> None:
    # without a key: answered from a probe at most READY_TTL_S old, so a flood of them costs
    # the stores nothing more
    started = time.monotonic()
    answers = [httpx.get(f"{server.base}/readyz", params={"path": "read"}, timeout=30)
               for _ in range(50)]
    took = time.monotonic() - started
    assert all(a.status_code == 200 and a.json()["ready"] for a in answers)
    assert "checks" not in answers[0].json()  # the details are an admin's
    probes = {a.json()["checked_at"] for a in answers}
    assert len(probes) <= took / 2.0 + 2, (len(probes), took)
