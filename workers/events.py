"""Webhooks: what happened, pushed to a tenant's URL, signed, at least once.

Events (ids only, never text: a subscriber reads what it may with its own key):

    delivery.done            a delivery is applied (or had nothing to apply)
    delivery.dead_lettered   a delivery failed for good (memq deadletters has the reason)
    memory.added             a memory was written (new, or a refinement's new text)
    memory.superseded        a memory is no longer current (a newer fact, a correction)
    memory.forgotten         a memory (memory_id "*": the whole user) was forgotten

The write path only appends an event to a Redis stream (``workers.event_stream``; nothing at
all when no tenant has a webhook), so a slow or dead subscriber never slows it. Every worker
runs a dispatcher thread: it reads the stream in a consumer group (blocking, not polling),
POSTs each event to its tenant's URL (the tenant is the user id's prefix, ``acme:`` for
``acme:u42``; a subscription for tenant ``*`` gets every event, user ids as the stores have
them), and on failure tries again with backoff (2, 4, 8 … s, at most 10 min apart, 12 tries),
then gives up into ``memq:hooks:dead``. A worker that dies mid-dispatch leaves its events
pending; another worker claims them after a minute.

A request: ``POST <url>`` with the JSON event, ``X-Memq-Event-Id`` (the idempotency key: the
same event, delivered again, has the same id) and ``X-Memq-Signature: sha256=<hex>``, the
HMAC-SHA256 of the body under the subscription's secret. Any 2xx is delivered.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import socket
import threading
import time
from typing import Any

import httpx
import redis
import structlog

from . import layout, wiring
from .event_stream import hooks, remove_hook, set_hook

# remove_hook: `memq webhooks remove` takes it from here, beside subscribe
__all__ = ["Dispatcher", "remove_hook", "sign", "start", "subscribe", "subscriptions"]

log = structlog.get_logger(__name__)

MAX_TRIES = 12
TIMEOUT_S = 5.0
CLAIM_IDLE_MS = 60_000


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def subscribe(tenant: str, url: str) -> str:
    """Send the tenant's events to ``url``; returns the new signing secret (shown once)."""
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"{url!r}: a webhook URL is http:// or https://")
    secret = "whsec_" + secrets.token_urlsafe(32)
    set_hook(wiring.coord(), tenant, json.dumps({"url": url, "secret": secret}))
    return secret


def subscriptions() -> dict[str, str]:
    """Tenant -> URL (the secrets stay in Redis)."""
    return {t: json.loads(v)["url"] for t, v in sorted(hooks(wiring.coord()).items())}


def _targets(hooks: dict[str, str], user: str) -> list[tuple[str, dict[str, str], str]]:
    """(tenant, subscription, the user id as that tenant knows it) for an event's user."""
    out = []
    tenant, sep, own = user.partition(":")
    if sep and tenant in hooks:
        out.append((tenant, json.loads(hooks[tenant]), own))
    if "*" in hooks:
        out.append(("*", json.loads(hooks["*"]), user))
    return out


def _payload(fields: dict[str, str], user: str) -> bytes:
    body = {"id": fields["id"], "type": fields["type"], "user_id": user,
            "at": float(fields["at"])}
    body.update({k: v for k, v in fields.items()
                 if k in ("delivery_id", "memory_id", "batch_id")})
    return json.dumps(body, sort_keys=True).encode()


def _post(hook: dict[str, str], event_id: str, body: bytes) -> bool:
    try:
        res = httpx.post(hook["url"], content=body, timeout=TIMEOUT_S, headers={
            "content-type": "application/json", "x-memq-event-id": event_id,
            "x-memq-signature": sign(hook["secret"], body)})
    except httpx.HTTPError:
        return False
    return 200 <= res.status_code < 300


class Dispatcher:
    """One worker's dispatcher (see the module docstring)."""

    def __init__(self, r: redis.Redis, retry_base_s: float = 2.0) -> None:
        self.r: Any = r  # decode_responses: str in, str out
        self.retry_base_s = retry_base_s
        self.name = f"{socket.gethostname()}-{os.getpid()}"
        try:
            self.r.xgroup_create(layout.EVENTS, layout.EVENTS_GROUP, id="0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    def _deliver(self, fields: dict[str, str], only: str | None = None, tries: int = 0) -> None:
        hooks = {k: v for k, v in self.r.hgetall(layout.HOOKS).items()}
        for tenant, hook, user in _targets(hooks, fields["user"]):
            if only is not None and tenant != only:
                continue
            if _post(hook, fields["id"], _payload(fields, user)):
                continue
            if tries + 1 >= MAX_TRIES:
                self.r.lpush(layout.HOOK_DEAD, json.dumps({"tenant": tenant, **fields}))
                log.warning("webhook: gave up", tenant=tenant, event_id=fields["id"])
                continue
            wait = min(600.0, self.retry_base_s * 2 ** tries)
            entry = json.dumps({"tenant": tenant, "tries": tries + 1, "fields": fields},
                               sort_keys=True)
            self.r.zadd(layout.HOOK_RETRIES, {entry: time.time() + wait})

    def step(self, block_ms: int) -> int:
        """One round: due retries, events other workers left pending, new events (waiting up
        to ``block_ms`` for one, less when a retry falls due sooner). Returns events handled."""
        handled = 0
        for entry in self.r.zrangebyscore(layout.HOOK_RETRIES, 0, time.time(), start=0, num=50):
            if self.r.zrem(layout.HOOK_RETRIES, entry):  # one worker takes each retry
                retry = json.loads(entry)
                self._deliver(retry["fields"], only=retry["tenant"], tries=retry["tries"])
                handled += 1
        _, stale, _ = self.r.xautoclaim(layout.EVENTS, layout.EVENTS_GROUP, self.name,
                                       min_idle_time=CLAIM_IDLE_MS, count=50)
        nxt = self.r.zrange(layout.HOOK_RETRIES, 0, 0, withscores=True)
        if nxt:
            block_ms = max(1, min(block_ms, int(1000 * (nxt[0][1] - time.time()))))
        fresh = self.r.xreadgroup(layout.EVENTS_GROUP, self.name, {layout.EVENTS: ">"}, count=50,
                                  block=None if stale else block_ms)
        entries = list(stale) + [e for _, found in (fresh or []) for e in found]
        for entry_id, fields in entries:
            self._deliver(dict(fields))
            self.r.xack(layout.EVENTS, layout.EVENTS_GROUP, entry_id)
            handled += 1
        return handled


def start(retry_base_s: float | None = None) -> threading.Event:
    """The dispatcher in a daemon thread (every worker); set the event to stop it."""
    stop = threading.Event()
    base = retry_base_s if retry_base_s is not None else wiring.settings().hook_retry_s

    def loop() -> None:
        dispatcher: Dispatcher | None = None
        while not stop.is_set():
            try:
                dispatcher = dispatcher or Dispatcher(wiring.coord().r, base)
                dispatcher.step(2_000)
            except (redis.RedisError, OSError, ValueError) as exc:
                log.warning("webhook dispatcher: round failed; next round retries",
                            error=type(exc).__name__)
                stop.wait(2.0)

    threading.Thread(target=loop, name="memq-webhooks", daemon=True).start()
    return stop
