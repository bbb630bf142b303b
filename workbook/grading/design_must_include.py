"""Grader for exercise 4, designing what to pin (``exercises/04_design_must_include.ipynb``).

The exercise follows Chapter 4 (the pinned discovery tool): choose the tools shown on every turn
whatever the selector ranks — catalog tools by name, a discovery tool, or both — and measure the
choice on the demo scenarios Chapter 4 is about, the vague openers and the mid-task pivots, with
:func:`workbook.evaluation.scenarios.run_scenarios` (offline stand-in, the loop's defaults otherwise).

The design is the learner's: Chapter 4's one-liner (``[discovery_tool(catalog)]``) is the bar, and it and
the package's other pinned tool (``ToolSearch(...).tool``, ``search_tools``) are refused as answers — a
pinned tool the learner writes, or catalog tools pinned by name, are what is graded. Pinning everything
"works" and pays every schema on every turn, so the pins are held to a stated budget
(:data:`PIN_BUDGET_SHARE` of what the whole catalog costs). Designs are compared by the chapters' rule,
a paired 95 % interval over the same scenarios (:func:`harness.core.rates.paired_difference_interval`):
the pins may not be measurably worse than ``list_available_tools`` alone or than nothing pinned, and must
solve some scenario that nothing pinned does not. On twelve scenarios few differences separate; the
verdict says so rather than calling a design better.
"""
from __future__ import annotations

from typing import Callable, Sequence

from harness.selection.catalog import ToolCatalog
from workbook.demo import load_demo_scenarios
from workbook.demo.labels import Scenario
from harness.core.rates import paired_difference_interval
from harness.selection.discovery import ToolSearch, discovery_tool
from workbook.grading.learner import Passed, call, refuse_borrowed
from workbook.providers.offline import OfflineModel
from harness.selection.ranking import Selector
from workbook.evaluation.scenarios import ScenarioRun, fresh_demo_catalog, run_scenarios, success_rate
from harness.core.tokens import tools_tokens
from harness.core.tools import Tool

#: Pins may cost at most this share of the whole catalog's schema tokens, on every turn.
PIN_BUDGET_SHARE = 0.10
KINDS = ("opener", "pivot")
#: The package's pinned tools: Chapter 4's one-liner (the bar) and harness serve's search tool.
PACKAGE_PINS: dict[object, str] = {discovery_tool: "harness.selection.discovery.discovery_tool (Chapter 4's one-liner)",
                                   ToolSearch: "harness.selection.discovery.ToolSearch (search_tools)"}
WRITE_PINS = ("pin a tool you write (a Tool whose function lists or finds catalog.tools, tagged 'discovery') "
              "and/or catalog tools by name.")


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


def _difference(a: Sequence[ScenarioRun], b: Sequence[ScenarioRun]) -> tuple[float, float, float]:
    """(success of a − success of b, and its paired 95 % interval over the same scenarios)."""
    low, high = paired_difference_interval([float(r.success) for r in a], [float(r.success) for r in b])
    return success_rate(a) - success_rate(b), low, high


def _said(d: tuple[float, float, float]) -> str:
    verdict = "separated" if d[1] > 0 or d[2] < 0 else "not separated"
    return f"{d[0]:+.2f} [{d[1]:+.2f}, {d[2]:+.2f}], {verdict}"


async def check(pins: Callable[[ToolCatalog], object]) -> Passed:
    """Grade exercise 4: your own pins fit the budget, are not measurably worse than list_available_tools alone,
    and solve something nothing pinned does not."""
    refuse_borrowed("pins", pins, PACKAGE_PINS, WRITE_PINS)
    catalog = fresh_demo_catalog()
    pinned = resolve_pins(pins, catalog)
    cost, whole = tools_tokens(pinned), tools_tokens(catalog.tools)
    budget = PIN_BUDGET_SHARE * whole
    if cost > budget:
        raise AssertionError(f"Your pins cost {cost:,} schema tokens on every turn, more than {PIN_BUDGET_SHARE:.0%} of the "
                             f"whole catalog ({budget:,.0f} of {whole:,}); pin less.")
    scenarios = openers_and_pivots()
    nothing = await measure(None, scenarios)
    bar = await measure(lambda c: [discovery_tool(c)], scenarios)
    mine = await measure(pins, scenarios)
    n = len(scenarios)
    against_bar, against_nothing = _difference(mine, bar), _difference(mine, nothing)
    if against_bar[2] < 0:
        lost = ", ".join(sorted(_solved(bar) - _solved(mine)))
        raise AssertionError(f"Your pins solve {len(_solved(mine))} of the {n} openers and pivots, list_available_tools alone "
                             f"{len(_solved(bar))} (yours lose {lost}): {_said(against_bar)}, measurably worse.")
    if against_nothing[2] < 0 or not _solved(mine) - _solved(nothing):
        raise AssertionError(f"Your pins solve {len(_solved(mine))} of the {n} openers and pivots, none of them one that pinning "
                             f"nothing misses (nothing pinned solves {', '.join(sorted(_solved(nothing)))}): they change "
                             "nothing for the better. Read why an opener or a pivot fails (the hint), then pin what reaches "
                             "the tool it needs.")
    names = ", ".join(t.name for t in pinned) or "nothing"
    return Passed(f"✓ pinning {names} ({cost:,} schema tokens per turn) solves {len(_solved(mine))} of the {n} openers and "
                  f"pivots ({success_rate(mine):.2f}); against list_available_tools alone {_said(against_bar)}; against "
                  f"nothing pinned {_said(against_nothing)}. Pinning every tool would cost {whole:,} per turn.")
