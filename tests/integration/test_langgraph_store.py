"""memq as a LangGraph store: a real compiled graph puts and searches through MemqStore, on
the real services and a real worker (run as an agent would, in a process of its own); get,
delete, namespaces and the refusals."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from integration.conftest import Api, Worker, memq_env, new_key, start_api

pytestmark = pytest.mark.integration

AGENT = r"""
import json, sys
from typing import TypedDict
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from memq.workers.langgraph import MemqStore

user = sys.argv[1]

class State(TypedDict, total=False):
    user: str
    said: str
    answer: str

def remember(state: State, runtime: Runtime) -> State:
    runtime.store.put(("memories", state["user"]), "home", {"content": state["said"]})
    return {}

def recall(state: State, runtime: Runtime) -> State:
    found = runtime.store.search(("memories", state["user"]), query="where do I live?")
    return {"answer": found[0].value["content"] if found else ""}

g = StateGraph(State)
g.add_node("remember", remember)
g.add_node("recall", recall)
g.add_edge(START, "remember")
g.add_edge("remember", "recall")
g.add_edge("recall", END)
store = (MemqStore(wait=True) if len(sys.argv) == 2
         else MemqStore(wait=True, api_url=sys.argv[2], api_key=sys.argv[3]))
out = g.compile(store=store).invoke({"user": user, "said": "I live in Lisbon."})
ns = ("memories", user)
first = store.get(ns, "home").value
store.put(ns, "home", {"content": "I moved to Porto."})
newest = store.get(ns, "home").value
memories = [i.value["content"] for i in store.search(ns)]
namespaces = store.list_namespaces()
listed = ns in store.list_namespaces(prefix=("memories",))
other = store.get(("memories", user + "-other"), "home")
store.delete(ns, "home")
refused = []
for bad in (lambda: store.put(ns, "k", {"content": "x"}, ttl=5),
            lambda: store.put(("bad space",), "k", {"content": "x"})):
    try:
        bad()
    except (ValueError, NotImplementedError) as exc:
        refused.append(str(exc).split(":")[0].split(".")[0])
print(json.dumps({"answer": out["answer"], "first": first, "newest": newest,
                  "memories": memories, "listed": listed, "other": other is None,
                  "namespaces": namespaces,
                  "after_delete": store.get(ns, "home") is None,
                  "search_after": [i.value for i in store.search(ns)], "refused": refused}))
"""


def _agent(*args: str) -> dict[str, Any]:
    res = subprocess.run([sys.executable, "-c", AGENT, *args], cwd="/", env=memq_env(),
                         capture_output=True, text=True, timeout=420, check=False)
    assert res.returncode == 0, res.stderr[-3000:]
    return dict(json.loads(res.stdout.strip().splitlines()[-1]))


def _check(out: dict[str, Any]) -> None:
    assert "Lisbon" in out["answer"], out
    assert out["first"] == {"content": "I live in Lisbon."}
    assert out["newest"] == {"content": "I moved to Porto."}  # the newest value under a key
    assert out["memories"] == ["The user lives in Porto."], out  # no query: current memories
    assert out["listed"] and out["other"]  # another namespace is another user
    assert out["after_delete"] and out["search_after"] == []
    assert out["refused"] == ["TTL is not supported by MemqStore", "namespace ('bad space',)"], out


def test_a_graph_remembers_and_recalls_through_memq(worker: Worker, user_id: str) -> None:
    out = _agent(user_id)
    _check(out)
    # the namespace is a user of MEMQ_TENANT (local:memories:<user> in the stores): a key of a
    # tenant named "memories" does not read it as its own user <user>
    api = start_api(Path(tempfile.mkdtemp(prefix="memq-lg-")) / "serve.log")
    try:
        key = new_key("memories", "admin")
        res = httpx.get(f"{api.base}/v1/users/{user_id}/memories", params={"all": "true"},
                        headers={"Authorization": f"Bearer {key}"}, timeout=60)
        assert res.status_code == 200 and res.json() == [], res.text[:300]
        users = httpx.get(f"{api.base}/v1/users", headers={"Authorization": f"Bearer {key}"},
                          timeout=60).json()
        assert user_id not in users and f"memories:{user_id}" not in users
    finally:
        api.stop()


def test_a_graph_over_http_with_a_key(worker: Worker, user_id: str) -> None:
    """``MemqStore(api_url=…, api_key=…)``: the same store through ``memq serve``, in the key's
    tenant; it lists only that tenant's namespaces."""
    api: Api = start_api(Path(tempfile.mkdtemp(prefix="memq-lg-")) / "serve.log")
    try:
        tenant = f"lg{user_id[-6:]}".lower()
        key = new_key(tenant, "read,write,forget")
        other = new_key("lg-elsewhere", "write")
        httpx.post(f"{api.base}/v1/turns", headers={"Authorization": f"Bearer {other}"},
                   json={"user_id": "memories:someone-else", "messages": [
                       {"role": "user", "content": "I like tea."}]}, timeout=60)
        out = _agent(user_id, api.base, key)
        _check(out)
        assert out["namespaces"] == [["memories", user_id]], out["namespaces"]
    finally:
        api.stop()


def test_the_background_memory_manager_example(worker: Worker, user_id: str) -> None:
    """scripts/langgraph-example: a session's message, then a later session that knows it."""
    from integration.conftest import REPO

    def run(*args: str) -> str:
        res = subprocess.run([str(REPO / "scripts" / "langgraph-example"), "--user", user_id,
                              *args], cwd=REPO, env=memq_env(), capture_output=True,
                             text=True, timeout=300, check=False)
        assert res.returncode == 0, res.stderr[-3000:]
        return res.stdout.strip()

    assert run("--wait", "I live in Lisbon.") == "Noted."
    assert "The user lives in Lisbon." in run("Where do I live?")
