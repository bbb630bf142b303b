"""rank_bm25's BM25Okapi over a catalog's records: the reference the library's BM25 is checked and timed against.

Introduced in Chapter 6b (``notebooks/06b_scale_and_speed.ipynb``). The library ranks with its own inverted
index (:class:`harness.selection.bm25_index.CatalogBM25`), which gives rank_bm25's scores to the last bit while
touching only the tools that share a term with the query; this wrapper is how the chapter and the benchmark
show both — equal rankings, different costs — and how the tests hold the library to the reference.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from rank_bm25 import BM25Okapi

from harness.core.text import tokenize
from harness.retrieval.bm25 import name_and_description
from harness.retrieval.records import CatalogTool
from harness.selection.ranking import lexical_ids, require_tools


class RankBM25:
    """rank_bm25's BM25Okapi over one text per tool, ranking as the library's BM25 does (ties, matched terms)."""

    def __init__(self, tools: Sequence[CatalogTool], *, document: Callable[[CatalogTool], str] = name_and_description,
                 name: str = "bm25 (rank_bm25)") -> None:
        require_tools(tools)
        self.ids = [t.id for t in tools]
        self.name = name
        self._bm25 = BM25Okapi([tokenize(document(t)) for t in tools])

    def scores(self, query: str) -> np.ndarray:
        return self._bm25.get_scores(tokenize(query))

    def rank(self, query: str, k: int | None = None) -> list[str]:
        return self.rank_with_scores(query, k)[0]

    def rank_with_scores(self, query: str, k: int | None = None) -> tuple[list[str], np.ndarray]:
        """Tools sharing a term with the query, best first; the matched terms counted from rank_bm25's own frequencies."""
        terms = tokenize(query)
        scores = self._bm25.get_scores(terms)
        distinct = set(terms)
        matched = np.array([sum(t in d for t in distinct) for d in self._bm25.doc_freqs])
        return lexical_ids(self.ids, scores, matched, k), scores
