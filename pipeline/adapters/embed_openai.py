"""OpenAI-compatible embeddings (optional). The model id stored with vectors is
``openai:<model>``, so vectors of this and the offline model are never compared."""

from __future__ import annotations

from collections.abc import Sequence

import openai

from ..errors import PermanentError, TransientError
from ..ports import Vector


class OpenAIEmbedder:
    def __init__(self, *, base_url: str | None, api_key: str, model: str,
                 timeout_s: float = 30.0, batch_size: int = 128) -> None:
        self.model_id = f"openai:{model}"
        self._model = model
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s,
                                     max_retries=2)
        self._batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        out: list[Vector] = []
        for start in range(0, len(texts), self._batch_size):
            chunk = list(texts[start : start + self._batch_size])
            try:
                answer = self._client.embeddings.create(model=self._model, input=chunk)
            except (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError,
                    openai.InternalServerError) as exc:
                raise TransientError(f"embedding call failed: {exc}") from exc
            except openai.APIStatusError as exc:
                raise PermanentError(f"embedding call refused: {exc}") from exc
            out.extend(item.embedding for item in sorted(answer.data, key=lambda d: d.index))
        return out
