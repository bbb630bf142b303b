"""How long a chapter takes to read and to run, computed from the notebook itself.

Each chapter's first cell states ``*Reading: about N min · Run: about M min on 2 cores*`` (from
Chapter 0 on). N follows from the words a learner reads — every markdown cell and every code cell's
source, except the cells tagged ``evidence`` that pin numbers off the reading path — at 150 words a
minute; M from the committed measurement of the notebook's whole run (notebooks/run_times.json,
written by scripts/measure_run_times.py). tests/test_reading_time.py checks both, so a stated time
cannot drift from the notebook it describes. A second count, :func:`notebook_words`, weighs the whole
notebook — evidence included, since a collapsed cell is still there to scroll past and to maintain — and
every chapter and going-further part stays within :data:`NOTEBOOK_CAP` of it.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

WORDS_PER_MINUTE = 150
EVIDENCE_TAG = "evidence"
#: At most this many words in a chapter or going-further part, counting every cell (evidence included).
NOTEBOOK_CAP = 3_000
#: Where a checkout keeps the measurement and the guide, relative to its root (the package never guesses the root).
RUN_TIMES = Path("notebooks") / "run_times.json"
GUIDE = Path("notebooks") / "INSTRUCTORS.md"
STATED = re.compile(r"\*Reading: about (\d+) min · Run: about (\d+) min on 2 cores\*")


def load_notebook(path: Path) -> dict:
    """The notebook's JSON (nbformat 4)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def is_evidence(cell: dict) -> bool:
    """True for a cell that pins prose numbers and is collapsed off the reading path."""
    return EVIDENCE_TAG in cell.get("metadata", {}).get("tags", [])


def cell_text(cell: dict) -> str:
    """A cell's source as one string (nbformat allows a string or a list of lines)."""
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def reading_words(notebook: dict) -> int:
    """Whitespace-separated tokens of every markdown and code cell's source, evidence cells excepted.

    Outputs are not counted: a learner skims them, and the run time covers waiting for them.
    """
    return sum(len(cell_text(c).split()) for c in notebook["cells"]
               if c.get("cell_type") in ("markdown", "code") and not is_evidence(c))


def notebook_words(notebook: dict) -> int:
    """Whitespace-separated tokens of every markdown and code cell's source, evidence cells included.

    What the whole-notebook cap counts: raw cells and outputs are left out, as in :func:`reading_words`.
    """
    return sum(len(cell_text(c).split()) for c in notebook["cells"] if c.get("cell_type") in ("markdown", "code"))


def reading_minutes(words: int) -> int:
    """Whole minutes to read ``words`` at 150 words a minute, rounded up."""
    return math.ceil(words / WORDS_PER_MINUTE)


def run_minutes(seconds: float) -> int:
    """A measured run in whole minutes, rounded up, at least 1 (what a chapter states)."""
    return max(1, math.ceil(seconds / 60))


def stated_times(notebook: dict) -> tuple[int, int] | None:
    """(reading minutes, run minutes) from the first cell's line, or None when it has none."""
    first = notebook["cells"][0] if notebook["cells"] else {}
    found = STATED.search(cell_text(first)) if first.get("cell_type") == "markdown" else None
    return (int(found[1]), int(found[2])) if found else None


def within(stated: float, measured: float, factor: float = 2.0) -> bool:
    """True when ``stated`` is within ``factor`` of ``measured`` either way (both positive)."""
    return measured / factor <= stated <= measured * factor


def measured_seconds(root: Path) -> dict[str, float]:
    """The committed run times of the checkout at ``root``: repository-relative notebook path → seconds of its whole run."""
    return json.loads((Path(root) / RUN_TIMES).read_text(encoding="utf-8"))["seconds"]


def all_notebooks(root: Path) -> list[Path]:
    """Every notebook whose run is measured: the chapters and the exercise solutions."""
    return sorted((root / "notebooks").glob("*.ipynb")) + sorted((root / "exercises" / "solutions").glob("*.ipynb"))


def run_time_drift(observed: dict[str, float], measured: dict[str, float], factor: float = 2.0) -> list[str]:
    """One line per notebook whose run in this session (``observed`` seconds) is beyond ``factor`` of
    the committed measurement, or has none: the stated run times may need re-measuring."""
    lines = []
    for name, seconds in sorted(observed.items()):
        if name not in measured:
            lines.append(f"{name}: ran in {seconds:.0f} s; no committed measurement")
        elif not within(seconds, measured[name], factor):
            lines.append(f"{name}: ran in {seconds:.0f} s here; committed {measured[name]:.0f} s (beyond {factor:g}×)")
    return lines


# The instructor's guide (notebooks/INSTRUCTORS.md) states each chapter's and exercise's run time in a table
# row "| 5b · name | ... | ≈ 45 s | ..."; chapter rows come before the line starting "Exercises", whose
# rows name the exercise (its run is its solution's).
GUIDE_ROW = re.compile(r"^(\| (\w+) · [^|]+\|[^|]*\| )≈ (\d+) (s|min)( \|)", re.MULTILINE)
EXERCISES_START = "\nExercises"


def spoken_time(seconds: float) -> str:
    """A run time as the guide says it: '≈ 35 s' (to 5 s) under 90 s, else '≈ 3 min'."""
    return f"≈ {max(5, 5 * round(seconds / 5))} s" if seconds < 90 else f"≈ {round(seconds / 60)} min"


def _guide_notebook(root: Path, number: str, exercise: bool) -> str:
    """The repository-relative notebook a guide row names: '5b' → notebooks/05b_*.ipynb, exercise '7' → its solution."""
    folder = "exercises/solutions" if exercise else "notebooks"
    prefix = number.zfill(2) if number.isdigit() else number.zfill(3)
    [path] = (Path(root) / folder).glob(f"{prefix}_*.ipynb")
    return path.relative_to(root).as_posix()


def guide_times(text: str, root: Path) -> dict[str, float]:
    """The guide's stated run times: repository-relative notebook path → seconds."""
    chapters, exercises = text.split(EXERCISES_START, 1)
    return {_guide_notebook(root, row[1], part is exercises): float(row[2]) * (60 if row[3] == "min" else 1)
            for part in (chapters, exercises) for row in GUIDE_ROW.findall(part)}


def with_measured_times(text: str, root: Path, measured: dict[str, float]) -> str:
    """The guide with every stated run time replaced by the measured one, said as :func:`spoken_time` says it."""
    chapters, exercises = text.split(EXERCISES_START, 1)

    def fill(part: str, exercise: bool) -> str:
        return GUIDE_ROW.sub(lambda m: m[1] + spoken_time(measured[_guide_notebook(root, m[2], exercise)]) + m[5], part)

    return fill(chapters, False) + EXERCISES_START + fill(exercises, True)
