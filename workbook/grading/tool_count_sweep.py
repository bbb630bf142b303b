"""Grader for exercise 2, the tool-count sweep on a slice of the demo world (``exercises/02_tool_count_sweep.ipynb``).

The exercise follows Chapter 1 (the tool cliff): rerun Chapter 1's fixed-list sweep
(:func:`workbook.evaluation.cliff.fixed_list_sweep`, seed 0) with the offline stand-in on a few domains of the
demo world — their tools only, their queries only — and say where accuracy *measurably* falls: the
first N whose 95 % interval lies wholly below the smallest N's (:func:`workbook.evaluation.cliff.first_separated_drop`),
or ``None`` when no N does.

Why not "where it falls fastest": on a slice the point estimates wobble by a few hundredths from one
N to the next, and the steepest such step is usually noise. The grader names that mistake when it
sees it. The slice must run past the stand-in's reading budget, as Chapter 1's sweep does, so that
a fall is there to be found.

The sweep is deterministic, so the grader reruns the reference and compares trial by trial: a
difference names the query, the N and what differs.
"""
from __future__ import annotations

from typing import Callable, Sequence

from workbook.evaluation.cliff import (RatePoint, Trial, accuracy_by_n, accuracy_with_interval, fixed_list_sweep, first_separated_drop,
                           provider_chooser, steepest_drop)
from workbook.demo import CONFUSABLE_PAIRS, DOMAINS, demo_tools, load_demo_queries
from workbook.grading.learner import Passed, acall
from workbook.providers.offline import READING_BUDGET, OfflineModel


def check_domains(domains: object) -> list[str]:
    """Two or more known domains, fewer than all of them."""
    if isinstance(domains, str) or not isinstance(domains, (list, tuple)) or not all(isinstance(d, str) for d in domains):
        raise AssertionError(f"MY_DOMAINS should be a list or tuple of domain names, got {domains!r}.")
    unknown = [d for d in domains if d not in DOMAINS]
    if unknown:
        raise AssertionError(f"{', '.join(map(repr, unknown))} is not a demo domain; choose from {', '.join(DOMAINS)}.")
    if not 2 <= len(set(domains)) < len(DOMAINS):
        raise AssertionError(f"Choose a subset of at least two domains and fewer than all {len(DOMAINS)}; got {len(set(domains))}.")
    return list(dict.fromkeys(domains))


def check_ns(ns: object, n_tools: int, domains: Sequence[str]) -> list[int]:
    """At least four tool counts from 1 up to the subset's size."""
    if not isinstance(ns, (list, tuple)) or not all(isinstance(n, int) and not isinstance(n, bool) for n in ns):
        raise AssertionError(f"NS should be a list or tuple of whole numbers, got {ns!r}.")
    if len(set(ns)) < 4:
        raise AssertionError(f"NS has {len(set(ns))} distinct tool counts; a curve needs at least 4.")
    if min(ns) < 1 or max(ns) > n_tools:
        raise AssertionError(f"Every N must be from 1 to {n_tools}, the number of tools {', '.join(domains)} have; NS is {list(ns)}.")
    return sorted(set(ns))


def subset(domains: Sequence[str]) -> tuple[list, list]:
    """The slice's tools (in ``demo_tools()`` order) and its labelled queries."""
    return [t for t in demo_tools() if t.domain in domains], [q for q in load_demo_queries() if q.domain in domains]


async def reference_sweep(domains: Sequence[str], ns: Sequence[int]) -> list[Trial]:
    """Chapter 1's fixed-list sweep with the stand-in, restricted to ``domains``' tools and queries."""
    tools, queries = subset(domains)
    return await fixed_list_sweep(provider_chooser(OfflineModel()), tools, queries, ns, confusable_pairs=CONFUSABLE_PAIRS)


def check_past_budget(reference: Sequence[Trial], domains: Sequence[str]) -> None:
    """The largest list shown costs more than the stand-in's reading budget (else no fall is there to find)."""
    largest = max(reference, key=lambda t: t.n)
    tokens = max(t.tokens for t in reference if t.n == largest.n)
    if tokens <= READING_BUDGET:
        raise AssertionError(f"Your largest list (N={largest.n}) shows {tokens:,} schema tokens, within the stand-in's reading "
                             f"budget of {READING_BUDGET:,}: add domains to {', '.join(domains)} or raise max(NS), so the "
                             "sweep runs past it as Chapter 1's does.")


def compare_trials(mine: object, reference: Sequence[Trial], domains: Sequence[str]) -> None:
    """The learner's trials are the reference's, one for one."""
    if not isinstance(mine, (list, tuple)) or not all(isinstance(t, Trial) for t in mine):
        raise AssertionError("subset_sweep() should return the list of Trial objects fixed_list_sweep gives.")
    ref = {(t.qid, t.n): t for t in reference}
    got = {(t.qid, t.n): t for t in mine}
    domain_of = {q.qid: q.domain for q in load_demo_queries()}
    for qid, n in sorted(got.keys() - ref.keys()):
        if domain_of.get(qid) not in domains:
            raise AssertionError(f"Your sweep asked {qid}, a {domain_of.get(qid, 'unknown')} query, which is not among "
                                 f"{', '.join(domains)}: keep only those domains' queries.")
        raise AssertionError(f"Your sweep has a trial for {qid} at N={n} that the reference does not: sweep exactly NS.")
    for qid, n in sorted(ref.keys() - got.keys()):
        raise AssertionError(f"Your sweep has no trial for {qid} at N={n}: ask every {', '.join(domains)} query at every N.")
    for key, r in sorted(ref.items()):
        t = got[key]
        if t.tokens != r.tokens or t.confusable_shown != r.confusable_shown:
            raise AssertionError(f"For {r.qid} at N={r.n} your sweep showed {t.tokens:,} schema tokens; the reference shows "
                                 f"{r.tokens:,}: show only {', '.join(domains)} tools, in demo_tools() order, with "
                                 "CONFUSABLE_PAIRS and the default seed.")
        if t.chosen != r.chosen:
            raise AssertionError(f"For {r.qid} at N={r.n} your model chose {t.chosen!r}, the reference stand-in chose "
                                 f"{r.chosen!r}: use provider_chooser(OfflineModel()).")


def _interval(p: RatePoint) -> str:
    return f"{p.rate:.3f} [{p.low:.3f}, {p.high:.3f}]"


def judge_first_fall(points: Sequence[RatePoint], steepest: tuple[int, int], answer: object) -> int | None:
    """The measured first separated fall; AssertionError naming what is wrong with ``answer``."""
    truth = first_separated_drop(points)
    if answer is not None and (isinstance(answer, bool) or not isinstance(answer, int)):
        raise AssertionError(f"FIRST_FALL should be one N from NS, or None when no N falls measurably; got {answer!r}.")
    if answer == truth:
        return truth
    at = {p.n: p for p in points}
    base = points[0]
    if answer in at and at[answer].high >= base.low:
        noise = " — the steepest step of the point estimates, which is noise" if answer in steepest else ""
        raise AssertionError(f"At N={answer} accuracy is {_interval(at[answer])}, whose interval overlaps N={base.n}'s "
                             f"{_interval(base)}{noise}: a fall counts only where the intervals separate.")
    if answer is None:
        assert truth is not None  # else answer == truth returned above
        raise AssertionError(f"At N={truth} accuracy is {_interval(at[truth])}, wholly below N={base.n}'s {_interval(base)}: "
                             "the curve does fall measurably; name the first N where it does.")
    if answer in at:
        raise AssertionError(f"N={answer} is separated from N={base.n}, but an earlier N already is: name the first.")
    raise AssertionError(f"FIRST_FALL={answer} is not one of your NS {[p.n for p in points]}.")


async def check(subset_sweep: Callable[..., object], domains: object, ns: object, first_fall: object) -> Passed:
    """Grade exercise 2: the learner's sweep matches the reference, and FIRST_FALL is where it measurably falls."""
    domains = check_domains(domains)
    tools, queries = subset(domains)
    ns = check_ns(ns, len(tools), domains)
    reference = await reference_sweep(domains, ns)
    check_past_budget(reference, domains)
    mine = await acall("subset_sweep", subset_sweep, domains, ns)
    compare_trials(mine, reference, domains)
    points = accuracy_with_interval(reference)
    steepest = steepest_drop(accuracy_by_n(reference))[:2]
    truth = judge_first_fall(points, steepest, first_fall)
    base, last = points[0], points[-1]
    said = (f"falls measurably first at N={truth} ({_interval(next(p for p in points if p.n == truth))} against "
            f"{_interval(base)} at N={base.n})" if truth else
            f"never falls measurably: {_interval(last)} at N={last.n} still overlaps {_interval(base)} at N={base.n}")
    return Passed(f"✓ on {', '.join(domains)} ({len(tools)} tools, {len(queries)} queries) accuracy {said}.")
