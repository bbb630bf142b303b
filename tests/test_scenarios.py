from dataclasses import dataclass

import pytest

from conftest import SMALL_TOOLS, run
from harness.selection.discovery import Deferral
from harness.selection.catalog import ToolCatalog
from harness.selection.discovery import discovery_tool
from workbook.providers.offline import OfflineModel
from harness.selection.queries import query_from_transcript, query_from_user_message
from harness.selection.ranking import Selector
from workbook.evaluation.scenarios import (in_order, judge, oracle_steps, per_step_recall, run_scenarios, success_rate, summarize,
                               tools_right)


@dataclass(frozen=True)
class S:
    id: str
    request: str
    tools: tuple
    kind: str = "task"
    setup: tuple = ()


TASK = S("t1", "Read the file 'a.txt', then post it to the #dev channel", ("read_file", "post_message"))
OPENER = S("o1", "hi", (), "opener")


def test_oracle_transcripts_replay_earlier_steps():
    cat = ToolCatalog(SMALL_TOOLS)
    steps = oracle_steps(TASK, cat)
    assert [needed for _, needed in steps] == ["read_file", "post_message"]
    second = steps[1][0]
    assert second.tool_calls()[0].name == "read_file" and second.tool_calls()[0].input == {"path": "…"}
    assert "read_file path" in query_from_transcript(second)


def test_per_step_recall_counts_hits_and_rejects_empty_input():
    cat = ToolCatalog(SMALL_TOOLS)
    assert per_step_recall(cat, [TASK], query_from_transcript, k=7) == 1.0
    assert per_step_recall(cat, [S("x", "Announce the release", ("post_message",))], query_from_user_message, k=7) == 0.0
    with pytest.raises(ValueError, match="No scenario steps"):
        per_step_recall(cat, [OPENER], query_from_transcript)


def test_in_order():
    assert in_order(["a", "b"], ["a", "x", "b"]) and not in_order(["a", "b"], ["b", "a"]) and in_order([], ["z"])


def test_task_success_with_and_without_discovery_on_fresh_catalogs():
    make = lambda: ToolCatalog(SMALL_TOOLS)
    plain = run(run_scenarios(OfflineModel(), make, [TASK, OPENER]))
    assert [r.success for r in plain] == [True, False]
    assert plain[0].schema_tokens > 0 and plain[0].turns == 3
    found = run(run_scenarios(OfflineModel(), make, [OPENER], selector=lambda c: Selector.over(c, pinned=[discovery_tool(c)])))
    assert found[0].success and success_rate(found) == 1.0
    assert judge(OPENER, found[0].result, make()), "no checks and no demo world: judged on names"
    assert tools_right(OPENER, found[0].result, make()) and found[0].tools_right


def test_summary_carries_both_judgements_with_intervals():
    from workbook.demo import demo_tools, load_scenarios

    dev = load_scenarios("dev")[:6]
    runs = run(run_scenarios(OfflineModel(), lambda: ToolCatalog(demo_tools()), dev))
    s = summarize(runs)
    assert s.n == 6 and s.success == success_rate(runs) and s.tools_right == sum(r.tools_right for r in runs) / 6
    assert s.low <= s.success <= s.high and s.tools_low <= s.tools_right <= s.tools_high
    assert all(r.success == (not r.failures) for r in runs)


def test_narrated_steps_announce_the_next_step():
    from workbook.evaluation.scenarios import narrated_steps

    ts = narrated_steps("Make a report", ["get the news", "write it up"])
    assert len(ts) == 2 and ts[0].user_texts() == ["Make a report"] and len(ts[0]) == 1
    assert ts[1].messages[-1].text == "Done: get the news. Next: write it up"


def test_discovery_tokens_and_per_catalog_loop_arguments():
    from harness.selection.discovery import ToolSearch

    make = lambda: ToolCatalog(SMALL_TOOLS)
    listed = run(run_scenarios(OfflineModel(), make, [OPENER], selector=lambda c: Selector.over(c, pinned=[discovery_tool(c)])))[0]
    assert listed.discovery_tokens > 50
    searched = run(run_scenarios(OfflineModel(), lambda: ToolCatalog([]), [TASK],
                                 deferral=lambda c: Deferral(extra_tools=ToolSearch([], SMALL_TOOLS).tools_for_turn)))[0]
    assert searched.result.calls()[0][0] == "search_tools" and searched.discovery_tokens > 0


def test_knee_is_the_smallest_setting_near_the_best():
    from workbook.evaluation.scenarios import knee

    assert knee({3: 0.1, 7: 0.5, 10: 0.62, 20: 0.66, 30: 0.6}) == 10
    assert knee({3: 0.1, 7: 0.5, 10: 0.62, 20: 0.66}, tolerance=0.0) == 20
    with pytest.raises(ValueError, match="no measured settings"):
        knee({})
