from conftest import run
from harness.core.messages import Message, ToolResult, Transcript
from workbook.providers.offline import OfflineModel, read_fully
from workbook.steps import split_steps
from workbook.providers.offline_args import extract, fill_arguments
from harness.core.tools import Tool


def _ask(model, text, tools, transcript=None):
    t = transcript or Transcript()
    t.add_user(text)
    return model.respond(t, tools)


def test_steps_split_on_then_but_never_inside_quotes():
    assert split_steps("Read 'a; then b.txt', then post it to #dev. Then create an issue titled 'x, then y'") == [
        "Read 'a; then b.txt'", "post it to #dev", "create an issue titled 'x, then y'"]
    assert split_steps("hi") == [] and split_steps("what can you do?") == []


def test_picks_the_matching_shown_tool_with_arguments(small_tools):
    msg = _ask(OfflineModel(), "Read the file 'notes/todo.md'", small_tools)
    call = msg.tool_calls[0]
    assert (call.name, call.input) == ("read_file", {"path": "notes/todo.md"})


def test_understands_some_paraphrase_through_its_lexicon(small_tools):
    name, args = OfflineModel().pick("look through the source for 'TODO'", small_tools)
    assert name == "search_code" and args == {"query": "TODO"}


def test_can_only_call_tools_it_was_shown(small_tools):
    shown = [t for t in small_tools if t.name != "post_message"]
    msg = _ask(OfflineModel(), "Post 'deploy done' to the #dev channel", shown)
    assert not msg.tool_calls or msg.tool_calls[0].name != "post_message"
    assert _ask(OfflineModel(), "Post 'deploy done' to the #dev channel", []).text.startswith("I don't have a tool")


def test_works_through_steps_reading_results(small_tools):
    model, t = OfflineModel(), Transcript()
    t.add_user("Read the file 'a.txt', then post it to the #dev channel")
    first = model.respond(t, small_tools)
    assert first.tool_calls[0].name == "read_file"
    t.append(first)
    t.append(Message("user", [ToolResult(first.tool_calls[0].id, "hello from a")]))
    second = model.respond(t, small_tools)
    assert second.tool_calls[0].name == "post_message"
    assert second.tool_calls[0].input == {"channel": "dev", "text": "hello from a"}
    t.append(second)
    t.append(Message("user", [ToolResult(second.tool_calls[0].id, "posted")]))
    final = model.respond(t, small_tools)
    assert not final.tool_calls and final.text.startswith("Done.")


def test_gives_up_after_repeated_failures(small_tools):
    model, t = OfflineModel(), Transcript()
    t.add_user("Read the file 'a.txt'")
    for i in range(3):
        m = model.respond(t, small_tools)
        t.append(m)
        t.append(Message("user", [ToolResult(m.tool_calls[0].id, "disk error", is_error=True)]))
    assert model.respond(t, small_tools).text == "I could not complete 'Read the file 'a.txt'': disk error"


def test_discovery_when_nothing_shown_fits(small_tools):
    lister = Tool("list_available_tools", "List every tool.", {"type": "object", "properties": {}},
                  fn=lambda: "post_message — Post a message to a team chat channel.", tags=frozenset({"discovery"}))
    model, t = OfflineModel(), Transcript()
    t.add_user("Post 'deploy done' to the #dev channel")
    m1 = model.respond(t, [lister, small_tools[0]])
    assert m1.tool_calls[0].name == "list_available_tools"
    t.append(m1)
    t.append(Message("user", [ToolResult(m1.tool_calls[0].id, "post_message — Post a message to a team chat channel.")]))
    m2 = model.respond(t, [lister, small_tools[0]])
    assert m2.tool_calls[0].name == "post_message"  # read in the listing, so it tries it


def test_opener_uses_discovery_or_says_what_it_has(small_tools):
    lister = Tool("list_available_tools", "List every tool.", tags=frozenset({"discovery"}))
    assert _ask(OfflineModel(), "hi", [lister]).tool_calls[0].name == "list_available_tools"
    assert "no tools loaded" in _ask(OfflineModel(), "hi", []).text
    assert "read_file" in _ask(OfflineModel(), "what can you do?", small_tools[:1]).text


def test_reading_budget_skims_the_middle(small_tools):
    full = read_fully(small_tools, budget=10**6)
    assert full == {t.name for t in small_tools}
    part = read_fully(small_tools, budget=200)
    assert small_tools[0].name in part and small_tools[-1].name in part and len(part) < len(small_tools)
    choice = OfflineModel(reading_budget=200).choose("Read the file 'a.txt'", small_tools)
    assert choice.skimmed and choice.skimmed.isdisjoint(part)


def test_complete_reports_usage(small_tools):
    t = Transcript()
    t.add_user("Read the file 'a.txt'")
    turn = run(OfflineModel().complete(system="", transcript=t, tools=small_tools))
    assert turn.stop_reason == "tool_use" and turn.usage.input_tokens > 100 and turn.model == "offline stand-in"


def test_argument_extraction():
    p = extract("Move 'old name.txt' to docs/new.md at 14:30 on 2025-03-01, tell @dana in #dev, see https://x.test/a, 3 copies")
    assert p.quoted == ["old name.txt"] and p.paths == ["docs/new.md"] and p.times == ["14:30"]
    assert p.dates == ["2025-03-01"] and p.people == ["dana"] and p.channels == ["dev"]
    assert p.urls == ["https://x.test/a"] and p.numbers == ["3"]


def test_fill_arguments_by_name_type_and_enum():
    schema = {"type": "object", "required": ["title", "date"], "properties": {
        "title": {"type": "string"}, "date": {"type": "string"}, "time": {"type": "string"},
        "priority": {"type": "string", "enum": ["low", "high"]}, "limit": {"type": "integer"}}}
    args = fill_arguments("Create 'Standup' on 2025-01-02 at 09:30, high priority, 5 people", schema)
    assert args == {"title": "Standup", "date": "2025-01-02", "time": "09:30", "priority": "high", "limit": 5}
