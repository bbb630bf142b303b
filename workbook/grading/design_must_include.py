"""Grader for exercise 4, designing what to pin (``exercises/04_design_must_include.ipynb``).

The exercise follows Chapter 4 (the pinned discovery tool): choose the tools shown on every turn
whatever the selector ranks — catalog tools by name, a discovery tool, or both — and measure the
choice on the demo scenarios Chapter 4 is about, the vague openers and the mid-task pivots, with
:func:`workbook.evaluation.scenarios.run_scenarios` (offline stand-in, the loop's defaults otherwise).

Pinning everything "works" and pays every schema on every turn, so the grader holds the pins to a
stated budget (:data:`PIN_BUDGET_SHARE` of what the whole catalog costs) and asks them to solve
at least as much as the simplest sound design — ``list_available_tools`` alone, measured here, on
the same scenarios — give or take one scenario.
"""
from __future__ import annotations

from typing import Callable, Sequence

from harness.selection.catalog import ToolCatalog
from workbook.demo import load_demo_scenarios
from workbook.demo.labels import Scenario
from harness.selection.discovery import discovery_tool
from workbook.grading.learner import Passed, call
from workbook.providers.offline import OfflineModel
from harness.selection.ranking import Selector
from workbook.evaluation.scenarios import ScenarioRun, fresh_demo_catalog, run_scenarios, success_rate
from harness.core.tokens import tools_tokens
from harness.core.tools import Tool

#: Pins may cost at most this share of the whole catalog's schema tokens, on every turn.
PIN_BUDGET_SHARE = 0.10
KINDS = ("opener", "pivot")


def openers_and_pivots() -> list:
    return [s for s in load_demo_scenarios() if s.kind in KINDS]


def resolve_pins(pins: Callable[[ToolCatalog], object], catalog: ToolCatalog) -> list[Tool]:
    """The tools ``pins(catalog)`` pins, checked: catalog names or Tool objects, no repeats."""
    chosen = call("pins", pins, catalog)
    if not isinstance(chosen, (list, tuple)):
        raise AssertionError(f"pins(catalog) should return a list of tool names and Tool objects, got {type(chosen).__name__}.")
    tools: list[Tool] = []
    for item in chosen:
        if isinstance(item, str):
            if item not in catalog:
                raise AssertionError(f"pins(catalog) names {item!r}, which is not a tool in the catalog.")
            tools.append(catalog.get(item))
        elif isinstance(item, Tool):
            tools.append(item)
        else:
            raise AssertionError(f"pins(catalog) returned {item!r}; pin tool names (str) or Tool objects.")
    names = [t.name for t in tools]
    if len(set(names)) != len(names):
        raise AssertionError(f"pins(catalog) pins {next(n for n in names if names.count(n) > 1)!r} twice.")
    return tools


async def measure(pins: Callable[[ToolCatalog], object] | None, scenarios: Sequence[Scenario]) -> list[ScenarioRun]:
    """The scenarios run with these pins (None: nothing pinned), a fresh catalog each."""
    return await run_scenarios(OfflineModel(), fresh_demo_catalog, scenarios,
                               selector=(lambda c: Selector.over(c, pinned=pins(c))) if pins else None)


def _solved(runs: Sequence[ScenarioRun]) -> set[str]:
    return {r.scenario.id for r in runs if r.success}


async def check(pins: Callable[[ToolCatalog], object]) -> Passed:
    """Grade exercise 4: the pins fit the budget and solve as many openers and pivots as a discovery tool alone."""
    catalog = fresh_demo_catalog()
    pinned = resolve_pins(pins, catalog)
    cost, whole = tools_tokens(pinned), tools_tokens(catalog.tools)
    budget = PIN_BUDGET_SHARE * whole
    if cost > budget:
        raise AssertionError(f"Your pins cost {cost:,} schema tokens on every turn, more than {PIN_BUDGET_SHARE:.0%} of the "
                             f"whole catalog ({budget:,.0f} of {whole:,}); pin less.")
    scenarios = openers_and_pivots()
    nothing = await measure(None, scenarios)
    discovery = await measure(lambda c: [discovery_tool(c)], scenarios)
    mine = await measure(pins, scenarios)
    n = len(scenarios)
    floor = success_rate(discovery) - 1 / n
    if success_rate(mine) < floor - 1e-9 or success_rate(mine) <= success_rate(nothing):
        missed = sorted(_solved(discovery) - _solved(mine))
        hint = f" (list_available_tools solves {', '.join(missed)}; yours does not)" if missed else ""
        raise AssertionError(f"Your pins solve {len(_solved(mine))} of the {n} openers and pivots ({success_rate(mine):.2f}); "
                             f"pinning list_available_tools alone solves {len(_solved(discovery))} "
                             f"({success_rate(discovery):.2f}) and nothing pinned {len(_solved(nothing))}{hint}.")
    names = ", ".join(t.name for t in pinned) or "nothing"
    return Passed(f"✓ pinning {names} ({cost:,} schema tokens per turn) solves {len(_solved(mine))} of the {n} openers and "
                  f"pivots ({success_rate(mine):.2f}), against {success_rate(nothing):.2f} with nothing pinned and "
                  f"{success_rate(discovery):.2f} with list_available_tools alone; pinning every tool would cost {whole:,} per turn.")
