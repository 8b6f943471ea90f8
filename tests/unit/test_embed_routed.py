"""Each text is embedded by a model that reads its script, into its own block of one vector:
texts of different routes never meet (cosine 0); USE reads Chinese where MiniLM cannot."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from memq.pipeline.adapters.embed_routed import ScriptRouted, UseEmbedder, reads_cjk


@pytest.mark.parametrize(("text", "cjk"), [
    ("我搬到上海了", True),
    ("Mia on 8 May 2023: 我搬到上海了", True),  # the speaker's prefix is three words
    ("iPhone 15 到了", True),
    ("用户使用编辑器VS Code。", True),
    ("I love 饺子 so much", False),
    ("The user lives in Lisbon.", False),
    ("Café déjà vu", False),
    ("ok", False),
    ("", False),
])
def test_a_text_goes_to_the_model_of_its_script(text: str, cjk: bool) -> None:
    assert reads_cjk(text) is cjk


class _Constant:
    """An embedder that records what it read and answers one unit vector per text."""

    def __init__(self, model_id: str, dims: int) -> None:
        self.model_id, self.dims, self.read = model_id, dims, list[str]()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.read.extend(texts)
        return [[1.0 / np.sqrt(self.dims)] * self.dims for _ in texts]


def test_routes_are_disjoint_blocks_in_input_order() -> None:
    english, cjk = _Constant("en", 3), _Constant("zh", 2)
    routed = ScriptRouted(english, 3, cjk, 2, model_id="en+zh")
    texts = ["Lives in Lisbon.", "住在上海", "Works at Initech.", "在字节工作"]
    vectors = np.asarray(routed.embed(texts))
    assert english.read == ["Lives in Lisbon.", "Works at Initech."]
    assert cjk.read == ["住在上海", "在字节工作"]
    assert vectors.shape == (4, 5) and routed.dims == 5
    assert np.allclose(vectors[[0, 2], 3:], 0) and np.allclose(vectors[[1, 3], :3], 0)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert vectors[0] @ vectors[1] == 0.0  # never compared across models
    assert routed.embed([]) == [] and routed.model_id == "en+zh"


@pytest.fixture(scope="module")
def use() -> UseEmbedder:
    return UseEmbedder()


def test_use_reads_chinese(use: UseEmbedder) -> None:
    """Two cities, two employers are different facts; a paraphrase is nearer than either.
    (MiniLM-L3 scored the two cities 0.954: a duplicate by dedupe's threshold.)"""
    v = np.asarray(use.embed(["用户住在上海。", "用户住在北京。", "用户的家在上海。",
                              "用户在字节跳动工作。", "用户在美团工作。"]))
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] < 0.92 and v[3] @ v[4] < 0.92
    assert v[0] @ v[2] > v[0] @ v[1]


def test_use_gives_a_repeated_text_one_vector(use: UseEmbedder) -> None:
    a, b, c = use.embed(["我养了一只橘猫", "今天下雨", "我养了一只橘猫"])
    assert a == c and a != b
