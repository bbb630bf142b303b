"""Effects-judged success: the checks on the demo world's state, and the scenarios' checks themselves."""
import pytest

from conftest import run
from harness import ToolCatalog
from workbook.demo import DemoWorld, demo_tools, failed_checks, load_scenarios, world_of
from workbook.demo.effects import validate_checks
from harness.core.messages import Message, ToolCall
from harness.providers.scripted import ScriptedProvider
from harness.selection.ranking import Selector
from harness.core.registry import ToolRegistry
from workbook.evaluation.scenarios import run_scenario

SCENARIOS = {split: load_scenarios(split) for split in ("dev", "heldout")}
ALL = [s for split in SCENARIOS.values() for s in split]


@pytest.fixture
def world():
    with DemoWorld() as w:
        yield w


@pytest.fixture
def before(world):
    """The world as the run found it (its copy is the start the judge plays the labelled calls from)."""
    with world.clone() as start:
        yield start


DIFFERS = "the world is not what the request asked for, at: "


def test_every_packaged_scenario_has_checks_and_none_holds_on_an_untouched_world(world, before):
    """A check that already holds before anything is done would reward doing nothing."""
    for s in ALL:
        assert s.checks, s.id
        assert failed_checks(s.checks, world, before, list(zip(s.tools, s.args))), f"{s.id}: an untouched world passes"


def _own(checks, world, before, answer="", served=()):
    """The checks' own failures, without the comparison with the reference (tested on its own below)."""
    return [f for f in failed_checks(checks, world, before, [], answer, served, sources={"calculate", "run_tests"})
            if not f.startswith(DIFFERS)]


def test_each_check_kind_fails_for_the_right_reason(world, before):
    reg = ToolRegistry(demo_tools(world))
    reg.dispatch("post_channel_message", {"channel": "#dev", "text": "Line one\nLine two"}, call_id="1")
    posted = [("post_channel_message", {"channel": "#dev", "text": "Line one, said otherwise"})]
    assert failed_checks([{"check": "message", "channel": "#dev", "contains": "line one"}], world, before, posted) == []
    assert failed_checks([{"check": "message", "channel": "#dev", "contains": "Line one", "excludes": "Line two"}],
                         world, before, posted) == ["the new message in #dev contains 'Line two', which no message may carry"]
    assert _own([{"check": "message", "channel": "#team", "contains": "x"}], world, before) == ["no new message in #team"]
    seeded = "Deploy freeze starts Wednesday"  # already in #dev before the run: never counts
    assert _own([{"check": "message", "channel": "#dev", "contains": seeded}], world, before)
    assert _own([{"check": "issue", "id": 2, "state": "closed"}], world, before) == ["issue 2 has state 'open', not 'closed'"]
    assert failed_checks([{"check": "unchanged"}], world, before, []) == [DIFFERS + "channels dev"]
    assert _own([{"check": "answer", "contains": "Invoice"}], world, before, "") == ["there is no answer"]
    assert _own([{"check": "answer", "domains": 3}], world, before, "I can read files and post to a channel") == [
        "the answer offers 2 of the world's domains, fewer than 3"]
    reg.dispatch("create_event", {"title": "Sync", "date": "2025-03-11", "time": "15:00"}, call_id="2")
    assert _own([{"check": "event", "title": "sync", "time": "16:00"}], world, before) == ["event 'sync' is at '15:00', not '16:00'"]
    reg.dispatch("delete_file", {"path": "data/returns.csv"}, call_id="3")
    assert _own([{"check": "file", "path": "data/returns.csv", "exists": False}], world, before) == []
    assert _own([{"check": "commit", "message": "x"}], world, before) == ["no new commit"]


def test_nothing_else_may_change_anywhere_in_the_sandbox_or_the_world(world, before):
    reg = ToolRegistry(demo_tools(world))
    reg.dispatch("read_email", {"email_id": 1}, call_id="1")  # looking (the unread mark) is not a change
    reg.dispatch("run_tests", {}, call_id="2")
    assert failed_checks([{"check": "unchanged"}], world, before, []) == []
    for path in (".hidden/x.txt", "__pycache__/x.txt", ".git/config"):
        reg.dispatch("write_file", {"path": path, "content": "x"}, call_id="3")
    world.resolve("empty").mkdir()  # an empty folder is a change too
    reg.dispatch("assign_issue", {"issue_id": 2, "assignee": "@dana"}, call_id="4")
    reg.dispatch("close_issue", {"issue_id": 2}, call_id="5")
    asked = [("assign_issue", {"issue_id": 2, "assignee": "@dana"})]
    assert failed_checks([{"check": "issue", "id": 2, "assignee": "@dana"}], world, before, asked) == [
        DIFFERS + "files .git/config, files .hidden/x.txt, files __pycache__/x.txt, files empty/, "
                  "issues existing 2 close_reason, issues existing 2 state"]


def test_an_append_keeps_the_old_text_and_a_move_keeps_the_content(world, before):
    reg = ToolRegistry(demo_tools(world))
    reg.dispatch("append_to_file", {"path": "README.md", "content": "More."}, call_id="1")
    appended = {"check": "file", "path": "README.md", "contains": "More.", "appended": True}
    asked = [("append_to_file", {"path": "README.md", "content": "More, in other words."})]
    assert failed_checks([appended], world, before, asked) == []
    assert failed_checks([{**appended, "exact": True}], world, before, asked) == [DIFFERS + "files README.md"]
    reg.dispatch("write_file", {"path": "README.md", "content": "More."}, call_id="2")
    assert failed_checks([appended], world, before, asked)[0].startswith("README.md no longer starts with its old text")
    reg.dispatch("move_file", {"path": "data/returns.csv", "destination": "data/old.csv"}, call_id="3")
    moved = {"check": "file", "path": "data/old.csv", "moved_from": "data/returns.csv"}
    assert _own([moved], world, before) == []
    reg.dispatch("write_file", {"path": "data/old.csv", "content": "x"}, call_id="4")
    assert _own([moved], world, before) == ["data/old.csv does not hold what data/returns.csv held: it is not the moved file"]


def test_a_new_event_may_not_overlap_another_unless_asked(world, before):
    sync = ("create_event", {"title": "Sync", "date": "2025-03-11", "time": "09:40"})
    ToolRegistry(demo_tools(world)).dispatch(*sync, call_id="1")
    check = {"check": "event", "title": "Sync"}
    assert failed_checks([check], world, before, [sync]) == [
        "event 'Sync' at 2025-03-11 09:40 overlaps 1:1 with Dana, Standup"]
    assert failed_checks([{**check, "overlaps": True}], world, before, [sync]) == []


def test_answers_and_observations_must_come_from_the_tasks_own_tools(world, before):
    check = [{"check": "answer", "contains": "19.39"}]
    assert _own(check, world, before, "It is 19.39.") == [
        "the answer's '19.39' was shown by none of the task's own tools before the run typed it: it was not looked up"]
    calculated = ("calculate", '{"expression": "174.59 / 9"}', "19.3988888889", True)
    assert _own(check, world, before, "It is 19.39.", [calculated]) == []
    assert _own(check, world, before, "It is NOT 19.39, it is 21.00.", [calculated]) == [
        "the answer says '19.39' only to deny it"]
    assert _own(check, world, before, "It is 19.39 (rounded, not cut).", [calculated]) == []
    echoed = ("calculate", '{"expression": "19.39"}', "19.39", True)  # a value fed to a tool and echoed back
    assert _own(check, world, before, "It is 19.39.", [echoed])
    laundered = [("write_file", '{"content": "19.39"}', "ok", True), calculated]  # given to a tool before it was shown
    assert _own(check, world, before, "It is 19.39.", laundered)
    elsewhere = ("http_post", '{"url": "http://api.example.test/echo"}', "19.3988", True)  # not one of the task's tools
    assert _own(check, world, before, "It is 19.39.", [elsewhere])
    assert _own([{"check": "observed", "contains": "passed"}], world, before, "", [("run_tests", "{}", '{"passed": 7}', True)]) == []
    assert _own([{"check": "observed", "contains": "passed"}], world, before, "The tests passed.") == [
        "none of the task's own tools showed 'passed': the step that looks it up was not done"]


def test_a_refusal_offers_no_domain(world, before):
    domains = [{"check": "answer", "domains": 3}]
    assert _own(domains, world, before, "Sorry, I can't help with that: I won't touch a file, a test or a note.")
    assert _own(domains, world, before, "I lack access to your files, your email and your calendar.")
    assert _own(domains, world, before, "I can read files, run tests and keep notes. I cannot browse the web.") == []


def test_a_stock_list_of_skills_offers_none_of_this_worlds_domains(world, before):
    domains = [{"check": "answer", "domains": 3}]
    stock = "I can help with: 1. Data Analysis 2. Machine Learning 3. Web Development 4. Writing the latest updates."
    assert _own(domains, world, before, stock) == ["the answer offers 0 of the world's domains, fewer than 3"]
    assert _own(domains, world, before, "I can preview a CSV, fetch a web page and read your inbox.") == []


def test_checks_are_validated_with_one_sentence():
    with pytest.raises(ValueError, match="'checks' must be a non-empty list"):
        validate_checks([], "f.json scenario 0")
    with pytest.raises(ValueError, match="check 0 must be an object whose 'check' is one of"):
        validate_checks([{"check": "telepathy"}], "f.json scenario 0")
    with pytest.raises(ValueError, match=r"check 0 \(issue\) needs 'id' or 'title'"):
        validate_checks([{"check": "issue"}], "f.json scenario 0")
    with pytest.raises(ValueError, match=r"check 0 \(message\) has no field 'contain'; its fields are channel, contains"):
        validate_checks([{"check": "message", "channel": "#dev", "contain": "x"}], "f.json scenario 0")
    with pytest.raises(ValueError, match=r"field 'id' must be int, got '6'"):
        validate_checks([{"check": "issue", "id": "6"}], "f.json scenario 0")
    with pytest.raises(ValueError, match=r"field 'contains' must be a string or a list of strings, got \[1\]"):
        validate_checks([{"check": "answer", "contains": [1]}], "f.json scenario 0")
    with pytest.raises(ValueError, match=r"field 'exists' must be bool, got 0"):
        validate_checks([{"check": "event", "id": 3, "exists": 0}], "f.json scenario 0")


def test_the_judge_finds_the_world_of_the_tools_and_reports_both_judgements():
    """A scripted model that calls the right tools with the wrong text: right tools, wrong effect."""
    scenario = next(s for s in SCENARIOS["dev"] if s.id == "task-11")
    catalog = ToolCatalog(demo_tools())
    assert world_of(catalog.tools) is not None and world_of([]) is None
    call = lambda i, name, args: Message("assistant", [ToolCall(f"c{i}", name, args)])
    model = ScriptedProvider([call(1, "read_channel_history", {"channel": "#dev"}),
                              call(2, "post_channel_message", {"channel": "#dev", "text": "something else"}), "Done."])
    r = run(run_scenario(model, Selector.over(catalog, pinned=catalog.tools), scenario))
    assert r.tools_right and not r.success
    assert r.failures == ("the new message in #dev does not contain 'The rounding fix lands before the freeze'",)


def test_splits_are_distinct_and_unknown_split_is_one_sentence():
    dev, held = SCENARIOS["dev"], SCENARIOS["heldout"]
    assert len(held) >= 20 and not {s.id for s in dev} & {s.id for s in held}
    assert not {s.request for s in dev} & {s.request for s in held}
    for split in (dev, held):
        assert any(s.kind == "conversation" for s in split), "multi-turn scenarios in both sets"
    with pytest.raises(ValueError, match="There is no scenario split 'test'"):
        load_scenarios("test")
