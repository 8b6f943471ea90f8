"""Versioned LLM prompts: each module renders chat messages, defines the answer model
and maps a validated answer back to domain values. Pure: no I/O, no client.

A prompt's ``VERSION`` changes whenever its wording or answer shape changes, so stored
memories and audit entries can say which prompt produced them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

__all__ = ["AnswerError", "describe_validation_error", "load_json"]

# Some OpenAI-compatible servers wrap JSON in a Markdown fence despite json_object mode.
_FENCE = re.compile(r"^```(?:json|JSON)?\s*\n?(.*?)\n?\s*```$", re.DOTALL)


class AnswerError(ValueError):
    """The LLM's answer is not what the prompt asked for.

    The message never contains the answer text (it may hold user data), only what is
    wrong with it, so it is safe to log at any level.
    """


def load_json(text: str) -> Any:
    """Parse an answer as JSON, tolerating surrounding whitespace and a Markdown fence."""
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as error:
        raise AnswerError(
            f"not JSON: {error.msg} (line {error.lineno}, column {error.colno})"
        ) from error


def describe_validation_error(error: ValidationError, limit: int = 5) -> str:
    """A one-line summary of a pydantic error without the offending input values."""
    problems = [
        f"{'.'.join(str(part) for part in item['loc']) or '<root>'}: {item['msg']}"
        for item in error.errors(include_url=False, include_input=False, include_context=False)
    ]
    more = f" (+{len(problems) - limit} more)" if len(problems) > limit else ""
    return "; ".join(problems[:limit]) + more
