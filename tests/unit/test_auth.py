"""The pure part of authentication and tenancy (workers.auth): key format, scopes, the
tenant's user ids, and what a response shows of them."""

from __future__ import annotations

import random
import string

import pytest

from memq.workers import auth


def _key(scopes: str, revoked: str | None = None) -> auth.ApiKey:
    return auth.ApiKey(id="0123456789abcdef", tenant="acme", scopes=auth.parse_scopes(scopes),
                       name="", created_at="2026-12-01T00:00:00Z", revoked_at=revoked)


def test_scopes_are_a_closed_set_and_admin_holds_them_all() -> None:
    assert _key("read").allows("read") and not _key("read").allows("write")
    assert not _key("read,write").allows("forget")
    assert all(_key("admin").allows(s) for s in auth.SCOPES)
    assert not _key("admin", revoked="2026-12-02T00:00:00Z").allows("read")
    for bad in ("", "read,root", "READ", " , "):
        with pytest.raises(auth.AuthError, match="scopes are"):
            auth.parse_scopes(bad)
    assert auth.parse_scopes(" read , write ") == {"read", "write"}


def test_a_tenants_user_ids_are_its_own_by_construction() -> None:
    assert auth.tenant_user("acme", "alice") == "acme:alice"
    assert auth.tenant_user(None, "alice") == "alice"  # auth off: as given
    # whatever id a key of tenant B sends, the stores see one of B's users
    for probe in ("acme:alice", "alice", ":alice", "acme::alice"):
        assert auth.tenant_user("beta", probe).startswith("beta:")
        assert auth.tenant_user("beta", probe) != "acme:alice"
    assert auth.external_user("acme", "acme:alice") == "alice"
    assert auth.external_user("acme", "beta:alice") is None
    assert auth.external_user("acme", "acme") is None
    assert auth.external_user(None, "x") == "x"
    assert auth.external_user("acme", None) is None


@pytest.mark.parametrize("probe", ["../beta:alice", "..%2fbeta", "alice/../bob", "ålice",
                                   "al ice", "", "a" * 124, "alice\n", "\u0430lice", "%00"])
def test_user_ids_outside_the_alphabet_or_too_long_are_refused(probe: str) -> None:
    with pytest.raises(auth.AuthError, match="a user id is 1-123 characters"):
        auth.tenant_user("acme", probe)


def test_the_longest_user_id_still_fits_the_contract() -> None:
    internal = auth.tenant_user("acme", "a" * 123)
    assert len(internal) == auth.MAX_INTERNAL_ID
    from memq.schemas import IngestBatch, Turn

    IngestBatch(user_id=internal, session_id="s", turns=[Turn(
        turn_id="t", role="user", content="x", timestamp="2026-12-01T00:00:00Z")])


def test_tenant_names_have_no_separator() -> None:
    for bad in ("", "Acme", "ac:me", "-acme", "a" * 33, "acme/x", "ac me"):
        with pytest.raises(auth.AuthError, match="a tenant is"):
            auth.check_tenant(bad)
    assert auth.check_tenant("acme-eu_2") == "acme-eu_2"


def test_responses_name_users_as_the_tenant_does() -> None:
    body = [{"user_id": "acme:alice", "content": "x", "nested": {"user_id": "acme:bob"}},
            {"user_id": "acme:carol", "items": [{"user_id": "acme:dave"}]}]
    assert auth.externalize("acme", body) == [
        {"user_id": "alice", "content": "x", "nested": {"user_id": "bob"}},
        {"user_id": "carol", "items": [{"user_id": "dave"}]}]
    assert auth.externalize(None, body) == body


def test_key_ids_come_only_from_well_formed_keys() -> None:
    good = "mq_0123456789abcdef_" + "A" * 43
    assert auth.key_id_of(good) == "0123456789abcdef"
    rng = random.Random(7)
    alphabet = string.printable + "é€\u200b\x00"
    for _ in range(2_000):  # fuzz: nothing but the exact shape names a key
        mutated = list(good)
        for _ in range(rng.randint(1, 3)):
            op = rng.random()
            pos = rng.randrange(len(mutated) + 1)
            if op < 0.4 and mutated:
                mutated[min(pos, len(mutated) - 1)] = rng.choice(alphabet)
            elif op < 0.7:
                mutated.insert(pos, rng.choice(alphabet))
            elif mutated:
                del mutated[min(pos, len(mutated) - 1)]
        text = "".join(mutated)
        found = auth.key_id_of(text)
        assert found is None or auth.KEY_RE.fullmatch(text), text
    for bad in ("", "mq_", good + "A", good[:-1], good.upper(), " " + good, good + "\n",
                "Bearer " + good):
        assert auth.key_id_of(bad) is None, bad


def test_digests_differ_for_different_keys() -> None:
    a, b = "mq_0123456789abcdef_" + "A" * 43, "mq_0123456789abcdef_" + "B" * 43
    assert auth.digest(a) != auth.digest(b) and len(auth.digest(a)) == 64


def test_a_body_too_large_or_too_deep_is_refused_before_any_work() -> None:
    """The bounds run before parsing and before the key check (no key is given here)."""
    import asyncio

    from memq.workers.bounds import BoundedBody, too_deep

    assert too_deep(b"[" * 65, 64) and not too_deep(b"[" * 64 + b"]" * 64, 64)
    assert not too_deep(b'{"a": "[[[[[[[[[["}', 4)  # brackets inside a string do not count
    reached: list[bytes] = []

    async def app(scope: dict, receive: object, send: object) -> None:  # type: ignore[type-arg]
        reached.append((await receive())["body"])  # type: ignore[operator]

    def call(body: bytes, length: int | None = None) -> int:
        sent: list[dict] = []  # type: ignore[type-arg]
        chunks = [{"type": "http.request", "body": body[i:i + 10], "more_body": i + 10 < len(body)}
                  for i in range(0, max(len(body), 1), 10)]

        async def receive() -> dict:  # type: ignore[type-arg]
            return chunks.pop(0)

        async def send(message: dict) -> None:  # type: ignore[type-arg]
            sent.append(message)

        headers = [(b"content-length", str(length if length is not None else len(body)).encode())]
        asyncio.run(BoundedBody(app, max_bytes=1024, max_depth=8)(  # type: ignore[arg-type]
            {"type": "http", "headers": headers}, receive, send))
        return int(sent[0]["status"]) if sent else 200

    assert call(b"x" * 2000) == 413 and call(b"x" * 2000, length=10) == 413  # a lying header
    assert call(b"[" * 9) == 400
    assert call(b'{"user_id": "u1"}') == 200 and reached == [b'{"user_id": "u1"}']


def test_every_keyless_door_names_users_in_its_tenant() -> None:
    """memq.Client (and the CLI, LangGraph, mem0 and MCP over it) applies the same rule as a
    key: the stores see <tenant>:<user>; what it returns names users as the caller does."""
    from datetime import UTC, datetime

    from memq.schemas import IngestBatch, Turn
    from memq.workers.api import Client, StoresClient

    client = Client(tenant="acme")
    assert client.stores_id("u42") == "acme:u42"
    assert client.stores_id("memories:u42") == "acme:memories:u42"  # a LangGraph namespace
    assert client.caller_id("acme:u42") == "u42"
    assert client.caller_id("beta:u42") is None and client.caller_id("u42") is None
    turn = Turn(turn_id="t1", role="user", content="hi", timestamp=datetime.now(UTC))
    (owned,) = client._own([IngestBatch(user_id="u42", session_id="s", turns=[turn])])
    assert owned.user_id == "acme:u42"
    assert Client().tenant == "local"  # MEMQ_TENANT's default
    with pytest.raises(auth.AuthError, match="a tenant is"):
        _ = Client(tenant="Acme Corp").tenant
    with pytest.raises(ValueError, match="a user id is"):
        client.stores_id("john+test@example.com")
    # the front doors that applied a tenant already pass the stores' ids through
    stores = StoresClient()
    assert stores.stores_id("acme:u42") == "acme:u42" == stores.caller_id("acme:u42")
