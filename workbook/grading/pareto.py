"""The Pareto front of cost/benefit measurements, for grading a pick fairly.

Introduced with exercise 3 (``tools_per_turn`` against schema tokens, after Chapter 3); exercise 7
(deferral threshold and ``search_tools`` limit, after Chapter 5) and both notebooks' plots use it too.

"Pick a good setting" has no single right answer: one reader pays tokens for the last few tasks,
another stops at the knee of the curve. What no one should pick is a setting another measured
setting beats on both counts. So a grader accepts any pick on the Pareto front (no other setting
is at least as good on both and better on one) that also clears the exercise's stated floor —
and when it rejects one, it names the setting that beats it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence


@dataclass(frozen=True)
class Point:
    """One measured setting: what it costs (lower is better) and what it gets (higher is better)."""

    label: Any  # Any: the caller's own label (a setting tuple, a tools-per-turn count), read back by that caller
    cost: float
    benefit: float


def beats(a: Point, b: Point) -> bool:
    """``a`` is at least as good as ``b`` on both counts and strictly better on one."""
    return a.cost <= b.cost and a.benefit >= b.benefit and (a.cost < b.cost or a.benefit > b.benefit)


def dominator(p: Point, points: Iterable[Point]) -> Point | None:
    """The strongest measured setting that beats ``p`` (most benefit, then least cost), or None."""
    better = [q for q in points if beats(q, p)]
    return max(better, key=lambda q: (q.benefit, -q.cost), default=None)


def front(points: Sequence[Point]) -> list[Point]:
    """The settings nothing else beats, cheapest first."""
    return sorted((p for p in points if dominator(p, points) is None), key=lambda p: (p.cost, -p.benefit))
