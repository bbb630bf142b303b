"""Grader for exercise 7, the deferral threshold and the ``search_tools`` limit (``exercises/07_deferral_threshold.ipynb``).

The exercise follows Chapter 5 (MCP integration). A session's MCP tool definitions are either all
sent every turn or, once they pass a token threshold, deferred behind ``search_tools``
(:func:`harness.mcp.deferral.plan_deferral`); a search returns up to ``limit`` tools
(:class:`harness.mcp.tool_search.ToolSearch`). Over sessions of growing size, the learner
measures what each (threshold, limit) costs and solves, and writes the rule that picks one.

The cost of a task is the schema tokens the model is shown for it: the loaded definitions, plus
``search_tools``' own definition when anything is deferred, plus — when the needed tool is not
loaded — the definitions of the tools the search activates. A task is solved when its tool is
loaded or among what the search returns. A fair pick solves at least :data:`MIN_SOLVED` of the
tasks, lies on the Pareto front of the grid (:mod:`harness.grading.pareto`), and costs at most
:data:`MAX_COST_FACTOR` times the cheapest setting that clears that floor: paying for more solved
tasks is a choice, loading everything "to be safe" is not tuning. The grader computes
every number itself; it works on any sessions and tasks, real servers' or the demo world's.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

from harness.grading.learner import Passed, call
from harness.grading.pareto import Point, dominator
from harness.mcp.deferral import DeferralPolicy, plan_deferral
from harness.mcp.tool_search import ToolSearch
from harness.tokens import tool_tokens, tools_tokens
from harness.tools import Tool

THRESHOLDS = (1_000, 2_500, 5_000, 10_000, 20_000, 50_000)
LIMITS = (1, 3, 5, 8, 12)
MIN_SOLVED = 0.90
#: A pick may cost at most this multiple of the cheapest setting that clears MIN_SOLVED.
MAX_COST_FACTOR = 1.5

Session = Mapping[str, Sequence[Tool]]  # server -> its tools
Task = tuple[str, str]  # (request, the tool it needs)
Setting = tuple[int, int]  # (threshold, limit)


def tasks_in(session: Session, tasks: Sequence[Task]) -> list[Task]:
    """The tasks whose tool this session has."""
    names = {t.name for tools in session.values() for t in tools}
    return [task for task in tasks if task[1] in names]


class SessionReference:
    """The reference cost of one session's tasks at any (threshold, limit); each search runs once."""

    def __init__(self, session: Session, tasks: Sequence[Task]) -> None:
        self.session = {server: list(tools) for server, tools in session.items()}
        self.tasks = tasks_in(session, tasks)
        self._by_name = {t.name: t for tools in self.session.values() for t in tools}
        self._found: dict[tuple[tuple[str, ...], str], list[Tool]] = {}
        self._costs: dict[Setting, tuple[int, int]] = {}

    def _search(self, loaded: Sequence[str], deferred: Sequence[str], request: str) -> list[Tool]:
        """What ``search_tools`` returns at the widest limit (a smaller limit returns a prefix of it)."""
        key = (tuple(deferred), request)
        if key not in self._found:
            search = ToolSearch([self._by_name[n] for n in loaded], [self._by_name[n] for n in deferred])
            self._found.update({(tuple(deferred), r): search.find(r, max(LIMITS)) for r, _ in self.tasks})
        return self._found[key]

    def cost(self, threshold: int, limit: int) -> tuple[int, int]:
        """(schema tokens over all tasks, tasks solved)."""
        if (threshold, limit) not in self._costs:
            self._costs[(threshold, limit)] = self._cost(threshold, limit)
        return self._costs[(threshold, limit)]

    def _cost(self, threshold: int, limit: int) -> tuple[int, int]:
        plan = plan_deferral(self.session, {}, DeferralPolicy(threshold_tokens=threshold, threshold_share=None))
        search_tool = ToolSearch([], []).tool
        shown = sum(plan.tokens[n] for n in plan.loaded) + (tool_tokens(search_tool) if plan.deferred else 0)
        tokens = solved = 0
        for request, needed in self.tasks:
            tokens += shown
            if needed in plan.loaded:
                solved += 1
                continue
            found = self._search(plan.loaded, plan.deferred, request)[:limit]
            tokens += tools_tokens(found)
            solved += needed in {t.name for t in found}
        return tokens, solved


def grid_results(references: Sequence[SessionReference]) -> dict[Setting, tuple[int, int]]:
    """(tokens, solved) summed over the sessions, for every setting of the grid."""
    return {(th, lim): tuple(map(sum, zip(*(r.cost(th, lim) for r in references))))
            for th in THRESHOLDS for lim in LIMITS}


def _spot_checks(references: Mapping[str, SessionReference]) -> list[tuple[str, int, int]]:
    """Settings where the learner's ``session_cost`` must agree: each session deferred and not, and the widest search."""
    largest = max(references, key=lambda name: len(references[name].tasks))
    return ([(name, THRESHOLDS[0], 3) for name in references] + [(name, THRESHOLDS[-1], 3) for name in references]
            + [(largest, THRESHOLDS[0], LIMITS[-1])])


def check_session_cost(session_cost: Callable[..., Any], references: Mapping[str, SessionReference]) -> None:
    for name, threshold, limit in _spot_checks(references):
        ref = references[name]
        got = call("session_cost", session_cost, ref.session, ref.tasks, threshold, limit)
        want = ref.cost(threshold, limit)
        if not isinstance(got, (list, tuple)) or len(got) != 2:
            raise AssertionError(f"session_cost(...) should return (tokens, solved); got {got!r}.")
        if tuple(got) != want:
            raise AssertionError(f"session_cost on '{name}' at threshold {threshold:,}, limit {limit} gives {got[0]:,} tokens "
                                 f"and {got[1]} solved; the reference gives {want[0]:,} and {want[1]} (of "
                                 f"{len(ref.tasks)} tasks): count the loaded definitions, search_tools' own when anything "
                                 "is deferred, and the definitions of the tools a search returns.")


def judge(results: Mapping[Setting, tuple[int, int]], pick: Setting, n_tasks: int) -> Point:
    points = [Point(setting, tokens, solved) for setting, (tokens, solved) in results.items()]
    chosen = next(p for p in points if p.label == pick)
    need = math.ceil(MIN_SOLVED * n_tasks)
    if chosen.benefit < need:
        raise AssertionError(f"Threshold {pick[0]:,} with limit {pick[1]} solves {chosen.benefit} of {n_tasks} tasks, "
                             f"fewer than the {need} ({MIN_SOLVED:.0%}) asked for.")
    better = dominator(chosen, points)
    if better is not None:
        raise AssertionError(f"Threshold {pick[0]:,} with limit {pick[1]} ({chosen.benefit} solved, {chosen.cost:,} tokens) is "
                             f"beaten by threshold {better.label[0]:,} with limit {better.label[1]} ({better.benefit} solved, "
                             f"{better.cost:,} tokens).")
    cheapest = min((p for p in points if p.benefit >= need), key=lambda p: (p.cost, -p.benefit))
    if chosen.cost > MAX_COST_FACTOR * cheapest.cost:
        raise AssertionError(f"Threshold {pick[0]:,} with limit {pick[1]} solves {chosen.benefit} of {n_tasks} tasks for "
                             f"{chosen.cost:,} tokens, more than {MAX_COST_FACTOR:g}× the cheapest setting that solves "
                             f"{MIN_SOLVED:.0%} (threshold {cheapest.label[0]:,}, limit {cheapest.label[1]}: "
                             f"{cheapest.benefit} solved for {cheapest.cost:,}).")
    return chosen


def check(session_cost: Callable[..., Any], choose_setting: Callable[..., Any], sessions: Mapping[str, Session],
          tasks: Sequence[Task]) -> Passed:
    """Grade exercise 7: ``session_cost`` agrees with the reference, and ``choose_setting`` picks a fair setting."""
    references = {name: SessionReference(session, tasks) for name, session in sessions.items()}
    if not any(r.tasks for r in references.values()):
        raise AssertionError("No task needs a tool these sessions have: nothing to measure.")
    check_session_cost(session_cost, references)
    results = grid_results(list(references.values()))
    pick = call("choose_setting", choose_setting, dict(results))
    if not isinstance(pick, (list, tuple)) or tuple(pick) not in results:
        raise AssertionError(f"choose_setting(results) should return one of the (threshold, limit) keys of results; got {pick!r}.")
    n_tasks = sum(len(r.tasks) for r in references.values())
    chosen = judge(results, tuple(pick), n_tasks)
    load_all = sum(len(r.tasks) * tools_tokens([t for ts in r.session.values() for t in ts]) for r in references.values())
    return Passed(f"✓ threshold {pick[0]:,} with limit {pick[1]} solves {chosen.benefit} of {n_tasks} tasks "
                  f"({chosen.benefit / n_tasks:.0%}) for {chosen.cost:,} schema tokens, {1 - chosen.cost / load_all:.0%} fewer "
                  f"than loading every tool ({load_all:,}); on the Pareto front of {len(results)} settings.")
