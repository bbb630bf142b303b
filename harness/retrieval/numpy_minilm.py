"""all-MiniLM-L6-v2's forward pass in NumPy, for embedding one short query fast.

Introduced in Chapter 6 (``notebooks/06_beyond_bm25.ipynb``), where hybrid search must answer a
query within 20 ms on two cores.

Embedding a 12-token query through sentence-transformers took 21-25 ms on this 2-core machine.
Most of it is six layers of small matrix products (about 140 million multiply-adds), and for
matrices this small torch's products were about 1.5 times slower than NumPy's here, with the
library's per-call work on top. The same weights, run as six plain NumPy layers (BERT:
embeddings, self-attention, feed-forward with GELU, layer norms; then mean pooling and unit
length), give the same vector to within 1e-6 in 12-15 ms (``make bench`` reports the effect on
hybrid search). Batches of tool descriptions still go through torch, where padding and threads
pay off; :class:`~harness.retrieval.dense.Encoder` picks.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to within 1.5e-7 (Abramowitz & Stegun 7.1.26): NumPy has none, and calling torch's
    here let its threads and BLAS's spin against each other on two cores (56 ms a query, not 13)."""
    t = 1 / (1 + np.float32(0.3275911) * np.abs(x))
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return np.sign(x) * (1 - poly.astype(np.float32) * np.exp(-x * x))


def _layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gain + bias


class NumpyMiniLM:
    """A BERT encoder's weights copied out of a loaded SentenceTransformer, run in NumPy."""

    def __init__(self, model: Any) -> None:
        bert = model[0].auto_model
        config = bert.config
        if config.hidden_act != "gelu" or getattr(config, "position_embedding_type", "absolute") != "absolute":
            raise ValueError("NumpyMiniLM runs BERT with GELU and absolute positions only.")
        self.tokenizer = model.tokenizer
        self.max_length = model.max_seq_length
        self.heads = config.num_attention_heads
        self.eps = config.layer_norm_eps
        w = {k: v.detach().cpu().numpy().astype(np.float32) for k, v in bert.state_dict().items()}
        e = "embeddings."
        self.words, self.positions = w[e + "word_embeddings.weight"], w[e + "position_embeddings.weight"]
        self.type0 = w[e + "token_type_embeddings.weight"][0]
        self.embed_norm = (w[e + "LayerNorm.weight"], w[e + "LayerNorm.bias"])
        self.layers = []
        for i in range(config.num_hidden_layers):
            p = f"encoder.layer.{i}."
            qkv = [w[f"{p}attention.self.{n}.weight"].T for n in ("query", "key", "value")]
            self.layers.append({  # weights transposed once, so each product is x @ W
                "qkv": np.ascontiguousarray(np.concatenate(qkv, axis=1)),
                "qkv_b": np.concatenate([w[f"{p}attention.self.{n}.bias"] for n in ("query", "key", "value")]),
                "out": np.ascontiguousarray(w[p + "attention.output.dense.weight"].T),
                "out_b": w[p + "attention.output.dense.bias"],
                "norm1": (w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"]),
                "up": np.ascontiguousarray(w[p + "intermediate.dense.weight"].T),
                "up_b": w[p + "intermediate.dense.bias"],
                "down": np.ascontiguousarray(w[p + "output.dense.weight"].T),
                "down_b": w[p + "output.dense.bias"],
                "norm2": (w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]),
            })

    def embed(self, text: str) -> np.ndarray:
        """The unit-length, mean-pooled embedding of one text (as sentence-transformers gives it)."""
        ids = np.asarray(self.tokenizer(text, truncation=True, max_length=self.max_length)["input_ids"])
        n, heads = len(ids), self.heads
        x = _layer_norm(self.words[ids] + self.positions[:n] + self.type0, *self.embed_norm, self.eps)
        width = x.shape[1] // heads
        scale = np.float32(1 / math.sqrt(width))
        for layer in self.layers:
            q, k, v = np.split(x @ layer["qkv"] + layer["qkv_b"], 3, axis=1)
            q, k, v = (m.reshape(n, heads, width).transpose(1, 0, 2) for m in (q, k, v))
            att = (q @ k.transpose(0, 2, 1)) * scale
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            context = (att @ v).transpose(1, 0, 2).reshape(n, heads * width)
            x = _layer_norm(context @ layer["out"] + layer["out_b"] + x, *layer["norm1"], self.eps)
            h = x @ layer["up"] + layer["up_b"]
            h = 0.5 * h * (1 + _erf(h * np.float32(1 / math.sqrt(2))))  # exact GELU, as BERT uses
            x = _layer_norm(h @ layer["down"] + layer["down_b"] + x, *layer["norm2"], self.eps)
        pooled = x.mean(0)
        return (pooled / np.linalg.norm(pooled)).astype(np.float32)
