"""Runs that fooled the effects judge: answer text alone, destroyed data, skipped or wrong steps.

Each is played by a scripted model through :func:`workbook.evaluation.scenarios.run_scenario`, exactly as a
chapter's runs are judged, and must fail.
"""
import pytest

from conftest import run
from harness import ToolCatalog
from workbook.demo import demo_tools, load_scenarios
from harness.core.messages import Message, ToolCall
from harness.providers.scripted import ScriptedProvider
from harness.selection.ranking import Selector
from workbook.evaluation.scenarios import run_scenario

BY_ID = {s.id: s for split in ("dev", "heldout") for s in load_scenarios(split)}


def play(scenario_id: str, calls: list[tuple[str, dict]], answer: str):
    """Run the scenario with a model that makes ``calls`` (one per turn), then says ``answer``."""
    catalog = ToolCatalog(demo_tools())
    replies = [Message("assistant", [ToolCall(f"c{i}", name, args)]) for i, (name, args) in enumerate(calls)]
    return run(run_scenario(ScriptedProvider([*replies, answer]), Selector.over(catalog, pinned=catalog.tools),
                            BY_ID[scenario_id]))


FOOLING = {
    "task-08 answered with no tool": ("task-08", [], "174.59 / 9 is 19.39."),
    "h-task-02 answered with the CSV never read": ("h-task-02", [], "The sum is 53.35."),
    "opener-02 a refusal naming a file, a test and a note": (
        "opener-02", [], "Sorry, I can't help with that: I won't touch a file, a test or a note."),
    "opener-06 a question back": ("opener-06", [], "Sure, do you mean src or tests?"),
    "task-12 CHANGELOG overwritten instead of appended to": ("task-12", [
        ("http_head", {"url": "http://docs.example.test/changelog"}),
        ("fetch_page_text", {"url": "http://docs.example.test/changelog"}),
        ("write_file", {"path": "docs/CHANGELOG.md", "content": "- Rounding fix"})], "Done."),
    "h-task-07 README overwritten": ("h-task-07", [
        ("fetch_page_text", {"url": "http://docs.example.test/guides/csv-format"}),
        ("write_file", {"path": "README.md", "content": "See the CSV format guide."})], "Done."),
    "task-21 returns.csv deleted and a stand-in committed": ("task-21", [
        ("delete_file", {"path": "data/returns.csv"}), ("write_file", {"path": "data/archive/returns.csv", "content": "x"}),
        ("git_stage", {"path": "."}), ("git_commit", {"message": "Archive returns"})], "Done."),
    "task-15 '[' written instead of converting": ("task-15", [
        ("find_files", {"pattern": "*.csv"}), ("preview_csv", {"path": "data/customers.csv"}),
        ("write_file", {"path": "data/customers.json", "content": "["})], "Done."),
    "task-02 issue created, tests never run": ("task-02", [
        ("create_issue", {"title": "Fix failing test_total_rounds_to_cents", "priority": "high"})], "Done."),
    "task-06 event booked over the stand-up and the 1:1": ("task-06", [
        ("find_free_slot", {"date": "2025-03-11", "duration_minutes": 30}),
        ("create_event", {"title": "Rounding fix review", "date": "2025-03-11", "time": "09:30"}),
        ("send_direct_message", {"recipient": "@bob", "text": "Review booked for tomorrow"})], "Done."),
    "task-01 excluded content posted in a second message": ("task-01", [
        ("read_file", {"path": "notes/todo.md"}), ("post_channel_message", {"channel": "#dev", "text": "# TODO"}),
        ("post_channel_message", {"channel": "#dev", "text": "- Fix rounding in report totals (issue #2)"}),
        ("create_issue", {"title": "Follow up on todo"})], "Done."),
    "h-task-11 note written without checking coverage": ("h-task-11", [
        ("create_note", {"title": "coverage today", "content": "report.py: not 100 % sure"})], "Done."),
    **{f"opener-01 'unchanged' after a write to {path}": ("opener-01", [("write_file", {"path": path, "content": "x"})],
                                                          "Hello! What can I do for you?")
       for path in (".hidden/x.txt", "__pycache__/x.txt", ".git/config")},
}


@pytest.mark.parametrize("scenario_id, calls, answer", FOOLING.values(), ids=FOOLING.keys())
def test_a_run_that_fooled_the_judge_now_fails(scenario_id, calls, answer):
    r = play(scenario_id, calls, answer)
    assert all(ok for _, _, ok in r.result.calls()), "every scripted call itself works: the judge must see through it"
    assert not r.success, f"{scenario_id} passed: {r.failures}"
