"""A rate with its 95 % interval: what every measured proportion in the workbook is reported as.

Introduced in Chapter 5, where the poisoning detector's recall and false-positive rate are measured.

The Wilson score interval is used rather than the normal approximation because the rates here
are often near 0 or 1 on small samples (24 held-out poisoned descriptions, 1 flag in 3,788),
where ``p ± 1.96·sqrt(p(1-p)/n)`` collapses to a width of zero or leaves [0, 1].
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Rate:
    """``hits`` out of ``n``, with the Wilson 95 % interval."""

    hits: int
    n: int

    def __post_init__(self) -> None:
        if self.n < 0 or not 0 <= self.hits <= max(self.n, 0):
            raise ValueError(f"A rate needs 0 ≤ hits ≤ n, got hits={self.hits}, n={self.n}.")

    @property
    def value(self) -> float:
        return self.hits / self.n if self.n else float("nan")

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.hits, self.n)

    def __str__(self) -> str:
        low, high = self.interval
        digits = 2 if high < 0.01 else 1  # a rate near zero needs the second decimal to be seen at all
        return f"{self.hits}/{self.n} = {self.value:.{digits}%} (95 % CI {low:.{digits}%}–{high:.{digits}%})"


def wilson_interval(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval for ``hits`` successes in ``n`` trials (z = 1.96: 95 %)."""
    if n == 0:
        return (0.0, 1.0)
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))
