"""Query planning: split a task into step queries, let each step retrieve its own tools, merge.

Introduced in Chapter 8a (``notebooks/08a_zero_shot_ideas.ipynb``).

A whole task ("find today's trending games, chart them, save the chart as a PDF") needs several
tools, and one query for all of them finds the one its words lean towards. Asked step by step,
the same retriever finds each step's tool (on LiveMCPBench the annotators' own steps lift
whole-task recall far above the task text). A harness has no annotator, so the plan comes from a
*splitter*: :func:`workbook.steps.split_steps` (the workbook's one step splitter) by default,
Chapter 6's finer :func:`workbook.research.task.clauses`, or a model's plan
(:class:`PlannedRetriever` accepts any function from text to step texts). The whole query's
ranking and each step's are merged by Reciprocal Rank Fusion, the whole query weighted as much
as all steps together, so a task that does not split is ranked exactly as before.
"""
from __future__ import annotations

from typing import Callable, Sequence

from harness.selection.ranking import Ranker, check_k
from harness.retrieval.hybrid import rrf
from workbook.steps import split_steps

Splitter = Callable[[str], Sequence[str]]


class PlannedRetriever:
    """The whole query and each of its steps ranked by ``base``; the rankings fused by RRF."""

    def __init__(self, base: Ranker, *, splitter: Splitter = split_steps, depth: int = 100, k: float = 60.0,
                 name: str | None = None) -> None:
        check_k(depth)
        self.base, self.splitter, self.depth, self.k = base, splitter, depth, k
        self.name = name or f"{base.name}+plan"

    def steps(self, query: str) -> list[str]:
        """The step queries the plan asks (none when the query does not split)."""
        parts = [p for p in dict.fromkeys(self.splitter(query)) if p.strip()]
        return parts if len(parts) > 1 else []

    def rank(self, query: str, k: int | None = None) -> list[str]:
        check_k(k)
        whole = self.base.rank(query, self.depth)
        steps = self.steps(query)
        if not steps:
            return whole[:k]
        rankings = [whole, *(self.base.rank(s, self.depth) for s in steps)]
        weights = [float(len(steps))] + [1.0] * len(steps)
        return rrf(rankings, self.k, weights)[:k]
