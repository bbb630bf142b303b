"""A rate with its 95 % interval: what every measured proportion in the workbook is reported as.

Introduced in Chapter 5, where the poisoning detector's recall and false-positive rate are measured;
the bootstrap intervals (Chapter 1's cliff, Chapter 3's task success, Chapter 6's recall over queries)
live here too, so every interval in the workbook comes from one place.

The Wilson score interval is used rather than the normal approximation because the rates here
are often near 0 or 1 on small samples (24 held-out poisoned descriptions, 1 flag in 3,788),
where ``p ± 1.96·sqrt(p(1-p)/n)`` collapses to a width of zero or leaves [0, 1].
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np


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


def bootstrap_interval(values: Sequence[float], *, level: float = 0.95, resamples: int = 2000,
                       seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean of ``values`` (per query or per scenario).

    Resamples the units with replacement under a fixed seed, so a chapter prints the same interval on
    every run. Works for rates (booleans) and for graded scores (reciprocal rank, nDCG) alike, which
    the Wilson interval does not.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}.")
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        raise ValueError("A bootstrap interval needs at least one value.")
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def paired_difference_interval(a: Sequence[float], b: Sequence[float], *, level: float = 0.95,
                               resamples: int = 2000, seed: int = 0) -> tuple[float, float]:
    """Bootstrap interval for mean(a) − mean(b) when both were measured on the same units.

    Pairing (resampling units, not each list alone) is what lets two retrievers run on the same
    queries be told apart: a difference is called only when this interval excludes zero.
    """
    if len(a) != len(b):
        raise ValueError(f"Paired values need equal lengths, got {len(a)} and {len(b)}.")
    return bootstrap_interval(np.asarray(a, dtype=float) - np.asarray(b, dtype=float),
                              level=level, resamples=resamples, seed=seed)


def paired_ratio_difference_interval(cost_a: Sequence[float], solved_a: Sequence[float], cost_b: Sequence[float],
                                     solved_b: Sequence[float], *, level: float = 0.95, resamples: int = 2000,
                                     seed: int = 0) -> tuple[float, float]:
    """Bootstrap interval for sum(cost_a)/sum(solved_a) − sum(cost_b)/sum(solved_b) over the same units.

    Chapter 5's cost per *solved* task is a ratio of totals, not a mean, so the per-unit differences of
    :func:`paired_difference_interval` do not apply; the same scenarios are resampled for both ways
    instead. A resample where either side solves nothing has no ratio and is left out.
    """
    arrays = [np.asarray(x, dtype=float) for x in (cost_a, solved_a, cost_b, solved_b)]
    if len({x.size for x in arrays}) != 1:
        raise ValueError(f"Paired values need equal lengths, got {', '.join(str(x.size) for x in arrays)}.")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}.")
    if arrays[1].sum() == 0 or arrays[3].sum() == 0:
        raise ValueError("A cost per solved task needs at least one solved task on each side.")
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, arrays[0].size, size=(resamples, arrays[0].size))
    ca, sa, cb, sb = (x[picks].sum(axis=1) for x in arrays)
    ok = (sa > 0) & (sb > 0)
    diffs = ca[ok] / sa[ok] - cb[ok] / sb[ok]
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(diffs, [tail, 100 - tail])
    return float(low), float(high)


def cluster_bootstrap_interval(groups: Sequence[Sequence[float]], *, level: float = 0.95, resamples: int = 2000,
                               seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval for the pooled mean of values that come in groups (steps within scenarios).

    Steps of one scenario are not independent (one misread request spoils all of them), so the
    groups are resampled, not the values: each resample draws scenarios with replacement and takes
    the mean over all their steps. Pass per-step differences of two configurations for a paired interval.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}.")
    sums = np.array([float(sum(g)) for g in groups])
    sizes = np.array([len(g) for g in groups], dtype=float)
    if not sizes.size or not sizes.sum():
        raise ValueError("A bootstrap interval needs at least one value.")
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, sizes.size, size=(resamples, sizes.size))
    means = sums[picks].sum(axis=1) / np.maximum(sizes[picks].sum(axis=1), 1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)
