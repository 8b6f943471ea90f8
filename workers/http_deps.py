"""Who calls the HTTP API (:mod:`memq.workers.http`): the bearer key checked, its scopes and
its tenant's request rate; the route dependencies ``Reader``, ``Writer``, ``Forgetter``,
``Admin`` and ``Sender`` give a route its :class:`Caller`, or answer 401/403/429."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from . import auth, wiring


@dataclass
class Caller:
    """Who calls: the key (None: auth off) and the users it named (for the access record)."""

    key: auth.ApiKey | None
    users: list[str] = field(default_factory=list)

    @property
    def tenant(self) -> str:
        """The key's tenant; with ``MEMQ_AUTH=off``, ``MEMQ_TENANT`` (one rule for every door)."""
        return self.key.tenant if self.key else wiring.settings().tenant

    def user(self, user_id: str) -> str:
        """The stores' id of the caller's user ``user_id``; 400 for an id that is not one."""
        try:
            internal = auth.tenant_user(self.tenant, user_id)
        except auth.AuthError as exc:
            raise HTTPException(400, str(exc)) from None
        self.users.append(user_id)
        return internal

    def out(self, value: Any) -> Any:
        return auth.externalize(self.tenant, value)

    def owns(self, internal_user: str | None) -> bool:
        return auth.external_user(self.tenant, internal_user) is not None


_UNAUTHORIZED = {"WWW-Authenticate": "Bearer"}
_SCHEME = HTTPBearer(auto_error=False, description="an API key from `memq keys create`")
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_SCHEME)]


def _identify(request: Request, creds: HTTPAuthorizationCredentials | None) -> Caller:
    if wiring.settings().auth == "off":
        return Caller(None)
    if creds is None:
        raise HTTPException(401, "no API key: send Authorization: Bearer <key> "
                                 "(memq keys create makes one)", headers=_UNAUTHORIZED)
    key = wiring.keys().verify(creds.credentials)
    if key is None:
        # for the access record: a revoked (or mistyped) key of a tenant is that tenant's
        key_id = auth.key_id_of(creds.credentials)
        request.state.refused = (key_id, wiring.keys().get(key_id) if key_id else None)
        raise HTTPException(401, "this API key is not valid (unknown, revoked or malformed)",
                            headers=_UNAUTHORIZED)
    caller = Caller(key)
    request.state.caller = caller
    return caller


def throttle(tenant: str, bucket: str, cost: float, rate: float, burst: float,
              what: str) -> None:
    """429 with ``Retry-After`` while the tenant's ``bucket`` cannot take ``cost``."""
    wait = wiring.keys().take(tenant, bucket, cost, rate, burst)
    if wait > 0:
        raise HTTPException(429, f"tenant {tenant}: more than {rate:g} {what} a second",
                            headers={"Retry-After": str(math.ceil(wait))})


def _need(*scopes: str) -> Callable[[Request, HTTPAuthorizationCredentials | None], Caller]:
    """The dependency of a route that needs one of ``scopes``: the caller, or 401/403/429."""
    def dependency(request: Request, creds: Credentials) -> Caller:
        caller = _identify(request, creds)
        if caller.key is None:
            return caller
        if not any(caller.key.allows(scope) for scope in scopes):
            raise HTTPException(403, f"this key may not {' or '.join(scopes)} (its scopes: "
                                     f"{','.join(sorted(caller.key.scopes))})")
        s = wiring.settings()
        throttle(caller.key.tenant, "requests", 1, s.rate_requests_per_s,
                  s.rate_requests_burst, "requests")
        return caller
    return dependency


Reader = Annotated[Caller, Depends(_need("read"))]
Writer = Annotated[Caller, Depends(_need("write"))]
Forgetter = Annotated[Caller, Depends(_need("forget"))]
Admin = Annotated[Caller, Depends(_need("admin"))]
Sender = Annotated[Caller, Depends(_need("read", "write"))]  # a writer waits on its deliveries
