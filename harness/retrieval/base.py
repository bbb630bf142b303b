"""What every retriever offers, and the one way scores become a ranking.

Introduced in Chapter 6 (``notebooks/06_beyond_bm25.ipynb``).

A retriever is built from the catalog's tools and answers ``rank(query, k=None)`` with tool ids,
best first. That single interface is what lets :func:`harness.eval.evaluate`, the fusion
rankers and the benchmark treat BM25, embeddings and their combinations alike. Ties keep
catalog order, so a ranking is deterministic run to run.
"""
from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np


class Retriever(Protocol):
    name: str

    def rank(self, query: str, k: int | None = None) -> list[str]:
        """Tool ids, best first; at most ``k`` of them (all candidates when ``k`` is None)."""
        ...


def check_k(k: int | None) -> None:
    if k is not None and (not isinstance(k, int) or k <= 0):
        raise ValueError(f"k must be a positive number of tools or None, got {k!r}.")


def top_ids(ids: Sequence[str], scores: np.ndarray, k: int | None, *, candidates: np.ndarray | None = None,
            positive_only: bool = True) -> list[str]:
    """Ids by descending score (ties in catalog order), optionally only the ``candidates`` indices."""
    check_k(k)
    idx = np.arange(len(scores)) if candidates is None else np.asarray(candidates)
    vals = scores[idx]
    if positive_only:
        keep = vals > 0
        idx, vals = idx[keep], vals[keep]
    order = np.lexsort((idx, -vals))
    return [ids[i] for i in idx[order[:k]]]


def exact_first(exact: Sequence[str], ranked: Sequence[str]) -> list[str]:
    """Tools the query names exactly, then the ranking without them (a user who types a name wants it first)."""
    named = set(exact)
    return [*exact, *(i for i in ranked if i not in named)]


def min_max(scores: np.ndarray) -> np.ndarray:
    """Scores rescaled to 0–1 (all 0 when they are all equal), so unlike scorers can be added."""
    lo, hi = float(scores.min()), float(scores.max())
    return (scores - lo) / (hi - lo) if hi > lo else np.zeros_like(scores)
