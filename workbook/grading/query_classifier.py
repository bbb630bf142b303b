"""Grader for exercise 5, a rule-based query classifier (``exercises/05_query_classifier.ipynb``).

The exercise follows Chapter 3 (queries from the transcript): route the latest user message to a
demo domain with hand-written rules, build each turn's query from that route, and compare it with
Chapter 3's transcript query and with the latest user message alone on per-step recall
(:func:`workbook.evaluation.scenarios.per_step_hits`, no model involved) over the task and pivot scenarios.

Why :data:`K` tools and not the package's default: at ``harness.selection.ranking.DEFAULT_K`` the latest user
message alone already finds almost every step's tool, so nothing is left to win. With only
:data:`K` tools shown per step the query decides, and a query that names the step coming next
beats the whole message by an interval that excludes zero.

Two checks, with stated bars. The classifier is rules only, as the exercise says: it may not look
anything up — the labelled queries (the answer key), the tools' own text, or the package's rankers
(:data:`LOOKUPS`), with which a one-liner routes by the best-ranked tool's domain. It is measured on the
demo world's labelled literal queries, whose ``domain`` field is the answer key (:data:`MIN_ACCURACY`); a
miss is reported as the request, where it went and where it belongs. The query must beat the transcript query, and
beat the latest user message by a paired 95 % interval over the steps
(:func:`harness.core.rates.paired_difference_interval`) whose lower end is above zero.
"""
from __future__ import annotations

import statistics
from typing import Callable

from harness.selection.catalog import ToolCatalog
from workbook.demo import DOMAINS, demo_tools, load_demo_queries, load_demo_scenarios
from harness.retrieval.named import make_retriever
from workbook.demo.labels import demo_dataset, demo_queries
from workbook.grading.learner import Passed, call, refuse_borrowed
from workbook.research.hierarchical import HierarchicalRetriever, server_records
from harness.core.messages import Transcript
from harness.selection.queries import query_from_transcript, query_from_user_message
from harness.core.rates import paired_difference_interval
from workbook.evaluation.scenarios import per_step_hits

MIN_ACCURACY = 0.70
KINDS = ("task", "pivot")
K = 3  # tools shown per step: a tight budget, where the query decides
#: What a rule-based classifier may not use: the answer key, the tools' text, the package's rankers.
LOOKUPS: dict[object, str] = {
    load_demo_queries: "load_demo_queries (the labelled answers)", demo_queries: "demo_queries (the labelled answers)",
    demo_dataset: "demo_dataset (the labelled answers)", demo_tools: "demo_tools (a lookup in the tools' own text)",
    ToolCatalog: "ToolCatalog (the package's BM25 ranking)", make_retriever: "make_retriever (the package's rankers)",
    HierarchicalRetriever: "HierarchicalRetriever (the package's server ranking)", server_records: "server_records"}


def check_classifier(classify: Callable[[str], object]) -> float:
    """The share of literal demo queries routed to their labelled domain; AssertionError below the bar."""
    refuse_borrowed("classify", classify, LOOKUPS, "route with rules you write: words, symbols, counts.")
    queries = [q for q in load_demo_queries() if q.kind == "literal"]
    misses = []
    for q in queries:
        got = call("classify", classify, q.query)
        if got is not None and got not in DOMAINS:
            raise AssertionError(f"classify({q.query!r}) returned {got!r}; return one of {', '.join(DOMAINS)} or None.")
        if got != q.domain:
            misses.append((q, got))
    accuracy = 1 - len(misses) / len(queries)
    if accuracy < MIN_ACCURACY:
        shown = "; ".join(f"{q.query!r} to {got or 'no domain'} (expected {q.domain})" for q, got in misses[:3])
        raise AssertionError(f"Your classifier routes {accuracy:.0%} of the literal queries to their domain, below "
                             f"{MIN_ACCURACY:.0%}; it routed {shown}.")
    return accuracy


def _wrapped(name: str, query_fn: Callable[[Transcript], object]) -> Callable[[Transcript], str]:
    """``query_fn`` with its failures and non-string results reported in the grader's words."""
    def query(transcript: Transcript) -> str:
        got = call(name, query_fn, transcript)
        if not isinstance(got, str):
            raise AssertionError(f"{name}(transcript) should return the query text, got {type(got).__name__}.")
        return got
    return query


def step_hits(query_fn: Callable[[Transcript], str], catalog: ToolCatalog, k: int = K) -> dict[str, list[bool]]:
    """Per step, whether the needed tool is among the ``k`` selected: the task scenarios, the pivots, and both."""
    scenarios = [s for s in load_demo_scenarios() if s.kind in KINDS]
    by_kind = {kind: per_step_hits(catalog, [s for s in scenarios if s.kind == kind], query_fn, k) for kind in KINDS}
    return {**by_kind, "both": [hit for kind in KINDS for hit in by_kind[kind]]}


def recalls(query_fn: Callable[[Transcript], str], catalog: ToolCatalog, k: int = K) -> dict[str, float]:
    """Per-step recall@k on the task scenarios, the pivots, and both."""
    return {kind: statistics.fmean(hits) for kind, hits in step_hits(query_fn, catalog, k).items()}


def check(classify: Callable[[str], object], classified_query: Callable[[Transcript], object]) -> Passed:
    """Grade exercise 5: the classifier's routing, and its query against the transcript query and the latest message."""
    accuracy = check_classifier(classify)
    catalog = ToolCatalog(demo_tools())
    mine = step_hits(_wrapped("classified_query", classified_query), catalog)
    rate = {kind: statistics.fmean(hits) for kind, hits in mine.items()}
    transcript = recalls(query_from_transcript, catalog)
    if rate["both"] <= transcript["both"]:
        raise AssertionError(f"Your query finds the needed tool among {K} at {rate['both']:.3f} of the steps (pivots "
                             f"{rate['pivot']:.3f}); the transcript query of Chapter 3 at {transcript['both']:.3f} (pivots "
                             f"{transcript['pivot']:.3f}): beat it on both.")
    latest = step_hits(query_from_user_message, catalog)["both"]
    low, high = paired_difference_interval(mine["both"], latest)
    gain = rate["both"] - statistics.fmean(latest)
    said = (f"Your query finds the needed tool among {K} at {rate['both']:.3f} of the {len(latest)} steps; the latest user "
            f"message alone at {statistics.fmean(latest):.3f}: the difference, {gain:+.3f} [{low:+.3f}, {high:+.3f}],")
    if low <= 0:
        raise AssertionError(f"{said} is not wholly above zero. Route the step that comes next, not the whole message: "
                             "a message that asks for several things names several domains.")
    return Passed(f"✓ your classifier routes {accuracy:.0%} of the literal queries right. {said} is wholly above zero "
                  f"(the transcript query: {transcript['both']:.3f}).")
