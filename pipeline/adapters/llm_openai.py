"""Extractor and Judge over any OpenAI-compatible chat completions endpoint.

Retries are ours (tenacity), not the client's (``max_retries=0``), so one policy
covers both transport failures and unusable answers:

* 429, 5xx, timeouts, connection errors: retried with jittered exponential backoff;
  when the attempts run out → :class:`~pipeline.errors.TransientError` (the worker
  retries the whole message later).
* an answer that is not JSON or does not fit the prompt's answer model: asked again;
  when the attempts run out → :class:`~pipeline.errors.LLMAnswerError` (dead letter).
* any other HTTP error (400, 401, 403, 404, 422, …): retrying cannot help →
  :class:`~pipeline.errors.PermanentError` at once.

Logs carry model, purpose, attempt and error class; never prompt or answer text
(answer excerpts only at debug level).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

import openai
import structlog
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionMessageParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.chat.completion_create_params import ResponseFormat
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
    wait_random,
)

from ...schemas import CandidateMemory, StoredMemory, Turn
from ..errors import LLMAnswerError, PermanentError, TransientError
from ..ports import Judgement
from ..prompts import extract_memories, resolve_memory

log = structlog.get_logger(__name__)

T = TypeVar("T")
# how an answer's shape is asked for: its JSON schema, or (servers without it) any JSON object
Structured = Literal["json_schema", "json_object"]


_EXCERPT = 200

# APITimeoutError is a subclass of APIConnectionError; both listed for clarity.
_TRANSIENT: tuple[type[Exception], ...] = (
    openai.RateLimitError,
    openai.APITimeoutError,
    openai.APIConnectionError,
    openai.InternalServerError,
)


class _BadAnswer(Exception):
    """An answer that could not be used. ``reason`` holds no answer text."""

    def __init__(self, reason: str, answer: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.answer = answer


def _retryable(error: BaseException) -> bool:
    if isinstance(error, (*_TRANSIENT, _BadAnswer)):
        return True
    # 408 Request Timeout is a timeout, whatever its 4xx number says.
    return isinstance(error, openai.APIStatusError) and error.status_code == 408


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _EXCERPT else flat[:_EXCERPT] + "…"


def _message(message: dict[str, str]) -> ChatCompletionMessageParam:
    role, content = message["role"], message["content"]
    if role == "system":
        return ChatCompletionSystemMessageParam(role="system", content=content)
    if role == "assistant":
        return ChatCompletionAssistantMessageParam(role="assistant", content=content)
    if role == "user":
        return ChatCompletionUserMessageParam(role="user", content=content)
    raise ValueError(f"unsupported message role {role!r}")


class OpenAIChat:
    """One OpenAI client and the retry policy around a JSON chat completion."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        timeout_s: float = 60.0,
        max_attempts: int = 3,
        backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
        retry_transport: bool = True,
        structured: Structured = "json_schema",
    ) -> None:
        """``max_attempts`` bounds asking again after an unusable answer; transport failures
        (429, 5xx, timeouts) are retried here too unless ``retry_transport`` is False: a
        worker leaves those to its task's backoff, so there is one retry layer, not two."""
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.model = model
        self.retry_transport = retry_transport
        self.structured: Structured = structured
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        # answers received and their tokens, for the caller's metrics (read, never reset)
        self.usage: dict[str, int] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
        self._counting = threading.Lock()  # a plan's judge calls run side by side
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenAIChat:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def complete_json(
        self, messages: Sequence[dict[str, str]], parse: Callable[[str], T], *, purpose: str,
        schema: dict[str, Any] | None = None,
    ) -> T:
        """Ask for a JSON object (temperature 0) and return ``parse(answer)``.

        ``schema``: the answer's JSON schema, sent as ``response_format`` ``json_schema``
        (``structured``), so a server that constrains its output (OpenAI, llama.cpp) can only
        answer in that shape; a server that refuses the format (HTTP 400 naming it) is asked
        for a plain JSON object from then on. ``parse`` raises :class:`ValueError` (pydantic's
        ValidationError is one) for an unusable answer; its message should not contain the
        answer text.
        """
        params = [_message(m) for m in messages]
        retrying = Retrying(
            stop=stop_after_attempt(self.max_attempts),
            # backoff_s · 2^(n-1), capped, plus up to backoff_s of jitter
            wait=wait_exponential(multiplier=self.backoff_s, max=self.max_backoff_s)
            + wait_random(0, self.backoff_s),
            retry=retry_if_exception(
                lambda e: _retryable(e) and (self.retry_transport or isinstance(e, _BadAnswer))),
            before_sleep=lambda state: self._log_retry(state, purpose),
            reraise=True,
        )

        def attempt() -> T:
            return self._attempt(params, parse, purpose, schema)

        try:
            return retrying(attempt)
        except _BadAnswer as error:
            raise LLMAnswerError(
                f"LLM {self.model} gave no usable {purpose} answer in {self.max_attempts} "
                f"attempt(s): {error.reason}; answer began: {_excerpt(error.answer)!r}"
            ) from error
        except openai.APIStatusError as error:
            if not _retryable(error):
                raise
            raise TransientError(
                f"LLM {self.model} {purpose} failed {self.max_attempts} time(s), last: "
                f"HTTP {error.status_code} {type(error).__name__}"
            ) from error
        except openai.APIConnectionError as error:
            raise TransientError(
                f"LLM {self.model} {purpose} failed {self.max_attempts} time(s), last: "
                f"{type(error).__name__}: {error}"
            ) from error

    def _format(self, purpose: str, schema: dict[str, Any] | None) -> ResponseFormat:
        if schema is None or self.structured == "json_object":
            return {"type": "json_object"}
        return {"type": "json_schema",
                "json_schema": {"name": purpose, "schema": schema, "strict": True}}

    def _attempt(
        self, messages: list[ChatCompletionMessageParam], parse: Callable[[str], T], purpose: str,
        schema: dict[str, Any] | None = None,
    ) -> T:
        started = time.perf_counter()
        response_format = self._format(purpose, schema)
        try:
            response = self._client.chat.completions.create(
                model=self.model,
                messages=messages,
                temperature=0,
                response_format=response_format,
            )
        except openai.APIStatusError as error:
            if _retryable(error):
                raise
            if (response_format["type"] == "json_schema" and error.status_code == 400
                    and "response_format" in str(error).lower().replace(" ", "_")):
                # a server without schema-constrained output: plain JSON from now on
                log.warning("llm_no_json_schema", model=self.model, purpose=purpose)
                self.structured = "json_object"
                return self._attempt(messages, parse, purpose, schema)
            raise PermanentError(
                f"LLM {self.model} rejected the {purpose} request: HTTP {error.status_code} "
                f"{type(error).__name__}: {_excerpt(str(error))}"
            ) from error
        except openai.APIResponseValidationError as error:
            raise _BadAnswer(f"malformed response: {type(error).__name__}", "") from error
        choice = response.choices[0] if response.choices else None
        content = choice.message.content if choice is not None else None
        if choice is None or not content:
            raise _BadAnswer("empty answer", content or "")
        if choice.finish_reason == "length":
            raise _BadAnswer("answer cut off (finish_reason=length)", content)
        try:
            result = parse(content)
        except ValueError as error:
            log.debug("llm_bad_answer", purpose=purpose, excerpt=_excerpt(content))
            raise _BadAnswer(str(error) or type(error).__name__, content) from error
        usage = response.usage
        with self._counting:
            self.usage["calls"] += 1
            if usage:
                self.usage["prompt_tokens"] += usage.prompt_tokens or 0
                self.usage["completion_tokens"] += usage.completion_tokens or 0
        log.debug(
            "llm_call",
            purpose=purpose,
            model=self.model,
            seconds=round(time.perf_counter() - started, 3),
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
        )
        return result

    def _log_retry(self, state: RetryCallState, purpose: str) -> None:
        error = state.outcome.exception() if state.outcome is not None else None
        cause = error.__cause__ if isinstance(error, _BadAnswer) else None
        log.warning(
            "llm_retry",
            purpose=purpose,
            model=self.model,
            attempt=state.attempt_number,
            max_attempts=self.max_attempts,
            error="bad_answer" if isinstance(error, _BadAnswer) else type(error).__name__,
            cause=type(cause).__name__ if cause is not None else None,
            reason=error.reason if isinstance(error, _BadAnswer) else None,
            wait_s=round(state.next_action.sleep, 3) if state.next_action else None,
        )


class OpenAIExtractor:
    """:class:`~pipeline.ports.Extractor` for one chunk of turns (the caller chunks)."""

    def __init__(self, chat: OpenAIChat) -> None:
        self.chat = chat
        self.name: str = f"openai:{chat.model}"
        self.prompt_version: str | None = extract_memories.VERSION

    def extract(self, turns: Sequence[Turn]) -> list[CandidateMemory]:
        if not turns:
            return []
        chunk = extract_memories.ExtractionInput.of(turns)
        answer = self.chat.complete_json(
            extract_memories.render(chunk), extract_memories.parse_answer, purpose="extract",
            schema=extract_memories.SCHEMA)
        mapped = extract_memories.to_candidates(answer, chunk)
        candidates = [c for c in mapped if extract_memories.grounded(c, turns)]
        log.info(
            "llm_extracted",
            model=self.chat.model,
            turns=len(turns),
            proposed=len(answer.memories) + answer.rejected,
            kept=len(candidates),
            dropped=len(answer.memories) + answer.rejected - len(candidates),
            ungrounded=len(mapped) - len(candidates),
        )
        return candidates


class OpenAIJudge:
    """:class:`~pipeline.ports.Judge`: duplicate / refinement / conflict / new."""

    def __init__(self, chat: OpenAIChat) -> None:
        self.chat = chat
        self.name: str = f"openai:{chat.model}"
        self.prompt_version: str = resolve_memory.VERSION

    def judge(self, new: CandidateMemory, existing: StoredMemory) -> Judgement:
        answer = self.chat.complete_json(
            resolve_memory.render(new, existing), resolve_memory.parse_answer, purpose="resolve",
            schema=resolve_memory.SCHEMA)
        return resolve_memory.to_judgement(answer)
