"""``memq mcp``: the MCP server for one user, driven by the official SDK's client over stdio
and over streamable HTTP, on the real services and a real worker."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from typing import Any

import httpx
import pytest

from integration.conftest import MEMQ, REPO, Worker, free_port, memq_env

pytestmark = pytest.mark.integration

def _data(result: Any) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        data = result.structured_content
        return data.get("result", data) if isinstance(data, dict) else data
    return json.loads(result.content[0].text)


async def _session(target: Any, user: str, other: str) -> dict[str, Any]:
    from mcp import Client

    out: dict[str, Any] = {}
    async with Client(target) as client:
        tools = await client.list_tools()
        out["tools"] = sorted(t.name for t in tools.tools)
        done = await client.call_tool("remember", {"turns": [
            {"role": "user", "content": "I live in Lisbon."},
            {"role": "assistant", "content": "Lovely!"}], "wait": True})
        out["remember"] = _data(done)
        # the same turns again (a retried call): kept once
        again = await client.call_tool("remember", {"turns": [
            {"role": "user", "content": "I live in Lisbon."},
            {"role": "assistant", "content": "Lovely!"}], "wait": True})
        out["again"] = _data(again)
        out["search"] = _data(await client.call_tool("search_memory",
                                                     {"query": "where does the user live?"}))
        out["context"] = _data(await client.call_tool(
            "get_context", {"query": "where does the user live?", "max_tokens": 200}))
        out["memories"] = _data(await client.call_tool("list_memories", {}))
        # a failure reaches the model as one line with its cause
        out["too_long"] = await client.call_tool("remember", {"turns": [
            {"role": "user", "content": "x" * 40_000}]})
        # a tool cannot name another user: there is no such argument
        out["other"] = await client.call_tool("search_memory", {"query": "x", "user_id": other})
        if out["memories"]:
            out["forget"] = _data(await client.call_tool(
                "forget_memory", {"memory_id": out["memories"][0]["id"]}))
            out["after"] = _data(await client.call_tool("list_memories", {}))
    return out


def _check(out: dict[str, Any]) -> None:
    assert out["tools"] == ["forget_memory", "get_context", "list_memories", "remember",
                            "search_memory"]
    assert out["remember"]["states"] == ["done"]
    assert out["again"]["states"] == ["done"]
    said = [h for h in out["search"] if h["type"] == "episode"
            and h["content"] == "I live in Lisbon."]
    assert len(said) == 1, out["search"]  # one turn, though remembered twice
    too_long = out["too_long"]
    assert too_long.is_error
    message = too_long.content[0].text
    assert message.startswith("Error executing tool remember: content: ") and (
        "32000" in message), message
    assert "\n" not in message and "Traceback" not in message
    assert any("Lisbon" in h["content"] for h in out["search"]), out["search"]
    assert "Lisbon" in out["context"]
    assert [m["content"] for m in out["memories"]] == ["The user lives in Lisbon."]
    # an argument the tool does not have is refused, or ignored: never another user's
    other = out["other"]
    assert other.is_error or all("Lisbon" in h["content"] or h["type"] == "episode"
                                 for h in _data(other)), other
    assert out["forget"]["chroma"] + out["forget"]["graph"] > 0
    assert out["after"] == []


def test_mcp_over_stdio(worker: Worker, user_id: str) -> None:
    from mcp import StdioServerParameters

    params = StdioServerParameters(command=MEMQ[0],
                                   args=[*MEMQ[1:], "mcp", "--user", user_id, "--local"],
                                   env=memq_env(), cwd=str(REPO))
    out = asyncio.run(_session(params, user_id, "someone-else"))
    _check(out)


def test_mcp_over_streamable_http(worker: Worker, user_id: str) -> None:
    port = free_port()
    proc = subprocess.Popen([*MEMQ, "mcp", "--user", user_id, "--local", "--transport",
                             "streamable-http", "--port", str(port)], cwd=REPO, env=memq_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=1)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.stderr.read().decode()[-2000:] \
                    if proc.stderr else "exited"
                time.sleep(0.2)
        out = asyncio.run(_session(f"http://127.0.0.1:{port}/mcp", user_id, "someone-else"))
        _check(out)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_mcp_refuses_a_port_that_is_none() -> None:
    res = subprocess.run([*MEMQ, "mcp", "--user", "u1", "--port", "0"], cwd=REPO,
                         env=memq_env(), capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode == 2 and "--port 0" in res.stderr, res.stderr


def test_mcp_without_the_api_or_local_refuses_with_its_reason() -> None:
    """An MCP host passes no environment unless its config says so: without MEMQ_API_URL the
    server would open the stores directly, outside any tenant."""
    res = subprocess.run([*MEMQ, "mcp", "--user", "u1"], cwd=REPO, env=memq_env(),
                         capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode == 2 and "MEMQ_API_URL" in res.stderr and "--local" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
