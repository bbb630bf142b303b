"""Chapter 3's regressions, kept off its reading path: the same results recomputed with the package.

The chapter's evidence cells check the figures its prose states and the intervals its calls rest on;
these check what its demonstrations show (the run with seven tools, the retry, the real model's trace)
and the invariants of the committed per-step rows, cheaply (no sweep of the stand-in is re-run here).
"""
from __future__ import annotations

import statistics

import pytest

from conftest import run
from harness import ToolCatalog
from harness.core.messages import Transcript
from harness.core.rates import paired_difference_interval
from workbook.demo import demo_tools, load_scenarios
from workbook.evaluation.scenarios import per_step_hits
from experiments import real_steps
from experiments.real_rules import k_rule, measured, query_rule
from workbook.providers.offline import OfflineModel
from harness.selection.agent import LoopSettings, arun
from harness.selection.queries import DEFAULT_QUERY, QUERY_STRATEGIES, query_from_recent, query_from_transcript
from harness.selection.ranking import DEFAULT_K, Selector

CONFIGS = ("k=10", "all 74", "latest message, k=10", "latest message + recent turns, k=10")
RECENT = "latest message + recent turns"


def fresh_catalog() -> ToolCatalog:
    return ToolCatalog(demo_tools())


@pytest.fixture(scope="module")
def real():
    return real_steps.load()


def test_with_seven_tools_a_turn_the_stand_in_cannot_take_the_last_step_of_the_first_task():
    scenario = next(s for s in load_scenarios("dev") if s.kind == "task")
    events = []
    result = run(arun(OfflineModel(), Selector.over(fresh_catalog(), k=7), scenario.request, settings=LoopSettings(on_event=events.append)))
    assert len(events) == len(result.turns) and all(e.snapshot.n_tools <= 7 for e in events)
    assert result.succeeded() == list(scenario.tools[:2])
    assert scenario.tools[2] not in result.turns[-1].tool_names


def test_a_call_to_a_tool_not_loaded_fails_and_the_next_turn_recovers():
    catalog, conversation = fresh_catalog(), Transcript()
    for request in ["Post 'Build is green' to the #dev channel",
                    "Read the file 'README.md', then read the file 'notes/todo.md'"]:
        run(arun(OfflineModel(), catalog, request, transcript=conversation, query_fn=query_from_recent))
    retry = run(arun(OfflineModel(), Selector.over(catalog, k=7), "Announce it on #releases as well",
                     transcript=conversation, query_fn=query_from_recent))
    first, second = retry.turns[0], retry.turns[1]
    assert "post_channel_message" not in first.tool_names
    assert first.results[0].is_error and "not loaded this turn" in first.results[0].content
    assert "post_channel_message" in second.tool_names and not second.results[0].is_error


@pytest.mark.parametrize("split", ["dev", "heldout"])
def test_per_step_recall_the_transcript_query_coincides_on_one_message_and_loses_steps_on_several(split):
    scenarios, catalog = load_scenarios(split), fresh_catalog()
    single = [s for s in scenarios if s.kind == "task"]
    multi = [s for s in scenarios if s.kind in ("conversation", "pivot")]
    hits = {(kind, name): per_step_hits(catalog, group, QUERY_STRATEGIES[name], DEFAULT_K)
            for kind, group in (("single", single), ("multi", multi)) for name in ("latest message", "transcript", RECENT)}
    assert hits["single", "transcript"] == hits["single", RECENT], "one user message: the first is the latest"
    assert statistics.fmean(hits["single", "latest message"]) >= statistics.fmean(hits["single", "transcript"])
    low, _ = paired_difference_interval([float(x) for x in hits["multi", RECENT]], [float(x) for x in hits["multi", "transcript"]])
    assert low > 0, "several user turns: the query anchored on the first message loses steps"


def test_the_committed_rows_cover_every_step_of_the_chapter_s_configurations(real):
    assert all(measured(real, c, split) for c in CONFIGS for split in ("dev", "heldout"))


def test_every_tool_shown_removes_the_not_shown_verdicts_and_most_misses_are_the_model_s_own(real):
    assert not any(r.verdict == "not shown" for r in real if r.config == "all 74")
    own = [r.verdict for r in real if r.config == "k=10" and r.needed is not None and r.verdict != "right"]
    assert sum(v in ("wrong", "answered") for v in own) > len(own) / 2


def test_both_rules_keep_the_package_defaults(real):
    decision = query_rule(real, DEFAULT_K)
    assert decision.decided and decision.choice == "transcript" and DEFAULT_QUERY is query_from_transcript
    assert k_rule(real, DEFAULT_K).decided and DEFAULT_K == 10


def test_the_real_model_s_trace_of_the_first_task_is_the_one_the_chapter_describes(real):
    scenario = next(s for s in load_scenarios("dev") if s.kind == "task")
    step = {(r.config, r.step): r for r in real if r.scenario == scenario.id and r.config in ("k=10", "all 74")}
    assert step["k=10", 1].choice == step["all 74", 1].choice == "read_file"
    assert step["k=10", 2].verdict == "not shown" and step["k=10", 2].choice == "read_channel_history"
    assert step["all 74", 2].choice == "post_channel_message"
    assert step["k=10", 3].verdict == step["all 74", 3].verdict == "kept calling"
    assert all(r.margin > 0 for r in step.values()), "every margin positive"
    close = {key: round(r.margin, 1) for key, r in step.items() if r.margin < 1}
    assert close == {("k=10", 2): 0.5, ("all 74", 2): 0.3}, "the two close calls are at step 2, 0.5 and 0.3 nats"


def test_held_out_per_step_recall_of_the_latest_message_holds_up():
    scenarios, catalog = load_scenarios("heldout"), fresh_catalog()
    for group in ([s for s in scenarios if s.kind == "task"], [s for s in scenarios if s.kind in ("conversation", "pivot")]):
        assert statistics.fmean(per_step_hits(catalog, group, QUERY_STRATEGIES["latest message"], DEFAULT_K)) >= 0.85


def test_the_k_rule_s_grid_is_the_chapter_s_measured_whole_and_keeps_the_default(real):
    from experiments.real_rules import ALL_TOOLS, K_CONFIGS, k_rule

    assert set(K_CONFIGS) == {3, 5, 10, 20, ALL_TOOLS} and K_CONFIGS[ALL_TOOLS] == "all 74"
    assert all(measured(real, K_CONFIGS[k]) for k in K_CONFIGS), "every k of the grid is measured"
    assert k_rule(real, DEFAULT_K).choice == K_CONFIGS[DEFAULT_K] == "k=10"
