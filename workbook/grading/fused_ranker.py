"""Grader for exercise 8, a fused ranker tuned on a development split (``exercises/08_fused_ranker.ipynb``).

The exercise follows Chapter 6 (beyond BM25): write Reciprocal Rank Fusion, fuse a lexical ranker
with the dense one, choose the fusion's settings on the demo world's *development* queries, and be
graded on its *test* queries — the ones the learner's tuning never looked at
(:func:`harness.evaluation.splits.development_split`, seed 0: a quarter for development).

Four checks, with stated bars:

* ``rrf`` ranks exactly as the package's :func:`harness.retrieval.hybrid.rrf` on small fixtures
  (weights, ties in first-seen order, a tool in only one list);
* the chosen setting is one of :data:`GRID` and within :data:`DEV_TOLERANCE` of the grid's best
  Recall@5 on the development queries (measured here again with the learner's own code);
* the ranker returns each tool at most once, only tools of the catalog, and at most ``k`` of them;
* on the test queries its Recall@5 beats Chapter 2's BM25 by a paired 95 % bootstrap interval that
  excludes zero (:func:`harness.core.rates.paired_difference_interval`). The verdict also says how it
  compares with the dense ranker alone — on this world, no fusion is measurably better than it.

No public data is needed; the dense ranker needs the embedding extra, which ``make lab`` installs.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, Mapping, Sequence

import workbook.research  # noqa: F401  (registers the grid's stackone-bm25-tfidf, a research retriever)
from harness.evaluation.metrics import Report, evaluate
from workbook.grading.learner import Passed, call
from harness.core.rates import paired_difference_interval
from workbook.demo.labels import demo_dataset
from harness.retrieval.dense import Encoder, dense_unavailable_reason
from harness.retrieval.hybrid import rrf as reference_rrf
from harness.retrieval.named import make_retriever
from harness.retrieval.records import CatalogTool, Query
from harness.evaluation.splits import Split, development_split

METRIC = "R@5"
BASELINE = "bm25"
DENSE = "dense-minilm"
#: The settings the learner chooses among: the lexical ranker fused with the dense one, RRF's k, the dense list's weight.
GRID: dict[str, tuple[str | float, ...]] = {"lexical": ("bm25", "bm25-fielded", "stackone-bm25-tfidf"),
                                    "k": (5.0, 20.0, 60.0), "weight": (0.5, 1.0, 2.0)}
DEV_TOLERANCE = 0.02
FIXTURES: tuple[tuple[list[list[str]], float, list[float] | None], ...] = (
    ([["a", "b", "c"], ["c", "b", "a"]], 60.0, None),  # a tie: a, seen first, stays first
    ([["a", "b", "c"], ["c", "d"]], 1.0, None),  # d is in one list only
    ([["a", "b"], ["b", "a"]], 60.0, [1.0, 3.0]),  # the weight decides
    ([["x"], [], ["y", "x"]], 10.0, [2.0, 1.0, 1.0]),  # an empty list adds nothing
)


def split() -> tuple[list[CatalogTool], Split]:
    """The demo world's tools and its labelled queries split into development and test (seed 0)."""
    tools, queries = demo_dataset()
    return tools, development_split(queries)


def development() -> tuple[list[CatalogTool], list[Query]]:
    """What the learner tunes on: the demo world's tools and its development queries (never the test ones)."""
    tools, parts = split()
    return tools, parts.development


def settings() -> list[dict[str, str | float]]:
    """Every setting in :data:`GRID`, as keyword arguments for ``make_fused``."""
    return [dict(zip(GRID, values)) for values in itertools.product(*GRID.values())]


def check_rrf(rrf: Callable[..., object]) -> None:
    """AssertionError naming the first fixture where ``rrf`` and the package's disagree."""
    for rankings, k, weights in FIXTURES:
        want = reference_rrf(rankings, k, weights)
        got = call("rrf", rrf, [list(r) for r in rankings], k, weights)
        if list(got) != want:
            raise AssertionError(f"rrf({rankings}, k={k}, weights={weights}) gave {list(got)}; Reciprocal Rank Fusion "
                                 f"gives {want} (each list adds weight / (k + rank), ranks from 1; ties keep first-seen order).")


def check_ranking(ranker: Any, tools: Sequence[CatalogTool], query: str) -> None:  # Any: the learner's ranker; its rank is checked here
    """AssertionError unless ``ranker.rank`` returns distinct ids of ``tools`` and honours ``k``."""
    ids = {t.id for t in tools}
    full = list(call("ranker.rank", ranker.rank, query))
    top = list(call("ranker.rank", ranker.rank, query, 3))
    unknown = [i for i in full if i not in ids]
    if unknown:
        raise AssertionError(f"ranker.rank({query!r}) returned {unknown[0]!r}, which is not a tool id of the catalog.")
    if len(set(full)) != len(full):
        raise AssertionError(f"ranker.rank({query!r}) returns a tool more than once.")
    if top != full[:3]:
        raise AssertionError(f"ranker.rank({query!r}, 3) should be the first 3 of the full ranking, got {top}.")


def measure(make_fused: Callable[..., object], tools: Sequence[CatalogTool], queries: Sequence[Query],
            setting: Mapping[str, str | float], encoder: Encoder) -> Report:
    """The learner's ranker with ``setting``, evaluated on ``queries``."""
    ranker = call("make_fused", make_fused, tools, encoder=encoder, **setting)
    return evaluate(ranker, queries, ks=(1, 5, 10), name="yours")


def check(rrf: Callable[..., object], make_fused: Callable[..., object], choice: object) -> Passed:
    """Grade exercise 8: RRF itself, the choice made on development queries, the ranker on the test queries."""
    reason = dense_unavailable_reason()
    if reason:
        raise AssertionError(f"This exercise fuses with the dense ranker, which is not available here: {reason}")
    check_rrf(rrf)
    grid = settings()
    if not isinstance(choice, Mapping) or dict(choice) not in grid:
        raise AssertionError(f"CHOICE should be one of the grid's settings, a dict like {grid[0]}; got {choice!r}.")
    tools, parts = split()
    encoder = Encoder()
    encoder.encode([q.query for q in (*parts.development, *parts.test)])  # every query once, in batches
    check_ranking(call("make_fused", make_fused, tools, encoder=encoder, **choice), tools, parts.test[0].query)
    dev = {i: measure(make_fused, tools, parts.development, s, encoder).metrics()[METRIC] for i, s in enumerate(grid)}
    best = max(dev.values())
    mine = dev[grid.index(dict(choice))]
    if mine < best - DEV_TOLERANCE:
        top = grid[max(dev, key=dev.__getitem__)]
        raise AssertionError(f"Your CHOICE reaches {METRIC} {mine:.3f} on the development queries; {top} reaches {best:.3f}. "
                             "Choose on the development queries, by the number the grid prints.")
    test = measure(make_fused, tools, parts.test, choice, encoder)
    base = evaluate(make_retriever(BASELINE, tools), parts.test, ks=(1, 5, 10), name=BASELINE)
    dense = evaluate(make_retriever(DENSE, tools, encoder=encoder), parts.test, ks=(1, 5, 10), name=DENSE)
    low, high = paired_difference_interval(test.values(METRIC), base.values(METRIC))
    score, baseline = test.metrics()[METRIC], base.metrics()[METRIC]
    if low <= 0:
        raise AssertionError(f"On the {len(parts.test)} test queries your ranker's {METRIC} is {score:.3f} against BM25's "
                             f"{baseline:.3f}: the difference's 95 % interval [{low:+.3f}, {high:+.3f}] includes zero, so "
                             "it does not beat the baseline.")
    d_low, d_high = paired_difference_interval(test.values(METRIC), dense.values(METRIC))
    against_dense = ("measurably better than" if d_low > 0 else "measurably worse than" if d_high < 0 else
                     "not measurably different from")
    return Passed(f"✓ chosen on {len(parts.development)} development queries ({METRIC} {mine:.3f}, the grid's best {best:.3f}); "
                  f"on {len(parts.test)} test queries it never saw: {METRIC} {score:.3f} against BM25's {baseline:.3f}, "
                  f"difference [{low:+.3f}, {high:+.3f}] (95 %); {against_dense} the dense ranker alone "
                  f"({dense.metrics()[METRIC]:.3f}, difference [{d_low:+.3f}, {d_high:+.3f}]).")
