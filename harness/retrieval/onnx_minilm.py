"""The same all-MiniLM-L6-v2 for one query, run by ONNX Runtime: about three times faster than NumPy.

Introduced in Chapter 8b (``notebooks/08b_embedder_and_query_time.ipynb``), where hybrid-rrf's latency is
measured.

A search waits for its query's embedding, and in NumPy that is six layers of small matrix
products (:mod:`workbook.evaluation.query_time` times them: about 2 ms of CPU each for a 10-token
query). ONNX Runtime multiplies such small matrices about three times faster on one core. The
graph is built here, node by node, from the *same* checked weights
(:class:`~harness.retrieval.numpy_minilm.NumpyMiniLM` has verified their SHA-256 and holds them),
so no model file comes from anywhere else; its vectors equal the NumPy path's and
sentence-transformers' to within 1e-6. It embeds one unpadded text at a time — the query path;
catalogs are embedded in NumPy batches and cached. ``onnxruntime`` and ``onnx`` are optional:
without them :func:`query_session` is None and queries take the NumPy path.

ONNX Runtime's Linux and macOS builds collect usage telemetry and keep a session file in the temp
folder; the workbook promises to run offline and to leave nothing behind, so ``ORT_DISABLE_TELEMETRY``
(its documented opt-out, read once when the runtime starts) is set before it is imported, unless the
user set it.
"""
from __future__ import annotations

import importlib.util
import math
import os
from typing import Any, Protocol, Sequence, TypedDict

import numpy as np


class Layer(TypedDict):
    """One transformer layer's weights; matrices in PyTorch's (out, in) layout (see numpy_minilm._linear)."""

    qkv: np.ndarray
    qkv_b: np.ndarray
    out: np.ndarray
    out_b: np.ndarray
    norm1: tuple[np.ndarray, np.ndarray]
    up: np.ndarray
    up_b: np.ndarray
    down: np.ndarray
    down_b: np.ndarray
    norm2: tuple[np.ndarray, np.ndarray]


class Weights(Protocol):
    """What the graph reads of a model whose weights were checked (:class:`~harness.retrieval.numpy_minilm.NumpyMiniLM`).

    A protocol rather than an import: ``numpy_minilm`` builds its sessions here, so naming it back would close a loop.
    """

    eps: float
    heads: int
    words: np.ndarray
    positions: np.ndarray
    type0: np.ndarray
    embed_norm: tuple[np.ndarray, np.ndarray]
    layers: list[Layer]


def available() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "onnx"))


def _graph(model: Weights) -> Any:  # Any: an onnx GraphProto; onnx is imported only when it is installed
    """The ONNX graph of ``model``'s forward pass for one text (ids → unit-length mean-pooled vector)."""
    from onnx import TensorProto, helper, numpy_helper

    inits, nodes = [], []

    def const(name: str, value: np.ndarray | float | int | list[int]) -> str:
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(kind: str, inputs: list[str], out: str, **attrs: Any) -> str:  # Any: node attributes forwarded unchanged to onnx
        nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def norm(x: str, gain_bias: tuple[np.ndarray, np.ndarray], tag: str) -> str:
        return op("LayerNormalization", [x, const(tag + "g", gain_bias[0]), const(tag + "b", gain_bias[1])], tag,
                  epsilon=model.eps, axis=-1)

    def linear(x: str, weight: np.ndarray, bias: np.ndarray, tag: str) -> str:  # weight in (out, in) layout
        return op("Add", [op("MatMul", [x, const(tag + "w", np.ascontiguousarray(weight.T))], tag + "m"),
                          const(tag + "b", bias)], tag)

    heads = model.heads
    width = model.words.shape[1] // heads
    x = op("Add", [op("Gather", [const("words", model.words), "ids"], "w"),
                   op("Gather", [const("positions", model.positions), "positions_ids"], "p")], "wp")
    x = norm(op("Add", [x, const("type0", model.type0)], "e"), model.embed_norm, "emb")
    split = const("split", np.array([1, -1, heads, width], dtype=np.int64))
    merge = const("merge", np.array([1, -1, heads * width], dtype=np.int64))
    scale, half, one = const("scale", np.float32(1 / math.sqrt(width))), const("half", np.float32(0.5)), const("one", np.float32(1))
    root2 = const("root2", np.float32(math.sqrt(2)))
    for i, layer in enumerate(model.layers):
        t = f"l{i}"
        qkv = [op("Transpose", [op("Reshape", [linear(x, w, b, f"{t}{n}"), split], f"{t}{n}r")], f"{t}{n}t", perm=[0, 2, 1, 3])
               for n, w, b in zip("qkv", np.split(layer["qkv"], 3), np.split(layer["qkv_b"], 3))]
        q, k, v = qkv
        att = op("Softmax", [op("Mul", [op("MatMul", [q, op("Transpose", [k], t + "keys", perm=[0, 1, 3, 2])], t + "qk"),
                                        scale], t + "s")], t + "a", axis=-1)
        context = op("Reshape", [op("Transpose", [op("MatMul", [att, v], t + "av")], t + "ct", perm=[0, 2, 1, 3]), merge], t + "c")
        x = norm(op("Add", [linear(context, layer["out"], layer["out_b"], t + "o"), x], t + "r1"), layer["norm1"], t + "n1")
        h = linear(x, layer["up"], layer["up_b"], t + "up")
        gelu = op("Mul", [op("Mul", [h, half], t + "h2"),
                          op("Add", [op("Erf", [op("Div", [h, root2], t + "hd")], t + "erf"), one], t + "e1")], t + "gelu")
        x = norm(op("Add", [linear(gelu, layer["down"], layer["down_b"], t + "d"), x], t + "r2"), layer["norm2"], t + "n2")
    op("LpNormalization", [op("ReduceMean", [x], "mean", axes=[1], keepdims=0)], "vector", axis=-1, p=2)
    graph = helper.make_graph(nodes, "all-MiniLM-L6-v2", [
        helper.make_tensor_value_info("ids", TensorProto.INT64, [1, None]),
        helper.make_tensor_value_info("positions_ids", TensorProto.INT64, [None])],
        [helper.make_tensor_value_info("vector", TensorProto.FLOAT, [1, model.words.shape[1]])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


class QuerySession:
    """An ONNX Runtime session on one thread that embeds one tokenised text."""

    def __init__(self, model: Weights) -> None:
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")  # before the runtime starts: see the module's docstring
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1  # a query is small: see one_blas_thread
        options.log_severity_level = 3
        self.session = ort.InferenceSession(_graph(model).SerializeToString(), options,
                                            providers=["CPUExecutionProvider"])

    def embed_ids(self, ids: Sequence[int]) -> np.ndarray:
        """The unit-length vector of one text's token ids ([CLS] … [SEP])."""
        feed = {"ids": np.asarray([ids], dtype=np.int64), "positions_ids": np.arange(len(ids), dtype=np.int64)}
        return self.session.run(None, feed)[0][0]


def query_session(model: Weights) -> QuerySession | None:
    """A session for ``model``'s queries, or None when ONNX Runtime is not installed."""
    return QuerySession(model) if available() else None
