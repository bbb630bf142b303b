"""Hybrid retrieval: Reciprocal Rank Fusion of fielded BM25 and dense embeddings.

Introduced in Chapter 6a (``notebooks/06a_public_benchmarks.ipynb``).

BM25 finds the tool whose words the user used; the embedding finds the one whose *meaning*
they described; each fixes misses of the other (Chapter 6 measures both). Their scores live on
unlike scales, so RRF fuses ranks instead: a tool scores Σ 1/(k + rank) over the lists that
hold it. k (default 60, from the RRF paper) flattens the head: higher k trusts agreement
between the lists more than either list's first place. Only each list's top ``depth`` (100)
is fused — a tool below that adds at most 1/160 — which keeps a query cheap on 28,000 tools.
"""
from __future__ import annotations

from typing import Sequence

from harness.selection.ranking import Ranker, check_k, require_tools
from harness.retrieval.dense import DenseRetriever
from harness.retrieval.fielded import FieldedBM25
from harness.retrieval.records import CatalogTool


def rrf(rankings: Sequence[Sequence[str]], k: float = 60.0, weights: Sequence[float] | None = None) -> list[str]:
    """Ids fused by Reciprocal Rank Fusion, best first (ties: first seen first)."""
    if k <= 0:
        raise ValueError(f"The RRF constant k must be positive, got {k}.")
    weights = weights or [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError(f"RRF needs one weight per ranking: {len(rankings)} rankings, {len(weights)} weights.")
    scores: dict[str, float] = {}
    for ranking, w in zip(rankings, weights):
        for pos, tid in enumerate(ranking, 1):
            scores[tid] = scores.get(tid, 0.0) + w / (k + pos)
    return sorted(scores, key=lambda tid: -scores[tid])  # sorted() is stable: ties keep first-seen order


class HybridRetriever:
    """RRF of a lexical and a dense retriever (by default fielded BM25 and MiniLM)."""

    name = "hybrid-rrf"

    def __init__(self, tools: Sequence[CatalogTool], *, k: float = 60.0, depth: int = 100,
                 lexical: Ranker | None = None, dense: Ranker | None = None) -> None:
        require_tools(tools)
        self.k, self.depth = k, depth
        self.lexical = lexical or FieldedBM25(tools)
        self.dense = dense or DenseRetriever(tools)

    def rank(self, query: str, k: int | None = None) -> list[str]:
        check_k(k)
        return rrf([self.lexical.rank(query, self.depth), self.dense.rank(query, self.depth)], self.k)[:k]
