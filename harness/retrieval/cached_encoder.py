"""Query embeddings kept on disk by text hash, so a measurement re-run embeds nothing twice.

Introduced in Chapter 8 (``notebooks/08_zero_shot_retrieval.ipynb``).

Tool vectors are already cached by definition hash (:func:`harness.retrieval.dense.embed_tools`).
Chapter 8 also embeds thousands of *queries* — every task, step and ToolLens query, for every
retriever it compares — and on two shared cores that is minutes each run. :class:`CachedEncoder`
is the same :class:`~harness.retrieval.dense.Encoder` with one more layer: before the model runs,
each text is looked up under a SHA-256 of the model name and the text. It is for measurement;
latency is measured with the plain encoder (a live agent's new query is never in a cache).
"""
from __future__ import annotations

import hashlib

import numpy as np

from harness.retrieval.dense import EmbeddingCache, Encoder


class CachedEncoder(Encoder):
    """An :class:`Encoder` whose model calls go through an on-disk cache keyed by text."""

    def __init__(self, cache: EmbeddingCache | None = None, **options: int) -> None:
        super().__init__(**options)
        self.cache = cache or EmbeddingCache()

    def key(self, text: str) -> str:
        """SHA-256 of the model and the text (tool vectors use their own keys, so they never collide)."""
        return hashlib.sha256(f"{self.model_name}|text|{text}".encode("utf-8")).hexdigest()

    def _model_encode(self, texts: list[str]) -> np.ndarray:
        keys = [self.key(t) for t in texts]
        vectors = [self.cache.get(k) for k in keys]
        todo = [i for i, v in enumerate(vectors) if v is None]
        if todo:
            fresh = super()._model_encode([texts[i] for i in todo])
            for i, vector in zip(todo, fresh):
                self.cache.put(keys[i], vector)
                vectors[i] = vector
        return np.vstack(vectors).astype(np.float32)
