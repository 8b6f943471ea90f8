"""wire.task_message writes what Celery's own send_task writes to kombu's Redis transport."""

from __future__ import annotations

import base64
import json
from typing import Any

from celery import Celery
from kombu import Connection

from memq.workers.wire import EXTRACT_QUEUE, STORE_QUEUE, task_message

BODY = {"v": "1", "user_id": "u1", "delivery_id": "d1", "token": None}


def _celery_message() -> dict[str, Any]:
    """What send_task hands the transport for the same task (kombu's in-memory transport:
    the envelope is the same; the Redis transport LPUSHes it as JSON)."""
    app = Celery("envelope-test", broker="memory://")
    app.conf.task_routes = {"memq.extract": {"queue": EXTRACT_QUEUE}}
    with Connection("memory://") as conn:
        app.send_task("memq.extract", args=[BODY], connection=conn)
        channel = conn.default_channel
        raw = channel._get(EXTRACT_QUEUE)  # kombu reads its own queue
    return raw if isinstance(raw, dict) else json.loads(raw)


def test_the_envelope_has_celerys_shape_and_values() -> None:
    queue, raw = task_message("memq.extract", [BODY])
    assert queue == EXTRACT_QUEUE
    ours = json.loads(raw)
    theirs = _celery_message()
    assert set(ours) == set(theirs)
    assert set(ours["headers"]) >= set(theirs["headers"]) - {"ignore_result"}
    assert set(ours["properties"]) == set(theirs["properties"])
    for key in ("content-type", "content-encoding"):
        assert ours[key] == theirs[key]
    assert ours["properties"]["delivery_info"] == theirs["properties"]["delivery_info"]
    assert ours["properties"]["body_encoding"] == theirs["properties"]["body_encoding"]
    assert ours["properties"]["priority"] == theirs["properties"]["priority"]
    assert ours["headers"]["task"] == theirs["headers"]["task"] == "memq.extract"

    def body(m: dict[str, Any]) -> Any:
        return json.loads(base64.b64decode(m["body"]))

    assert body(ours) == body(theirs)


def test_each_envelope_is_its_own_task() -> None:
    (qa, a), (qb, b) = (task_message("memq.apply", [BODY]) for _ in range(2))
    assert qa == qb == STORE_QUEUE
    a, b = json.loads(a), json.loads(b)
    assert a["headers"]["id"] != b["headers"]["id"]
    assert a["properties"]["delivery_tag"] != b["properties"]["delivery_tag"]
    assert a["headers"]["root_id"] == a["headers"]["id"] == a["properties"]["correlation_id"]
