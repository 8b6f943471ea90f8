"""The broker's wire format, written by producers: a Celery protocol 2 task message in kombu's
Redis envelope, built with json and uuid only, so an agent's enqueue (``workers.client``)
loads neither Celery nor kombu. The workers read these messages through Celery and kombu's
Redis transport (``workers.broker`` guards that reading); ``tests/unit/test_envelope.py``
checks this against what Celery's own ``send_task`` writes. ``message_args`` reads one back
as it waits in a queue (the reaper's look for lost messages, forget's purge)."""

from __future__ import annotations

import base64
import json
import os
import socket
import uuid
from typing import Any

EXTRACT_QUEUE = "memq.extract"  # workers.app's routes: memq.extract here,
STORE_QUEUE = "memq.store"  # everything else (memq.apply, the lifecycle) here
QUEUES = (EXTRACT_QUEUE, STORE_QUEUE)  # every queue a worker reads
# messages per read of a queue list (~0.2 MB): one read of a whole backlog would hold Redis,
# and every agent's enqueue behind it (workers.reaper, workers.forget)
QUEUE_PAGE = 256
_HOST = socket.gethostname()
_EMBED = {"callbacks": None, "errbacks": None, "chain": None, "chord": None}


def queue_of(task: str) -> str:
    """The queue workers.app routes ``task`` to."""
    return EXTRACT_QUEUE if task == "memq.extract" else STORE_QUEUE


def task_message(task: str, args: list[Any]) -> tuple[str, str]:
    """(queue, message): a Celery protocol 2 task message in kombu's Redis envelope, as
    ``send_task`` writes it to the list of the task's queue (default exchange, priority 0),
    ready for one LPUSH.

    Publishing through Celery costs far more Python and a round trip of its own per message
    (figures: scripts/results/2026-12-07-figures-from-comments.md); built
    here, the outbox record and its message go to Redis in one pipeline
    (workers.client.enqueue). The worker reads it through Celery as any
    other task message (its consumer is the same kombu transport)."""
    task_id, queue = str(uuid.uuid4()), queue_of(task)
    body = json.dumps([args, {}, _EMBED], separators=(",", ":"))
    return queue, json.dumps({
        "body": base64.b64encode(body.encode()).decode(),
        "content-encoding": "utf-8", "content-type": "application/json",
        "headers": {
            "lang": "py", "task": task, "id": task_id, "shadow": None, "eta": None,
            "expires": None, "group": None, "group_index": None, "retries": 0,
            "timelimit": [None, None], "root_id": task_id, "parent_id": None,
            "argsrepr": repr(args), "kwargsrepr": "{}", "origin": f"{os.getpid()}@{_HOST}",
            "ignore_result": True, "replaced_task_nesting": 0, "stamped_headers": None,
            "stamps": {},
        },
        "properties": {
            "correlation_id": task_id, "reply_to": "", "delivery_mode": 2,
            "delivery_info": {"exchange": "", "routing_key": queue}, "priority": 0,
            "body_encoding": "base64", "delivery_tag": str(uuid.uuid4()),
        },
    }, separators=(",", ":"))


def _decode_body(message: dict[str, Any]) -> Any:
    body = message.get("body")
    if not isinstance(body, str):
        return body
    encoding = (message.get("properties") or {}).get("body_encoding")
    if encoding == "base64":
        body = base64.b64decode(body).decode("utf-8")
    return json.loads(body)


def message_args(raw: str) -> list[Any] | None:
    """The positional arguments of a kombu message as the Redis transport keeps it in a queue
    list (the body is ``[args, kwargs, embed]``); None when unreadable."""
    try:
        args = _decode_body(json.loads(raw))[0]
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None  # binascii.Error is a ValueError
    return args if isinstance(args, list) and args else None
