"""Write every chapter's stated reading minutes from the reading clock, and what follows from them.

Run it after a chapter changes (its prose, its code, or a re-run that prints more or less):

    PYTHONPATH=$PWD .venv/bin/python scripts/state_reading_times.py

It edits markdown sources only, never an output, so no notebook needs re-running for it:
1. each chapter's first cell: ``*Reading: about N min · …*`` gets N from workbook.views.reading_time's clock;
2. the core-path line (workbook.views.course.core_path_line) in the README, the instructor's guide and
   Chapter 0: the sum of the core path's stated minutes;
3. the instructor's guide: its tables' reading and solving columns, and each plan's computed blocks, with the
   plan's slack re-balanced so that the blocks still add up (workbook.views.teaching_plans; a plan that no
   longer fits stops the script with a sentence, and is cut by hand).
tests/test_reading_time.py checks all three, so a stale number fails there and this script is the fix.
"""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbook.views.course import CORE_PATH, PATH_LINE, core_path_line  # noqa: E402
from workbook.views.reading_time import (GUIDE, chapter_paths, core_path_minutes, measured_seconds,  # noqa: E402
                                         reading_minutes, load_notebook, run_minutes, stated_minutes,
                                         with_guide_minutes, with_reading_minutes)
from workbook.views.teaching_plans import exercise_times, with_computed_blocks  # noqa: E402

README = Path("README.md")
CHAPTER_0 = Path("notebooks") / "00_start_here.ipynb"


def restate_chapter(path: Path) -> bool:
    """Set the chapter's stated reading minutes to the clock's; True when the first cell changed."""
    nb = nbformat.read(str(path), as_version=4)
    first = nb.cells[0]
    new = with_reading_minutes(first.source, reading_minutes(load_notebook(path)))
    if new == first.source:
        return False
    first.source = new
    nbformat.write(nb, str(path))
    return True


def restate_path_line(text: str, minutes: int, where: str) -> str:
    """``text`` with its one core-path line rewritten; a file that states none, or several, stops the script."""
    if len(PATH_LINE.findall(text)) != 1:
        raise SystemExit(f"{where} should state the core path once, as: {core_path_line(minutes)}")
    return PATH_LINE.sub(core_path_line(minutes), text)


def restate_chapter_0(minutes: int) -> None:
    """The core-path line in Chapter 0's markdown (the cell that shows the course map)."""
    path = ROOT / CHAPTER_0
    nb = nbformat.read(str(path), as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "markdown" and PATH_LINE.search(c.source)]
    if len(cells) != 1:
        raise SystemExit(f"{CHAPTER_0} should state the core path once, as: {core_path_line(minutes)}")
    new = restate_path_line(cells[0].source, minutes, str(CHAPTER_0))
    if new != cells[0].source:
        cells[0].source = new
        nbformat.write(nb, str(path))


def rewrite(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` when it differs (an unchanged file keeps its timestamp)."""
    if path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def main() -> None:
    for number, path in chapter_paths(ROOT).items():
        if restate_chapter(path):
            print(f"Chapter {number}: restated")
    stated = stated_minutes(ROOT)
    total = core_path_minutes({n: reading for n, (reading, _) in stated.items()})
    readme = ROOT / README
    rewrite(readme, restate_path_line(readme.read_text(encoding="utf-8"), total, str(README)))
    restate_chapter_0(total)
    runs = {name: run_minutes(seconds) for name, seconds in measured_seconds(ROOT).items()}
    guide = ROOT / GUIDE
    text = restate_path_line(guide.read_text(encoding="utf-8"), total, str(GUIDE))
    exercises = exercise_times(ROOT, runs)
    text = with_guide_minutes(text, {n: reading for n, (reading, _) in stated.items()})
    text = with_guide_minutes(text, {n: solving for n, (solving, _) in exercises.items()}, exercise=True)
    try:
        text = with_computed_blocks(text, stated, exercises)
    except ValueError as too_long:
        raise SystemExit(str(too_long)) from None
    rewrite(guide, text)
    print("reading minutes: " + ", ".join(f"{n} {r}" for n, (r, _) in stated.items()))
    print(f"core path ({', '.join(CORE_PATH)}): {total} min")


if __name__ == "__main__":
    main()
