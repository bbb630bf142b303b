"""Grader for exercise 2, the tool-count sweep on a slice of the demo world (``exercises/02_tool_count_sweep.ipynb``).

The exercise follows Chapter 1 (the tool cliff): rerun Chapter 1's fixed-list sweep
(:func:`workbook.evaluation.cliff.fixed_list_sweep`, seed 0) with the offline stand-in on a few domains of the
demo world — their tools only, their queries only — and write the rule that says where accuracy
*measurably* falls: ``first_fall(points)``, the first N whose 95 % interval lies wholly below the smallest
N's, or ``None`` when no N does. That rule is the chapter's idea, so the learner writes it: the package's
:func:`workbook.evaluation.cliff.first_separated_drop` (Chapter 1's one-liner) is refused, and the rule is
tried on :data:`CURVES`, made to catch the usual misreadings, as well as on the learner's own slice.

Why not "where it falls fastest": on a slice the point estimates wobble by a few hundredths from one
N to the next, and the steepest such step is usually noise. The grader names that mistake when it
sees it, without naming the N that does fall. The slice must run past the stand-in's reading budget, as
Chapter 1's sweep does, so that a fall is there to be found.

The sweep is deterministic, so the grader reruns the reference and compares trial by trial: a
difference names the query, the N and what differs.
"""
from __future__ import annotations

from typing import Callable, Sequence

from workbook.evaluation.cliff import (RatePoint, Trial, accuracy_by_n, accuracy_with_interval, fixed_list_sweep, first_separated_drop,
                           provider_chooser, steepest_drop)
from workbook.demo import CONFUSABLE_PAIRS, DOMAINS, demo_tools, load_demo_queries
from workbook.grading.learner import Passed, acall, call, refuse_borrowed
from workbook.providers.offline import READING_BUDGET, OfflineModel


def _point(n: int, rate: float, low: float, high: float) -> RatePoint:
    return RatePoint(n, rate, low, high, 40, 100.0 * n)


#: Curves a reading rule must get right: (what the curve shows, its points). Each catches one misreading.
CURVES: tuple[tuple[str, tuple[RatePoint, ...]], ...] = (
    ("the steepest step is noise, a later N falls", (
        _point(5, 0.80, 0.70, 0.90), _point(10, 0.72, 0.62, 0.82), _point(20, 0.70, 0.60, 0.80), _point(40, 0.62, 0.55, 0.69))),
    ("no N falls", (
        _point(5, 0.80, 0.66, 0.92), _point(10, 0.74, 0.60, 0.86), _point(20, 0.70, 0.56, 0.83), _point(40, 0.66, 0.52, 0.79))),
    ("an interval touching the first one", (
        _point(5, 0.80, 0.70, 0.90), _point(10, 0.60, 0.50, 0.70), _point(20, 0.58, 0.45, 0.69), _point(40, 0.50, 0.40, 0.60))),
    ("a step apart from its neighbour, not from the first N", (
        _point(5, 0.80, 0.60, 0.95), _point(10, 0.90, 0.85, 0.95), _point(20, 0.70, 0.62, 0.78), _point(40, 0.50, 0.40, 0.58))),
    ("a fall, then a recovery", (
        _point(5, 0.90, 0.84, 0.95), _point(10, 0.70, 0.60, 0.80), _point(20, 0.86, 0.78, 0.93), _point(40, 0.80, 0.72, 0.88))),
)
#: The package's reading rule and the grader's own sweep, which the learner's code may not use.
PACKAGE_RULES: dict[object, str] = {first_separated_drop: "workbook.evaluation.cliff.first_separated_drop (Chapter 1's one-liner)"}


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


def judge_first_fall(points: Sequence[RatePoint], answer: object, steepest: tuple[int, ...] = (),
                     curve: str = "your slice's curve") -> int | None:
    """The measured first separated fall; AssertionError saying what is wrong with ``answer`` without naming the right N."""
    truth = first_separated_drop(points)
    if answer is not None and (isinstance(answer, bool) or not isinstance(answer, int)):
        raise AssertionError(f"first_fall(points) should return one N of the points, or None when no N falls measurably; "
                             f"on {curve} it returned {answer!r}.")
    if answer == truth:
        return truth
    at = {p.n: p for p in points}
    base = points[0]
    shown = "" if curve == "your slice's curve" else " (" + ", ".join(f"N={p.n} {_interval(p)}" for p in points) + ")"
    if answer in at and at[answer].high >= base.low:
        noise = ", the steepest step of the point estimates" if answer in steepest else ""
        raise AssertionError(f"On {curve}{shown}, first_fall says N={answer}{noise}, whose interval {_interval(at[answer])} "
                             f"overlaps N={base.n}'s {_interval(base)}: a fall counts only where the intervals separate.")
    if answer is None:
        raise AssertionError(f"On {curve}{shown}, first_fall says no N falls, but at least one N's interval lies wholly below "
                             f"N={base.n}'s {_interval(base)}: compare each N's interval with that one.")
    if answer in at:
        raise AssertionError(f"On {curve}{shown}, first_fall says N={answer}, which is separated from N={base.n}, but an earlier "
                             "N already is: return the first.")
    raise AssertionError(f"On {curve}{shown}, first_fall returned {answer}, which is none of its N {[p.n for p in points]}.")


def check_rule(first_fall: Callable[..., object]) -> None:
    """The learner's reading rule, its own, on every curve of :data:`CURVES`."""
    refuse_borrowed("first_fall", first_fall, PACKAGE_RULES,
                    "write the rule yourself: compare each N's interval with the smallest N's.")
    for what, points in CURVES:
        judge_first_fall(points, call("first_fall", first_fall, list(points)), curve=f"the test curve '{what}'")


async def check(subset_sweep: Callable[..., object], domains: object, ns: object, first_fall: Callable[..., object]) -> Passed:
    """Grade exercise 2: the learner's sweep matches the reference, and first_fall reads curves as Chapter 1 does."""
    domains = check_domains(domains)
    tools, queries = subset(domains)
    ns = check_ns(ns, len(tools), domains)
    refuse_borrowed("subset_sweep", subset_sweep, {reference_sweep: "the grader's own reference_sweep",
                                                   subset: "the grader's own subset"},
                    "filter the tools and queries yourself and call fixed_list_sweep.")
    reference = await reference_sweep(domains, ns)
    check_past_budget(reference, domains)
    mine = await acall("subset_sweep", subset_sweep, domains, ns)
    compare_trials(mine, reference, domains)
    check_rule(first_fall)
    points = accuracy_with_interval(reference)
    steepest = steepest_drop(accuracy_by_n(reference))[:2]
    truth = judge_first_fall(points, call("first_fall", first_fall, list(points)), steepest)
    base, last = points[0], points[-1]
    said = (f"falls measurably first at N={truth} ({_interval(next(p for p in points if p.n == truth))} against "
            f"{_interval(base)} at N={base.n})" if truth else
            f"never falls measurably: {_interval(last)} at N={last.n} still overlaps {_interval(base)} at N={base.n}")
    return Passed(f"✓ on {', '.join(domains)} ({len(tools)} tools, {len(queries)} queries) accuracy {said}; your first_fall "
                  f"reads that and the {len(CURVES)} test curves as Chapter 1 does.")
