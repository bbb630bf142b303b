"""Retrieval for whole multi-step tasks: clauses, score fusion and the server hierarchy.

Introduced in Chapter 6a (``notebooks/06a_public_benchmarks.ipynb``), after plain hybrid search falls
short on LiveMCPBench's task descriptions.

A task ("read the sales sheet, plot it by month, save the chart") needs several tools, and a
single query vector averages them into none. Three general ideas, each measured in the
chapter on its own:

1. *Clauses*: the task is split into its steps (:func:`workbook.steps.split_steps`, the one step
   splitter) and each step at its commas and "and"s; each clause is embedded and a tool keeps its
   best similarity to any clause, mixed with its similarity to the whole task.
2. *Score fusion*: min-max normalised fielded-BM25 and dense scores are summed with weight
   ``alpha`` on BM25 (StackOne's form). Unlike RRF, a confident BM25 match keeps its margin.
3. *Servers* (MCP-Zero's hierarchy): tools of one server are used together, so each tool gets
   ``server_weight`` × the best score of any tool on its server.

``alpha`` and ``server_weight`` were chosen on development queries only (LiveMCPBench's, the demo
world's and ToolLens', never their test queries) from six settings, by the procedure of
:mod:`experiments.tuning`; ``clause_weight`` is a round value, not tuned.
"""
from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from harness.selection.ranking import min_max, require_tools, top_ids
from harness.retrieval.dense import DenseRetriever
from harness.retrieval.fielded import FieldedBM25
from harness.retrieval.records import CatalogTool
from workbook.steps import split_steps, split_unquoted

#: Inside one step: after ! or ?, at a comma, and at "then"/"and" before a word.
_CLAUSE = re.compile(r"(?<=[!?])\s+|,\s*(?:and\s+)?|\s+(?:then|and)\s+(?=[a-z]+\b)")


def clauses(text: str, min_words: int = 2) -> list[str]:
    """The task's steps, each split further into its clauses; clauses shorter than ``min_words`` are dropped."""
    return [p for step in split_steps(text) for p in split_unquoted(step, _CLAUSE) if len(p.split()) >= min_words]


class TaskRetriever:
    """Fielded BM25 + dense over the task and its clauses, fused by score, lifted by server."""

    name = "hybrid-task"

    def __init__(self, tools: Sequence[CatalogTool], *, alpha: float = 0.5, clause_weight: float = 0.5,
                 server_weight: float = 0.3, lexical: FieldedBM25 | None = None,
                 dense: DenseRetriever | None = None) -> None:
        require_tools(tools)
        if not 0 <= alpha <= 1 or not 0 <= clause_weight <= 1:
            raise ValueError(f"alpha and clause_weight are shares between 0 and 1, got {alpha} and {clause_weight}.")
        self.ids = [t.id for t in tools]
        self.alpha, self.clause_weight, self.server_weight = alpha, clause_weight, server_weight
        self.lexical = lexical or FieldedBM25(tools)
        self.dense = dense or DenseRetriever(tools)
        servers = sorted({t.server for t in tools})
        self._server_of = np.array([servers.index(t.server) for t in tools])
        self._n_servers = len(servers)

    def dense_scores(self, query: str) -> np.ndarray:
        parts = clauses(query)
        vectors = self.dense.encoder.encode([query, *parts] if len(parts) > 1 else [query])
        sims = self.dense.matrix @ vectors.T
        whole = sims[:, 0]
        if sims.shape[1] == 1:
            return whole
        return (1 - self.clause_weight) * whole + self.clause_weight * sims[:, 1:].max(axis=1)

    def scores(self, query: str) -> np.ndarray:
        fused = self.alpha * min_max(self.lexical.scores(query)) + (1 - self.alpha) * min_max(self.dense_scores(query))
        best = np.full(self._n_servers, -np.inf)
        np.maximum.at(best, self._server_of, fused)
        return fused + self.server_weight * best[self._server_of]

    def rank_with_scores(self, query: str, k: int | None = None) -> tuple[list[str], np.ndarray]:
        scores = self.scores(query)
        return top_ids(self.ids, scores, k, positive_only=False), scores

    def rank(self, query: str, k: int | None = None) -> list[str]:
        return self.rank_with_scores(query, k)[0]
