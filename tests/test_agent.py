import pytest

from conftest import run
from harness.selection.agent import REPEAT_REMINDER, LoopSettings, arun
from harness.selection.discovery import Deferral
from harness.selection.catalog import ToolCatalog
from harness.selection.discovery import ToolSearch, discovery_tool
from harness.core.messages import Message, ToolCall
from workbook.providers.offline import OfflineModel
from harness.providers.scripted import ScriptedProvider
from harness.selection.queries import query_from_user_message
from harness.selection.ranking import Selector


def test_each_turn_selects_shows_and_dispatches(small_tools):
    cat = ToolCatalog(small_tools)
    script = ScriptedProvider([
        Message("assistant", [ToolCall("c1", "read_file", {"path": "a.txt"})]),
        "All done.",
    ])
    events = []
    result = run(arun(script, Selector.over(cat, k=2), "Read the file a.txt", settings=LoopSettings(on_event=events.append)))
    assert result.final_text == "All done." and result.stopped == "end_turn"
    assert len(events) == 2 and events[0].turn == 1
    assert "read_file" in events[0].tool_names and len(events[0].tools) <= 2
    assert events[0].results[0].content == "contents of a.txt"
    assert script.calls[0].tool_names == events[0].tool_names
    assert events[0].snapshot.tool_tokens < events[0].catalog_tokens
    assert result.calls() == [("read_file", {"path": "a.txt"}, True)]


def test_a_call_to_a_filtered_out_tool_is_an_error_result_not_an_exception(small_tools):
    cat = ToolCatalog(small_tools)
    script = ScriptedProvider([Message("assistant", [ToolCall("c1", "create_event", {"title": "x", "date": "2025-01-01"})]), "ok"])
    result = run(arun(script, Selector.over(cat, k=1), "read the file"))
    assert result.turns[0].results[0].is_error
    assert "exists but is not loaded this turn" in result.turns[0].results[0].content
    assert result.calls() == [("create_event", {"title": "x", "date": "2025-01-01"}, False)]


def test_stops_after_max_turns(small_tools):
    looping = ScriptedProvider([Message("assistant", [ToolCall(f"c{i}", "read_file", {"path": "a"})]) for i in range(3)])
    result = run(arun(looping, ToolCatalog(small_tools), "read a file", max_turns=3))
    assert result.stopped == "max_turns" and len(result.turns) == 3 and result.final_text == ""
    with pytest.raises(ValueError, match="max_turns must be positive"):
        run(arun(looping, ToolCatalog(small_tools), "x", max_turns=0))


def test_the_loop_guard_answers_instead_of_running_a_repeated_call(small_tools):
    read = lambda i, path="a.txt": Message("assistant", [ToolCall(f"c{i}", "read_file", {"path": path})])
    script = ScriptedProvider([read(1), read(2, "b.txt"), read(3, "b.txt"), "b.txt says: contents of b.txt"])
    result = run(arun(script, ToolCatalog(small_tools), "read the files", max_turns=6, on_repeat="answer"))
    assert result.stopped == "repeated_call" and result.final_text == "b.txt says: contents of b.txt"
    assert result.calls() == [("read_file", {"path": "a.txt"}, True), ("read_file", {"path": "b.txt"}, True)]
    assert [c.tool_names for c in script.calls][-1] == [], "the answer is asked with no tools shown"
    assert script.calls[-1].transcript[-1]["content"][0]["tool_use_id"] == "c2", "the repeat is not in the transcript"
    assert len(result.turns) == 3 and result.turns[-1].tools == []
    unguarded = run(arun(ScriptedProvider([read(1), read(2), read(3)]), ToolCatalog(small_tools), "read", max_turns=3))
    assert unguarded.stopped == "max_turns" and len(unguarded.calls()) == 3, "off by default"


def test_a_reminder_instead_of_running_a_repeated_call_and_the_run_goes_on(small_tools):
    read = lambda i, path="a.txt": Message("assistant", [ToolCall(f"c{i}", "read_file", {"path": path})])
    script = ScriptedProvider([read(1), read(2), read(3, "b.txt"), "done"])
    result = run(arun(script, ToolCatalog(small_tools), "read the files", on_repeat="remind"))
    assert result.stopped == "end_turn" and result.final_text == "done"
    assert result.calls() == [("read_file", {"path": "a.txt"}, True), ("read_file", {"path": "a.txt"}, False),
                              ("read_file", {"path": "b.txt"}, True)]
    reminder = result.turns[1].results[0]
    assert reminder.is_error and reminder.content == REPEAT_REMINDER.format(name="read_file")
    with pytest.raises(ValueError, match="on_repeat must be one of 'run', 'remind', 'answer', got 'stop'"):
        run(arun(script, ToolCatalog(small_tools), "x", on_repeat="stop"))


def test_the_loop_guard_leaves_a_changed_call_and_a_changed_argument_alone(small_tools):
    script = ScriptedProvider([Message("assistant", [ToolCall("c1", "read_file", {"path": "a.txt"})]),
                               Message("assistant", [ToolCall("c2", "read_file", {"path": "a.txt", "x": 1})]), "done"])
    result = run(arun(script, ToolCatalog(small_tools), "read", on_repeat="answer"))
    assert result.stopped == "end_turn" and len(result.calls()) == 2


def test_offline_model_solves_a_two_step_task(small_tools):
    result = run(arun(OfflineModel(), ToolCatalog(small_tools), "Read the file 'a.txt', then post it to the #dev channel"))
    assert result.succeeded() == ["read_file", "post_message"]
    assert result.final_text.startswith("Done.")


def test_pinned_discovery_recovers_a_tool_the_query_left_out(small_tools):
    cat = ToolCatalog(small_tools)
    request = "Announce in #ops that the deploy went out"  # shares no word with any tool
    without = run(arun(OfflineModel(), cat, request, query_fn=query_from_user_message))
    assert "post_message" not in without.succeeded()
    lister = discovery_tool(cat)
    with_it = run(arun(OfflineModel(), Selector.over(cat, pinned=[lister]), request))
    names = [c[0] for c in with_it.calls()]
    assert names[0] == "list_available_tools" and "post_message" in with_it.succeeded()
    assert all("list_available_tools" in ev.tool_names for ev in with_it.turns)
    assert with_it.turns[0].pinned == ["list_available_tools"]


def test_tool_search_activates_matches_for_the_next_turn(small_tools):
    cat = ToolCatalog(small_tools)
    search = ToolSearch([], cat.tools, keep_loaded=False)
    result = run(arun(OfflineModel(), ToolCatalog([]), "Post 'shipped' to the #dev channel",
                      deferral=Deferral(extra_tools=search.tools_for_turn, on_finish=search.end_turn)))
    assert [c[0] for c in result.calls()][:2] == ["search_tools", "post_message"]
    assert result.succeeded()[-1] == "post_message"
    assert search.activated == []  # unloaded when the run ended
