"""Event time decides, not arrival time; single- vs multi-valued predicates; --as-of."""

from __future__ import annotations

import json

import pytest

from integration.conftest import memq, memq_json, wait_done

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("worker")]


def _line(user: str, session: str, turn: str, text: str, ts: str) -> str:
    return json.dumps({"user_id": user, "session_id": session, "turn_id": turn, "role": "user",
                       "content": text, "timestamp": ts})


def _current(user: str) -> list[str]:
    return sorted(m["content"] for m in memq_json("memories", "--user", user))


def test_late_arrival_is_history_not_current(user_id: str) -> None:
    newer = _line(user_id, "s2", "n1", "I live in Berlin.", "2026-06-01T10:00:00Z")
    older = _line(user_id, "s1", "o1", "I live in Lisbon.", "2026-01-01T10:00:00Z")
    memq("enqueue", "-", stdin=newer + "\n")
    wait_done()
    memq("enqueue", "-", stdin=older + "\n")  # the older session is replayed afterwards
    wait_done()
    assert _current(user_id) == ["The user lives in Berlin."]
    every = {m["content"]: m for m in memq_json("memories", "--user", user_id, "--all")}
    lisbon = every["The user lives in Lisbon."]
    assert lisbon["status"] == "superseded"
    assert lisbon["invalid_at"] == every["The user lives in Berlin."]["valid_at"]
    spring = [m["content"] for m in memq_json("memories", "--user", user_id,
                                              "--as-of", "2026-03-01T00:00:00Z")]
    assert spring == ["The user lives in Lisbon."]


def test_same_batch_conflict_resolves_by_turn_order(user_id: str) -> None:
    lines = [_line(user_id, "s1", "a", "Our production servers run CentOS 7.",
                   "2026-02-01T10:00:00Z"),
             _line(user_id, "s1", "b", "We moved production to Ubuntu 22.04.",
                   "2026-02-01T10:05:00Z")]
    memq("enqueue", "-", stdin="\n".join(reversed(lines)) + "\n")  # file order is not time
    wait_done()
    assert _current(user_id) == ["The user's production environment is Ubuntu 22.04."]


def test_single_valued_replaces_multi_valued_accumulates(user_id: str) -> None:
    lines = [_line(user_id, "s1", "a", "I like jazz.", "2026-02-01T10:00:00Z"),
             _line(user_id, "s1", "b", "I work at Initech.", "2026-02-01T10:01:00Z"),
             _line(user_id, "s2", "c", "I like hiking.", "2026-02-02T10:00:00Z"),
             _line(user_id, "s2", "d", "I work at Globex.", "2026-02-02T10:01:00Z")]
    memq("enqueue", "-", stdin="\n".join(lines) + "\n")
    wait_done()
    assert _current(user_id) == ["The user likes hiking.", "The user likes jazz.",
                                 "The user works at Globex."]
    facts = memq_json("facts", "--user", user_id)
    open_facts = sorted((f["predicate"], f["object"]) for f in facts
                        if f["invalid_at"] is None and f["expired_at"] is None)
    assert open_facts == [("likes", "hiking"), ("likes", "jazz"), ("works_at", "Globex")]


def test_a_turn_dated_2099_is_refused_through_every_door(
        worker: object, user_id: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """HTTP (both body shapes), the CLI's per-line verdict and the Python client give a
    one-line reason and store nothing (MCP's remember takes no time: it stamps the server's
    clock)."""
    import httpx

    from integration.conftest import new_key, start_api
    from memq.workers.api import Client
    from memq.workers.client import FutureTurn

    later = "2099-01-01T00:00:00+00:00"
    line = json.dumps({"user_id": user_id, "session_id": "s1", "turn_id": "t1",
                       "role": "user", "content": "I live in Rome.", "timestamp": later})
    res = memq("enqueue", "-", stdin=line + "\n", check=False)
    assert res.returncode == 1 and "later than the server's clock allows" in res.stdout + \
        res.stderr
    with pytest.raises(FutureTurn, match="later than the server's clock allows"):
        Client().add(user_id, [{"role": "user", "content": "I live in Rome.",
                                "timestamp": later}])
    key = new_key("t-future", "read,write")
    server = start_api(tmp_path_factory.mktemp("future") / "serve.log")
    try:
        auth = {"authorization": f"Bearer {key}"}
        listed = httpx.post(f"{server.base}/v1/turns", headers=auth, json=[json.loads(line)])
        assert listed.status_code == 400
        assert "later than the server's clock" in listed.text
        said = httpx.post(f"{server.base}/v1/turns", headers=auth, json={
            "user_id": user_id, "messages": [{"role": "user", "content": "I live in Rome.",
                                              "timestamp": later}]})
        assert said.status_code == 400 and "later than the server's clock" in said.text
    finally:
        server.proc.terminate()
        server.proc.wait(timeout=30)
    assert Client().memories(user_id) == [] and Client().audit(user_id) == []
