"""What an agent reads back, on the real stores and a real worker: the fact asked for ranks
first among unrelated chatter, the current value of a slot that changed many times comes
before its past, a question in other words still finds the memory, and once ``wait`` says
done the same question gets the same list."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from integration.conftest import memq, memq_json, wait_done

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("worker")]

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
UNRELATED = ["What is a prime number?", "What's the capital of Peru?",
             "How do I reverse a list in Python?", "Can you recommend a good sci-fi novel?",
             "How long should I boil an egg?", "What is the tallest mountain in Africa?",
             "Explain recursion to a child.", "How many ounces are in a pound?"]
CITIES = ["Lisbon", "Porto", "Madrid", "Seville", "Lyon", "Berlin", "Munich", "Vienna",
          "Prague", "Krakow", "Oslo", "Bergen", "Dublin", "Cork", "Toronto"]


def _lines(user: str, sessions: list[list[str]]) -> str:
    out = []
    for n, turns in enumerate(sessions):
        at = START + timedelta(days=7 * n)
        for i, content in enumerate(turns):
            out.append(json.dumps({"user_id": user, "session_id": f"s{n}", "turn_id": f"t{i}",
                                   "role": "user", "content": content,
                                   "timestamp": (at + timedelta(minutes=i)).isoformat()}))
    return "\n".join(out) + "\n"


def _search(user: str, query: str, k: int = 10) -> list[dict[str, Any]]:
    return list(memq_json("search", "--user", user, "--k", str(k), query))


def test_the_fact_asked_for_outranks_fifty_unrelated_turns(user_id: str) -> None:
    chatter = [f"{UNRELATED[i % len(UNRELATED)]} (question {i + 1})" for i in range(49)]
    memq("enqueue", "-", stdin=_lines(user_id, [
        ["I'm a product manager at a fintech startup."], chatter,
        ["I'm vegetarian, by the way.", *chatter[:10]]]))
    wait_done()
    role = [h["content"] for h in _search(user_id, "What is my role?")[:3]]
    assert any("product manager" in c for c in role), role
    food = [h["content"] for h in _search(user_id, "what can I eat?", k=5)]
    assert any("vegetarian" in c for c in food), food


def test_after_fifteen_moves_the_current_city_comes_first(user_id: str) -> None:
    memq("enqueue", "-", stdin=_lines(user_id, [
        [f"I just moved to {city}.", UNRELATED[n % len(UNRELATED)]]
        for n, city in enumerate(CITIES)]))
    wait_done()
    hits = _search(user_id, "where do I live?")
    assert CITIES[-1] in hits[0]["content"], [h["content"] for h in hits]
    before = _search(user_id, "where did I live before?")
    assert any(c in h["content"] for h in before[:5] for c in CITIES[:-1])


def test_once_done_the_same_question_gets_the_same_list(user_id: str) -> None:
    memq("enqueue", "-", stdin=_lines(user_id, [
        [f"I just moved to {city}.", f"{UNRELATED[n % len(UNRELATED)]} (question {n})",
         f"My favourite tea this month is number {n}."]
        for n, city in enumerate(CITIES)]))
    wait_done()
    queries = ["where do I live?", "which tea do I like?", "what did I ask about Python?",
               "prime numbers", "Toronto"]
    first = [[h["id"] for h in _search(user_id, q, k=20)] for q in queries]
    time.sleep(3)  # Chroma indexes its write log in the background meanwhile
    again = [[h["id"] for h in _search(user_id, q, k=20)] for q in queries]
    assert first == again
    # the head of a longer list is the shorter list
    assert [h["id"] for h in _search(user_id, queries[0], k=5)] == first[0][:5]
