"""Forgetting, the pure parts: which queued messages and dead letters are the user's, and the
FORGET audit entry. (Named apart from tests/integration/test_forget.py: pytest rootdir import
mode needs unique module names.)"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from typing import Any

from memq.schemas import Operation
from memq.workers.forget import ForgetReport, dead_letter_of, queued_delivery, tombstone


def _message(payload: Any, *, encoding: str | None = "base64") -> str:
    """A Celery task message as kombu's Redis transport keeps it in a queue list."""
    body = json.dumps([[payload], {}, {"callbacks": None, "errbacks": None, "chain": None,
                                       "chord": None}])
    properties: dict[str, Any] = {"delivery_info": {"exchange": "", "routing_key": "memq.extract"},
                                  "priority": 0, "delivery_tag": "tag-1"}
    if encoding:
        properties["body_encoding"] = encoding
        body = base64.b64encode(body.encode()).decode()
    return json.dumps({"body": body, "content-encoding": "utf-8",
                       "content-type": "application/json",
                       "headers": {"task": "memq.extract", "argsrepr": "(...)"},
                       "properties": properties})


def _payload(user_id: str, delivery_id: str = "d1") -> dict[str, Any]:
    """A StageMessage of memq.extract: ids only."""
    return {"v": "1", "user_id": user_id, "delivery_id": delivery_id, "token": None}


def test_queued_message_of_the_user_gives_its_delivery() -> None:
    assert queued_delivery(_message(_payload("u1", "d42")), "u1") == "d42"


def test_queued_message_with_a_plain_body() -> None:
    assert queued_delivery(_message(_payload("u1", "d7"), encoding=None), "u1") == "d7"


def test_a_drain_message_is_the_users_too() -> None:
    drain = {"v": "1", "user_id": "u1", "delivery_id": None, "token": "abc"}
    assert queued_delivery(_message(drain), "u1") == ""
    assert queued_delivery(_message(drain), "u2") is None


def test_other_users_and_prefixes_do_not_match() -> None:
    assert queued_delivery(_message(_payload("u10")), "u1") is None
    assert queued_delivery(_message(_payload("u1")), "u10") is None


def test_unreadable_messages_do_not_match() -> None:
    for raw in ("", "not json", "[]", json.dumps({"body": "%%%", "properties": {
            "body_encoding": "base64"}}), json.dumps({"body": base64.b64encode(b"[[]]").decode(),
                                                      "properties": {"body_encoding": "base64"}}),
                _message("a string payload"), _message({"user": None})):
        assert queued_delivery(raw, "u1") is None


def test_a_message_without_delivery_id_is_still_the_users() -> None:
    payload = _payload("u1")
    del payload["delivery_id"]
    assert queued_delivery(_message(payload), "u1") == ""


def test_dead_letters_of_the_user() -> None:
    entry = {"delivery_id": "d1", "user_id": "u1", "stage": "memq.apply", "reason": "x",
             "at": "now", "message": {"batch": "{}"}}
    assert dead_letter_of(json.dumps(entry), "u1")
    assert not dead_letter_of(json.dumps(entry), "u2")
    assert not dead_letter_of(json.dumps({**entry, "user_id": None}), "u1")
    assert not dead_letter_of("garbage", "u1")


def test_tombstone_is_deterministic_and_content_free() -> None:
    at = datetime(2026, 11, 29, 12, 0, tzinfo=UTC).timestamp()
    one, again = tombstone("u1", "*", at), tombstone("u1", "*", at)
    assert one == again
    assert one.operation is Operation.FORGET
    assert (one.before, one.after, one.source_turn_ids) == (None, None, [])
    assert one.memory_id == "*" and one.reason == "user forgotten"
    assert one.at == datetime.fromtimestamp(at, UTC)
    assert tombstone("u2", "*", at).id != one.id
    assert tombstone("u1", "*", at + 1).id != one.id
    memory = tombstone("u1", "m_1", at)
    assert memory.id != one.id and memory.reason == "memory forgotten"


def test_report_total() -> None:
    report = ForgetReport("u1", chroma=3, graph=5, redis_keys=2, queued=1, dead_letters=1)
    assert report.total == 12
    assert report.to_json()["total"] == 12
    assert "user u1" in report.describe()
    assert ForgetReport("u1").total == 0
