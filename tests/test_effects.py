"""Effects-judged success: the checks on the demo world's state, and the scenarios' checks themselves."""
import pytest

from conftest import run
from harness import ToolCatalog
from harness.demo import DemoWorld, demo_tools, failed_checks, load_scenarios, world_of, world_state
from harness.demo.effects import validate_checks
from harness.messages import Message, ToolCall
from harness.providers.scripted import ScriptedProvider
from harness.ranking import Selector
from harness.registry import ToolRegistry
from harness.scenarios import run_scenario

SCENARIOS = {split: load_scenarios(split) for split in ("dev", "heldout")}
ALL = [s for split in SCENARIOS.values() for s in split]


@pytest.fixture
def world():
    with DemoWorld() as w:
        yield w


def test_every_packaged_scenario_has_checks_and_none_holds_on_an_untouched_world(world):
    """A check that already holds before anything is done would reward doing nothing."""
    before = world_state(world)
    for s in ALL:
        assert s.checks, s.id
        assert failed_checks(s.checks, world, before, answer=""), f"{s.id}: its checks hold on an untouched world"


def _gold_answer(world, scenario):
    """Do the labelled calls on ``world``; return their results as the answer a model would give."""
    registry = ToolRegistry(demo_tools(world))
    out = []
    for name, args in zip(scenario.tools, scenario.args):
        r = registry.dispatch(name, args, call_id="gold")
        assert not r.is_error, f"{scenario.id}: gold call {name}({args}) failed: {r.content}"
        out.append(r.content)
    return "\n".join(out)


@pytest.mark.parametrize("scenario", [s for s in ALL if s.args],
                         ids=lambda s: s.id)
def test_the_labelled_calls_satisfy_the_checks(scenario):
    """The checks say what the labels mean: doing exactly the labelled calls makes them hold."""
    with DemoWorld() as w:
        before = world_state(w)
        answer = _gold_answer(w, scenario)
        assert failed_checks(scenario.checks, w, before, answer) == []


def test_each_check_kind_fails_for_the_right_reason(world):
    before = world_state(world)
    reg = ToolRegistry(demo_tools(world))
    reg.dispatch("post_channel_message", {"channel": "#dev", "text": "Line one\nLine two"}, call_id="1")
    assert failed_checks([{"check": "message", "channel": "#dev", "contains": "line one"}], world, before) == []
    assert failed_checks([{"check": "message", "channel": "#dev", "contains": "Line one", "excludes": "Line two"}],
                         world, before) == ["the new message in #dev contains 'Line two', which it should not"]
    assert failed_checks([{"check": "message", "channel": "#team", "contains": "x"}], world, before) == ["no new message in #team"]
    seeded = "Deploy freeze starts Wednesday"  # already in #dev before the run: never counts
    assert failed_checks([{"check": "message", "channel": "#dev", "contains": seeded}], world, before)
    assert failed_checks([{"check": "issue", "id": 2, "state": "closed"}], world, before) == ["issue 2 has state 'open', not 'closed'"]
    assert failed_checks([{"check": "unchanged"}], world, before) == ["the run changed the world (channels)"]
    assert failed_checks([{"check": "answer", "contains": "Invoice"}], world, before, "") == ["there is no answer"]
    assert failed_checks([{"check": "answer", "domains": 3}], world, before, "I can read files and post to a channel") == [
        "the answer names 2 of the world's domains, fewer than 3"]
    reg.dispatch("create_event", {"title": "Sync", "date": "2025-03-11", "time": "15:00"}, call_id="2")
    assert failed_checks([{"check": "event", "title": "sync", "time": "16:00"}], world, before) == ["event 'sync' is at '15:00', not '16:00'"]
    reg.dispatch("delete_file", {"path": "data/returns.csv"}, call_id="3")
    assert failed_checks([{"check": "file", "path": "data/returns.csv", "exists": False}], world, before) == []
    assert failed_checks([{"check": "commit", "message": "x"}], world, before) == ["no new commit"]


def test_checks_are_validated_with_one_sentence():
    with pytest.raises(ValueError, match="'checks' must be a non-empty list"):
        validate_checks([], "f.json scenario 0")
    with pytest.raises(ValueError, match="check 0 must be an object whose 'check' is one of"):
        validate_checks([{"check": "telepathy"}], "f.json scenario 0")
    with pytest.raises(ValueError, match=r"check 0 \(issue\) needs 'id' or 'title'"):
        validate_checks([{"check": "issue"}], "f.json scenario 0")


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
