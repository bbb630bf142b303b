"""Time each chapter's and each exercise solution's whole run, and commit the seconds.

The chapters' stated run times (``*Reading: about N min · Run: about M min on 2 cores*``, Chapter 0 on)
and the instructor's guide are checked against this file by tests/test_reading_time.py, so a time
printed for a learner is a measured one. Each notebook runs top to bottom with nbconvert into a
scratch folder (the committed notebook is not touched), one after another, as a learner's Run All would.

With ``--quiet`` (nothing else running) ``seconds`` is the wall clock, what a learner waits for; without it
``seconds`` is the processor time (user + system) of the run's processes — nbconvert, its kernel and
what the kernel started and waited for. On a machine shared with other work the wall clock measures the
other work too (a load of 16 on 2 cores stretched a 37 s test to 237 s), while a notebook's processor
time is about what it takes on 2 free cores: the chapters' work runs one thing at a time. The wall
clock of this run is kept beside it (``wall_seconds``) with the note of how busy the machine was.

    PYTHONPATH=$PWD nice -n 10 .venv/bin/python scripts/measure_run_times.py [NOTEBOOK ...] [--note TEXT] [--guide]

Named notebooks are re-measured and merged into the file; with none, every notebook is. ``--guide``
then writes the measured times into the instructor's guide's tables (notebooks/INSTRUCTORS.md), the
README's chapter and exercise tables, and each exercise's first cell (starter and solution).
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbook.views.reading_time import (GUIDE, RUN_TIMES, all_notebooks, measured_seconds,  # noqa: E402
                                         readme_with_measured_times, with_exercise_run_time, with_measured_times)


def children_cpu() -> float:
    """Processor seconds of every finished child process so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run_seconds(notebook: Path, scratch: Path) -> tuple[float, float]:
    """(processor, wall-clock) seconds of one nbconvert run of ``notebook`` (a failed run raises: its time means nothing)."""
    start, cpu = time.monotonic(), children_cpu()
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                    "--ExecutePreprocessor.timeout=900", "--output-dir", str(scratch), str(notebook)],
                   check=True, capture_output=True, cwd=ROOT)
    return children_cpu() - cpu, time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--note", default="", help="how busy the machine was, which extras were installed")
    parser.add_argument("--guide", action="store_true", help="write the measured times into the instructor's guide and the README")
    parser.add_argument("--quiet", action="store_true",
                        help="nothing else runs on the machine: the wall clock, what a learner waits, is the time kept")
    args = parser.parse_args()
    chosen = [p.resolve() for p in args.notebooks] if args.notebooks or args.guide else all_notebooks(ROOT)
    with tempfile.TemporaryDirectory() as scratch:
        for notebook in chosen:
            name = notebook.relative_to(ROOT).as_posix()
            cpu, wall = run_seconds(notebook, Path(scratch))
            record(name, wall if args.quiet else cpu, wall, args.note)
            print(f"{name}: {cpu:.1f} s processor, {wall:.1f} s wall", flush=True)
    if args.guide:
        measured = measured_seconds(ROOT)
        (ROOT / GUIDE).write_text(with_measured_times((ROOT / GUIDE).read_text(encoding="utf-8"), ROOT, measured), encoding="utf-8")
        readme = ROOT / "README.md"
        readme.write_text(readme_with_measured_times(readme.read_text(encoding="utf-8"), measured), encoding="utf-8")
        for solution in sorted((ROOT / "exercises" / "solutions").glob("*.ipynb")):
            for notebook in (solution, solution.parents[1] / solution.name):
                state_run_time(notebook, measured[solution.relative_to(ROOT).as_posix()])


def state_run_time(notebook: Path, seconds: float) -> None:
    """Rewrite the run time an exercise's first cell states (its markdown only; outputs are not touched)."""
    nb = nbformat.read(str(notebook), as_version=4)
    new = with_exercise_run_time(nb.cells[0].source, seconds)
    if new != nb.cells[0].source:
        nb.cells[0].source = new
        nbformat.write(nb, str(notebook))


def record(name: str, cpu: float, wall: float, note: str) -> None:
    """Merge one measurement into the committed file at once, so an interrupted run keeps what it measured."""
    known = json.loads((ROOT / RUN_TIMES).read_text(encoding="utf-8")) if (ROOT / RUN_TIMES).exists() else {}
    for key, value in (("seconds", cpu), ("wall_seconds", wall)):
        kept = {n: s for n, s in known.get(key, {}).items() if (ROOT / n).is_file()}  # notebooks since removed go
        known[key] = dict(sorted({**kept, name: round(value, 1)}.items()))
    if note:
        known["note"] = note
    (ROOT / RUN_TIMES).write_text(json.dumps(known, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

