"""Grader for exercise 3, tuning ``tools_per_turn`` (``exercises/03_tune_tools_per_turn.ipynb``).

The exercise follows Chapter 3 (the per-turn loop): run the demo's task scenarios through
:func:`workbook.evaluation.scenarios.run_scenarios` with the offline stand-in at several ``tools_per_turn``
settings, plot task success against the schema tokens a task costs, and pick a setting.

What counts as a good pick is stated, not hidden: it must be on the Pareto front of the measured
grid (no setting solves as many tasks for fewer tokens), and either its success is within
:data:`SUCCESS_TOLERANCE` of the best measured success or its success per token is within
:data:`RATIO_TOLERANCE` of the best measured ratio — the "most for the money" knee. The grader
re-measures, with the harness, the points the verdict rests on (the pick, the most successful
setting, the one with most success per token); the whole grid is the learner's to measure.
"""
from __future__ import annotations

import math
import re
import statistics

from workbook.demo import load_demo_scenarios
from workbook.grading.learner import Passed
from workbook.grading.pareto import Point, dominator
from workbook.providers.offline import OfflineModel
from harness.selection.ranking import Selector
from workbook.evaluation.scenarios import fresh_demo_catalog, run_scenarios, success_rate

GRID = (3, 5, 7, 10, 15, 20, 30)
SUCCESS_TOLERANCE = 0.10
RATIO_TOLERANCE = 0.10


def task_scenarios() -> list:
    return [s for s in load_demo_scenarios() if s.kind == "task"]


async def reference_point(k: int) -> tuple[float, float]:
    """(task success, mean schema tokens per task) with ``tools_per_turn=k``, offline stand-in, default query."""
    runs = await run_scenarios(OfflineModel(), fresh_demo_catalog, task_scenarios(), selector=lambda c: Selector.over(c, k=k))
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


def judge_pick(points: list[Point], pick: int) -> str:
    """Why ``pick`` is acceptable (a phrase for the verdict); AssertionError when it is not."""
    chosen = next(p for p in points if p.label == pick)
    better = dominator(chosen, points)
    if better is not None:
        raise AssertionError(f"tools_per_turn={pick} is beaten by {better.label}: success {better.benefit:.2f} for "
                             f"{better.cost:,.0f} schema tokens, against {chosen.benefit:.2f} for {chosen.cost:,.0f}.")
    best, thrifty = best_points(points)
    if chosen.benefit >= best.benefit - SUCCESS_TOLERANCE:
        return f"within {SUCCESS_TOLERANCE:.2f} of the best success ({best.benefit:.2f} at {best.label})"
    if per_thousand(chosen) >= (1 - RATIO_TOLERANCE) * per_thousand(thrifty):
        return (f"within {RATIO_TOLERANCE:.0%} of the best success per 1,000 tokens "
                f"({per_thousand(thrifty):.3f} at {thrifty.label})")
    raise AssertionError(f"tools_per_turn={pick} solves {chosen.benefit:.2f} of the tasks, more than {SUCCESS_TOLERANCE:.2f} "
                         f"below the best ({best.benefit:.2f} at {best.label}), and its success per 1,000 schema tokens "
                         f"({per_thousand(chosen):.3f}) is not within {RATIO_TOLERANCE:.0%} of the best "
                         f"({per_thousand(thrifty):.3f} at {thrifty.label}).")


def per_thousand(p: Point) -> float:
    """Task success per 1,000 schema tokens."""
    return 1000 * p.benefit / p.cost if p.cost else math.inf


def best_points(points: list[Point]) -> tuple[Point, Point]:
    """(the most successful setting, the one with the most success per token)."""
    return max(points, key=lambda p: (p.benefit, -p.cost)), max(points, key=per_thousand)


async def check(curve: object, pick: object, reason: object) -> Passed:
    """Grade exercise 3: the curve agrees with the reference where the verdict rests, and PICK is a fair choice.

    The grader re-measures the pick, the most successful setting and the one with the most success
    per token — the points the verdict depends on — and judges the pick on the learner's curve.
    """
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
    points = [Point(k, tokens, success) for k, (success, tokens) in sorted(curve.items())]
    best, thrifty = best_points(points)
    for k in dict.fromkeys([pick, best.label, thrifty.label]):
        success, tokens = await reference_point(k)
        if not _same(curve[k][0], success) or not _same(curve[k][1], tokens):
            raise AssertionError(f"Your curve has success {curve[k][0]:.3f} and {curve[k][1]:,.0f} schema tokens at "
                                 f"tools_per_turn={k}; the reference measures {success:.3f} and {tokens:,.0f} (all "
                                 f"{len(task_scenarios())} task scenarios, a fresh catalog each, tokens summed over a "
                                 "run's turns and averaged over runs).")
    why = judge_pick(points, pick)
    success, tokens = curve[pick]
    return Passed(f"✓ tools_per_turn={pick} solves {success:.2f} of the {len(task_scenarios())} tasks for {tokens:,.0f} "
                  f"schema tokens per task: on the Pareto front of {len(points)} settings, {why}.")
