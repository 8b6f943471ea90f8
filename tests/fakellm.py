"""A scriptable OpenAI-compatible chat completions server for tests (stdlib only).

In-process::

    with FakeLLM() as llm:
        llm.enqueue(("status", 429), ("json", {"memories": []}))
        chat = OpenAIChat(base_url=llm.base_url, api_key="test", model="fake")
        ...
        assert len(llm.requests) == 2

Each request to ``POST /v1/chat/completions`` consumes one queued behaviour:

* ``("json", obj)``            answer with ``json.dumps(obj)`` as the message content
* ``("raw", text)``            answer with ``text`` as the content (malformed JSON …)
* ``("status", code)``         an OpenAI-shaped error response (429, 500, 401, …);
  ``("status", code, message)`` sets the error message
* ``("delay", seconds, obj)``  wait, then answer like ``("json", obj)``
* ``("disconnect",)``          close the connection without answering

With the queue empty, ``default(request_body) -> content`` answers (by default
``{"memories": []}``), so an integration test can plug in a rule-based responder.

As a separate process: ``python tests/fakellm.py --port P`` serves the default
responder and prints its base URL on the first line of stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import random
import re
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

Responder = Callable[[dict[str, Any]], str]
Behaviour = tuple[Any, ...]

_ERROR_TYPES = {
    400: ("invalid_request_error", "Bad request"),
    401: ("invalid_request_error", "Incorrect API key provided"),
    403: ("invalid_request_error", "Permission denied"),
    404: ("invalid_request_error", "The model does not exist"),
    408: ("timeout", "Request timed out"),
    422: ("invalid_request_error", "Unprocessable entity"),
    429: ("rate_limit_error", "Rate limit reached for requests"),
}


def hashed_embedding(text: str, dims: int = 64) -> list[float]:
    vec = [0.0] * dims
    for word in text.lower().split():
        digest = hashlib.sha256(word.strip(".,!?").encode()).digest()
        vec[digest[0] % dims] += 1.0 if digest[1] % 2 else -1.0
    norm = sum(x * x for x in vec) ** 0.5 or 1.0
    return [x / norm for x in vec]


def empty_memories(_request: dict[str, Any]) -> str:
    return json.dumps({"memories": []})


_TURN_LINE = re.compile(r'^\[(\d+)\] (\w+) at (\S+): (".*")$')


def rules_responder(request: dict[str, Any]) -> str:
    """Answer an extraction prompt the way memq's offline extractor reads the same turns, so
    that a run through the LLM path can be held against the same oracle."""
    from memq.pipeline.rules import RuleExtractor
    from memq.schemas import Turn

    prompt = request["messages"][-1]["content"]
    turns = []
    for line in prompt.splitlines():
        m = _TURN_LINE.match(line)
        if m:
            turns.append(Turn(turn_id=f"r{m[1]}", role=m[2], content=json.loads(m[4]),
                              timestamp=m[3]))
    items = [{"content": c.content, "kind": str(c.kind), "confidence": c.confidence,
              "importance": c.importance, "entities": c.entities,
              "triples": [t.model_dump() for t in c.triples],
              "replaces": [t.model_dump() for t in c.replaces],
              "source": [int(t[1:]) for t in c.source_turn_ids]}
             for c in RuleExtractor().extract(turns)]
    return json.dumps({"memories": items})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeLLM

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, addr = super().get_request()
        # Without this, Nagle + delayed ACK cost ~40 ms on every keep-alive request.
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn, addr


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like the real API
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.rstrip("/") == "/v1/embeddings":
            self._embeddings(json.loads(raw or b"{}"))
            return
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._error(404, f"Unknown path {self.path}")
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._error(400, "Request body is not JSON")
            return
        behaviour = fake._record(body) or fake.storm_behaviour()
        # BrokenPipe/ConnectionReset: the client gave up (its timeout), nobody to answer.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._act(fake, body, behaviour)

    def _embeddings(self, body: dict[str, Any]) -> None:
        """A deterministic stand-in embedding model: hashed bag of words, 64 dims."""
        texts = body.get("input") or []
        texts = [texts] if isinstance(texts, str) else texts
        data = [{"object": "embedding", "index": i, "embedding": hashed_embedding(t)}
                for i, t in enumerate(texts)]
        self._send(200, {"object": "list", "data": data, "model": body.get("model", "fake"),
                         "usage": {"prompt_tokens": 0, "total_tokens": 0}})

    def _act(self, fake: FakeLLM, body: dict[str, Any], behaviour: Behaviour | None) -> None:
        if behaviour is None:
            self._answer(body, fake.default(body))
            return
        action = behaviour[0]
        if action == "json":
            self._answer(body, json.dumps(behaviour[1]))
        elif action == "raw":
            self._answer(body, str(behaviour[1]))
        elif action == "status":
            self._error(int(behaviour[1]), behaviour[2] if len(behaviour) > 2 else None)
        elif action == "delay":
            if fake._stopping.wait(float(behaviour[1])):
                return
            self._answer(body, json.dumps(behaviour[2]))
        elif action == "disconnect":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
        else:
            self._error(500, f"fakellm: unknown behaviour {action!r}")

    def _answer(self, request: dict[str, Any], content: str) -> None:
        completion_tokens = max(1, len(content) // 4)
        prompt_tokens = max(1, len(json.dumps(request.get("messages", []))) // 4)
        self._send(
            200,
            {
                "id": "chatcmpl-" + uuid.uuid4().hex[:24],
                "object": "chat.completion",
                "created": int(time.time()),
                "model": request.get("model", "fake"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content, "refusal": None},
                        "logprobs": None,
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
        )

    def _error(self, status: int, message: str | None) -> None:
        kind, default = _ERROR_TYPES.get(
            status, ("server_error" if status >= 500 else "invalid_request_error", "Error")
        )
        self._send(
            status,
            {
                "error": {
                    "message": message or default,
                    "type": kind,
                    "param": None,
                    "code": kind if status == 429 else None,
                }
            },
        )

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class FakeLLM:
    """The server; a context manager that listens on ``host:port`` (0 = ephemeral)."""

    def __init__(
        self, default: Responder = empty_memories, *, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.default = default
        self._host, self._port = host, port
        self._lock = threading.Lock()
        self._queue: deque[Behaviour] = deque()
        self._requests: list[dict[str, Any]] = []
        self._stopping = threading.Event()
        self.storm = 0.0  # with the queue empty, this fraction of requests fail...
        self.storm_until = 0.0  # ...until this time.monotonic()
        self._rng = random.Random(7)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- scripting ---------------------------------------------------------------
    def enqueue(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self._queue.extend(behaviours)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request body received so far, in order (a copy)."""
        with self._lock:
            return list(self._requests)

    def storm_behaviour(self) -> Behaviour | None:
        """During a storm: 429, 500, or an answer slower than any client timeout."""
        if time.monotonic() >= self.storm_until or self._rng.random() >= self.storm:
            return None
        return self._rng.choice([("status", 429), ("status", 500),
                                 ("delay", 30.0, {"memories": []})])

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self._requests.clear()

    def _record(self, body: dict[str, Any]) -> Behaviour | None:
        with self._lock:
            self._requests.append(body)
            return self._queue.popleft() if self._queue else None

    # -- lifecycle ---------------------------------------------------------------
    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeLLM is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> FakeLLM:
        self._stopping.clear()
        server = _Server((self._host, self._port), _Handler)
        server.fake = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.02},
            daemon=True,
            name="fakellm",
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--rules", action="store_true",
                        help="answer as memq's offline extractor reads the turns")
    parser.add_argument("--storm", type=float, default=0.0,
                        help="fraction of requests that fail (429, 500, hang)")
    parser.add_argument("--storm-seconds", type=float, default=0.0)
    args = parser.parse_args(argv)
    with FakeLLM(rules_responder if args.rules else empty_memories, host=args.host,
                 port=args.port) as llm:
        llm.storm, llm.storm_until = args.storm, time.monotonic() + args.storm_seconds
        print(llm.base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
