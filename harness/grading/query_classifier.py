"""Grader for exercise 5, a rule-based query classifier (``exercises/05_query_classifier.ipynb``).

The exercise follows Chapter 3 (queries from the transcript): route the latest user message to a
demo domain with hand-written rules, build each turn's query from that route, and compare it with
Chapter 3's transcript query on per-step recall (:func:`harness.scenarios.per_step_recall`, no
model involved) over the task and pivot scenarios.

Two checks, with stated bars. The classifier is measured on the demo world's labelled literal
queries, whose ``domain`` field is the answer key (:data:`MIN_ACCURACY`); a miss is reported as
the request, where it went and where it belongs. The query must beat the transcript query overall
and on the pivots, where the transcript query's first message is the wrong one to search with.
"""
from __future__ import annotations

from typing import Any, Callable

from harness.catalog import ToolCatalog
from harness.demo import DOMAINS, demo_tools, load_demo_queries, load_demo_scenarios
from harness.grading.learner import Passed, call
from harness.messages import Transcript
from harness.queries import query_from_transcript, query_from_user_message
from harness.scenarios import oracle_steps, per_step_recall

MIN_ACCURACY = 0.70
KINDS = ("task", "pivot")


def check_classifier(classify: Callable[[str], Any]) -> float:
    """The share of literal demo queries routed to their labelled domain; AssertionError below the bar."""
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


def _wrapped(name: str, query_fn: Callable[[Transcript], Any]) -> Callable[[Transcript], str]:
    """``query_fn`` with its failures and non-string results reported in the grader's words."""
    def query(transcript: Transcript) -> str:
        got = call(name, query_fn, transcript)
        if not isinstance(got, str):
            raise AssertionError(f"{name}(transcript) should return the query text, got {type(got).__name__}.")
        return got
    return query


def recalls(query_fn: Callable[[Transcript], str], catalog: ToolCatalog) -> dict[str, float]:
    """Per-step recall@7 on the task scenarios, the pivots, and both."""
    scenarios = [s for s in load_demo_scenarios() if s.kind in KINDS]
    by_kind = {kind: per_step_recall(catalog, [s for s in scenarios if s.kind == kind], query_fn) for kind in KINDS}
    return {**by_kind, "both": per_step_recall(catalog, scenarios, query_fn)}


def check(classify: Callable[[str], Any], classified_query: Callable[[Transcript], Any]) -> Passed:
    """Grade exercise 5: the classifier's routing, and its query against Chapter 3's transcript query."""
    accuracy = check_classifier(classify)
    catalog = ToolCatalog(demo_tools())
    mine = recalls(_wrapped("classified_query", classified_query), catalog)
    transcript = recalls(query_from_transcript, catalog)
    if mine["both"] <= transcript["both"] or mine["pivot"] <= transcript["pivot"]:
        raise AssertionError(f"Your query finds the needed tool at {mine['both']:.3f} of the steps (pivots {mine['pivot']:.3f}); "
                             f"the transcript query of Chapter 3 at {transcript['both']:.3f} (pivots {transcript['pivot']:.3f}): "
                             "beat it on both.")
    latest = recalls(query_from_user_message, catalog)
    steps = sum(len(oracle_steps(s, catalog)) for s in load_demo_scenarios() if s.kind in KINDS)
    return Passed(f"✓ your classifier routes {accuracy:.0%} of the literal queries right; its query finds the needed tool at "
                  f"{mine['both']:.3f} of {steps} steps (tasks {mine['task']:.3f}, pivots {mine['pivot']:.3f}) against "
                  f"{transcript['both']:.3f} for the transcript query and {latest['both']:.3f} for the latest message alone.")
