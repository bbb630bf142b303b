"""Measuring a retriever: recall over gold slots, MRR, nDCG, latency, and the misses behind them.

Introduced in Chapter 6a (``notebooks/06a_public_benchmarks.ipynb``); the data it reads is loaded by
:mod:`harness.evaluation.datasets`.

A multi-step task needs several tools, so recall is counted over *slots* (one per needed tool;
any acceptable id fills it), not over ids: a slot offered by three servers must not count three
times. Any :class:`~harness.selection.ranking.Ranker` can be evaluated — the catalog, BM25, an embedding
model, a fused ranker — which is what lets them share one table; each is measured through a
:class:`~harness.selection.ranking.Selector`, as the agent uses it (pass a selector to measure its options). Each number comes with its misses —
which gold tool was not found and what outranked it — because a score alone says nothing about
what to fix.
"""
from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from harness.selection.ranking import Ranker, Selector
from harness.core.rates import bootstrap_interval
from harness.retrieval.records import Query

__all__ = [
    "Miss", "Outcome", "Report", "complete_at_k", "evaluate", "hit_at_k", "ndcg_at_k", "recall_at_k", "reciprocal_rank",
]


# --- one query --------------------------------------------------------------------------------

def _slots_found(ranking: Sequence[str], slots: Sequence[Sequence[str]], k: int) -> int:
    top = set(ranking[:k])
    return sum(1 for slot in slots if top.intersection(slot))


def recall_at_k(ranking: Sequence[str], slots: Sequence[Sequence[str]], k: int) -> float:
    """Share of the gold slots filled by the top ``k``."""
    return _slots_found(ranking, slots, k) / len(slots) if slots else 0.0


def hit_at_k(ranking: Sequence[str], slots: Sequence[Sequence[str]], k: int) -> float:
    """1 if the top ``k`` fills at least one slot."""
    return float(_slots_found(ranking, slots, k) > 0)


def complete_at_k(ranking: Sequence[str], slots: Sequence[Sequence[str]], k: int) -> float:
    """1 if the top ``k`` fills every slot (the task can be done without another search)."""
    return float(bool(slots) and _slots_found(ranking, slots, k) == len(slots))


def reciprocal_rank(ranking: Sequence[str], slots: Sequence[Sequence[str]]) -> float:
    """1 / position of the first gold id (0 if none is ranked)."""
    gold = {i for slot in slots for i in slot}
    return next((1.0 / pos for pos, tid in enumerate(ranking, 1) if tid in gold), 0.0)


def ndcg_at_k(ranking: Sequence[str], slots: Sequence[Sequence[str]], k: int = 10) -> float:
    """Binary-relevance nDCG: a position gains when it fills a slot not filled higher up."""
    open_slots = [set(s) for s in slots]
    dcg = 0.0
    for pos, tid in enumerate(ranking[:k]):
        hit = next((s for s in open_slots if tid in s), None)
        if hit is not None:
            open_slots.remove(hit)
            dcg += 1.0 / math.log2(pos + 2)
    ideal = sum(1.0 / math.log2(pos + 2) for pos in range(min(len(slots), k)))
    return dcg / ideal if ideal else 0.0


# --- many queries -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Outcome:
    """One query's ranking (cut at the evaluation depth) and how long it took."""

    query: Query
    ranking: tuple[str, ...]
    seconds: float


@dataclass(frozen=True)
class Miss:
    """A gold slot the top ``k`` did not fill, and what was ranked above it."""

    qid: str
    query: str
    slot: tuple[str, ...]
    rank: int | None  # 1-based position of the slot's best id, None if not ranked at all
    above: tuple[str, ...]

    def __str__(self) -> str:
        where = f"rank {self.rank}" if self.rank else "not ranked"
        return f"{self.qid}: needed {' | '.join(self.slot)} ({where}); above it: {', '.join(self.above) or '-'}"


@dataclass
class Report:
    """Averages over queries of every metric, plus per-query outcomes for the failure view."""

    name: str
    ks: tuple[int, ...]
    outcomes: list[Outcome] = field(repr=False)

    def _mean(self, fn) -> float:
        return statistics.fmean(fn(o.ranking, o.query.slots) for o in self.outcomes)

    def values(self, metric: str) -> list[float]:
        """One value per query of ``metric`` ("R@5", "Hit@5", "Complete@10", "MRR", "nDCG@10"):
        the units a bootstrap interval resamples and a paired difference pairs."""
        kind, _, k = metric.partition("@")
        per_query = {"R": recall_at_k, "Hit": hit_at_k, "Complete": complete_at_k, "nDCG": ndcg_at_k}
        if metric == "MRR":
            return [reciprocal_rank(o.ranking, o.query.slots) for o in self.outcomes]
        if kind not in per_query or not k.isdigit() or int(k) <= 0:
            raise ValueError(f"Unknown metric {metric!r}; use R@k, Hit@k, Complete@k, nDCG@k or MRR.")
        return [per_query[kind](o.ranking, o.query.slots, int(k)) for o in self.outcomes]

    def interval(self, metric: str) -> tuple[float, float]:
        """95 % percentile-bootstrap interval over queries of ``metric`` (:func:`harness.core.rates.bootstrap_interval`)."""
        return bootstrap_interval(self.values(metric))

    def recall(self, k: int) -> float:
        return self._mean(lambda r, s: recall_at_k(r, s, k))

    def hit(self, k: int) -> float:
        return self._mean(lambda r, s: hit_at_k(r, s, k))

    def complete(self, k: int) -> float:
        return self._mean(lambda r, s: complete_at_k(r, s, k))

    @property
    def mrr(self) -> float:
        return self._mean(reciprocal_rank)

    def ndcg(self, k: int = 10) -> float:
        return self._mean(lambda r, s: ndcg_at_k(r, s, k))

    def latency_ms(self, percentile: float = 50) -> float:
        """Query latency percentile in milliseconds (nearest-rank)."""
        times = sorted(o.seconds for o in self.outcomes)
        return 1000 * times[min(len(times) - 1, max(0, math.ceil(percentile / 100 * len(times)) - 1))]

    def metrics(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for k in self.ks:
            out.update({f"R@{k}": self.recall(k), f"Hit@{k}": self.hit(k), f"Complete@{k}": self.complete(k)})
        out.update({"MRR": self.mrr, "nDCG@10": self.ndcg(10), "p50_ms": self.latency_ms(50),
                    "p95_ms": self.latency_ms(95), "n": float(len(self.outcomes))})
        return out

    def failures(self, k: int = 10) -> list[Miss]:
        """Every gold slot missing from a query's top ``k``, worst-ranked last."""
        misses = []
        for o in self.outcomes:
            for slot in o.query.slots:
                positions = [o.ranking.index(i) + 1 for i in slot if i in o.ranking]
                rank = min(positions) if positions else None
                if rank is None or rank > k:
                    misses.append(Miss(o.query.qid, o.query.query, tuple(slot), rank, o.ranking[:k]))
        return sorted(misses, key=lambda m: (m.rank is None, m.rank or 0))

    def __str__(self) -> str:
        parts = [f"R@{k} {self.recall(k):.3f}" for k in self.ks]
        return f"{self.name}: {', '.join(parts)}, MRR {self.mrr:.3f}, nDCG@10 {self.ndcg(10):.3f} ({len(self.outcomes)} queries)"


def evaluate(retriever: Ranker, queries: Iterable[Query], ks: Sequence[int] = (1, 5, 10), *,
             name: str | None = None, depth: int = 100) -> Report:
    """Run every query through a :class:`Selector` around ``retriever`` (or ``retriever`` itself when it is
    one) and keep the top ``depth`` ids of each, timed."""
    if not ks or any(not isinstance(k, int) or k <= 0 for k in ks):
        raise ValueError(f"ks must be positive whole numbers of tools, got {tuple(ks)!r}.")
    selector = retriever if isinstance(retriever, Selector) else Selector.around(retriever)
    outcomes = []
    for q in queries:
        start = time.perf_counter()
        ranking = selector.rank(q.query)
        elapsed = time.perf_counter() - start
        outcomes.append(Outcome(q, tuple(ranking[: max(depth, *ks)]), elapsed))
    if not outcomes:
        raise ValueError("There are no queries to evaluate.")
    return Report(str(name or getattr(retriever, "name", type(retriever).__name__)), tuple(ks), outcomes)
