"""Reading and run times: the functions that compute them, and every chapter's stated times against them.

A chapter's first cell states ``*Reading: about N min · Run: about M min on 2 cores*``; N must equal
the reading clock's minutes (±1 min: a re-run changes a few printed words), M must be within 2× of the
committed measurement (notebooks/run_times.json). The core path is the one list in workbook.views.course;
the README, the instructor's guide and Chapter 0 state it, with its minutes by the clock, and are held to it.
The word budgets of the course hold: each chapter and part ≤ 3,000 reading words, and ≤ 3,000 counting all
its cells, evidence included (collapsed evidence still weighs on the notebook). The core path should read in
two hours by the clock; it does not yet (a strict xfail says so until Chapters 3–5 are rewritten).
The instructor's guide's run times come from the same measurement and are checked within 2× too.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from workbook.views.course import CORE_PATH, COURSE, GOING_FURTHER, core_path_line, number_of, stated_paths
from workbook.views.reading_time import (NOTEBOOK_CAP, RUN_TIMES, Reading, all_notebooks, cell_text, chapter_minutes,
                                         core_path_minutes, guide_times, html_words, load_notebook, measured_seconds,
                                         notebook_words, readme_times, readme_with_measured_times, reading, reading_minutes,
                                         reading_words, run_minutes,
                                         run_time_drift, spoken_time, stated_minutes, stated_times, with_exercise_run_time,
                                         with_measured_times,
                                         with_reading_minutes, within)

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "notebooks").glob("*.ipynb"))
GUIDE = ROOT / "notebooks" / "INSTRUCTORS.md"
CORE = [p for p in CHAPTERS if number_of(p) in CORE_PATH]
FURTHER = [p for p in CHAPTERS if number_of(p) not in CORE_PATH]
#: The two hours the core path should read in; the clock says it does not yet.
CORE_PATH_BUDGET = 120


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


def outputs(*items: dict) -> dict:
    """A code cell of one word of source with the given outputs."""
    return {"cell_type": "code", "metadata": {}, "source": "x", "outputs": list(items)}


def shown(data: dict) -> dict:
    return {"output_type": "display_data", "data": data, "metadata": {}}


def test_the_clock_sorts_what_a_learner_meets_by_kind():
    table = "<table><tr><th>query</th><th>recall@10</th></tr><tr><td>hello there</td><td>0.41</td></tr></table>"
    notebook = {"cells": [
        markdown("Three words here."),
        code(["x = 1\n", "print(x)"]),  # its output: 150 words of stdout
        outputs({"output_type": "stream", "name": "stderr", "text": "a warning nobody reads"},
                shown({"text/html": table, "text/plain": "<IPython.core.display.HTML object>"}),
                shown({"image/png": "iVBOR", "text/plain": "<Figure size 700x300 with 1 Axes>"}),
                shown({"image/svg+xml": "<svg/>", "text/html": '<img alt="a long alt text">', "text/plain": "<Diagram>"}),
                shown({"application/vnd.jupyter.widget-view+json": {}, "text/plain": "VBox(children=(IntSlider(),))"}),
                shown({"application/vnd.jupyter.widget-view+json": {}, "text/plain": "real model:  40%|####  | 4/10"}),
                {"output_type": "execute_result", "data": {"text/plain": "[1, 2, 3]"}, "metadata": {}}),
        code(["assert x == 1"], tags=("evidence",)),  # its printed words are off the path too
        markdown("hidden prose", tags=("evidence",)),
        {"cell_type": "raw", "metadata": {}, "source": "not read"}]}
    assert reading(notebook) == Reading(prose=3, code=4 + 1, output=150 + 5 + 3, figures=2, widgets=1)


def test_html_words_count_the_text_a_reader_sees_not_the_tags():
    assert html_words("<table><tr><td>a</td><td>b&amp;c</td></tr></table>") == 2
    assert html_words("<p>one<b>two</b></p>") == 2  # text nodes are kept apart even when the tags touch
    assert html_words('<div class="self-check"><p>Which?</p><details><summary>Show</summary>B</details></div>') == 3


@pytest.mark.parametrize("kinds, minutes", [
    (Reading(), 0), (Reading(prose=225), 1), (Reading(code=100), 1), (Reading(output=300), 1), (Reading(figures=2), 1),
    (Reading(widgets=1), 1), (Reading(prose=2250, code=1000, output=1500, figures=4, widgets=2), 10 + 10 + 5 + 2 + 2),
])
def test_each_kind_is_weighed_at_its_own_rate(kinds, minutes):
    assert kinds.minutes == pytest.approx(minutes)


def test_reading_minutes_round_the_notebooks_clock_up():
    assert reading_minutes({"cells": []}) == 0
    assert reading_minutes({"cells": [markdown("w " * 225)]}) == 1
    assert reading_minutes({"cells": [markdown("w " * 226)]}) == 2
    # 225 words of prose, one word of code, one figure: 1 + 0.01 + 0.5 minutes
    assert reading_minutes({"cells": [markdown("w " * 225), outputs(shown({"image/png": "x"}))]}) == 2


def test_code_takes_longer_than_prose_and_output_less():
    same = 900
    assert Reading(code=same).minutes > Reading(prose=same).minutes > Reading(output=same).minutes


def test_the_stated_reading_minutes_are_rewritten_and_the_run_minutes_kept():
    first = "# Ch\n\n*Reading: about 12 min · Run: about 3 min on 2 cores*\n(+3 min with the real model installed)"
    rewritten = with_reading_minutes(first, 27)
    assert rewritten == first.replace("about 12 min", "about 27 min")
    assert stated_times({"cells": [markdown(rewritten)]}) == (27, 3)
    assert with_reading_minutes("# Ch with no line", 27) == "# Ch with no line"


def test_the_core_path_line_reads_back_as_written():
    line = core_path_line(152)
    assert stated_paths(f"intro\n\n{line}\n\nmore") == [(CORE_PATH, 152, GOING_FURTHER)]
    assert stated_paths(line.replace("4, 5", "4, 5b")) == [(tuple(n if n != "5" else "5b" for n in CORE_PATH), 152,
                                                           GOING_FURTHER)]
    assert stated_paths("Core path: Chapters 0 to 7.") == []


def test_the_course_is_one_list_split_in_two():
    assert set(CORE_PATH) | set(GOING_FURTHER) == {ch.number for ch in COURSE}
    assert not set(CORE_PATH) & set(GOING_FURTHER)
    assert CORE_PATH == ("0", "1", "2", "3", "4", "5", "7")
    assert number_of(Path("notebooks/05b_mcp_operations.ipynb")) == "5b" and number_of(Path("00_start_here.ipynb")) == "0"


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
    computed = reading_minutes(nb)
    assert stated is not None, (f"{path.name}: the first cell has no line '*Reading: about {computed} min · "
                                "Run: about M min on 2 cores*'")
    assert abs(stated[0] - computed) <= 1, (f"{path.name} states {stated[0]} min of reading; the clock says {computed} "
                                            "(python scripts/state_reading_times.py rewrites it)")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_each_chapter_states_its_run_time_within_2x_of_the_measured_one(path):
    stated = stated_times(load_notebook(path))
    assert stated is not None, f"{path.name}: the first cell states no run time"
    measured = run_minutes(measured_seconds(ROOT)[path.relative_to(ROOT).as_posix()])
    assert within(stated[1], measured), f"{path.name} states {stated[1]} min of run; measured {measured} min"


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.stem)
def test_each_core_path_chapter_is_at_most_3000_reading_words(path):
    assert reading_words(load_notebook(path)) <= 3000


def test_every_chapter_of_the_course_has_its_notebook():
    assert sorted(number_of(p) for p in CHAPTERS) == sorted(ch.number for ch in COURSE)


@pytest.mark.xfail(strict=True, reason="Chapters 3-5 are rewritten on a stronger model's numbers (issue 45); the core "
                                       "path reads in two hours by the clock only after that rewrite. Strict: when it "
                                       "passes, this mark fails and must go.")
def test_the_core_path_reads_in_two_hours():
    minutes = chapter_minutes(ROOT)
    total = core_path_minutes(minutes)
    per_chapter = ", ".join(f"{n}: {minutes[n]}" for n in CORE_PATH)
    assert total <= CORE_PATH_BUDGET, f"the core path reads in {total} min by the clock ({per_chapter})"


@pytest.mark.parametrize("name", ["README.md", "notebooks/INSTRUCTORS.md", "notebooks/00_start_here.ipynb"])
def test_the_readme_the_guide_and_chapter_0_state_the_one_core_path_and_its_minutes(name):
    text = (ROOT / name).read_text(encoding="utf-8")
    if name.endswith(".ipynb"):
        text = "\n".join(cell_text(c) for c in load_notebook(ROOT / name)["cells"] if c["cell_type"] == "markdown")
    total = core_path_minutes({number: reading for number, (reading, _) in stated_minutes(ROOT).items()})
    assert stated_paths(text) == [(CORE_PATH, total, GOING_FURTHER)], (
        f"{name} should state once: {core_path_line(total)!r} (python scripts/state_reading_times.py writes it)")


@pytest.mark.parametrize("path", FURTHER, ids=lambda p: p.stem)
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


# --- the README ---------------------------------------------------------------------------------------


def test_the_readme_rows_are_read_and_rewritten_from_the_measurement():
    readme = ("| 0 | [00_start](notebooks/00_start.ipynb) | tools | [`core/`](harness/core) | ≈ 20 s |\n"
              "| 7 | [07_x](exercises/07_x.ipynb) | deferral | Ch. 5 | [solution](exercises/solutions/07_x.ipynb) | ≈ 35 s |\n"
              "| 7 | [07_use](notebooks/07_use.ipynb) | the proxy | `serve` | ≈ 45 s (the first run embeds more) |\n")
    assert readme_times(readme) == {"notebooks/00_start.ipynb": 20, "exercises/solutions/07_x.ipynb": 35,
                                    "notebooks/07_use.ipynb": 45}
    measured = {"notebooks/00_start.ipynb": 41, "exercises/solutions/07_x.ipynb": 200, "notebooks/07_use.ipynb": 44}
    rewritten = readme_with_measured_times(readme, measured)
    assert "| [`core/`](harness/core) | ≈ 40 s |" in rewritten and "solutions/07_x.ipynb) | ≈ 3 min |" in rewritten
    assert "| ≈ 45 s (the first run embeds more) |" in rewritten
    assert readme_times(rewritten) == {"notebooks/00_start.ipynb": 40, "exercises/solutions/07_x.ipynb": 180,
                                       "notebooks/07_use.ipynb": 45}


def test_the_readme_states_every_run_time_within_2x_of_the_measured_one():
    stated = readme_times((ROOT / "README.md").read_text(encoding="utf-8"))
    measured = measured_seconds(ROOT)
    assert set(stated) == {p.relative_to(ROOT).as_posix() for p in all_notebooks(ROOT)}
    wrong = {name: (seconds, measured[name]) for name, seconds in stated.items() if not within(seconds, measured[name])}
    assert wrong == {}, f"stated against measured seconds (scripts/measure_run_times.py --guide rewrites them): {wrong}"
