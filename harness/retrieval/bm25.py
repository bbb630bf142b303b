"""The baseline: BM25 over each tool's name and description.

Introduced in Chapter 6 (``notebooks/06_beyond_bm25.ipynb``) as the line every other retriever
must beat; it is what most tool-search systems ship (see ``notes/anchors.md``).

``fast=True`` swaps rank_bm25 for :class:`~harness.retrieval.bm25_index.InvertedBM25`, which
returns the very same scores while touching only the tools that share a term with the query;
the benchmark times both on catalogs of 500 to 28,000 tools.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from rank_bm25 import BM25Okapi

from harness.retrieval.base import top_ids
from harness.retrieval.bm25_index import InvertedBM25
from harness.retrieval.records import CatalogTool
from harness.text import tokenize


def name_and_description(t: CatalogTool) -> str:
    return f"{t.name} {t.description}"


class BM25Retriever:
    """rank_bm25's BM25Okapi (or the equal inverted index) over one text per tool."""

    def __init__(self, tools: Sequence[CatalogTool], *, fast: bool = False,
                 document: Callable[[CatalogTool], str] = name_and_description) -> None:
        if not tools:
            raise ValueError("A retriever needs at least one tool; the catalog is empty.")
        self.ids = [t.id for t in tools]
        corpus = [tokenize(document(t)) for t in tools]
        self.fast = fast
        self._index: InvertedBM25 | BM25Okapi = InvertedBM25(corpus) if fast else BM25Okapi(corpus)
        self.name = "bm25-inverted" if fast else "bm25"

    def scores(self, query: str) -> np.ndarray:
        return self._index.get_scores(tokenize(query))

    def rank(self, query: str, k: int | None = None) -> list[str]:
        terms = tokenize(query)
        if isinstance(self._index, InvertedBM25):
            scores, candidates = self._index.scores_and_candidates(terms)
            return top_ids(self.ids, scores, k, candidates=candidates)
        return top_ids(self.ids, self._index.get_scores(terms), k)
