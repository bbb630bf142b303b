"""The instructor's guide (notebooks/INSTRUCTORS.md): plans that add up, times that come from the chapters,
and conceptual errors whose numbers and constants are the code's and the chapters'.

A plan's blocks are read by workbook.views.teaching_plans: a chapter block must take the chapter's stated
reading (and run, when live) minutes, an exercise block the exercise's stated solving estimate and its
solution's measured run, and the blocks must add up to the plan's length. The functions are tested first on
small guides written here, each way a plan can be wrong; then the guide itself.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.selection.discovery import DEFAULT_LIMIT
from harness.selection.ranking import DEFAULT_K
from workbook.views.course import CORE_PATH
from workbook.views.reading_time import (cell_text, guide_minutes, load_notebook, measured_seconds, run_minutes,
                                         stated_minutes, with_guide_minutes)
from workbook.views.teaching_plans import (Block, computed_source, exercise_times, plan_problems, plans,
                                           with_computed_blocks)

ROOT = Path(__file__).resolve().parents[1]
GUIDE = (ROOT / "notebooks" / "INSTRUCTORS.md").read_text(encoding="utf-8")
CHAPTERS = {"0": (14, 1), "2": (18, 1), "5c": (19, 1)}
EXERCISES = {"3": (30, 1), "7": (45, 2)}

SMALL = """## Plans

### 60 minutes: a short one

| min | block | minutes from |
|---|---|---|
| 15 | Chapter 0 live: the start | reading 14 + run 1 |
| 19 | Chapter 5c read | reading 19 |
| 5 | Chapter 2 shown: its diagram | the instructor's choice |
| 21 | Questions, and slack | the rest |
| **60** | **total** | |

### Half day, 80 minutes: another

| min | block | minutes from |
|---|---|---|
| 47 | Exercise 7 in the room | solving 45 (estimate) + run 2 |
| 19 | Chapter 2 live | reading 18 + run 1 |
| 14 | Questions, and slack | the rest |
| **80** | **total** | |

## After the plans
"""


# --- the functions, on small guides -------------------------------------------------------------------


def test_plans_are_read_with_their_length_blocks_and_total():
    short, half = plans(SMALL)
    assert (short.length, short.total, len(short.blocks)) == (60, 60, 4)
    assert short.blocks[0] == Block(15, "Chapter 0 live: the start", "reading 14 + run 1")
    assert (half.heading, half.length, half.total) == ("Half day, 80 minutes: another", 80, 80)
    assert [plan_problems(p, CHAPTERS, EXERCISES) for p in (short, half)] == [[], []]


@pytest.mark.parametrize("what, expected", [
    ("Chapter 0 live: x", "reading 14 + run 1"), ("Chapter 5c read", "reading 19"),
    ("Exercise 3 in the room", "solving 30 (estimate) + run 1"), ("Chapter 2 shown: its diagram", None),
    ("Break", None), ("Chapters 3–5 shown", None),
])
def test_a_block_is_computed_from_what_it_names(what, expected):
    assert computed_source(Block(0, what, ""), CHAPTERS, EXERCISES) == expected


@pytest.mark.parametrize("wrong, complaint", [
    ("| 15 | Chapter 0 live: the start | reading 14 + run 1 |", "| 12 | Chapter 0 live: the start | reading 11 + run 1 |"),
    ("| 19 | Chapter 5c read | reading 19 |", "| 20 | Chapter 5c read | reading 19 |"),
    ("| 21 | Questions, and slack | the rest |", "| 17 | Questions, and slack | the rest |"),
    ("| **60** | **total** | |", "| **61** | **total** | |"),
    ("| 21 | Questions, and slack | the rest |", "| 21 | Questions, and slack | the instructor's choice |"),
])
def test_each_way_a_plan_can_be_wrong_is_found(wrong, complaint):
    broken = SMALL.replace(wrong, complaint, 1)
    assert broken != SMALL
    problems = plan_problems(plans(broken)[0], CHAPTERS, EXERCISES)
    assert len(problems) >= 1 and all(p.startswith("60 minutes: a short one") for p in problems)


def test_rewriting_takes_the_times_and_rebalances_the_slack():
    later = {**CHAPTERS, "0": (10, 1), "5c": (25, 1)}  # Chapter 0 lost 4 minutes, 5c gained 6
    rewritten = with_computed_blocks(SMALL, later, EXERCISES)
    short = plans(rewritten)[0]
    assert [b.minutes for b in short.blocks] == [11, 25, 5, 60 - 11 - 25 - 5]
    assert short.blocks[0].source == "reading 10 + run 1" and plan_problems(short, later, EXERCISES) == []
    assert rewritten.endswith("## After the plans\n") and plans(rewritten)[1] == plans(SMALL)[1]
    assert with_computed_blocks(rewritten, CHAPTERS, EXERCISES) == SMALL


def test_a_plan_that_no_longer_fits_is_refused_not_stretched():
    with pytest.raises(ValueError, match="needs 63 min without slack, over its 60: cut a block by hand"):
        with_computed_blocks(SMALL, {**CHAPTERS, "5c": (43, 1)}, EXERCISES)


def test_the_column_after_the_run_time_is_read_and_written_per_table():
    guide = ("| 0 · Start | tools | ≈ 20 s | 14 min | live |\n| 5b · Ops | x | ≈ 2 min | 17 min | after |\n\nExercises:\n\n"
             "| 3 · tools per turn | Ch 3 | ≈ 30 s | 30 min | in the room |\n")
    assert guide_minutes(guide) == {"0": 14, "5b": 17} and guide_minutes(guide, exercise=True) == {"3": 30}
    rewritten = with_guide_minutes(guide, {"0": 15, "5b": 17})
    assert "| 0 · Start | tools | ≈ 20 s | 15 min | live |" in rewritten and guide_minutes(rewritten, exercise=True) == {"3": 30}
    assert guide_minutes(with_guide_minutes(guide, {"3": 25}, exercise=True), exercise=True) == {"3": 25}


# --- the guide ----------------------------------------------------------------------------------------


def stated() -> dict[str, tuple[int, int]]:
    return stated_minutes(ROOT)


def exercises() -> dict[str, tuple[int, int]]:
    return exercise_times(ROOT, {name: run_minutes(s) for name, s in measured_seconds(ROOT).items()})


def test_the_guide_has_three_plans_of_90_210_and_420_minutes():
    assert [p.length for p in plans(GUIDE)] == [90, 210, 420]


@pytest.mark.parametrize("plan", plans(GUIDE), ids=lambda p: f"{p.length}-min")
def test_each_plans_blocks_add_up_to_its_length_from_the_stated_times(plan):
    assert plan_problems(plan, stated(), exercises()) == [], "python scripts/state_reading_times.py rewrites them"


def test_the_half_day_reads_the_whole_core_path_live():
    half_day = plans(GUIDE)[1]
    live = [re.match(r"Chapter (\w+) live", b.what) for b in half_day.blocks]
    assert [m[1] for m in live if m] == list(CORE_PATH)


def test_the_tables_give_each_chapters_reading_and_each_exercises_solving_estimate():
    assert guide_minutes(GUIDE) == {number: reading for number, (reading, _) in stated().items()}
    assert guide_minutes(GUIDE, exercise=True) == {number: solving for number, (solving, _) in exercises().items()}


# --- the conceptual errors ----------------------------------------------------------------------------

ERRORS = GUIDE.split("## Conceptual errors learners make", 1)[-1]


def test_the_conceptual_errors_name_the_four_the_course_invites():
    assert ERRORS != GUIDE, "the guide has a section 'Conceptual errors learners make'"
    titles = re.findall(r"^\d+\. \*\*(.+?)\*\*", ERRORS, re.MULTILINE)
    assert len(titles) >= 4 and all("*What to say:*" in item for item in re.split(r"^\d+\. ", ERRORS, flags=re.M)[1:])
    for words in ("stand-in", "intervals that overlap", "`k` against `limit`", "Deferred tools against disabled"):
        assert any(words in t for t in titles), words


def test_the_constants_the_errors_quote_are_the_codes():
    assert f"`DEFAULT_K` = {DEFAULT_K}," in ERRORS and f"`DEFAULT_LIMIT` = {DEFAULT_LIMIT}," in ERRORS


def test_every_interval_the_errors_quote_is_printed_by_a_chapter():
    chapters = "\n".join(cell_text(c) for p in (ROOT / "notebooks").glob("*.ipynb") for c in load_notebook(p)["cells"])
    quoted = re.findall(r"\[[+−-]?\d\.\d+, [+−-]?\d\.\d+\]", ERRORS)
    assert len(quoted) >= 6
    assert [q for q in quoted if q not in chapters] == []


def test_the_disabled_tools_error_is_the_hubs_own_words():
    client = (ROOT / "harness" / "mcp" / "client.py").read_text(encoding="utf-8")
    assert 'f"Tool \'{name}\' is disabled: {self.disabled[name]}."' in client
    assert 'f"it is listed in mcpServers.{server}.disabledTools"' in client
    assert "is disabled: it is listed in mcpServers.<server>.disabledTools" in ERRORS
