"""Grader for exercise 8, a fused ranker tuned on a development split (``exercises/08_fused_ranker.ipynb``).

The exercise follows Chapter 6a (public benchmarks): write Reciprocal Rank Fusion, fuse a lexical ranker
with the dense one, choose the fusion's settings on the demo world's *development* queries, and be
graded on its *test* queries — the ones the learner's tuning never looked at
(:func:`harness.evaluation.splits.development_split`, seed 0: a quarter for development).

The learner writes the idea: ``rrf`` and ``make_fused`` may not use the package's fusion
(:func:`harness.retrieval.hybrid.rrf`, :class:`~harness.retrieval.hybrid.HybridRetriever`), and the ranker
must rank as the fusion of its two lists does — returning the dense ranker alone, which already beats
BM25 here, is not a fused ranker. Checks, with stated bars, differences called by the chapters' rule
(a paired 95 % interval that excludes zero, :func:`harness.core.rates.paired_difference_interval`):

* ``rrf`` ranks exactly as Reciprocal Rank Fusion on small fixtures (weights, ties in first-seen order,
  a tool in only one list);
* the ranker returns each tool at most once, only tools of the catalog, at most ``k`` of them, and on
  every development query the order RRF gives its lexical and dense rankings;
* the chosen setting is one of :data:`GRID` and no setting of the grid is measurably better on the
  development queries (measured here again with the learner's own code);
* on the test queries its Recall@5 beats Chapter 2's BM25 by a paired interval that excludes zero. The
  verdict also says how it compares with the dense ranker alone — on this world, no fusion is
  measurably better than it.

No public data is needed; the dense ranker needs the embedding extra, which ``make lab`` installs.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, Mapping, Sequence

import workbook.research  # noqa: F401  (registers the grid's stackone-bm25-tfidf, a research retriever)
from harness.evaluation.metrics import Report, evaluate
from workbook.grading.learner import Passed, call, refuse_borrowed
from harness.core.rates import paired_difference_interval
from workbook.demo.labels import demo_dataset
from harness.retrieval.dense import Encoder, dense_unavailable_reason
from harness.retrieval.hybrid import HybridRetriever, rrf as reference_rrf
from harness.retrieval.named import make_retriever
from harness.retrieval.records import CatalogTool, Query
from harness.evaluation.splits import Split, development_split

METRIC = "R@5"
BASELINE = "bm25"
DENSE = "dense-minilm"
#: The settings the learner chooses among: the lexical ranker fused with the dense one, RRF's k, the dense list's weight.
GRID: dict[str, tuple[str | float, ...]] = {"lexical": ("bm25", "bm25-fielded", "stackone-bm25-tfidf"),
                                    "k": (5.0, 20.0, 60.0), "weight": (0.5, 1.0, 2.0)}
#: The package's fusion, which the learner's rrf and make_fused may not use.
PACKAGE_FUSION: dict[object, str] = {reference_rrf: "harness.retrieval.hybrid.rrf",
                                     HybridRetriever: "harness.retrieval.hybrid.HybridRetriever"}
WRITE_RRF = "write the fusion in a few lines: each list adds weight / (k + rank) to every tool it holds."
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
    """AssertionError when ``rrf`` is the package's, or naming the first fixture where the two disagree."""
    refuse_borrowed("rrf", rrf, PACKAGE_FUSION, WRITE_RRF)
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


def check_fusion(make_fused: Callable[..., object], tools: Sequence[CatalogTool], queries: Sequence[Query],
                 setting: Mapping[str, str | float], encoder: Encoder) -> None:
    """AssertionError unless the learner's ranker orders every query as RRF of its lexical and dense lists does."""
    refuse_borrowed("make_fused", make_fused, PACKAGE_FUSION, "fuse the two rankings with your own rrf.")
    ranker = call("make_fused", make_fused, tools, encoder=encoder, **setting)
    lexical = make_retriever(str(setting["lexical"]), tools)
    dense = make_retriever(DENSE, tools, encoder=encoder)
    for q in queries:
        lists = [lexical.rank(q.query), dense.rank(q.query)]
        want = reference_rrf(lists, float(setting["k"]), [1.0, float(setting["weight"])])[:10]
        got = list(call("ranker.rank", ranker.rank, q.query, 10))
        if got != want:
            alone = ("the dense ranker's order alone" if got == lists[1][:10] else f"{setting['lexical']}'s order alone"
                     if got == lists[0][:10] else "an order that is neither list's nor their fusion")
            raise AssertionError(f"make_fused(tools, **{dict(setting)}) ranks {q.query!r} in {alone}: a fused ranker gives "
                                 f"each tool weight / (k + rank) from the {setting['lexical']} list (weight 1) and from "
                                 f"the dense list (weight {setting['weight']}), and sorts by the sum.")


def measure(make_fused: Callable[..., object], tools: Sequence[CatalogTool], queries: Sequence[Query],
            setting: Mapping[str, str | float], encoder: Encoder) -> Report:
    """The learner's ranker with ``setting``, evaluated on ``queries``."""
    ranker = call("make_fused", make_fused, tools, encoder=encoder, **setting)
    return evaluate(ranker, queries, ks=(1, 5, 10), name="yours")


def check(rrf: Callable[..., object], make_fused: Callable[..., object], choice: object) -> Passed:
    """Grade exercise 8: RRF itself, the fusion, the choice made on development queries, the ranker on the test queries."""
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
    check_fusion(make_fused, tools, parts.development, choice, encoder)
    dev = {i: measure(make_fused, tools, parts.development, s, encoder) for i, s in enumerate(grid)}
    best = max(dev, key=lambda i: dev[i].metrics()[METRIC])
    mine = dev[grid.index(dict(choice))]
    low, high = paired_difference_interval(dev[best].values(METRIC), mine.values(METRIC))
    if low > 0:
        raise AssertionError(f"Your CHOICE reaches {METRIC} {mine.metrics()[METRIC]:.3f} on the development queries, and "
                             "another setting of the grid is measurably better there (the paired 95 % interval of the "
                             "difference lies above zero): choose by the numbers the grid prints.")
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
    return Passed(f"✓ chosen on {len(parts.development)} development queries ({METRIC} {mine.metrics()[METRIC]:.3f}, the "
                  f"grid's best {dev[best].metrics()[METRIC]:.3f}, not measurably better); on {len(parts.test)} test queries "
                  f"it never saw: {METRIC} {score:.3f} against BM25's {baseline:.3f}, difference [{low:+.3f}, {high:+.3f}] "
                  f"(95 %); {against_dense} the dense ranker alone ({dense.metrics()[METRIC]:.3f}, difference "
                  f"[{d_low:+.3f}, {d_high:+.3f}]).")
