"""The per-step runner on the real model: what it records, how it resumes, how it names a choice.

Every test but the last runs a scripted provider (no model needed); the last re-asks committed
rows of the real model and skips, saying why, when the model is not installed.
"""
from __future__ import annotations

import json
from collections import defaultdict

import pytest
from real_model_support import needs_model

from harness.selection.catalog import ToolCatalog
from workbook.demo import DemoWorld, demo_tools, load_scenarios
from harness.core.messages import ToolResult
from workbook.providers.local_llama import StepChoice, ToolChoice
from experiments.real_steps import (CONFIGS, StepRow, cases, paired_right, prompt_order, read_rows, report, run_steps,
                                summarize, verdict)
from workbook.evaluation.scenarios import oracle_steps

BY_NAME = {c.name: c for c in CONFIGS}


class FirstShown:
    """Calls the first tool shown; answers once the last message is a tool's result. Counts its calls."""

    def __init__(self):
        self.asked = 0

    def next_step(self, system, transcript, tools):
        self.asked += 1
        last = transcript.messages[-1]
        if any(isinstance(b, ToolResult) for b in last.content) and len(transcript.tool_calls()) >= 2:
            return StepChoice(None, -1.0, "Done.", None, 50)
        return StepChoice(tools[0].name, 2.0, "```json\n{", ToolChoice(tools[0].name, 0.5, tools[-1].name), 50)


@pytest.fixture(scope="module")
def catalog():
    with DemoWorld() as world:
        yield ToolCatalog(demo_tools(world))


def test_every_step_of_every_scenario_then_one_row_after_the_last(catalog):
    all_cases = cases(catalog)
    scenarios = load_scenarios("dev") + load_scenarios("heldout")
    assert len(scenarios) == 70
    steps = sum(len(oracle_steps(s, catalog)) for s in scenarios)
    assert len(all_cases) == steps + len(scenarios)
    finals = [c for c in all_cases if c.needed is None]
    assert [c.scenario for c in finals] == [s.id for s in scenarios]
    for case in finals:
        last = case.transcript.messages[-1]
        scenario = next(s for s in scenarios if s.id == case.scenario)
        if scenario.tools:  # after the last call: its result, so the model should answer now
            assert isinstance(last.content[0], ToolResult)
            assert case.transcript.tool_calls()[-1].name == scenario.tools[-1]
        else:
            assert last.role == "user" and last.text == scenario.request


@pytest.mark.parametrize("needed, shown, choice, expected", [
    ("read_file", ["read_file", "write_file"], "read_file", "right"),
    ("read_file", ["read_file", "write_file"], "write_file", "wrong"),
    ("read_file", ["write_file"], "write_file", "not shown"),
    ("read_file", ["read_file"], None, "answered"),
    ("read_file", ["write_file", "search_tools"], "search_tools", "searched"),
    ("read_file", ["list_available_tools", "read_file"], "list_available_tools", "searched"),
    (None, ["read_file"], None, "stopped"),
    (None, ["read_file"], "read_file", "kept calling"),
])
def test_verdicts(needed, shown, choice, expected):
    assert verdict(needed, shown, choice) == expected


def test_rows_record_what_was_shown_and_chosen(tmp_path, catalog):
    out = tmp_path / "steps.jsonl"
    provider = FirstShown()
    added = run_steps(provider, out, [BY_NAME["k=3"]], catalog_for=lambda c: catalog, limit=8, log=lambda s: None)
    rows = read_rows(out)
    assert added == len(rows) == provider.asked == 8
    assert [json.loads(line)["config"] for line in out.read_text().splitlines()] == ["k=3"] * 8
    first_cases = {(c.scenario, c.step): c for c in cases(catalog)[:8]}
    assert {(r.scenario, r.step) for r in rows} == set(first_cases)
    config = BY_NAME["k=3"]
    orders = [prompt_order(catalog, first_cases[r.scenario, r.step], config.make(catalog)(first_cases[r.scenario, r.step].transcript))
              for r in rows]
    assert orders == sorted(orders), "asked in prompt order: neighbours share the longest prefix"
    assert [r.needed is None for r in rows] == sorted(r.needed is None for r in rows), "steps first"
    for row in rows:
        case = first_cases[row.scenario, row.step]
        assert (row.needed, row.split, row.kind) == (case.needed, case.split, case.kind)
        assert len(row.shown) == 3 and row.choice in row.shown[:1] + [None]
        assert row.needed_shown == (None if row.needed is None else row.needed in row.shown)
        assert row.verdict == verdict(row.needed, row.shown, row.choice)
        assert row.group == "k sweep" and row.prompt_tokens == 50 and row.seconds >= 0
        if row.choice:
            assert row.margin == 0.5 and row.rival == row.shown[-1] and row.call_margin == 2.0 and row.start == "```json\n{"
        else:
            assert row.start == "Done." and row.call_margin == -1.0


def test_a_resumed_run_asks_only_what_is_missing(tmp_path, catalog):
    out = tmp_path / "steps.jsonl"
    run_steps(FirstShown(), out, [BY_NAME["k=3"]], catalog_for=lambda c: catalog, limit=5, log=lambda s: None)
    again = FirstShown()
    assert run_steps(again, out, [BY_NAME["k=3"]], catalog_for=lambda c: catalog, limit=5, log=lambda s: None) == 0
    assert again.asked == 0
    text = out.read_text()
    out.write_text(text[: text.rstrip("\n").rfind("\n") + 20])  # the last row cut off mid-write, as by a kill
    resumed = FirstShown()
    assert run_steps(resumed, out, [BY_NAME["k=3"]], catalog_for=lambda c: catalog, limit=5, log=lambda s: None) == 1
    rows = read_rows(out)
    assert len(rows) == 5 and len({r.key for r in rows}) == 5 and resumed.asked == 1
    assert all(line.startswith("{") for line in out.read_text().splitlines())


def test_configurations_without_stop_rows_ask_only_steps(tmp_path, catalog):
    out = tmp_path / "steps.jsonl"
    config = BY_NAME["latest message, k=10"]
    assert not config.finals and BY_NAME["k=10"].finals
    run_steps(FirstShown(), out, [config], catalog_for=lambda c: catalog, limit=8, log=lambda s: None)
    rows = read_rows(out)
    assert len(rows) == sum(c.needed is not None for c in cases(catalog)[:8]) and all(r.needed for r in rows)


def test_configurations_show_what_they_say(catalog):
    case = next(c for c in cases(catalog) if c.step == 1)  # a second step: one call already in the transcript
    shown = {name: [t.name for t in config.make(catalog)(case.transcript)] for name, config in BY_NAME.items()
             if not config.landscape}
    assert [len(shown[f"k={k}"]) for k in (3, 5, 10, 20)] == [3, 5, 10, 20]
    assert shown["all 74"] == [t.name for t in catalog.tools] and len(catalog.tools) == 74
    assert shown["discovery, k=10"][0] == "list_available_tools" and len(shown["discovery, k=10"]) == 11
    order = {t.name: i for i, t in enumerate(catalog.tools)}
    assert shown["k=10"] == sorted(shown["k=10"], key=order.get), "catalog order: a stable prefix for the cache"
    deferred = [t.name for t in BY_NAME["landscape: deferred search"].make(catalog)(case.transcript)]
    assert deferred == [case.transcript.tool_calls()[0].name, "search_tools"]


def test_summary_counts_right_tools_and_stops():
    def row(step, needed, choice, v):
        return StepRow("k=3", "k sweep", "dev", "s1", "task", step, needed, ["a", "b"], needed in ("a", "b") if needed else None,
                       choice, v, None, None, None, "", 10, 1.0)
    nothing_shown = StepRow("k=3", "k sweep", "dev", "s2", "opener", 0, None, [], None, None, "stopped", None, None, None, "", 5, 1.0)
    rows = [row(0, "a", "a", "right"), row(1, "b", "a", "wrong"), row(2, "c", "a", "not shown"), row(3, "a", "a", "right"),
            row(4, None, None, "stopped"), row(5, None, "a", "kept calling"), nothing_shown]
    s = summarize(rows, "k=3")
    assert (s.steps, s.right, s.stops, s.finals) == (4, 0.5, 1, 2)
    assert s.verdicts == {"right": 2, "not shown": 1, "wrong": 1, "answered": 0, "searched": 0}
    assert 0.0 <= s.low <= 0.5 <= s.high <= 1.0
    with pytest.raises(ValueError, match="No step rows"):
        summarize(rows, "k=5")
    table = report(rows).splitlines()
    assert len(table) == 3 and table[1].split()[:3] == ["k=3", "dev", "4"] and "1/2" in table[1]


def test_paired_right_pairs_the_same_steps_of_two_configurations():
    def row(config, scenario, step, verdict_):
        return StepRow(config, "k sweep", "dev", scenario, "task", step, "a", ["a"], True, "a", verdict_,
                       None, None, None, "", 10, 1.0)
    final = StepRow("k=3", "k sweep", "dev", "s1", "task", 9, None, ["a"], None, None, "stopped", None, None, None, "", 5, 1.0)
    rows = [row("k=3", "s1", 0, "right"), row("k=3", "s1", 1, "right"), row("k=3", "s2", 0, "wrong"), final,
            row("all", "s2", 0, "right"), row("all", "s1", 1, "wrong"), row("all", "s1", 0, "right"),
            row("all", "s3", 0, "right")]  # s3 has no partner under k=3: left out
    p = paired_right(rows, "k=3", "all")
    assert (p.steps, round(p.value, 3)) == (3, 0.0) and p.low <= 0.0 <= p.high and not p.separated
    assert paired_right(rows, "k=3", "all", split="heldout") is None
    ones = [row("x", f"s{i}", 0, "right") for i in range(30)] + [row("y", f"s{i}", 0, "wrong") for i in range(30)]
    assert paired_right(ones, "x", "y").separated and paired_right(ones, "x", "y").low == 1.0


# --- the real model ------------------------------------------------------------------------------



def recheck_sample(rows):
    """Three committed rows to ask again, within a minute on two busy cores: clear decisions (margins over 1,
    so a rounding cannot flip them) that share their tools shown, so the prompt cache reads those once —
    one answer and two calls, from the group with the shortest prompts."""
    clear = [r for r in rows if not BY_NAME[r.config].landscape and r.shown and r.call_margin is not None
             and abs(r.call_margin) > 1 and (r.choice is None or r.margin is None or r.margin > 1)]
    groups = defaultdict(list)
    for r in clear:
        groups[r.config, tuple(r.shown)].append(r)
    picks: list = []
    for group in groups.values():
        answers = sorted((r for r in group if r.choice is None), key=lambda r: r.prompt_tokens)
        calls = sorted((r for r in group if r.choice is not None), key=lambda r: r.prompt_tokens)
        if answers and len(calls) >= 2:
            chosen = [answers[0], *calls[:2]]
            if not picks or max(r.prompt_tokens for r in chosen) < max(r.prompt_tokens for r in picks):
                picks = chosen
    return picks


@pytest.mark.real_model
@needs_model
def test_committed_rows_reproduce_on_the_real_model(catalog):
    """Three committed rows (calls and an answer), asked again: the same tools shown, the same choices."""
    from workbook.providers.local_llama import LocalLlamaProvider
    from experiments.real_steps import ask, load

    picks = recheck_sample(load())
    assert len(picks) == 3 and {r.choice is None for r in picks} == {True, False}, "calls and an answer to re-check"
    by_key = {(c.scenario, c.step): c for c in cases(catalog)}
    with LocalLlamaProvider() as provider:
        again = []
        for r in picks:
            config, case = BY_NAME[r.config], by_key[r.scenario, r.step]
            again.append(ask(provider, config, case, config.make(catalog)(case.transcript)))
    assert [r.shown for r in again] == [r.shown for r in picks]
    assert [r.choice for r in again] == [r.choice for r in picks]


def test_the_stand_in_answers_the_same_cases_as_the_real_model():
    from experiments.real_steps import stand_in_rows

    rows = stand_in_rows(["k=10", "all 74"], splits=("heldout",))
    assert {r.config for r in rows} == {"k=10", "all 74"}
    assert {(r.model, r.model_sha256) for r in rows} == {("offline stand-in", "")}  # named as the real model's rows are
    by_config = {c: [r for r in rows if r.config == c] for c in ("k=10", "all 74")}
    assert len(by_config["k=10"]) == len(by_config["all 74"]) == len([c for c in cases(ToolCatalog(demo_tools()), ("heldout",))])
    assert not any(r.verdict == "not shown" for r in by_config["all 74"])  # every tool shown
    for r in rows:
        assert r.verdict == verdict(r.needed, r.shown, r.choice)
    assert {r.verdict for r in rows if r.needed is not None} - {"right", "wrong", "answered", "not shown"} == set()


def test_step_habits_count_first_steps_and_later_steps_back_on_the_previous_tool():
    from experiments.real_steps import step_habits

    def row(step, needed, choice, verdict, kind="task", scenario="s1"):
        return StepRow("k", "g", "dev", scenario, kind, step, needed, [needed], True, choice, verdict, None, None, None, "",
                       0, 0.0)

    rows = [row(0, "a", "a", "right"), row(1, "b", "a", "wrong"), row(2, "c", "c", "right"), row(3, None, None, "stopped"),
            row(0, "a", "x", "wrong", scenario="s2"), row(0, "a", "a", "right", kind="pivot", scenario="p1")]
    h = step_habits(rows, "k", "dev")
    assert (h.first_right, h.first, h.later_right, h.later_repeated, h.later) == (1, 2, 1, 1, 2)
