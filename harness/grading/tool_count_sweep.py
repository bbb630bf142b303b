"""Grader for exercise 2, the tool-count sweep on a domain subset (``exercises/02_tool_count_sweep.ipynb``).

The exercise follows Chapter 1 (the tool cliff): rerun :func:`harness.cliff.selection_accuracy_sweep`
with the offline stand-in on a few domains of the demo world — their tools only, their queries
only — and find the N where accuracy falls fastest with :func:`harness.cliff.steepest_drop`.

The sweep is deterministic (each trial's distractors come from a seeded generator), so the grader
reruns the reference sweep and compares trial by trial: a difference names the query, the N and
what differs, which says more than "your curve is off". Tokens tell whether the right tools were
shown; the chosen tool tells whether the right model chose.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from harness.cliff import Trial, accuracy_by_n, provider_chooser, selection_accuracy_sweep, steepest_drop
from harness.demo import CONFUSABLE_PAIRS, DOMAINS, demo_tools, load_demo_queries
from harness.grading.learner import Passed, acall
from harness.providers.offline import OfflineModel

SEEDS = (0, 1, 2)


def check_domains(domains: Any) -> list[str]:
    """Two or more known domains, fewer than all of them."""
    if isinstance(domains, str) or not isinstance(domains, (list, tuple)) or not all(isinstance(d, str) for d in domains):
        raise AssertionError(f"DOMAINS should be a list or tuple of domain names, got {domains!r}.")
    unknown = [d for d in domains if d not in DOMAINS]
    if unknown:
        raise AssertionError(f"{', '.join(map(repr, unknown))} is not a demo domain; choose from {', '.join(DOMAINS)}.")
    if not 2 <= len(set(domains)) < len(DOMAINS):
        raise AssertionError(f"Choose a subset of at least two domains and fewer than all {len(DOMAINS)}; got {len(set(domains))}.")
    return list(dict.fromkeys(domains))


def check_ns(ns: Any, n_tools: int, domains: Sequence[str]) -> list[int]:
    """At least four tool counts from 1 up to the subset's size."""
    if not isinstance(ns, (list, tuple)) or not all(isinstance(n, int) and not isinstance(n, bool) for n in ns):
        raise AssertionError(f"NS should be a list or tuple of whole numbers, got {ns!r}.")
    if len(set(ns)) < 4:
        raise AssertionError(f"NS has {len(set(ns))} distinct tool counts; a curve needs at least 4.")
    if min(ns) < 1 or max(ns) > n_tools:
        raise AssertionError(f"Every N must be from 1 to {n_tools}, the number of tools {', '.join(domains)} have; NS is {list(ns)}.")
    return sorted(set(ns))


async def reference_sweep(domains: Sequence[str], ns: Sequence[int], seeds: Sequence[int] = SEEDS) -> list[Trial]:
    """Chapter 1's sweep with the stand-in, restricted to ``domains``' tools and queries."""
    tools = [t for t in demo_tools() if t.domain in domains]
    queries = [q for q in load_demo_queries() if q.domain in domains]
    return await selection_accuracy_sweep(provider_chooser(OfflineModel()), tools, queries, ns=ns, seeds=seeds,
                                          confusable_pairs=CONFUSABLE_PAIRS)


def compare_trials(mine: Any, reference: Sequence[Trial], domains: Sequence[str]) -> None:
    """The learner's trials are the reference's, one for one."""
    if not isinstance(mine, (list, tuple)) or not all(isinstance(t, Trial) for t in mine):
        raise AssertionError("subset_sweep() should return the list of Trial objects selection_accuracy_sweep gives.")
    ref = {(t.qid, t.n, t.seed): t for t in reference}
    got = {(t.qid, t.n, t.seed): t for t in mine}
    domain_of = {q.qid: q.domain for q in load_demo_queries()}
    for key in sorted(got.keys() - ref.keys()):
        qid, n, seed = key
        if domain_of.get(qid) not in domains:
            raise AssertionError(f"Your sweep asked {qid}, a {domain_of.get(qid, 'unknown')} query, which is not among "
                                 f"{', '.join(domains)}: keep only those domains' queries.")
        raise AssertionError(f"Your sweep has a trial for {qid} at N={n}, seed {seed}, that the reference does not "
                             f"(it uses seeds {', '.join(map(str, SEEDS))} and your NS).")
    for key in sorted(ref.keys() - got.keys()):
        qid, n, seed = key
        raise AssertionError(f"Your sweep has no trial for {qid} at N={n} (seed {seed}): ask every "
                             f"{', '.join(domains)} query at every N with seeds {', '.join(map(str, SEEDS))}.")
    for key, r in sorted(ref.items()):
        t = got[key]
        if t.tokens != r.tokens or t.confusable_shown != r.confusable_shown:
            raise AssertionError(f"For {r.qid} at N={r.n} (seed {r.seed}) your sweep showed {t.tokens:,} schema tokens; the "
                                 f"reference shows {r.tokens:,}: show only {', '.join(domains)} tools, in demo_tools() order, "
                                 "with CONFUSABLE_PAIRS.")
        if t.chosen != r.chosen:
            raise AssertionError(f"For {r.qid} at N={r.n} (seed {r.seed}) your model chose {t.chosen!r}, the reference "
                                 f"stand-in chose {r.chosen!r}: use provider_chooser(OfflineModel()).")


async def check(subset_sweep: Callable[..., Any], domains: Any, ns: Any, steepest: Any) -> Passed:
    """Grade exercise 2: the learner's sweep matches the reference, and STEEPEST names its steepest segment."""
    domains = check_domains(domains)
    n_tools = sum(t.domain in domains for t in demo_tools())
    ns = check_ns(ns, n_tools, domains)
    mine = await acall("subset_sweep", subset_sweep, domains, ns)
    reference = await reference_sweep(domains, ns)
    compare_trials(mine, reference, domains)
    points = accuracy_by_n(reference)
    n_from, n_to, per_tool = steepest_drop(points)
    if not isinstance(steepest, (list, tuple)) or len(steepest) < 2:
        raise AssertionError(f"STEEPEST should be (n_from, n_to) read off your curve, got {steepest!r}.")
    if tuple(steepest[:2]) != (n_from, n_to):
        raise AssertionError(f"You name N={steepest[0]}→{steepest[1]} as the steepest fall; the measured curve falls "
                             f"fastest from N={n_from} to N={n_to} ({per_tool * 100:.2f} points per added tool).")
    first, last = points[0], points[-1]
    return Passed(f"✓ on {', '.join(domains)} ({n_tools} tools, {len({t.qid for t in reference})} queries) accuracy falls "
                  f"fastest from N={n_from} to N={n_to}, {per_tool * 100:.2f} points per added tool "
                  f"({first.mean:.2f} at N={first.n} → {last.mean:.2f} at N={last.n}).")
