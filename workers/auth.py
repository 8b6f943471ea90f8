"""Who may do what: API keys, tenants, scopes, per-tenant limits and the access record.

The one owner of authentication and tenancy for the front doors (``memq serve``, ``memq keys``).

- **Keys** read ``mq_<id>_<secret>``: the id (16 hex) names the key and is not secret; the
  whole key is stored only as its SHA-256 (``memq:auth:key:<id>``), compared in constant time.
  A key is printed once, by ``memq keys create``; revoking keeps the record (listed, refused).
- **Tenants** own users. The stores see ``<tenant>:<user id>`` (:func:`tenant_user`), so a key
  of tenant A names only A's users, whatever id it sends: isolation is by construction, in
  every store, with no per-store check to forget. A tenant name has no ``:``. Every door
  without a key (``memq.Client``, the CLI, LangGraph, mem0, MCP ``--local``, ``MEMQ_AUTH=off``)
  uses ``MEMQ_TENANT`` the same way, so no name of any door reaches another tenant's users.
- **Scopes**: ``read`` (memories, facts, audit, search, context, delivery states), ``write``
  (enqueue), ``forget``, and ``admin`` (all of those in its tenant, plus the operator routes:
  metrics, readiness details, the tenant's access record).
- **Limits** (a token bucket per tenant in Redis, on Redis's clock so every API host shares
  it): requests per second, and characters of ingested turns per second.
- **Access record**: who (key id), which route, which user, when, the status; never content.
  The newest 100,000 per tenant (``GET /v1/access``, ``memq keys access``).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

import redis

from ..schemas.messages import TENANT_PATTERN
from .layout import lua

SCOPES = ("read", "write", "forget", "admin")
TENANT_RE = re.compile(TENANT_PATTERN)
USER_RE = re.compile(r"^[A-Za-z0-9_.:@\-]+$")  # schemas.messages' id alphabet
MAX_INTERNAL_ID = 128  # schemas.messages: a user id is at most 128 characters
KEY_RE = re.compile(r"^mq_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$")
ID_RE = re.compile(r"^[0-9a-f]{16}$")

_PREFIX = "memq:auth:"
_KEYS = _PREFIX + "keys"  # set of key ids
_CONSOLE_SECRET = _PREFIX + "console-secret"  # the form token with MEMQ_AUTH=off
_SESSION = _PREFIX + "session:"  # + the SHA-256 of a console session id: key, form token
_SESSIONS_OF = _PREFIX + "sessions:"  # + a key id: the digests of its sessions
ACCESS_MAX = 100_000
_DUMMY = hashlib.sha256(b"memq: no such key").hexdigest()


class AuthError(ValueError):
    """A bad key, tenant, scope or user id: one line for the caller."""


@dataclass(frozen=True)
class ApiKey:
    id: str
    tenant: str
    scopes: frozenset[str]
    name: str
    created_at: str
    revoked_at: str | None = None

    def allows(self, scope: str) -> bool:
        return self.revoked_at is None and (scope in self.scopes or "admin" in self.scopes)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "tenant": self.tenant, "scopes": sorted(self.scopes),
                "name": self.name, "created_at": self.created_at,
                "revoked_at": self.revoked_at}


# -- pure ----------------------------------------------------------------------------------
def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def parse_scopes(text: str | Iterable[str]) -> frozenset[str]:
    parts = text.split(",") if isinstance(text, str) else list(text)
    scopes = frozenset(p.strip() for p in parts if p.strip())
    unknown = sorted(scopes - set(SCOPES))
    if unknown or not scopes:
        raise AuthError(f"scopes are a comma-separated choice of {', '.join(SCOPES)}; "
                        f"got {','.join(unknown) or 'none'}")
    return scopes


def check_tenant(tenant: str) -> str:
    if not TENANT_RE.fullmatch(tenant):
        raise AuthError("a tenant is 1-32 characters of a-z, 0-9, '-' and '_', starting with "
                        f"a letter or digit; got {tenant[:40]!r}")
    return tenant


def key_id_of(presented: str) -> str | None:
    """The id of a well-formed key, else None (a malformed key names no record)."""
    m = KEY_RE.fullmatch(presented)
    return m.group(1) if m else None


def tenant_user(tenant: str | None, user_id: str) -> str:
    """The user id the stores see: ``<tenant>:<user id>`` (as is without a tenant: auth off)."""
    limit = MAX_INTERNAL_ID - (len(tenant) + 1 if tenant else 0)
    if not USER_RE.fullmatch(user_id) or len(user_id) > limit:
        raise AuthError(f"a user id is 1-{limit} characters of A-Z, a-z, 0-9 and _ . : @ -")
    return f"{tenant}:{user_id}" if tenant else user_id


def external_user(tenant: str | None, internal: str | None) -> str | None:
    """The caller's user id for a stored one; None when it is not the tenant's."""
    if internal is None or tenant is None:
        return internal
    prefix = f"{tenant}:"
    return internal[len(prefix):] if internal.startswith(prefix) else None


def externalize(tenant: str | None, value: Any) -> Any:
    """A response with every ``user_id`` field given as the caller knows it."""
    if tenant is None:
        return value
    if isinstance(value, list):
        return [externalize(tenant, v) for v in value]
    if isinstance(value, dict):
        return {k: (external_user(tenant, v) if k == "user_id" and isinstance(v, str)
                    else externalize(tenant, v)) for k, v in value.items()}
    return value


def _iso(now: datetime) -> str:
    return now.astimezone(UTC).isoformat().replace("+00:00", "Z")


# -- the stored keys ---------------------------------------------------------------------
class KeyStore:
    def __init__(self, client: redis.Redis) -> None:
        self.r = client
        self._take = client.register_script(lua("take_tokens"))
        self._secret: str | None = None  # the console's form-token key (form_token)

    @staticmethod
    def _key(key_id: str) -> str:
        return f"{_PREFIX}key:{key_id}"

    def create(self, tenant: str, scopes: str | Iterable[str], name: str = "",
               now: datetime | None = None) -> tuple[str, ApiKey]:
        """A new key: its text (shown once, stored nowhere) and its record."""
        record = ApiKey(id=secrets.token_hex(8), tenant=check_tenant(tenant),
                        scopes=parse_scopes(scopes), name=name[:100],
                        created_at=_iso(now or datetime.now(UTC)))
        text = f"mq_{record.id}_{secrets.token_urlsafe(32)}"
        # the record, then the index (two slots on a Redis Cluster: no transaction; an index
        # entry without a record is skipped by ``all``)
        pipe = self.r.pipeline(transaction=False)
        pipe.hset(self._key(record.id), mapping={
            "digest": digest(text), "tenant": record.tenant,
            "scopes": ",".join(sorted(record.scopes)), "name": record.name,
            "created_at": record.created_at})
        pipe.sadd(_KEYS, record.id)
        pipe.execute()
        return text, record

    @staticmethod
    def _record(key_id: str, row: dict[str, str]) -> ApiKey:
        return ApiKey(id=key_id, tenant=row["tenant"],
                      scopes=frozenset(row["scopes"].split(",")), name=row.get("name", ""),
                      created_at=row["created_at"], revoked_at=row.get("revoked_at") or None)

    def get(self, key_id: str) -> ApiKey | None:
        row = cast(dict[str, str], self.r.hgetall(self._key(key_id)))
        return self._record(key_id, row) if row else None

    def all(self) -> list[ApiKey]:
        ids = sorted(cast(set[str], self.r.smembers(_KEYS)))
        pipe = self.r.pipeline(transaction=False)
        for key_id in ids:
            pipe.hgetall(self._key(key_id))
        rows = cast(list[dict[str, str]], pipe.execute())
        found = [self._record(i, row) for i, row in zip(ids, rows, strict=True) if row]
        return sorted(found, key=lambda k: (k.tenant, k.created_at, k.id))

    def revoke(self, key_or_id: str, now: datetime | None = None) -> ApiKey | None:
        """Refuse the key from now on (by its text or its id); None if there is no such key."""
        key_id = key_id_of(key_or_id) or (key_or_id if ID_RE.fullmatch(key_or_id) else None)
        found = self.get(key_id) if key_id else None
        if found is None:
            return None
        self._close_sessions(found.id)  # a signed-in console too
        if found.revoked_at is None:
            when = _iso(now or datetime.now(UTC))
            self.r.hset(self._key(found.id), "revoked_at", when)
            found = self.get(found.id)
        return found

    def verify(self, presented: str) -> ApiKey | None:
        """The key's record when ``presented`` is a live key; None otherwise. The digests are
        compared in constant time, a dummy one when the id names no key."""
        key_id = key_id_of(presented)
        row = cast(dict[str, str], self.r.hgetall(self._key(key_id))) if key_id else {}
        ok = hmac.compare_digest(row.get("digest", _DUMMY), digest(presented))
        if not (ok and row and key_id) or row.get("revoked_at"):
            return None
        return self._record(key_id, row)

    # -- limits ----------------------------------------------------------------------------
    def take(self, tenant: str, bucket: str, cost: float, rate: float, burst: float) -> float:
        """Take ``cost`` from the tenant's bucket: 0 when it fit, else the seconds to wait."""
        if rate <= 0:
            return 0.0
        wait = self._take(keys=[f"{_PREFIX}rate:{bucket}:{tenant}"],
                          args=[rate, burst, cost])
        return float(wait)

    # -- the console's sessions and forms -------------------------------------------------
    def open_session(self, key: ApiKey, ttl_s: int, now: datetime | None = None) -> str:
        """A console session of ``key``: its id, for the browser's cookie. Redis keeps only
        the id's SHA-256 (so reading Redis signs no one in), with the key id and the
        session's own form token, for ``ttl_s``."""
        session = secrets.token_urlsafe(32)
        held = digest(session)
        pipe = self.r.pipeline(transaction=False)
        pipe.hset(_SESSION + held, mapping={"key": key.id, "form": secrets.token_hex(32),
                                            "at": _iso(now or datetime.now(UTC))})
        pipe.expire(_SESSION + held, ttl_s)
        pipe.sadd(_SESSIONS_OF + key.id, held)
        pipe.expire(_SESSIONS_OF + key.id, ttl_s)  # the newest session's life
        pipe.execute()
        return session

    def session(self, session: str) -> tuple[ApiKey, str] | None:
        """The live key and the form token of a console session; None when the session is
        unknown, expired or closed, or its key revoked."""
        if not session or len(session) > 100:
            return None
        row = cast(dict[str, str], self.r.hgetall(_SESSION + digest(session)))
        key = self.get(row["key"]) if row.get("key") else None
        if key is None or key.revoked_at is not None:
            return None
        return key, row["form"]

    def close_session(self, session: str) -> None:
        held = digest(session)
        key_id = cast(str | None, self.r.hget(_SESSION + held, "key"))
        self.r.delete(_SESSION + held)
        if key_id:
            self.r.srem(_SESSIONS_OF + key_id, held)

    def _close_sessions(self, key_id: str) -> None:
        held = cast(set[str], self.r.smembers(_SESSIONS_OF + key_id))
        pipe = self.r.pipeline(transaction=False)
        for one in held:
            pipe.delete(_SESSION + one)
        pipe.delete(_SESSIONS_OF + key_id)
        pipe.execute()

    def form_token(self) -> str:
        """The token the console's forms carry with ``MEMQ_AUTH=off`` (a signed-in console's
        is its session's): an HMAC under a secret kept in Redis (made once, shared by every
        API host), so a form posted from another site, which cannot read the page, cannot
        forge it."""
        if self._secret is None:  # set once, never changed: read once per process
            self.r.set(_CONSOLE_SECRET, secrets.token_hex(32), nx=True)
            self._secret = cast(str, self.r.get(_CONSOLE_SECRET))
        return hmac.new(self._secret.encode(), b"form:", hashlib.sha256).hexdigest()

    # -- the access record -----------------------------------------------------------------
    @staticmethod
    def _access_key(tenant: str | None) -> str:
        # refusals that name no tenant: a name no tenant can have (TENANT_RE)
        return f"{_PREFIX}access:{tenant}" if tenant else _PREFIX + "refused"

    def record_access(self, tenant: str | None, entry: dict[str, str]) -> None:
        """Keep an entry in the tenant's access record (None: the operator's record of
        refusals that name no tenant, ``memq keys access --refused``)."""
        self.r.xadd(self._access_key(tenant), cast(Any, entry), maxlen=ACCESS_MAX,
                    approximate=True)

    def access(self, tenant: str | None, limit: int = 100) -> list[dict[str, str]]:
        """The tenant's newest accesses (None: the refusals naming no tenant), newest
        first."""
        rows = cast(list[tuple[str, dict[str, str]]],
                    self.r.xrevrange(self._access_key(tenant), count=limit))
        return [dict(fields) for _, fields in rows]
