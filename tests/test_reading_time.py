"""Reading and run times: the functions that compute them, and every chapter's stated times against them.

A chapter's first cell states ``*Reading: about N min · Run: about M min on 2 cores*``; N must equal
the computed reading time (±1 min), M must be within 2× of the committed measurement
(notebooks/run_times.json), and the word budgets of the course hold: each core-path chapter ≤ 3,000
reading words, the core path ≤ 18,000 (two hours at 150 words a minute), each going-further part ≤ 3,000;
and every chapter and part ≤ 3,000 words counting all its cells, evidence included (collapsed evidence still
weighs on the notebook).
The instructor's guide's run times come from the same measurement and are checked within 2× too.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from workbook.views.reading_time import (NOTEBOOK_CAP, RUN_TIMES, all_notebooks, guide_times, load_notebook,
                                                 measured_seconds, notebook_words, reading_minutes, reading_words,
                                                 run_minutes, run_time_drift, spoken_time, stated_times,
                                                 with_measured_times, within)

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "notebooks").glob("*.ipynb"))
CORE_PATH = ("00", "01", "02", "03", "04", "05", "05b", "07")
GUIDE = ROOT / "notebooks" / "INSTRUCTORS.md"


def chapter_number(path: Path) -> str:
    """'05b' for notebooks/05b_mcp_operations.ipynb, '06' for notebooks/06_beyond_bm25_part1.ipynb."""
    return path.name.split("_")[0]


CORE = [p for p in CHAPTERS if chapter_number(p) in CORE_PATH]
GOING_FURTHER = [p for p in CHAPTERS if chapter_number(p) not in CORE_PATH]


def markdown(text: str, tags: tuple[str, ...] = ()) -> dict:
    return {"cell_type": "markdown", "metadata": {"tags": list(tags)}, "source": text}


def code(lines: list[str], tags: tuple[str, ...] = ()) -> dict:
    return {"cell_type": "code", "metadata": {"tags": list(tags)}, "source": lines,
            "outputs": [{"output_type": "stream", "name": "stdout", "text": "many printed words " * 50}]}


# --- the functions -----------------------------------------------------------------------------------


def test_reading_words_count_markdown_and_code_but_not_evidence_or_outputs():
    notebook = {"cells": [markdown("# Title\n\nTwo  words\there."), code(["x = 1\n", "print(x)"]),
                          code(["assert x == 1\n", 'print("✓ checks: x")'], tags=("evidence",)),
                          markdown("hidden prose", tags=("evidence",)),
                          {"cell_type": "raw", "metadata": {}, "source": "not read"}]}
    assert reading_words(notebook) == 5 + 4


def test_notebook_words_count_every_markdown_and_code_cell_evidence_included_but_not_raw_cells_or_outputs():
    notebook = {"cells": [markdown("# Title\n\nTwo  words\there."), code(["x = 1\n", "print(x)"]),
                          code(["assert x == 1\n", 'print("✓ checks: x")'], tags=("evidence",)),
                          markdown("hidden prose", tags=("evidence",)),
                          {"cell_type": "raw", "metadata": {}, "source": "not read"}]}
    assert notebook_words(notebook) == 5 + 4 + 7 + 2
    assert notebook_words(notebook) - reading_words(notebook) == 7 + 2  # the evidence, all of it


def test_reading_words_agree_with_the_course_convention_one_liner():
    """course.md counts with re.findall(r'\\S+') over every non-evidence cell; the module must agree."""
    for path in CHAPTERS:
        nb = load_notebook(path)
        expected = sum(len(re.findall(r"\S+", "".join(c["source"]))) for c in nb["cells"]
                       if "evidence" not in c.get("metadata", {}).get("tags", []) and c["cell_type"] != "raw")
        assert reading_words(nb) == expected, path.name


@pytest.mark.parametrize("words, minutes", [(0, 0), (1, 1), (150, 1), (151, 2), (3000, 20), (18000, 120)])
def test_reading_minutes_round_up_at_150_words_a_minute(words, minutes):
    assert reading_minutes(words) == minutes


@pytest.mark.parametrize("seconds, minutes", [(0.5, 1), (59.9, 1), (60, 1), (60.1, 2), (179, 3)])
def test_run_minutes_round_up_and_are_at_least_one(seconds, minutes):
    assert run_minutes(seconds) == minutes


def test_the_stated_line_is_parsed_from_the_first_markdown_cell_only():
    line = "*Reading: about 12 min · Run: about 3 min on 2 cores*"
    assert stated_times({"cells": [markdown(f"# Ch\n\nLearn.\n\n{line}\n")]}) == (12, 3)
    assert stated_times({"cells": [markdown("# Ch"), markdown(line)]}) is None
    assert stated_times({"cells": [code([line])]}) is None
    assert stated_times({"cells": [markdown("*Reading: about 12 min*")]}) is None
    assert stated_times({"cells": []}) is None


@pytest.mark.parametrize("stated, measured, ok", [(2, 1, True), (1, 2, True), (3, 1, False), (1, 3, False), (5, 5, True)])
def test_within_a_factor_either_way(stated, measured, ok):
    assert within(stated, measured) is ok


def test_drift_is_reported_for_notebooks_beyond_the_factor_only():
    measured = {"notebooks/a.ipynb": 100.0, "notebooks/b.ipynb": 100.0, "notebooks/c.ipynb": 100.0}
    observed = {"notebooks/a.ipynb": 190.0, "notebooks/b.ipynb": 260.0, "notebooks/c.ipynb": 40.0,
                "notebooks/new.ipynb": 10.0}
    lines = run_time_drift(observed, measured)
    assert len(lines) == 3
    assert any("b.ipynb" in s and "260 s" in s and "100 s" in s for s in lines)
    assert any("c.ipynb" in s for s in lines)
    assert any("new.ipynb" in s and "no committed measurement" in s for s in lines)
    assert not any("a.ipynb" in s for s in lines)


@pytest.mark.parametrize("seconds, said", [(3, "≈ 5 s"), (12, "≈ 10 s"), (13, "≈ 15 s"), (89, "≈ 90 s"), (90, "≈ 2 min"),
                                           (200, "≈ 3 min")])
def test_spoken_time_rounds_to_5_s_then_to_minutes(seconds, said):
    assert spoken_time(seconds) == said


def test_the_guide_rows_are_read_and_rewritten_from_the_measurement(tmp_path):
    for folder, names in (("notebooks", ("00_start.ipynb", "05b_ops.ipynb")), ("exercises/solutions", ("07_x.ipynb",))):
        (tmp_path / folder).mkdir(parents=True)
        for name in names:
            (tmp_path / folder / name).write_text("{}")
    guide = ("| chapter | run time | plan |\n|---|---|---|\n| 0 · Start | tools | ≈ 15 s | live |\n"
             "| 5b · Ops | servers | ≈ 3 min | — |\n\nExercises:\n\n| 7 · deferral | Ch 5 | ≈ 30 s | in the room |\n")
    assert guide_times(guide, tmp_path) == {"notebooks/00_start.ipynb": 15, "notebooks/05b_ops.ipynb": 180,
                                            "exercises/solutions/07_x.ipynb": 30}
    measured = {"notebooks/00_start.ipynb": 41, "notebooks/05b_ops.ipynb": 100, "exercises/solutions/07_x.ipynb": 7}
    rewritten = with_measured_times(guide, tmp_path, measured)
    assert "| 0 · Start | tools | ≈ 40 s | live |" in rewritten and "| 5b · Ops | servers | ≈ 2 min | — |" in rewritten
    assert "| 7 · deferral | Ch 5 | ≈ 5 s | in the room |" in rewritten
    assert guide_times(rewritten, tmp_path) == {"notebooks/00_start.ipynb": 40, "notebooks/05b_ops.ipynb": 120,
                                                "exercises/solutions/07_x.ipynb": 5}


# --- the chapters ------------------------------------------------------------------------------------


def test_every_chapter_and_solution_has_a_committed_run_time():
    measured = measured_seconds(ROOT)
    names = {p.relative_to(ROOT).as_posix() for p in all_notebooks(ROOT)}
    assert names - set(measured) == set(), f"run scripts/measure_run_times.py for these (see {RUN_TIMES.name})"
    assert set(measured) - names == set(), "measurements of notebooks that no longer exist"
    assert all(seconds > 0 for seconds in measured.values())


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_each_chapter_states_its_reading_time(path):
    nb = load_notebook(path)
    stated = stated_times(nb)
    computed = reading_minutes(reading_words(nb))
    assert stated is not None, (f"{path.name}: the first cell has no line '*Reading: about {computed} min · "
                                "Run: about M min on 2 cores*'")
    assert abs(stated[0] - computed) <= 1, f"{path.name} states {stated[0]} min of reading; its words take {computed}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_each_chapter_states_its_run_time_within_2x_of_the_measured_one(path):
    stated = stated_times(load_notebook(path))
    assert stated is not None, f"{path.name}: the first cell states no run time"
    measured = run_minutes(measured_seconds(ROOT)[path.relative_to(ROOT).as_posix()])
    assert within(stated[1], measured), f"{path.name} states {stated[1]} min of run; measured {measured} min"


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.stem)
def test_each_core_path_chapter_is_at_most_3000_reading_words(path):
    assert reading_words(load_notebook(path)) <= 3000


def test_the_core_path_reads_in_two_hours():
    assert {chapter_number(p) for p in CORE} == set(CORE_PATH)
    total = sum(reading_words(load_notebook(p)) for p in CORE)
    assert total <= 18000, f"the core path has {total:,} reading words ({reading_minutes(total)} min)"


@pytest.mark.parametrize("path", GOING_FURTHER, ids=lambda p: p.stem)
def test_each_going_further_part_is_at_most_3000_reading_words(path):
    assert reading_words(load_notebook(path)) <= 3000


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_each_chapter_and_part_is_at_most_3000_words_counting_every_cell(path):
    words = notebook_words(load_notebook(path))
    assert words <= NOTEBOOK_CAP, (f"{path.name} has {words:,} words counting every cell (evidence included); "
                                   f"at most {NOTEBOOK_CAP:,}: move regression asserts to tests/")


# --- the instructor's guide --------------------------------------------------------------------------


def test_the_guide_states_a_run_time_for_every_chapter_and_exercise():
    text = GUIDE.read_text(encoding="utf-8")
    assert set(guide_times(text, ROOT)) == {p.relative_to(ROOT).as_posix() for p in all_notebooks(ROOT)}
    assert "to re-measure" not in text


def test_the_guide_times_are_within_2x_of_the_measured_ones():
    measured = measured_seconds(ROOT)
    stated = guide_times(GUIDE.read_text(encoding="utf-8"), ROOT)
    wrong = {name: (seconds, measured[name]) for name, seconds in stated.items() if not within(seconds, measured[name])}
    assert wrong == {}, f"stated against measured seconds: {wrong}"
