"""The agent API over HTTP: :class:`HttpClient` (sync) and :class:`AsyncHttpClient`.

The same methods as :class:`memq.workers.api.Client`, against ``memq serve``: an agent outside
the trusted network needs the API's URL and a key (``memq keys create``), and neither Redis
nor the stores' drivers nor their credentials. Part of the light install (``memq[client]``:
httpx, pydantic). ``url`` and ``api_key`` default to ``MEMQ_API_URL`` and ``MEMQ_API_KEY``.

An answer other than 2xx raises :class:`ApiError` with the API's one-line reason; 429 and 503
carry ``retry_after`` (seconds, when the API said).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import httpx

from ..schemas import AuditEntry, IngestBatch, StoredMemory
from .api import Message, Status

if TYPE_CHECKING:
    from ..pipeline.ports import Hit
    from .forget import ForgetReport

__all__ = ["ApiError", "AsyncHttpClient", "HttpClient"]

MAX_ITEMS = 10_000  # turns a request (workers.http.MAX_BODY_ITEMS)
WAIT_STEP_S = 20.0  # one long-poll of wait (the API holds a request up to 30 s)


class ApiError(RuntimeError):
    """The API refused or failed a call: ``status`` and its one-line ``detail``."""

    def __init__(self, status: int, detail: str, retry_after: float | None = None, *,
                 answered: bool = True) -> None:
        # nothing answered a call that could not reach the API: say that, not a status
        super().__init__(f"memq API answered {status}: {detail}" if answered else detail)
        self.status, self.detail, self.retry_after = status, detail, retry_after


@dataclass(frozen=True)
class _Call:
    method: str
    path: str
    parse: Callable[[Any], Any]
    json: Any = None
    params: dict[str, Any] | None = None
    timeout: float | None = None


def _detail(resp: httpx.Response) -> str:
    try:
        detail = resp.json().get("detail", resp.text)
    except ValueError:
        detail = resp.text
    return (detail if isinstance(detail, str) else str(detail))[:500]


def _checked(resp: httpx.Response) -> Any:
    if resp.status_code >= 300:
        after = resp.headers.get("Retry-After")
        raise ApiError(resp.status_code, _detail(resp),
                       float(after) if after and after.isdigit() else None)
    return resp.json()


def _hit(row: dict[str, Any]) -> Hit:
    from ..pipeline.ports import Hit  # noqa: PLC0415

    return Hit(**{**row, "event_at": datetime.fromisoformat(row["event_at"]),
                  "created_at": datetime.fromisoformat(row["created_at"]),
                  "neighbors": tuple(row.get("neighbors") or ())})


def _report(row: dict[str, Any]) -> ForgetReport:
    from .forget import ForgetReport  # noqa: PLC0415

    return ForgetReport(**{k: v for k, v in row.items() if k != "total"})


def _turn(answer: dict[str, Any]) -> dict[str, Any] | None:
    row: dict[str, Any] | None = answer["turn"]
    if row is None:
        return None
    return {**row, "created_at": datetime.fromisoformat(row["created_at"]),
            "event_at": datetime.fromisoformat(row["event_at"])}


def _status(row: dict[str, Any]) -> Status:
    return Status(delivery_id=row["delivery_id"], state=row["state"], user_id=row["user_id"],
                  reason=row["reason"])


def _message(m: Mapping[str, Any] | Message | str) -> dict[str, Any]:
    if isinstance(m, str):
        raise TypeError("a message is a mapping or a Message ({'role': 'user', 'content': "
                        "...}), not a string")
    if isinstance(m, Message):
        return m.model_dump(mode="json", exclude_none=True)
    return {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in m.items()}


def _lines(batches: Iterable[IngestBatch]) -> list[dict[str, Any]]:
    return [{"user_id": b.user_id, "session_id": b.session_id,
             **t.model_dump(mode="json", exclude_none=True)} for b in batches for t in b.turns]


def _ids(answers: Sequence[dict[str, Any]]) -> list[str]:
    return [d for a in answers for d in a["delivery_ids"]]


class _Calls:
    """Each operation as a request and the parse of its answer (shared by both clients)."""

    @staticmethod
    def add(user_id: str, messages: str | Sequence[Mapping[str, Any] | Message],
            session_id: str | None, metadata: Mapping[str, Any] | None = None) -> _Call:
        if isinstance(messages, str):  # one message of the user's, as Client.add takes it
            messages = [{"role": "user", "content": messages}]
        body: dict[str, Any] = {"user_id": user_id, "messages": [_message(m) for m in messages]}
        if session_id is not None:
            body["session_id"] = session_id
        if metadata:
            body["metadata"] = dict(metadata)
        return _Call("POST", "/v1/turns", lambda r: list(r["delivery_ids"]), json=body)

    @staticmethod
    def enqueue(lines: list[dict[str, Any]]) -> list[_Call]:
        return [_Call("POST", "/v1/turns", lambda r: r, json=lines[i:i + MAX_ITEMS])
                for i in range(0, len(lines), MAX_ITEMS)]

    @staticmethod
    def status(delivery_ids: Sequence[str], wait_s: float = 0.0) -> _Call:
        return _Call("POST", "/v1/deliveries", lambda rows: [_status(r) for r in rows],
                     json={"delivery_ids": list(delivery_ids), "wait_s": wait_s},
                     timeout=wait_s + 30.0)

    @staticmethod
    def search(user_id: str, query: str, k: int, record: bool,
               filters: Mapping[str, Any] | None = None) -> _Call:
        body = {"user_id": user_id, "query": query, "k": k, "record": record}
        for key, value in (filters or {}).items():
            if value is not None:
                body[key] = value.isoformat() if isinstance(value, datetime) else value
        return _Call("POST", "/v1/search", lambda rows: [_hit(r) for r in rows], json=body)

    @staticmethod
    def memories(user_id: str, include_inactive: bool, as_of: datetime | None,
                 limit: int | None = None, offset: int = 0) -> _Call:
        params: dict[str, Any] = {"all": include_inactive, "offset": offset}
        if as_of is not None:
            params["as_of"] = as_of.isoformat()
        if limit is not None:
            params["limit"] = limit
        return _Call("GET", f"/v1/users/{user_id}/memories",
                     lambda rows: [StoredMemory.model_validate(r) for r in rows], params=params)

    @staticmethod
    def facts(user_id: str) -> _Call:
        return _Call("GET", f"/v1/users/{user_id}/facts", list)

    @staticmethod
    def audit(user_id: str, memory_id: str | None,
              batch_ids: Sequence[str] | None = None) -> _Call:
        params: dict[str, Any] = {"memory_id": memory_id} if memory_id else {}
        if batch_ids is not None:
            params["batch_id"] = list(batch_ids)
        return _Call("GET", f"/v1/users/{user_id}/audit",
                     lambda rows: [AuditEntry.model_validate(r) for r in rows],
                     params=params or None)

    @staticmethod
    def memory(user_id: str, memory_id: str) -> _Call:
        return _Call("GET", f"/v1/users/{user_id}/memories/{memory_id}",
                     StoredMemory.model_validate)

    @staticmethod
    def owner(memory_id: str) -> _Call:
        return _Call("GET", f"/v1/memories/{memory_id}/owner", lambda r: r["user_id"])

    @staticmethod
    def users() -> _Call:
        return _Call("GET", "/v1/users", list)

    @staticmethod
    def latest_turn(user_id: str, prefix: str) -> _Call:
        return _Call("GET", f"/v1/users/{user_id}/turns/latest", _turn, params={"prefix": prefix})

    @staticmethod
    def forget_turns(user_id: str, prefix: str) -> _Call:
        return _Call("DELETE", f"/v1/users/{user_id}/turns", lambda r: int(r["turns"]),
                     params={"prefix": prefix})

    @staticmethod
    def turn_metadata(user_id: str, refs: Sequence[str]) -> _Call:
        return _Call("POST", f"/v1/users/{user_id}/turn-metadata", dict,
                     json={"refs": list(refs)})

    @staticmethod
    def context(user_id: str, query: str, max_tokens: int, k: int) -> _Call:
        return _Call("POST", "/v1/context", lambda r: str(r["context"]),
                     json={"user_id": user_id, "query": query, "max_tokens": max_tokens,
                           "k": k})

    @staticmethod
    def forget(user_id: str, memory_id: str | None, with_sources: bool) -> _Call:
        if memory_id:
            return _Call("DELETE", f"/v1/users/{user_id}/memories/{memory_id}", _report,
                         params={"with_sources": with_sources})
        return _Call("DELETE", f"/v1/users/{user_id}", _report)

    @staticmethod
    def correct(user_id: str, memory_id: str, text: str) -> _Call:
        return _Call("PATCH", f"/v1/users/{user_id}/memories/{memory_id}",
                     StoredMemory.model_validate, json={"text": text})

    @staticmethod
    def access(limit: int) -> _Call:
        return _Call("GET", "/v1/access", list, params={"limit": limit})


def _config(url: str | None, api_key: str | None) -> tuple[str, dict[str, str]]:
    if url is None or api_key is None:
        from .settings import Settings  # noqa: PLC0415

        s = Settings()
        url = url or s.api_url
        if api_key is None and s.api_key is not None:
            api_key = s.api_key.get_secret_value()
    if not url:
        raise ValueError("HttpClient needs the API's URL: HttpClient(url=...) or MEMQ_API_URL")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return url.rstrip("/"), headers


class HttpClient:
    """Sync agent API over HTTP; one connection pool, opened on first use."""

    def __init__(self, url: str | None = None, api_key: str | None = None, *,
                 timeout: float = 30.0) -> None:
        base, headers = _config(url, api_key)
        self._http = httpx.Client(base_url=base, headers=headers, timeout=timeout)

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _do(self, call: _Call) -> Any:
        try:
            resp = self._http.request(call.method, call.path, json=call.json,
                                      params=call.params,
                                      timeout=call.timeout or httpx.USE_CLIENT_DEFAULT)
        except httpx.TransportError as exc:
            raise ApiError(503, f"nothing answered at {self._http.base_url} "
                                f"({type(exc).__name__}): is memq serve running there?",
                           answered=False) from None
        return call.parse(_checked(resp))

    def add(self, user_id: str, messages: str | Sequence[Mapping[str, Any] | Message],
            session_id: str | None = None, *,
            metadata: Mapping[str, Any] | None = None) -> list[str]:
        """Enqueue a conversation (chat messages, or one string: a message of the user's);
        returns its delivery ids at once."""
        return list(self._do(_Calls.add(user_id, messages, session_id, metadata)))

    def enqueue(self, batches: Iterable[IngestBatch]) -> list[str]:
        return _ids([self._do(c) for c in _Calls.enqueue(_lines(batches))])

    def submit(self, batches: Iterable[IngestBatch]) -> list[tuple[str, str]]:
        """``enqueue``, answering (delivery id, batch id as the audit trail names it: the
        tenant's user's)."""
        answers = [self._do(c) for c in _Calls.enqueue(_lines(batches))]
        return [pair for a in answers
                for pair in zip(a["delivery_ids"], a.get("batch_ids") or [], strict=True)]

    def status(self, delivery_ids: Sequence[str]) -> list[Status]:
        return list(self._do(_Calls.status(delivery_ids)))

    def wait(self, delivery_ids: Sequence[str], timeout: float = 300.0) -> list[Status]:
        """Until every delivery is done or dead-lettered (the API holds each request until
        they are, up to 20 s); TimeoutError otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            step = max(0.0, min(WAIT_STEP_S, deadline - time.monotonic()))
            statuses: list[Status] = self._do(_Calls.status(delivery_ids, step))
            if all(s.finished for s in statuses):
                return statuses
            if time.monotonic() >= deadline:
                waiting = sum(not s.finished for s in statuses)
                raise TimeoutError(f"{waiting} of {len(statuses)} deliveries still in flight "
                                   f"after {timeout:g}s")

    def search(self, user_id: str, query: str, k: int = 10, *, record: bool = False,
               threshold: float | None = None, types: Sequence[str] | None = None,
               kinds: Sequence[str] | None = None, since: datetime | None = None,
               until: datetime | None = None,
               statuses: Sequence[str] | None = None) -> list[Hit]:
        """As ``memq.Client.search``, filters included."""
        filters = {"threshold": threshold, "types": types, "kinds": kinds, "since": since,
                   "until": until, "statuses": statuses}
        return list(self._do(_Calls.search(user_id, query, k, record, filters)))

    def memories(self, user_id: str, *, include_inactive: bool = False,
                 as_of: datetime | None = None, limit: int | None = None,
                 offset: int = 0) -> list[StoredMemory]:
        return list(self._do(_Calls.memories(user_id, include_inactive, as_of, limit, offset)))

    def facts(self, user_id: str) -> list[dict[str, Any]]:
        return list(self._do(_Calls.facts(user_id)))

    def audit(self, user_id: str, memory_id: str | None = None, *,
              batch_ids: Sequence[str] | None = None) -> list[AuditEntry]:
        return list(self._do(_Calls.audit(user_id, memory_id, batch_ids)))

    def memory(self, user_id: str, memory_id: str) -> StoredMemory | None:
        """One memory of the user (any status); None when the user has none of that id."""
        try:
            found: StoredMemory = self._do(_Calls.memory(user_id, memory_id))
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise
        return found

    def owner(self, memory_id: str) -> str | None:
        """Whose memory this id is, among the key's tenant's users (None: none)."""
        owner: str | None = self._do(_Calls.owner(memory_id))
        return owner

    def users(self) -> list[str]:
        """The key's tenant's users, sorted."""
        return list(self._do(_Calls.users()))

    def latest_turn(self, user_id: str, prefix: str) -> dict[str, Any] | None:
        """The newest turn whose reference starts with ``prefix``; None when there is none."""
        found: dict[str, Any] | None = self._do(_Calls.latest_turn(user_id, prefix))
        return found

    def forget_turns(self, user_id: str, prefix: str) -> int:
        """Forget the turns whose reference starts with ``prefix`` and their memories."""
        return int(self._do(_Calls.forget_turns(user_id, prefix)))

    def turn_metadata(self, user_id: str, refs: Sequence[str]) -> dict[str, dict[str, Any]]:
        return dict(self._do(_Calls.turn_metadata(user_id, refs)))

    def context(self, user_id: str, query: str, *, max_tokens: int = 800, k: int = 20) -> str:
        return str(self._do(_Calls.context(user_id, query, max_tokens, k)))

    def forget(self, user_id: str, memory_id: str | None = None, *,
               with_sources: bool = False) -> ForgetReport:
        report: ForgetReport = self._do(_Calls.forget(user_id, memory_id, with_sources))
        return report

    def correct(self, user_id: str, memory_id: str, text: str) -> StoredMemory:
        """An audited correction (``memq.Client.correct``); ApiError 404: no such memory."""
        memory: StoredMemory = self._do(_Calls.correct(user_id, memory_id, text))
        return memory

    def access(self, limit: int = 100) -> list[dict[str, str]]:
        """The tenant's access record, newest first (an admin key)."""
        return list(self._do(_Calls.access(limit)))


class AsyncHttpClient:
    """The same API for asyncio agents, on httpx's async client."""

    def __init__(self, url: str | None = None, api_key: str | None = None, *,
                 timeout: float = 30.0) -> None:
        base, headers = _config(url, api_key)
        self._http = httpx.AsyncClient(base_url=base, headers=headers, timeout=timeout)

    async def __aenter__(self) -> AsyncHttpClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _do(self, call: _Call) -> Any:
        try:
            resp = await self._http.request(call.method, call.path, json=call.json,
                                            params=call.params,
                                            timeout=call.timeout or httpx.USE_CLIENT_DEFAULT)
        except httpx.TransportError as exc:
            raise ApiError(503, f"nothing answered at {self._http.base_url} "
                                f"({type(exc).__name__}): is memq serve running there?",
                           answered=False) from None
        return call.parse(_checked(resp))

    async def add(self, user_id: str, messages: str | Sequence[Mapping[str, Any] | Message],
                  session_id: str | None = None, *,
                  metadata: Mapping[str, Any] | None = None) -> list[str]:
        return list(await self._do(_Calls.add(user_id, messages, session_id, metadata)))

    async def enqueue(self, batches: Iterable[IngestBatch]) -> list[str]:
        return _ids([await self._do(c) for c in _Calls.enqueue(_lines(batches))])

    async def status(self, delivery_ids: Sequence[str]) -> list[Status]:
        return list(await self._do(_Calls.status(delivery_ids)))

    async def wait(self, delivery_ids: Sequence[str], timeout: float = 300.0) -> list[Status]:
        deadline = time.monotonic() + timeout
        while True:
            step = max(0.0, min(WAIT_STEP_S, deadline - time.monotonic()))
            statuses: list[Status] = await self._do(_Calls.status(delivery_ids, step))
            if all(s.finished for s in statuses):
                return statuses
            if time.monotonic() >= deadline:
                raise TimeoutError(f"deliveries still in flight after {timeout:g}s")

    async def search(self, user_id: str, query: str, k: int = 10, *, record: bool = False,
                     threshold: float | None = None, types: Sequence[str] | None = None,
                     kinds: Sequence[str] | None = None, since: datetime | None = None,
                     until: datetime | None = None,
                     statuses: Sequence[str] | None = None) -> list[Hit]:
        filters = {"threshold": threshold, "types": types, "kinds": kinds, "since": since,
                   "until": until, "statuses": statuses}
        return list(await self._do(_Calls.search(user_id, query, k, record, filters)))

    async def memories(self, user_id: str, *, include_inactive: bool = False,
                       as_of: datetime | None = None, limit: int | None = None,
                       offset: int = 0) -> list[StoredMemory]:
        return list(await self._do(_Calls.memories(user_id, include_inactive, as_of, limit,
                                                   offset)))

    async def facts(self, user_id: str) -> list[dict[str, Any]]:
        return list(await self._do(_Calls.facts(user_id)))

    async def audit(self, user_id: str, memory_id: str | None = None, *,
                    batch_ids: Sequence[str] | None = None) -> list[AuditEntry]:
        return list(await self._do(_Calls.audit(user_id, memory_id, batch_ids)))

    async def memory(self, user_id: str, memory_id: str) -> StoredMemory | None:
        try:
            found: StoredMemory = await self._do(_Calls.memory(user_id, memory_id))
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise
        return found

    async def owner(self, memory_id: str) -> str | None:
        owner: str | None = await self._do(_Calls.owner(memory_id))
        return owner

    async def turn_metadata(self, user_id: str, refs: Sequence[str]
                            ) -> dict[str, dict[str, Any]]:
        return dict(await self._do(_Calls.turn_metadata(user_id, refs)))

    async def context(self, user_id: str, query: str, *, max_tokens: int = 800,
                      k: int = 20) -> str:
        return str(await self._do(_Calls.context(user_id, query, max_tokens, k)))

    async def forget(self, user_id: str, memory_id: str | None = None, *,
                     with_sources: bool = False) -> ForgetReport:
        report: ForgetReport = await self._do(_Calls.forget(user_id, memory_id, with_sources))
        return report

    async def correct(self, user_id: str, memory_id: str, text: str) -> StoredMemory:
        memory: StoredMemory = await self._do(_Calls.correct(user_id, memory_id, text))
        return memory

    async def access(self, limit: int = 100) -> list[dict[str, str]]:
        return list(await self._do(_Calls.access(limit)))
