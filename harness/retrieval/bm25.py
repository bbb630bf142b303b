"""The baseline: BM25 over each tool's name and description.

Introduced in Chapter 6a (``notebooks/06a_public_benchmarks.ipynb``) as the line every other retriever
must beat; it is what most tool-search systems ship (Codex CLI, mcpproxy, Stacklok's optimizer, the
Anthropic API's BM25 tool search).

``fast=True`` swaps rank_bm25 for the catalog BM25 of Chapter 2 (:class:`~harness.selection.bm25_index.CatalogBM25`),
which returns the very same scores while touching only the tools that share a term with the query;
the benchmark times both on catalogs of 500 to 28,000 tools.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from rank_bm25 import BM25Okapi

from harness.selection.ranking import lexical_ids, require_tools
from harness.selection.bm25_index import CatalogBM25
from harness.retrieval.records import CatalogTool
from harness.core.text import tokenize


def name_and_description(t: CatalogTool) -> str:
    return f"{t.name} {t.description}"


class BM25Retriever:
    """rank_bm25's BM25Okapi (or the equal catalog BM25, ``fast``) over one text per tool."""

    def __init__(self, tools: Sequence[CatalogTool], *, fast: bool = False,
                 document: Callable[[CatalogTool], str] = name_and_description, name: str | None = None) -> None:
        require_tools(tools)
        self.ids = [t.id for t in tools]
        self.fast = fast
        texts = [document(t) for t in tools]
        self._ranker = CatalogBM25(self.ids, texts) if fast else BM25Okapi([tokenize(text) for text in texts])
        self.name = name or ("bm25-inverted" if fast else "bm25")

    @property
    def bm25(self) -> CatalogBM25 | None:
        """The catalog BM25 that ranks for a fast retriever (None: rank_bm25, the reference, ranks)."""
        return self._ranker if isinstance(self._ranker, CatalogBM25) else None

    def scores(self, query: str) -> np.ndarray:
        if isinstance(self._ranker, CatalogBM25):
            return self._ranker.scores(query)
        return self._ranker.get_scores(tokenize(query))

    def rank(self, query: str, k: int | None = None) -> list[str]:
        """Tools sharing a term with the query, best first (:func:`~harness.selection.ranking.lexical_ids`)."""
        return self.rank_with_scores(query, k)[0]

    def rank_with_scores(self, query: str, k: int | None = None) -> tuple[list[str], np.ndarray]:
        if isinstance(self._ranker, CatalogBM25):
            return self._ranker.rank_with_scores(query, k)
        # rank_bm25, the reference: count the matched terms from its own term frequencies
        terms = tokenize(query)
        scores = self._ranker.get_scores(terms)
        distinct = set(terms)
        matched = np.array([sum(t in d for t in distinct) for d in self._ranker.doc_freqs])
        return lexical_ids(self.ids, scores, matched, k), scores
