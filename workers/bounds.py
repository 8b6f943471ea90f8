"""Bounded input before any work: a request body over the size limit is a 413 and JSON
nested deeper than the depth limit a 400, before it is parsed and before its key is checked
(an unauthenticated 50 MB body, or JSON nested 100,000 deep, costs the server nothing but the
bytes it reads up to the limit). A pure ASGI middleware: it reads the body once, in chunks,
and hands the app the same bytes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from . import problems

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def too_deep(body: bytes, limit: int) -> bool:
    """Whether JSON text nests objects and arrays deeper than ``limit`` (brackets inside
    strings do not count; the text need not be valid JSON)."""
    depth, in_string, escaped = 0, False, False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > limit:
                return True
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return False


class BoundedBody:
    def __init__(self, app: App, *, max_bytes: int, max_depth: int) -> None:
        self.app, self.max_bytes, self.max_depth = app, max_bytes, max_depth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await _refuse(send, 413, self._too_large())
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await _refuse(send, 413, self._too_large())
                return
            chunks.append(chunk)
            more = bool(message.get("more_body"))
        body = b"".join(chunks)
        if body and too_deep(body, self.max_depth):
            await _refuse(send, 400, f"JSON nested deeper than {self.max_depth} levels "
                                     "(MEMQ_MAX_JSON_DEPTH)")
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if sent:
                return await receive()  # the disconnect, when the client goes
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    def _too_large(self) -> str:
        return f"request body over {self.max_bytes} bytes (MEMQ_MAX_BODY_BYTES)"


async def _refuse(send: Send, status: int, detail: str) -> None:
    body = problems.encoded(status, detail)
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", problems.MEDIA_TYPE.encode()),
                            (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})
