"""Whole tasks on the real model: what a row records, how a failure is classified, how a run resumes.

The runner is exercised with the offline stand-in and scripted providers (no model needed); the cache
replay of a committed row is checked against the prompt-cache model Chapter 5 uses for the stand-in.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest
from real_model_support import needs_model


from harness.core.messages import Message, TextBlock, ToolCall
from workbook.demo import load_scenarios
from workbook.evaluation.prompt_cache import CacheRules, cost_summary, found_tools_in_messages, run_cache_use, run_recorded
from workbook.evaluation.scenarios import fresh_demo_catalog
from experiments import real_tasks
from experiments.real_tasks import (CONFIGS, GUARDED, MAX_TURNS, TASK_FAILURES, complete, paired_success, read_rows, report,
                                            row_of, run_tasks, summarize, task_failure)
from workbook.evaluation.loading import loading_strategies
from workbook.providers.offline import OfflineModel
from harness.providers.scripted import ScriptedProvider

TOP_K, ALL, TOP_K_SEARCH, SEARCH = CONFIGS


def run(provider, scenario, config=TOP_K):
    (priced,) = asyncio.run(run_recorded(provider, fresh_demo_catalog, [scenario], **real_tasks.loop_options(config),
                                         max_turns=MAX_TURNS))
    return priced


def scenario(split, sid):
    return next(s for s in load_scenarios(split) if s.id == sid)


def call(name, **arguments):
    return Message("assistant", [ToolCall(f"call_{name}", name, arguments)])


def test_the_configurations_are_the_four_ways_with_the_default_first_and_deferred_search_last():
    assert set(CONFIGS) == set(loading_strategies()) and len(CONFIGS) == 4
    assert CONFIGS[0].startswith("per-turn top-") and CONFIGS[-1].startswith("deferred search")


def test_a_run_that_repeats_one_call_until_max_turns_never_stopped():
    s = scenario("dev", "task-01")  # read notes/todo.md, then post its first line: what the real model loops on
    assert s.tools[0] == "read_file"
    looping = ScriptedProvider([lambda t, tools: call("read_file", path="notes/todo.md")] * MAX_TURNS)
    priced = run(looping, s, config=ALL)  # all tools: the needed ones are shown
    assert priced.run.result.stopped == "max_turns" and not priced.run.success
    assert task_failure(priced.run) == "never stopped"
    wrong_path = run(ScriptedProvider([lambda t, tools: call("read_file", path="nope.md")] * MAX_TURNS), s, config=ALL)
    assert task_failure(wrong_path.run) == "argument content"  # the needed call came back as an error


def test_with_the_loop_guard_the_repeat_is_not_run_and_the_model_answers_from_what_it_read():
    s = scenario("dev", "task-01")
    answers = iter(["The first line of notes/todo.md is: Buy milk."])
    looping = ScriptedProvider([lambda t, tools: call("read_file", path="notes/todo.md") if tools else Message(
        "assistant", [TextBlock(next(answers))])] * MAX_TURNS)
    priced = run(looping, s, config=ALL + GUARDED)
    result = priced.run.result
    assert result.stopped == "repeated_call" and len(result.calls()) == 1 and len(result.turns) == 2
    assert result.final_text.startswith("The first line") and not priced.run.success, "it read but never posted"
    assert task_failure(priced.run) == "stopped early"
    assert summarize([row_of(ALL + GUARDED, "dev", priced.run, priced.prompts, 0.0)], ALL + GUARDED,
                     "dev").stopped == 1.0, "a run the guard ended stopped"
    assert real_tasks.loop_options(TOP_K + GUARDED).keys() == {*loading_strategies()[TOP_K], "on_repeat"}
    assert real_tasks.loop_options(TOP_K + GUARDED)["on_repeat"] == "answer"
    assert real_tasks.loop_options(TOP_K).keys() == loading_strategies()[TOP_K].keys()


def test_a_run_that_answers_at_once_stopped_early():
    s = next(s for s in load_scenarios("dev") if s.kind == "task")
    priced = run(ScriptedProvider(["I cannot do that."]), s, config=ALL)
    assert priced.run.result.stopped == "end_turn"
    assert task_failure(priced.run) == "stopped early"


def test_a_request_needing_no_tool_fails_by_calling_one_or_by_its_answer():
    opener = scenario("dev", "opener-02")  # "what can you do?": the world unchanged, three domains named
    assert not opener.tools
    writing = run(ScriptedProvider([call("create_issue", title="hi", body="hi"), "Hello."]), opener, config=ALL)
    silent = run(ScriptedProvider(["."]), opener, config=ALL)
    assert [task_failure(r.run) for r in (writing, silent)] == ["wrong tool", "answer content"]


def test_a_successful_run_has_no_failure_and_every_failure_is_a_named_class():
    rows = []
    for s in load_scenarios("dev")[:8]:
        priced = run(OfflineModel(), s)
        rows.append(row_of(TOP_K, "dev", priced.run, priced.prompts, 0.0))
    assert any(r.success for r in rows) and not any(r.success and r.failure for r in rows)
    assert all(r.failure in TASK_FAILURES for r in rows if not r.success)


def test_rows_resume_and_a_cut_line_is_asked_again(tmp_path):
    out = tmp_path / "tasks.jsonl"
    lines = []
    added = asyncio.run(run_tasks(OfflineModel(), out, configs=[TOP_K], splits=("dev",), limit=2, log=lines.append))
    assert added == 2 and len(read_rows(out)) == 2
    text = out.read_text(encoding="utf-8")
    out.write_text(text[: len(text) - 40], encoding="utf-8")  # a killed run's half-written last line
    assert len(read_rows(out)) == 1
    again = asyncio.run(run_tasks(OfflineModel(), out, configs=[TOP_K], splits=("dev",), limit=2, log=lines.append))
    assert again == 1 and [r.scenario for r in read_rows(out)] == [s.id for s in load_scenarios("dev")[:2]]
    assert all(json.loads(line) for line in out.read_text(encoding="utf-8").splitlines())


def test_an_unknown_configuration_is_named_in_one_sentence(tmp_path):
    with pytest.raises(ValueError, match="No way of loading tools is called 'every tool'"):
        asyncio.run(run_tasks(OfflineModel(), tmp_path / "x.jsonl", configs=["every tool"]))
    with pytest.raises(ValueError, match=r"^No way of loading tools is called 'all tools \+ guard'; .*\(each may end in '\+ loop guard' or '\+ repeat reminder'\)\.$"):
        asyncio.run(run_tasks(OfflineModel(), tmp_path / "x.jsonl", configs=["all tools + guard"]))


def test_a_rows_prompts_price_as_the_runs_own_and_found_tools_can_move_after_the_conversation():
    s = next(s for s in load_scenarios("dev") if s.kind == "task")
    priced = run(OfflineModel(), s, config=SEARCH)
    row = read_back(row_of(SEARCH, "dev", priced.run, priced.prompts, 1.0))
    for rules in (CacheRules(), CacheRules(min_tokens=1_024)):
        assert row.use(rules) == run_cache_use(priced.prompts, rules)
        assert row.found_tools_at_end().use(rules) == run_cache_use(found_tools_in_messages(priced.prompts), rules)
        assert cost_summary([row], rules).per_task == cost_summary([priced], rules).per_task


def read_back(row):
    return real_tasks.TaskRow(**json.loads(json.dumps(dataclasses.asdict(row))))


def test_summaries_count_success_failures_and_stopping_and_pair_by_scenario():
    ids = [s.id for s in load_scenarios("dev")[:4]]
    rows = [fake("a", sid, ok, None if ok else "wrong tool") for sid, ok in zip(ids, (1, 1, 0, 0))]
    rows += [fake("b", sid, ok, None if ok else "never stopped") for sid, ok in zip(ids, (0, 1, 0, 0))]
    a = summarize(rows, "a", "dev")
    assert (a.n, a.success, a.failures["wrong tool"], a.stopped, a.repeated) == (4, 0.5, 2, 1.0, 0.0)
    assert summarize(rows, "b", "dev").stopped == 0.25 and summarize(rows, "b", "dev").failures["never stopped"] == 3
    gap, low, high = paired_success(rows, "a", rows, "b", "dev")
    assert gap == pytest.approx(0.25) and low <= gap <= high
    assert not complete(rows, "a", "dev") and not complete(rows, "a", "dev", "task")
    every_task = [fake("a", s.id, 1, None) for s in load_scenarios("dev") if s.kind == "task"]
    assert complete(every_task, "a", "dev", "task") and not complete(every_task, "a", "dev")
    assert "wrong tool 2" in report(rows)
    with pytest.raises(ValueError, match="no rows"):
        summarize(rows, "c", "dev")


def fake(config, sid, ok, failure):
    return real_tasks.TaskRow(config, "dev", sid, "task", MAX_TURNS, bool(ok), bool(ok), failure, [],
                              "end_turn" if failure != "never stopped" else "max_turns", [], 2, [], "", 1.0, [])


STOPPABLE = '''
import asyncio, sys, threading
from experiments import real_tasks
import workbook.providers.local_llama as local_llama

class Blocking:
    """A model whose answer never comes until it is closed, as llama-server's does mid-generation."""
    def __init__(self, **options):
        self.closed = threading.Event()
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        self.closed.set()
    async def complete(self, **request):
        await asyncio.to_thread(self.closed.wait)
        raise RuntimeError("closed")

local_llama.LocalLlamaProvider = Blocking
real_tasks.main(["--out", sys.argv[1], "--limit", "1"])
'''


def test_sigterm_stops_a_run_waiting_on_the_model(tmp_path):
    """A stopped run closes its model inside the event loop, so asyncio's shutdown does not wait on the answer."""
    import signal
    import subprocess
    import sys
    import time

    child = subprocess.Popen([sys.executable, "-c", STOPPABLE, str(tmp_path / "rows.jsonl")], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    try:
        assert "runs to do" in child.stdout.readline()
        time.sleep(0.5)  # in the model's call now
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=10) == 128 + signal.SIGTERM
    finally:
        child.kill()



def test_the_command_line_runs_the_named_sets_and_configurations_only(tmp_path, monkeypatch, capsys):
    import workbook.providers.local_llama as local_llama

    class Answering(ScriptedProvider):
        def __init__(self, **options):
            super().__init__(["Done."] * 50)
        def __enter__(self):
            return self
        def __exit__(self, *exc):
            return None

    monkeypatch.setattr(local_llama, "LocalLlamaProvider", Answering)
    out = tmp_path / "rows.jsonl"
    real_tasks.main(["--out", str(out), "--configs", TOP_K + GUARDED, "--splits", "dev", "--limit", "2"])
    assert [(r.config, r.split, r.scenario) for r in read_rows(out)] == [
        (TOP_K + GUARDED, "dev", s.id) for s in load_scenarios("dev")[:2]]
    assert "2 rows added" in capsys.readouterr().out


def test_a_repeated_call_is_the_same_name_and_arguments_twice_in_a_row():
    row = fake("a", "task-01", 0, "never stopped")
    again = dataclasses.replace(row, calls=[["read_file", {"path": "a"}, True], ["read_file", {"path": "a"}, True]])
    other = dataclasses.replace(row, calls=[["read_file", {"path": "a"}, True], ["read_file", {"path": "b"}, True],
                                            ["read_file", {"path": "a"}, True]])
    assert real_tasks.repeated_call(again) and not real_tasks.repeated_call(other) and not real_tasks.repeated_call(row)


def test_an_answer_written_as_a_call_names_its_tool():
    row = fake("a", "task-01", 0, "stopped early")
    as_call = [dataclasses.replace(row, answer=a) for a in ('{"name": "read_file", "arguments": {}}',
                                                            '<tool_call>\n{"name": "post_message"', '{"name": "')]
    assert [real_tasks.answer_call(r) for r in as_call] == ["read_file", "post_message", None]
    assert real_tasks.answer_call(dataclasses.replace(row, answer="The first line is: Buy milk.")) is None


def test_the_command_rebuilds_exactly_the_committed_rows():
    import shlex
    make, *runs = real_tasks.COMMAND.split("&&")
    assert make.strip() == "make real-model" and runs
    keys = set()
    for run in runs:
        words = shlex.split(run)
        assert words[:3] == [".venv/bin/python", "-m", real_tasks.__name__]
        o = real_tasks.parser().parse_args(words[3:])
        keys |= {(c, split, s.id) for split in o.splits for c in o.configs for s in real_tasks.chosen(split, o.kinds, o.limit)}
    assert {r.key for r in real_tasks.load()} == keys


@pytest.mark.real_model
@needs_model
def test_the_quickest_committed_run_reproduces_on_the_real_model():
    """The committed run that took the fewest seconds, run again: the same calls, the same verdict."""
    from workbook.providers.local_llama import LocalLlamaProvider

    rows = real_tasks.load()
    assert rows, "the real model's runs are committed"
    quickest = min(rows, key=lambda r: r.seconds)
    with LocalLlamaProvider(max_tokens=real_tasks.MAX_TOKENS) as model:
        again = asyncio.run(real_tasks.task_row(model, quickest.config, quickest.split,
                                                scenario(quickest.split, quickest.scenario)))
    assert (again.calls, again.success, again.failure, again.stopped) == (
        quickest.calls, quickest.success, quickest.failure, quickest.stopped)


def test_a_row_records_the_turn_limit_it_ran_under():
    s = scenario("dev", "task-01")
    longer = asyncio.run(real_tasks.task_row(OfflineModel(), TOP_K, "dev", s, max_turns=10))
    assert longer.max_turns == read_back(longer).max_turns == 10


@pytest.mark.parametrize("sid", ["task-03", "pivot-01", "conv-02", "opener-05"])
def test_a_row_keeps_its_model_and_trace_and_is_judged_again_by_replaying_it(sid):
    s = scenario("dev", sid)
    row = asyncio.run(real_tasks.task_row(OfflineModel(), TOP_K, "dev", s))
    assert row.model == OfflineModel().name and row.trace and len(row.trace) >= row.turns
    again = asyncio.run(real_tasks.rejudged(row))
    assert (again.success, again.failures, again.calls) == (row.success, row.failures, row.calls)
    assert again.trace == row.trace and again.prompts == row.prompts and again.seconds == row.seconds


def test_a_trace_that_is_not_the_run_is_refused():
    row = asyncio.run(real_tasks.task_row(OfflineModel(), TOP_K, "dev", scenario("dev", "task-03")))
    shown_otherwise = [[*turn[:4], ["read_file"]] for turn in row.trace]
    with pytest.raises(real_tasks.ReplayMismatch, match="turn 1 showed"):
        asyncio.run(real_tasks.rejudged(dataclasses.replace(row, trace=shown_otherwise)))
    pivot = asyncio.run(real_tasks.task_row(OfflineModel(), TOP_K, "dev", scenario("dev", "pivot-01")))
    with pytest.raises(ValueError, match="its earlier requests' turns were not recorded: run it again"):
        asyncio.run(real_tasks.rejudged(dataclasses.replace(pivot, trace=None)))


def test_a_row_without_a_trace_is_replayed_from_its_calls_when_it_is_one_request():
    """The 0.5B's rows were written before rows kept traces: a single request's turns are rebuilt from its calls."""
    for config in (TOP_K, TOP_K + GUARDED):
        row = asyncio.run(real_tasks.task_row(OfflineModel(), config, "dev", scenario("dev", "task-03")))
        again = asyncio.run(real_tasks.rejudged(dataclasses.replace(row, trace=None)))
        assert (again.success, again.failures, again.calls) == (row.success, row.failures, row.calls)


def test_without_text_calls_cuts_the_run_where_a_call_was_read_from_text():
    row = asyncio.run(real_tasks.task_row(OfflineModel(), TOP_K, "dev", scenario("dev", "task-03")))
    assert asyncio.run(real_tasks.without_text_calls(row)) is row, "no call read from text: the same row"
    read = [turn[:3] + [i == 1] + turn[4:] for i, turn in enumerate(row.trace)]  # its second call read from text
    cut = asyncio.run(real_tasks.without_text_calls(dataclasses.replace(row, trace=read)))
    assert len(cut.calls) == 1 and cut.stopped == "end_turn" and cut.answer.startswith('{"name": ')
