"""No message can crash a worker.

Anything on memq's queues that cannot be read as a memq task is moved to the dead-letter list
(``memq deadletters``) with the reason and its raw bytes (capped), and the worker goes on:

- bytes that are not a kombu envelope, or not a Celery protocol 2 task message (kombu's Redis
  transport would raise inside its event loop, or Celery before any handler, and the worker
  would exit, the message lost or restored to kill the next one): ``Channel._brpop_read``;
- an envelope whose body Celery cannot turn into a request (a protocol-1 body where protocol 2
  is expected, a dict instead of ``[args, kwargs, embed]``: Celery raises ``ValueError`` out
  of its consumer, the worker exits and the message is restored, so every worker dies in
  turn): ``strategy`` turns that into Celery's own invalid-task path, which rejects it;
- whatever Celery rejects as unknown or invalid (``task_rejected``, ``task_unknown``).

The transport is kombu's Redis transport with that one change (``broker_transport``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from datetime import UTC, datetime
from queue import Empty
from typing import Any

import structlog
from celery.exceptions import InvalidTaskError
from celery.signals import task_rejected, task_unknown
from celery.worker import strategy as celery_strategy
from kombu.transport import redis as kombu_redis
from kombu.utils import json as kombu_json

log = structlog.get_logger(__name__)
_loads: Callable[[str], Any] = kombu_json.loads  # what kombu's transport decodes with


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value

RAW_CAP = 64 * 1024
def quarantine_entry(raw: bytes | str | None, reason: str, queue: str | None) -> str:
    data = raw.encode("utf-8", "replace") if isinstance(raw, str) else (raw or b"")
    return json.dumps({
        "delivery_id": None, "user_id": None, "stage": f"broker:{queue or '?'}",
        "reason": reason[:500], "at": datetime.now(UTC).isoformat(),
        "message": {"raw_base64": base64.b64encode(data[:RAW_CAP]).decode(),
                    "raw_bytes": len(data), "truncated": len(data) > RAW_CAP},
    })


def _quarantine(raw: bytes | str | None, reason: str, queue: str | None) -> None:
    from . import deadletters, wiring  # noqa: PLC0415

    deadletters.put(wiring.coord(), quarantine_entry(raw, reason, queue))
    log.error("quarantined an unreadable message", queue=queue, reason=reason[:200])


class Channel(kombu_redis.Channel):
    def _brpop_read(self, **options: Any) -> bool:
        try:
            try:
                dest__item = self.client.parse_response(self.client.connection, "BRPOP",
                                                        **options)
            except self.connection_errors:
                self.client.connection.disconnect()
                raise
            if not dest__item:
                raise Empty()
            dest, item = dest__item
            dest = _text(dest).rsplit(self.sep, 1)[0]
            self._queue_cycle.rotate(dest)
            try:
                message = _loads(_text(item))
                if not isinstance(message, dict) or "body" not in message:
                    raise ValueError("not a kombu envelope")
                headers = message.get("headers")
                task_message = isinstance(headers, dict) and isinstance(
                    headers.get("task"), str) and bool(headers.get("id"))
                if dest.startswith("memq.") and not task_message:
                    # memq's task queues carry Celery protocol 2 only; Celery itself crashes
                    # on some other shapes (a task header without an id) before any handler.
                    # (Celery's own queues -- pidbox replies -- carry other messages.)
                    raise ValueError("not a Celery protocol 2 task message")
            except (ValueError, TypeError, UnicodeDecodeError, RecursionError) as exc:
                _quarantine(item, f"unreadable broker message: {type(exc).__name__}: {exc}",
                            dest)
                return True
            self.connection._deliver(message, dest)
            return True
        finally:
            setattr(self, "_in_poll", None)  # noqa: B010  (kombu's own bookkeeping)
            flush = getattr(self, "_flush_brpop_reauth", None)
            if flush is not None:
                flush()


class Transport(kombu_redis.Transport):
    Channel = Channel


def strategy(task: Any, app: Any, consumer: Any, **kwargs: Any) -> Callable[..., Any]:
    """Celery's default strategy, with a message it cannot build a request from turned into
    an invalid task (rejected, then quarantined by ``_rejected``) instead of an exception that
    stops the worker."""
    handler = celery_strategy.default(task, app, consumer, **kwargs)

    def guarded(message: Any, body: Any, ack: Any, reject: Any, callbacks: Any,
                **more: Any) -> Any:
        try:
            return handler(message, body, ack, reject, callbacks, **more)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError,
                RecursionError) as exc:
            raise InvalidTaskError(f"not a memq task message: {type(exc).__name__}: {exc}"
                                   ) from exc

    return guarded


def _raw(message: Any) -> bytes | str | None:
    body = getattr(message, "body", None)
    return body if isinstance(body, bytes | str) else repr(body)


@task_rejected.connect
def _rejected(sender: Any = None, message: Any = None, exc: Any = None, **_: Any) -> None:
    queue = (getattr(message, "delivery_info", None) or {}).get("routing_key")
    reason = f"rejected: {exc}" if exc else "rejected: not a task message"
    _quarantine(_raw(message), reason, queue)


@task_unknown.connect
def _unknown(sender: Any = None, name: Any = None, id: Any = None, message: Any = None,
             exc: Any = None, **_: Any) -> None:
    queue = (getattr(message, "delivery_info", None) or {}).get("routing_key")
    _quarantine(_raw(message), f"unknown task {name!r}", queue)
