"""Garbage for memq's queues, kind by kind (tests/integration/test_poison.py, scripts/chaos):
each must be quarantined with its reason, and no worker may die of it."""

from __future__ import annotations

import base64
import json


def _envelope(body: object, headers: dict[str, object], queue: str) -> str:
    raw = base64.b64encode(json.dumps(body).encode()).decode()
    return json.dumps({"body": raw, "content-encoding": "utf-8",
                       "content-type": "application/json", "headers": headers,
                       "properties": {"delivery_info": {"exchange": "", "routing_key": queue},
                                      "priority": 0, "body_encoding": "base64",
                                      "delivery_tag": "tag"}})


def garbage(queue: str) -> dict[str, bytes | str]:
    task = "memq.extract" if queue == "memq.extract" else "memq.apply"
    return {
        "not utf-8": b"\xff\xfe\x00 binary",
        "not json": "this is not json",
        "json, not an envelope": "[1, 2, 3]",
        "deep nesting": "[" * 100_000 + "]" * 100_000,
        "protocol 1 (task in the body)": _envelope(
            {"task": task, "id": "p1", "args": [], "kwargs": {}}, {}, queue),
        "task header without id": _envelope([[{}], {}, {}], {"task": "memq.bogus"}, queue),
        "body a dict": _envelope({"a": 1}, {"task": task, "id": "p2"}, queue),
        "unknown task": _envelope([[], {}, {}], {"task": "memq.nope", "id": "p3"}, queue),
        "args not a StageMessage": _envelope([["x"], {}, {}], {"task": task, "id": "p4"}, queue),
    }
