"""``memq mcp``: memq as an MCP server (the official Python SDK's ``MCPServer``), over stdio
(an MCP host such as Claude Desktop or an IDE launches it) or streamable HTTP.

One server serves **one user**, named when it starts (``--user``): no tool takes a user id,
so a model cannot read or write another user's memory whatever it asks. With ``MEMQ_API_URL``
(and ``MEMQ_API_KEY``) set, the server talks to ``memq serve`` over HTTP with that key: the
user is then the key's tenant's, and the key's scopes hold. Otherwise (``--local``) it reaches
the stores directly, as ``memq.Client`` does, for a user of ``MEMQ_TENANT`` (``--tenant``).

Tools: ``remember`` (turns in; returns at once, or when applied with ``wait``),
``search_memory``, ``get_context`` (the prompt-ready block), ``list_memories`` and
``forget_memory`` (one memory, in every store). The streamable HTTP transport listens on
loopback unless told otherwise; it has no authentication of its own (the SDK's OAuth is not
wired): expose it only behind a proxy that authenticates. A tool that fails for a reason
memq knows (bad input, a refusal, a store down) says it in one line to the model.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, Field

from .api import hit_json, json_default

T = TypeVar("T")


class _Memory(Protocol):
    """What the tools need of a client: ``memq.Client`` and ``memq.HttpClient`` both are."""

    def add(self, user_id: str, messages: Any, session_id: str | None = None) -> list[str]: ...

    def wait(self, delivery_ids: Any, timeout: float = ...) -> Any: ...

    def search(self, user_id: str, query: str, k: int = 10) -> Any: ...

    def context(self, user_id: str, query: str, *, max_tokens: int = ...) -> str: ...

    def memories(self, user_id: str, *, include_inactive: bool = ...) -> Any: ...

    def forget(self, user_id: str, memory_id: str | None = ...) -> Any: ...


class Turn(BaseModel):
    """One message of the conversation."""

    role: Literal["user", "assistant", "system", "tool"] = "user"
    content: str = Field(min_length=1)
    name: str | None = Field(default=None, description="who said it, when several people talk")


def _client(tenant: str | None = None) -> _Memory:
    from . import wiring  # noqa: PLC0415

    s = wiring.settings()
    if s.api_url:
        from .http_client import HttpClient  # noqa: PLC0415

        return HttpClient()
    from .api import Client  # noqa: PLC0415

    return Client(tenant=tenant)


def _plain(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if hasattr(value, "to_json"):
        return value.to_json()
    return json_default(value)


def _anticipated() -> tuple[type[Exception], ...]:
    """What a tool call can meet that is not a crash: bad input, the API's refusal, a store
    down, a wait that ran out."""
    from ..pipeline.errors import MemqError  # noqa: PLC0415
    from .http_client import ApiError  # noqa: PLC0415

    return (ValueError, MemqError, ApiError, TimeoutError, ConnectionError)


def _tool(fn: Callable[..., T]) -> Callable[..., T]:
    """A tool whose anticipated failures reach the model as one line with their cause (the
    SDK shows only "Error executing tool NAME" for any other exception)."""
    from mcp.server.mcpserver.exceptions import ToolError  # noqa: PLC0415

    expected = _anticipated()

    @functools.wraps(fn)  # the SDK reads the signature through __wrapped__
    def run(*args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except expected as exc:  # the SDK puts "Error executing tool NAME: " before it
            raise ToolError(_cause(exc)) from exc
    return run


def _cause(exc: Exception) -> str:
    """One line: pydantic's errors by field (its first line only counts them), else the
    exception's first line."""
    from pydantic import ValidationError  # noqa: PLC0415

    if isinstance(exc, ValidationError):
        text = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}"
                         for e in exc.errors())
    else:
        text = (str(exc).splitlines() or [type(exc).__name__])[0]
    return text[:300]


def build(user_id: str, client: _Memory | None = None) -> Any:
    """The MCP server for ``user_id`` (an ``mcp.server.MCPServer``)."""
    from mcp.server import MCPServer  # noqa: PLC0415

    memory = client if client is not None else _client()
    server = MCPServer("memq", instructions=(
        "Long-term memory of one user. Call search_memory or get_context before answering "
        "about the user; call remember with what the user said worth keeping."))

    @server.tool()
    @_tool
    def remember(turns: list[Turn], session_id: str | None = None,
                 wait: bool = False) -> dict[str, Any]:
        """Keep these turns of the conversation. Returns at once (memq applies them in the
        background), or when they are applied if ``wait``. The same turns remembered again
        in a session (a retried call) are kept once."""
        # no timestamp: each turn is dated now, and its id follows from its text alone, so
        # a repeated call names the same turns (a timestamp made a second copy of each)
        messages = [t.model_dump(exclude_none=True) for t in turns]
        ids = memory.add(user_id, messages, session_id)
        if not wait:
            return {"delivery_ids": ids, "state": "queued"}
        statuses = memory.wait(ids, 120.0)
        return {"delivery_ids": ids, "states": [s.state for s in statuses]}

    @server.tool()
    @_tool
    def search_memory(query: str, k: int = 10) -> list[dict[str, Any]]:
        """The user's memories and past turns that best match ``query``, best first."""
        return [hit_json(h) for h in memory.search(user_id, query, k)]

    @server.tool()
    @_tool
    def get_context(query: str, max_tokens: int = 800) -> str:
        """A prompt-ready block of what memq knows about ``query``: the memories (current,
        then no longer true), then the dated turns."""
        return memory.context(user_id, query, max_tokens=max_tokens)

    @server.tool()
    @_tool
    def list_memories(include_inactive: bool = False) -> list[dict[str, Any]]:
        """The user's current memories (every one, superseded and archived too, if asked)."""
        return [_plain(m) for m in memory.memories(user_id, include_inactive=include_inactive)]

    @server.tool()
    @_tool
    def forget_memory(memory_id: str) -> dict[str, Any]:
        """Forget one memory in every store (the audit keeps a content-free tombstone)."""
        return dict(_plain(memory.forget(user_id, memory_id)))

    return server


def serve(user_id: str, transport: str, host: str, port: int,
          tenant: str | None = None) -> None:
    import threading  # noqa: PLC0415

    from .api import Client  # noqa: PLC0415
    from .warm import warm_reads  # noqa: PLC0415

    memory = _client(tenant)
    server = build(user_id, memory)
    if isinstance(memory, Client):  # searched here, not over the API
        # the agent's first recall finds the model loaded, the stores connected and Neo4j's
        # plans kept (MEMQ_WARM=off: not); in the background, so the handshake is answered
        # at once
        threading.Thread(target=warm_reads, args=("memq mcp",), kwargs={"keep": True},
                         name="memq-warm", daemon=True).start()
    if transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=host, port=port)
