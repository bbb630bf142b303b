"""A learned retriever: the tools that served similar past queries (a query log), fused with BM25.

Introduced in Chapter 6c (``notebooks/06c_learned_and_end_to_end.ipynb``).

Intent-style queries ("I'm planning a meal with beef") share no words with the tools they
need (a recipe API, a nutrition API, a grocery API), but they share many words with *earlier
queries* that needed the same tools. Given a labelled log, each new query finds its nearest
logged queries by BM25 and the tools those needed get their votes (weighted by similarity).
The votes are fused with the catalog retriever by RRF, so a tool the log has never seen can
still be found. "Training" is indexing the log: seconds on a CPU. It is only honest when
evaluated on queries it never saw (:mod:`harness.evaluation.splits`), and two held-out questions
differ: folds by query id ask whether users' *repeated* jobs are remembered; folds by gold set
ask whether a combination never logged is found. The defaults (10 neighbours, the log's list
weighted 1:1) were chosen from six settings on ToolLens' development queries, cross-validated by
gold set (:mod:`experiments.tuning`); the reported rows never include those queries.
"""
from __future__ import annotations

from typing import Sequence

from harness.selection.ranking import Ranker, check_k, top_ids
from harness.selection.bm25_index import InvertedBM25
from harness.retrieval.hybrid import rrf
from harness.retrieval.records import Query
from harness.core.text import tokenize


class QueryLogRetriever:
    """k nearest logged queries vote for their gold tools; RRF with a catalog retriever."""

    name = "learned-querylog"

    def __init__(self, log: Sequence[Query], base: Ranker, *, neighbours: int = 10, k: float = 60.0,
                 log_weight: float = 1.0) -> None:
        if not log:
            raise ValueError("The query log is empty: there is nothing to learn from.")
        self.base, self.neighbours, self.k, self.log_weight = base, neighbours, k, log_weight
        self._gold = [q.gold for q in log]
        self._index = InvertedBM25([tokenize(q.query) for q in log])

    def votes(self, query: str) -> dict[str, float]:
        """Tool id → summed BM25 similarity of the nearest logged queries that needed it."""
        scores, candidates = self._index.scores_and_candidates(tokenize(query))
        out: dict[str, float] = {}
        for i in top_ids(range(len(self._gold)), scores, self.neighbours, candidates=candidates):
            for tid in self._gold[i]:
                out[tid] = out.get(tid, 0.0) + float(scores[i])
        return out

    def rank(self, query: str, k: int | None = None) -> list[str]:
        check_k(k)
        votes = self.votes(query)
        from_log = sorted(votes, key=lambda t: -votes[t])
        return rrf([from_log, self.base.rank(query)], self.k, [self.log_weight, 1.0])[:k]
