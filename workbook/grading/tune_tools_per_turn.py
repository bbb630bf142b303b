"""Grader for exercise 3, tuning ``tools_per_turn`` (``exercises/03_tune_tools_per_turn.ipynb``).

The exercise follows Chapter 3 (the per-turn loop): run the demo's task scenarios through
:func:`workbook.evaluation.scenarios.run_scenarios` with the offline stand-in at several ``tools_per_turn``
settings, plot task success against the schema tokens a task costs, and pick a setting.

What counts as a good pick is stated, not hidden, and differences in success are called by the chapters'
rule — a paired 95 % interval over the same task scenarios that excludes zero
(:func:`harness.core.rates.paired_difference_interval`):

1. it pays for something: every setting that costs fewer schema tokens solves measurably fewer tasks;
2. its success is not measurably below the best measured success, or its success per token is within
   :data:`RATIO_TOLERANCE` of the best measured ratio — the "most for the money" knee.

The grader measures every setting of :data:`GRID` itself, checks the learner's curve against it, and
judges the pick on those runs. ``measure`` is the learner's: the grader's own reference is refused.
"""
from __future__ import annotations

import math
import re
import statistics

from harness.core.rates import paired_difference_interval
from workbook.demo import load_demo_scenarios
from workbook.grading.learner import Passed, refuse_borrowed
from workbook.grading.pareto import Point
from workbook.providers.offline import OfflineModel
from harness.selection.ranking import Selector
from workbook.evaluation.scenarios import ScenarioRun, fresh_demo_catalog, run_scenarios, success_rate

GRID = (3, 5, 7, 10, 15, 20, 30)
RATIO_TOLERANCE = 0.10


def task_scenarios() -> list:
    return [s for s in load_demo_scenarios() if s.kind == "task"]


async def reference_runs(k: int) -> list[ScenarioRun]:
    """The task scenarios run with ``tools_per_turn=k``: offline stand-in, default query, a fresh catalog each."""
    return await run_scenarios(OfflineModel(), fresh_demo_catalog, task_scenarios(), selector=lambda c: Selector.over(c, k=k))


async def reference_point(k: int) -> tuple[float, float]:
    """(task success, mean schema tokens per task) with ``tools_per_turn=k``."""
    runs = await reference_runs(k)
    return success_rate(runs), statistics.fmean(r.schema_tokens for r in runs)


def _numbers(text: str) -> list[float]:
    """Every number written in ``text`` ("3,365", "0.62", "62 %" → 3365.0, 0.62, 62.0)."""
    return [float(m.replace(",", "")) for m in re.findall(r"\d[\d,]*(?:\.\d+)?", text)]


def quoted(curve: dict[int, tuple[float, float]], pick: int, reason: str) -> tuple[bool, bool]:
    """Whether ``reason`` quotes the pick's measured success (to 2 places, or as a percentage) and its tokens (within 1 %).

    A digit alone, or the pick's own label, is not a justification: the sentence must carry what
    was measured at the pick, so that a reader can check it against the curve.
    """
    success, tokens = curve[pick]
    said = _numbers(reason)
    return (any(abs(x - success) < 0.0051 or abs(x / 100 - success) < 0.0051 for x in said),
            any(abs(x - tokens) <= 0.01 * tokens for x in said))


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def check_curve(curve: object) -> dict[int, tuple[float, float]]:
    """``{tools_per_turn: (task success, mean schema tokens per task)}`` covering at least :data:`GRID`."""
    if not isinstance(curve, dict):
        raise AssertionError(f"curve should be a dict {{tools_per_turn: (success, tokens)}}, got {type(curve).__name__}.")
    if not curve:
        raise AssertionError("curve is empty: write measure(k), then run the cell that measures every setting in GRID.")
    missing = [k for k in GRID if k not in curve]
    if missing:
        raise AssertionError(f"curve has no point for tools_per_turn={missing[0]}; measure every setting in GRID {GRID}.")
    for k, value in curve.items():
        if not isinstance(value, (list, tuple)) or len(value) != 2 or not all(isinstance(x, (int, float)) for x in value):
            raise AssertionError(f"curve[{k}] should be (task success, mean schema tokens per task); got {value!r}.")
    return {k: (float(s), float(t)) for k, (s, t) in curve.items()}


def measurably_below(a: list[float], b: list[float]) -> bool:
    """True when success ``a`` is below ``b`` by a paired 95 % interval over the same tasks that excludes zero."""
    return paired_difference_interval(b, a)[0] > 0


def judge_pick(points: list[Point], pick: int, wins: dict[int, list[float]]) -> str:
    """Why ``pick`` is acceptable (a phrase for the verdict); AssertionError when it is not.

    ``wins`` holds each setting's per-task success (1.0 or 0.0), the same tasks in the same order.
    """
    chosen = next(p for p in points if p.label == pick)
    cheaper = [p for p in points if p.cost < chosen.cost and not measurably_below(wins[p.label], wins[pick])]
    if cheaper:
        raise AssertionError(f"tools_per_turn={pick} pays for nothing: a setting that costs fewer schema tokens per task "
                             f"solves not measurably fewer tasks (a paired 95 % interval over the {len(wins[pick])} tasks "
                             "that includes zero).")
    best, thrifty = best_points(points)
    if not measurably_below(wins[pick], wins[best.label]):
        return f"not measurably below the best success ({best.benefit:.2f})"
    if per_thousand(chosen) >= (1 - RATIO_TOLERANCE) * per_thousand(thrifty):
        return f"within {RATIO_TOLERANCE:.0%} of the best success per 1,000 tokens ({per_thousand(thrifty):.3f})"
    raise AssertionError(f"tools_per_turn={pick} solves {chosen.benefit:.2f} of the tasks, measurably fewer than the best "
                         f"setting ({best.benefit:.2f}; a paired 95 % interval above zero), and its success per 1,000 schema "
                         f"tokens ({per_thousand(chosen):.3f}) is not within {RATIO_TOLERANCE:.0%} of the best "
                         f"({per_thousand(thrifty):.3f}).")


def per_thousand(p: Point) -> float:
    """Task success per 1,000 schema tokens."""
    return 1000 * p.benefit / p.cost if p.cost else math.inf


def best_points(points: list[Point]) -> tuple[Point, Point]:
    """(the most successful setting, the one with the most success per token)."""
    return max(points, key=lambda p: (p.benefit, -p.cost)), max(points, key=per_thousand)


async def check(measure: object, curve: object, pick: object, reason: object) -> Passed:
    """Grade exercise 3: ``measure`` is the learner's, the curve agrees with the reference, and PICK is a fair choice."""
    refuse_borrowed("measure", measure, {reference_point: "the grader's own reference_point",
                                         reference_runs: "the grader's own reference_runs"},
                    "run the task scenarios with run_scenarios yourself.")
    curve = check_curve(curve)
    if isinstance(pick, bool) or not isinstance(pick, int) or pick not in curve:
        raise AssertionError(f"PICK should be one of the tools_per_turn settings in your curve {sorted(curve)}; got {pick!r}.")
    if not isinstance(reason, str) or not any(ch.isdigit() for ch in reason):
        raise AssertionError("REASON should justify the pick with the numbers you measured; it has none.")
    has_success, has_tokens = quoted(curve, pick, reason)
    if not (has_success and has_tokens):
        what = "only its success" if has_success else "only its tokens" if has_tokens else "neither"
        raise AssertionError(f"REASON should justify tools_per_turn={pick} with what you measured there: its task success "
                             f"({curve[pick][0]:.2f}) and its schema tokens per task ({curve[pick][1]:,.0f}); it quotes {what}.")
    runs = {k: await reference_runs(k) for k in GRID}
    for k in GRID:
        success, tokens = success_rate(runs[k]), statistics.fmean(r.schema_tokens for r in runs[k])
        if not _same(curve[k][0], success) or not _same(curve[k][1], tokens):
            raise AssertionError(f"Your curve has success {curve[k][0]:.3f} and {curve[k][1]:,.0f} schema tokens at "
                                 f"tools_per_turn={k}; the reference measures {success:.3f} and {tokens:,.0f} (all "
                                 f"{len(task_scenarios())} task scenarios, a fresh catalog each, tokens summed over a "
                                 "run's turns and averaged over runs).")
    points = [Point(k, curve[k][1], curve[k][0]) for k in GRID]
    why = judge_pick(points, pick, {k: [float(r.success) for r in rs] for k, rs in runs.items()})
    success, tokens = curve[pick]
    return Passed(f"✓ tools_per_turn={pick} solves {success:.2f} of the {len(task_scenarios())} tasks for {tokens:,.0f} "
                  f"schema tokens per task: every cheaper setting solves measurably fewer, and it is {why}.")
