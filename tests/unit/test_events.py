"""workers.events' pure parts: the signature, who gets an event, what it carries."""

from __future__ import annotations

import hashlib
import hmac
import json

from memq.workers.events import _payload, _targets, sign

HOOKS = {"acme": json.dumps({"url": "http://a/", "secret": "s1"}),
         "*": json.dumps({"url": "http://all/", "secret": "s2"})}


def test_the_signature_is_hmac_sha256_of_the_body() -> None:
    body = b'{"id": "ev_1"}'
    assert sign("k", body) == "sha256=" + hmac.new(b"k", body, hashlib.sha256).hexdigest()
    assert sign("k", body) != sign("k2", body)


def test_a_users_tenant_and_the_catch_all_get_it_each_with_their_user_id() -> None:
    got = {t: user for t, _, user in _targets(HOOKS, "acme:alice")}
    assert got == {"acme": "alice", "*": "acme:alice"}
    assert {t for t, _, _ in _targets(HOOKS, "beta:bob")} == {"*"}  # beta subscribed nothing
    assert {t for t, _, _ in _targets(HOOKS, "plain")} == {"*"}
    assert _targets({}, "acme:alice") == []


def test_an_event_carries_ids_and_times_only() -> None:
    fields = {"id": "ev_1", "type": "memory.added", "user": "acme:alice", "at": "1.5",
              "memory_id": "m_1", "batch_id": "b_1", "content": "never sent"}
    assert json.loads(_payload(fields, "alice")) == {
        "id": "ev_1", "type": "memory.added", "user_id": "alice", "at": 1.5,
        "memory_id": "m_1", "batch_id": "b_1"}
