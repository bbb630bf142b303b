"""Grader for exercise 7, the deferral threshold and the ``search_tools`` limit (``exercises/07_deferral_threshold.ipynb``).

The exercise follows Chapter 5 (MCP integration). A session's tool definitions are either all
sent every turn or, once they pass a token threshold, deferred behind ``search_tools``
(:func:`harness.mcp.deferral.plan_deferral`); a search returns up to ``limit`` tools when the
model names no limit (:class:`harness.selection.discovery.ToolSearch`). The demo world's domains stand in
for servers, and sessions grow domain by domain; each session runs the demo scenarios it can do
(every tool they need is in it) through the agent loop, and a scenario counts as solved only when
the world is in the right state afterwards (:mod:`workbook.demo.effects`), as in the chapters.

The learner writes ``deferral_for(threshold, limit)`` (how one setting loads a catalog's tools; the
grader's own :func:`reference_deferral_for` and Chapter 5's ``loading_strategies`` are refused) and
``choose_setting`` (the rule that picks a setting from the development scenarios' runs). Differences in
success are called by the chapters' rule, a paired 95 % interval over the same scenario runs
(:func:`harness.core.rates.paired_difference_interval`): a fair pick solves not measurably fewer
scenarios than the best setting, and costs at most :data:`MAX_COST_FACTOR` times the cheapest setting
that does — loading everything "to be safe" is not tuning. The graded report is the pick against
loading every tool on the held-out scenarios, with 95 % intervals. Every run uses the offline
stand-in, so every number is the stand-in's.
"""
from __future__ import annotations

import asyncio
import functools
import math
import statistics
from typing import Callable, Mapping, Sequence

from harness.selection.discovery import Deferral
from harness.selection.catalog import ToolCatalog
from workbook.demo import DOMAINS, demo_tools, load_scenarios
from workbook.demo.labels import Scenario
from harness.selection.discovery import ToolSearch
from workbook.evaluation.loading import loading_strategies
from workbook.grading.learner import Passed, call, refuse_borrowed
from workbook.grading.pareto import Point
from harness.mcp.deferral import DeferralPolicy, plan_deferral
from workbook.providers.offline import OfflineModel
from harness.selection.ranking import Selector
from harness.core.rates import bootstrap_interval, paired_difference_interval
from workbook.evaluation.scenarios import ScenarioRun, run_scenarios
from harness.core.tokens import tools_tokens
from harness.core.tools import Tool

THRESHOLDS = (1_000, 3_000, 5_000, 20_000)  # 20,000: Claude Code's default, 10 % of a 200k window
LIMITS = (1, 3, 5, 8)
#: Sessions grow domain by domain (each domain standing in for a server): the threshold matters because sizes differ.
SESSIONS: dict[str, tuple[str, ...]] = {"code": tuple(DOMAINS[:3]), "+ web and office": tuple(DOMAINS[:7]),
                                        "every domain": tuple(DOMAINS)}
#: A pick may cost at most this multiple of the cheapest setting not measurably worse than the best.
MAX_COST_FACTOR = 1.5

Setting = tuple[int, int]  # (threshold, limit)
DeferralFor = Callable[[int, int], Callable[[ToolCatalog], Deferral]]


def session_tools(domains: Sequence[str]) -> list[Tool]:
    """A fresh demo world's tools of ``domains`` (a fresh world: one scenario's writes never reach the next)."""
    return [t for t in demo_tools() if t.domain in domains]


def servers_of(tools: Sequence[Tool]) -> dict[str, list[Tool]]:
    """``{domain: its tools}``: the demo world's domains as the servers a deferral plan groups by."""
    servers: dict[str, list[Tool]] = {}
    for t in tools:
        servers.setdefault(t.domain or "local", []).append(t)
    return servers


def scenarios_in(domains: Sequence[str], split: str) -> list[Scenario]:
    """The ``split``'s scenarios whose needed tools (every turn's) are all in the session."""
    names = {t.name for t in session_tools(domains)}
    return [s for s in load_scenarios(split) if set(s.tools).union(*map(set, s.setup_tools)) <= names]


def reference_deferral_for(threshold: int, limit: int) -> Callable[[ToolCatalog], Deferral]:
    """Every tool loaded while the session's definitions total at most ``threshold``; above it, every tool behind a search of ``limit``."""
    def deferral(catalog: ToolCatalog) -> Deferral:
        tools = list(catalog.tools)
        plan = plan_deferral(servers_of(tools), {}, DeferralPolicy(threshold_tokens=threshold, threshold_share=None))
        if not plan.deferred:
            return Deferral(extra_tools=lambda: tools)
        by_name = {t.name: t for t in tools}
        search = ToolSearch([by_name[n] for n in plan.loaded], [by_name[n] for n in plan.deferred], limit=limit)
        return Deferral(extra_tools=search.tools_for_turn, on_finish=search.end_turn, known=list(by_name),
                        hint="Call search_tools to load it.")
    return deferral


def _nothing_per_turn(catalog: ToolCatalog) -> Selector:
    return Selector.over(ToolCatalog([]))  # no per-turn choice: what the model sees is the deferral's (Chapter 5)


async def run_setting(deferral_for: DeferralFor, threshold: int, limit: int, session: str, split: str) -> list[ScenarioRun]:
    """The session's ``split`` scenarios, run by the offline stand-in with the tools loaded as ``deferral_for`` says."""
    domains = SESSIONS[session]
    make = call("deferral_for", deferral_for, threshold, limit)
    return await run_scenarios(OfflineModel(), lambda: ToolCatalog(session_tools(domains)), scenarios_in(domains, split),
                               selector=_nothing_per_turn,
                               deferral=lambda catalog: call("the function deferral_for returned", make, catalog))


def deferred(threshold: int, session: str) -> bool:
    """Does ``threshold`` defer this session (its definitions total more)?"""
    return tools_tokens(session_tools(SESSIONS[session])) > threshold


async def grid(deferral_for: DeferralFor, split: str = "dev") -> dict[Setting, list[ScenarioRun]]:
    """Every setting's runs over every session. A session the threshold does not defer is run once: the limit plays no part."""
    runs: dict[tuple[str, int | None], list[ScenarioRun]] = {}
    out: dict[Setting, list[ScenarioRun]] = {}
    for threshold in THRESHOLDS:
        for limit in LIMITS:
            out[(threshold, limit)] = []
            for session in SESSIONS:
                key = (session, limit if deferred(threshold, session) else None)
                if key not in runs:
                    runs[key] = await run_setting(deferral_for, threshold, limit, session, split)
                out[(threshold, limit)] += runs[key]
    return out


def totals(runs: Sequence[ScenarioRun]) -> tuple[int, int]:
    """(schema tokens sent over the runs, runs whose effects hold)."""
    return sum(r.schema_tokens for r in runs), sum(r.success for r in runs)


@functools.cache
def _reference_dev() -> dict[Setting, list[ScenarioRun]]:
    return asyncio.run(grid(reference_deferral_for))


async def _reference_grid() -> dict[Setting, list[ScenarioRun]]:
    """The reference grid's runs on the development scenarios (computed once per process, in a thread: a loop may be running)."""
    return await asyncio.to_thread(_reference_dev)


SPOT_CHECKS = ((1_000, 1, "code"), (3_000, 3, "code"), (3_000, 3, "+ web and office"), (5_000, 8, "every domain"),
               (20_000, 5, "every domain"))


async def check_deferral_for(deferral_for: DeferralFor) -> None:
    """The learner's loading gives the reference's effects and schema tokens, scenario by scenario, deferred and not."""
    refuse_borrowed("deferral_for", deferral_for, {reference_deferral_for: "the grader's own reference_deferral_for",
                                                   loading_strategies: "Chapter 5's loading_strategies"},
                    "plan the deferral with plan_deferral and build the search yourself.")
    for threshold, limit, session in SPOT_CHECKS:
        got = await run_setting(deferral_for, threshold, limit, session, "dev")
        want = await run_setting(reference_deferral_for, threshold, limit, session, "dev")
        differ = [(g, w) for g, w in zip(got, want) if (g.success, g.schema_tokens) != (w.success, w.schema_tokens)]
        if differ:
            g, w = differ[0]
            state = "defers" if deferred(threshold, session) else "does not defer"
            raise AssertionError(
                f"deferral_for({threshold:,}, {limit}) on the session '{session}' (which it {state}) runs {len(differ)} of "
                f"{len(got)} scenarios differently from the reference, e.g. '{g.scenario.id}': solved {g.success} with "
                f"{g.schema_tokens:,} schema tokens against {w.success} with {w.schema_tokens:,}; load every tool while the "
                "definitions total at most the threshold, otherwise defer them behind ToolSearch(..., limit=limit).")


def not_measurably_fewer(a: Sequence[ScenarioRun], b: Sequence[ScenarioRun]) -> bool:
    """True unless ``a`` solves fewer than ``b`` by a paired 95 % interval over the same runs that excludes zero."""
    return paired_difference_interval([float(r.success) for r in b], [float(r.success) for r in a])[0] <= 0


def judge(runs: Mapping[Setting, Sequence[ScenarioRun]], pick: Setting) -> Point:
    """The pick's point, or an AssertionError saying which standard it misses (never which setting meets it)."""
    points = {setting: Point(setting, *totals(rs)) for setting, rs in runs.items()}
    chosen = points[pick]
    best = max(points.values(), key=lambda p: (p.benefit, -p.cost))
    good = [p for s, p in points.items() if not_measurably_fewer(runs[s], runs[best.label])]
    cheapest = min(good, key=lambda p: (p.cost, -p.benefit))
    if chosen not in good:
        if not any(deferred(pick[0], s) for s in SESSIONS):
            largest = max(tools_tokens(session_tools(d)) for d in SESSIONS.values())
            raise AssertionError(
                f"Threshold {pick[0]:,} defers nothing here (the largest session's definitions total {largest:,} tokens), so "
                f"every definition is paid on every turn ({chosen.cost:,} schema tokens), and it solves {chosen.benefit}, "
                "measurably fewer than the best setting: choose from the results rather than a default.")
        raise AssertionError(f"Threshold {pick[0]:,} with limit {pick[1]} solves {chosen.benefit} development scenarios, "
                             f"measurably fewer than the best setting's {best.benefit} (a paired 95 % interval over the "
                             f"same {len(runs[pick])} runs, wholly above zero).")
    if chosen.cost > MAX_COST_FACTOR * cheapest.cost:
        raise AssertionError(f"Threshold {pick[0]:,} with limit {pick[1]} costs {chosen.cost:,} schema tokens for "
                             f"{chosen.benefit} solved, more than {MAX_COST_FACTOR:g}× what the cheapest setting not "
                             "measurably worse than the best costs: pay for measured gains only.")
    return chosen


async def held_out_report(pick: Setting) -> str:
    """The pick against loading every tool on the held-out scenarios: success with 95 % intervals, the paired difference, tokens."""
    runs = {name: [r for s in SESSIONS for r in await run_setting(reference_deferral_for, *setting, s, "heldout")]
            for name, setting in (("pick", pick), ("all", (THRESHOLDS[-1], LIMITS[0])))}
    wins = {name: [float(r.success) for r in rs] for name, rs in runs.items()}
    low, high = paired_difference_interval(wins["pick"], wins["all"])
    verdict = "separated" if low > 0 or high < 0 else "not separated"

    def rate(name: str) -> str:
        a, b = bootstrap_interval(wins[name])
        return f"{statistics.fmean(wins[name]):.2f} [{a:.2f}, {b:.2f}]"

    tokens = {name: statistics.fmean(r.schema_tokens for r in rs) for name, rs in runs.items()}
    return (f"held out ({len(wins['pick'])} scenario runs, offline stand-in): success {rate('pick')} against {rate('all')} "
            f"loading every tool, difference {statistics.fmean(wins['pick']) - statistics.fmean(wins['all']):+.2f} "
            f"[{low:+.2f}, {high:+.2f}] ({verdict}); schema tokens per run {tokens['pick']:,.0f} against {tokens['all']:,.0f}")


async def check(deferral_for: DeferralFor, choose_setting: Callable[..., object]) -> Passed:
    """Grade exercise 7: ``deferral_for`` runs like the reference, and ``choose_setting`` picks a fair setting."""
    await check_deferral_for(deferral_for)
    runs = await _reference_grid()
    pick = call("choose_setting", choose_setting, dict(runs))
    if not isinstance(pick, (list, tuple)) or tuple(pick) not in runs:
        raise AssertionError(f"choose_setting(runs) should return one of the (threshold, limit) keys of runs; got {pick!r}.")
    chosen = judge(runs, tuple(pick))
    load_all = totals(runs[(THRESHOLDS[-1], LIMITS[0])])[0]
    n_dev = sum(len(scenarios_in(d, "dev")) for d in SESSIONS.values())
    return Passed(f"✓ threshold {pick[0]:,} with limit {pick[1]}: on the development scenarios {chosen.benefit} of {n_dev} solved for "
                  f"{chosen.cost:,} schema tokens, {1 - chosen.cost / load_all:.0%} fewer than loading every tool, not "
                  f"measurably fewer solved than the best setting; {await held_out_report(tuple(pick))}.")
