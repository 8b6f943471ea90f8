"""Webhooks (workers/events.py) on the real services and a real worker: a tenant's subscriber
gets each event of its users, signed, with an idempotency key, ids only; a dead subscriber
does not hold the write path up and gets its events once it is back; forgetting is an event.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from integration.conftest import Worker, free_port, memq

pytestmark = pytest.mark.integration


class Subscriber:
    def __init__(self, port: int) -> None:
        self.got: list[tuple[dict[str, str], bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                outer.got.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(body) for _, body in self.got]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _until(check: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError("not in time")


def _line(user: str, text: str) -> str:
    return json.dumps({"user_id": user, "session_id": "s1", "turn_id": uuid.uuid4().hex[:8],
                       "role": "user", "content": text,
                       "timestamp": "2026-11-20T10:00:00Z"}) + "\n"


@pytest.fixture
def tenants() -> Iterator[tuple[str, str]]:
    live, dead = (f"t-hooks-{uuid.uuid4().hex[:6]}" for _ in range(2))
    yield live, dead
    for tenant in (live, dead):
        memq("webhooks", "remove", "--tenant", tenant, check=False)


def test_a_tenants_subscriber_gets_its_events_signed_once(worker: Worker,
                                                          tenants: tuple[str, str]) -> None:
    live, dead = tenants
    port, dead_port = free_port(), free_port()
    subscriber = Subscriber(port)
    try:
        added = json.loads(memq("webhooks", "add", "--tenant", live, "--url",
                                f"http://127.0.0.1:{port}/hook", "--json").stdout)
        memq("webhooks", "add", "--tenant", dead, "--url", f"http://127.0.0.1:{dead_port}/x")
        listed = json.loads(memq("webhooks", "list", "--json").stdout)
        assert listed[live] == f"http://127.0.0.1:{port}/hook"
        time.sleep(5.5)  # workers see a new subscription within HOOKS_CACHE_S
        memq("enqueue", "--tenant", live, "-", stdin=_line("alice", "I live in Lisbon."))
        started = time.monotonic()
        memq("enqueue", "--tenant", dead, "-", stdin=_line("bob", "I live in Porto."))
        memq("wait", "--timeout", "120")
        write_path_s = time.monotonic() - started
        _until(lambda: {"delivery.done", "memory.added"} <= {
            e["type"] for e in subscriber.events()})
        for headers, body in subscriber.got:
            want = "sha256=" + hmac.new(added["secret"].encode(), body,
                                        hashlib.sha256).hexdigest()
            assert hmac.compare_digest(headers["x-memq-signature"], want)
            assert headers["x-memq-event-id"] == json.loads(body)["id"]
            assert b"Lisbon" not in body and b"Porto" not in body  # ids only
        events = subscriber.events()
        assert {e["user_id"] for e in events} == {"alice"}  # as the tenant knows its user
        ids = [e["id"] for e in events]
        assert len(ids) == len(set(ids)), "each event once"
        memory_id = next(e["memory_id"] for e in events if e["type"] == "memory.added")
        # a dead subscriber holds nothing up (both deliveries went through as usual) ...
        assert write_path_s < 60, write_path_s
        memq("forget", "--tenant", live, "--user", "alice", "--memory", memory_id)
        _until(lambda: any(e["type"] == "memory.forgotten" and e["memory_id"] == memory_id
                           for e in subscriber.events()))
        # ... and gets its events once it is back: retried with backoff
        back = Subscriber(dead_port)
        try:
            _until(lambda: any(e["type"] == "delivery.done" for e in back.events()), 40)
            assert {e["user_id"] for e in back.events()} == {"bob"}
        finally:
            back.stop()
    finally:
        subscriber.stop()
