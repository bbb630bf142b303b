"""The going-further parts (5b, 5c, 6a–6c, 8a–8b: workbook.views.course) are read in one sitting, each a whole chapter.

Each part follows the course's skeleton (a reading and run time line, what you will learn, a
setup cell, numbered sections, a summary, a self-check, exercises, the next part), shows a diagram,
keeps its asserts in collapsed evidence cells, stays within 3,000 reading words, and uses no words
a learner has no context for.
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from workbook.views.course import GOING_FURTHER, number_of
from workbook.views.reading_time import reading_minutes, reading_words

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
PARTS = tuple(p.stem for p in sorted(NOTEBOOKS.glob("*.ipynb")) if number_of(p) in GOING_FURTHER)
BUDGET = 3_000
#: Phrases that name the project's history or lean on a parameter as if it were a finding.
NO_CONTEXT = ("old default", "chapter 1's cliff", "the issue set", "this round", "earlier session",
              "every configuration succeeds less often", "best retriever that learns nothing", "this is the last chapter",
              "the workbook started from", "was once tested", "the older judgement")
READING = re.compile(r"^\*Reading: about (\d+) min · Run: about (\d+) min on 2 cores\*$", re.M)


def cells(part: str) -> list[dict]:
    return json.loads((NOTEBOOKS / f"{part}.ipynb").read_text(encoding="utf-8"))["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"])


def evidence(cell: dict) -> bool:
    return "evidence" in cell.get("metadata", {}).get("tags", [])


def ends_with_label(code: str) -> bool:
    """True when the cell's last statement prints the one label line: ``print("✓ checks: …")`` itself, or
    ``check_figures(figures, "…", …)`` (workbook.evidence), which prints ``✓ checks: …`` once all holds."""
    last = ast.parse(code).body[-1]
    if not (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and last.value.args):
        return False
    name, args = ast.unparse(last.value.func), last.value.args
    label = args[0] if name == "print" else args[1] if name == "check_figures" and len(args) > 1 else None
    text = label.value if isinstance(label, ast.Constant) else ""
    return bool(text) and (name == "check_figures" or str(text).startswith("✓ checks: "))


def test_the_label_is_printed_by_the_last_statement_only():
    assert ends_with_label('assert x\nprint("✓ checks: x")')
    assert ends_with_label('check_figures({"0.41": rate},\n              "every number in §1", {"separated": ok})')
    assert not ends_with_label('print("✓ checks: x")\nassert x')
    assert not ends_with_label('check_figures({}, label)') and not ends_with_label('print("done")')


def notebook(part: str) -> dict:
    return json.loads((NOTEBOOKS / f"{part}.ipynb").read_text(encoding="utf-8"))


def test_every_going_further_part_of_the_course_is_here():
    assert sorted(number_of(NOTEBOOKS / f"{part}.ipynb") for part in PARTS) == sorted(GOING_FURTHER)


def test_the_single_notebooks_are_gone():
    assert not (NOTEBOOKS / "06_beyond_bm25.ipynb").exists()
    assert not (NOTEBOOKS / "08_zero_shot_retrieval.ipynb").exists()


@pytest.mark.parametrize("part", PARTS)
def test_a_part_is_read_in_one_sitting(part):
    words = reading_words(notebook(part))
    assert words <= BUDGET, f"{part} has {words} reading words, over {BUDGET}"
    stated = READING.findall(source(cells(part)[0]))
    assert len(stated) == 1, f"{part}: the first cell states reading and run time on one line"
    clock = reading_minutes(notebook(part))
    assert abs(int(stated[0][0]) - clock) <= 1, f"{part} states {stated[0][0]} min of reading; the clock says {clock}"


@pytest.mark.parametrize("part", PARTS)
def test_a_part_has_the_skeleton(part):
    nb = cells(part)
    first = source(nb[0])
    assert first.startswith("# ") and "**What you will learn**" in first
    headings = [line for c in nb if c["cell_type"] == "markdown" for line in source(c).splitlines() if line.startswith("## ")]
    assert headings[0] == "## Setup" and headings[-4:] == ["## Summary", "## Self-check", "## Exercises", "## Next"]
    numbered = [h for h in headings if re.match(r"## \d+ · ", h)]
    assert [int(re.match(r"## (\d+)", h)[1]) for h in numbered] == list(range(1, len(numbered) + 1))
    code = [source(c) for c in nb if c["cell_type"] == "code"]
    assert any("workbook.views.diagrams" in s or "diagrams." in s for s in code), f"{part} shows no diagram"
    assert any("self_check(" in s for s in code), f"{part} has no self-check widget"


@pytest.mark.parametrize("part", PARTS)
def test_the_reading_line_follows_what_you_will_learn(part):
    """The course's skeleton, in the chapters' order: title, what you will learn, then the reading and run time."""
    first = source(cells(part)[0])
    assert first.index("**What you will learn**") < READING.search(first).start(), f"{part}: the time line comes first"


@pytest.mark.parametrize("part", PARTS)
def test_evidence_is_off_the_reading_path(part):
    proof = [c for c in cells(part) if evidence(c)]
    assert proof, f"{part} pins its prose numbers in evidence cells"
    for c in proof:
        assert c["metadata"].get("jupyter", {}).get("source_hidden") is True
        assert ends_with_label(source(c)), f"{part}: an evidence cell ends without its '✓ checks:' label"
    on_path = [source(c) for c in cells(part) if c["cell_type"] == "code" and not evidence(c)]
    asserts = sum(len(re.findall(r"^\s*assert ", s, re.M)) for s in on_path)
    # what stays: the few that show an inline toy equals the package's version, which is the lesson
    assert asserts <= 8, f"{part} keeps {asserts} asserts on the reading path"


@pytest.mark.parametrize("part", PARTS)
def test_no_words_without_context(part):
    text = "\n".join(source(c) for c in cells(part) if c["cell_type"] == "markdown").lower()
    assert not [p for p in NO_CONTEXT if p in text]
