"""Chapter 1's regressions, kept off its reading path: the same numbers recomputed with the package.

The chapter's evidence cells check the figures its prose states; these check the invariants behind
them (how the stand-in's sweep is built, how the argument outcomes add up), which teach nothing.
"""
from __future__ import annotations

import pytest

from conftest import run
from workbook.demo import CONFUSABLE_PAIRS, demo_tools, load_demo_queries
from workbook.evaluation.cliff import (argument_split, curves_by_kind, failure_kinds, first_separated_drop, fixed_list_sweep,
                                      load_argument_trials, provider_chooser, schema_token_curve)
from experiments.real_cliff import SWEEP_NS, sweep_pool
from workbook.providers.offline import OfflineModel


@pytest.fixture(scope="module")
def sweep():
    """The stand-in's sweep over Chapter 1's fixed lists, at a given reading budget (None: the default)."""
    pool, _ = sweep_pool(max(SWEEP_NS))
    queries = load_demo_queries()
    demo_ns = [n for n in SWEEP_NS if n <= len(demo_tools())]  # the chapter runs the stand-in in the demo world only

    def at(budget: int | None = None):
        model = OfflineModel() if budget is None else OfflineModel(reading_budget=budget)
        return run(fixed_list_sweep(provider_chooser(model), pool, queries, demo_ns, confusable_pairs=CONFUSABLE_PAIRS))
    return at


def test_fifty_terse_demo_tools_stay_below_the_folklore_s_ten_thousand_tokens():
    at50 = next(p for p in schema_token_curve(demo_tools(), [50]) if p.n == 50)
    assert at50.tokens < 10_000


def test_the_stand_in_asks_every_request_once_at_every_n_and_its_argument_errors_are_extraction_misses(sweep):
    tools, queries = demo_tools(), load_demo_queries()
    demo_trials = [t for t in sweep() if t.n <= len(tools)]
    assert len(demo_trials) == len(queries) * len({t.n for t in demo_trials})
    kinds = failure_kinds(demo_trials)
    assert sum(row["wrong tool"] for row in kinds.values()) > 0
    split = argument_split(demo_trials, tools, CONFUSABLE_PAIRS)
    assert split.counts["schema blending"] == 0, "the stand-in fills arguments from the chosen schema only"
    assert split.counts["extraction miss"] == sum(row["wrong arguments"] for row in kinds.values())
    assert sum(split.counts.values()) == split.n


def test_the_real_model_s_argument_run_splits_its_right_tool_calls_only():
    meta, trials = load_argument_trials()
    split = argument_split(trials, demo_tools(), CONFUSABLE_PAIRS)
    assert len(trials) == meta["requests"]
    assert split.n == sum(t.correct_tool for t in trials) and sum(split.counts.values()) == split.n


def test_with_a_thousand_token_reading_budget_the_stand_in_falls_by_forty_tools(sweep):
    literal = curves_by_kind(sweep(1_000), load_demo_queries(), CONFUSABLE_PAIRS)["literal"]
    assert first_separated_drop(literal) <= 40


def test_a_reading_budget_no_list_reaches_gives_exactly_the_unlimited_curve(sweep):
    """Chapter 1 draws the 10,000-token and the unlimited budgets as one line: no demo list reaches 10,000 tokens."""
    queries = load_demo_queries()
    curves = [curves_by_kind(sweep(budget), queries, CONFUSABLE_PAIRS)["literal"] for budget in (10_000, 10**9)]
    assert curves[0] == curves[1]
