"""top_ids sorts only the k best (and the k-th's ties) yet ranks exactly as a full sort does."""
from __future__ import annotations

import numpy as np

from harness.selection.ranking import top_ids


def full_sort(ids: list[str], scores: np.ndarray, k: int | None, positive_only: bool) -> list[str]:
    idx = np.arange(len(scores))
    if positive_only:
        idx = idx[scores[idx] > 0]
    return [ids[i] for i in idx[np.lexsort((idx, -scores[idx]))][:k]]


def test_the_k_best_equal_a_full_sort_with_ties_at_the_cut_and_nan_scores():
    rng = np.random.default_rng(0)
    for trial in range(200):
        n = int(rng.integers(1, 60))
        scores = rng.integers(-3, 4, n).astype(np.float32)  # many ties
        if trial % 7 == 0:
            scores[rng.integers(0, n)] = np.nan
        ids = [f"t{i}" for i in range(n)]
        for k in (None, 1, 3, n - 1, n, n + 5):
            if k is not None and k < 1:
                continue
            for positive_only in (True, False):
                assert top_ids(ids, scores, k, positive_only=positive_only) == full_sort(ids, scores, k, positive_only)
