"""A LangGraph agent with memq as its background memory manager (LangMem's pattern): before
it answers, the agent reads what memq knows about the user (``store.search``); after, it
hands the exchange to memq (``store.put``, returns at once) and memq's workers extract,
dedupe and merge in the background. Run it twice: the second session knows the first.

    scripts/langgraph-example --user u42 "I moved to Porto last week."
    scripts/langgraph-example --user u42 --wait "Where do I live?"

The model here is a stand-in that answers from the memories it was given (no LLM needed);
put yours in ``respond``. Needs ``memq[langgraph]``, the services and a worker
(``scripts/services up``, ``scripts/worker start``).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from memq.workers.langgraph import MemqStore


class State(TypedDict, total=False):
    user: str
    message: str
    known: list[str]
    answer: str


def recall(state: State, runtime: Runtime) -> State:  # type: ignore[type-arg]
    assert runtime.store is not None
    found = runtime.store.search(("memories", state["user"]), query=state["message"], limit=5)
    return {"known": [i.value["content"] for i in found if i.value.get("type") == "memory"]}


def respond(state: State) -> State:
    known = state.get("known") or []
    answer = ("From what I remember: " + " ".join(known[:3])) if known else "Noted."
    return {"answer": answer}


def remember(state: State, runtime: Runtime) -> State:  # type: ignore[type-arg]
    assert runtime.store is not None
    # the user's message; memq decides what in it is worth keeping, in the background
    key = "turn-" + hashlib.sha256(state["message"].encode()).hexdigest()[:16]
    runtime.store.put(("memories", state["user"]), key, {"content": state["message"]})
    return {}


def build(store: MemqStore) -> object:
    g = StateGraph(State)
    for name, node in (("recall", recall), ("respond", respond), ("remember", remember)):
        g.add_node(name, node)
    g.add_edge(START, "recall")
    g.add_edge("recall", "respond")
    g.add_edge("respond", "remember")
    g.add_edge("remember", END)
    return g.compile(store=store)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--user", required=True)
    ap.add_argument("--wait", action="store_true", help="return once memq applied the turn")
    ap.add_argument("message")
    args = ap.parse_args()
    graph = build(MemqStore(wait=args.wait))
    out = graph.invoke({"user": args.user, "message": args.message})  # type: ignore[attr-defined]
    print(out["answer"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
