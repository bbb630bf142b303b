"""How long a chapter takes to read and to run, computed from the notebook itself.

Each chapter's first cell states ``*Reading: about N min · Run: about M min on 2 cores*`` (from Chapter 0 on).
M is the committed measurement of the notebook's whole run (notebooks/run_times.json, written by
scripts/measure_run_times.py). N is the reading clock, :func:`reading_minutes`, which counts what a learner
spends time on, not only the words of the cells' sources:

* prose, the markdown cells, at :data:`PROSE_WPM` = 225 words a minute: adults read English non-fiction
  silently at about 238 (Brysbaert 2019, a meta-analysis of 190 studies); a course's prose is read to be
  learnt, so a little under that;
* code, the code cells' source, at :data:`CODE_WPM` = 100 whitespace-separated tokens a minute: code is
  read less linearly than prose and re-read (Busjahn et al. 2015, eye movements in code reading), and one
  token of code (``run.result.turns]``) holds several of a sentence's words. About half the prose rate, a
  round 100, is an assumption stated here, not a measurement;
* the text a cell prints — stdout, an HTML table's words, a self-check's questions and answers — at
  :data:`OUTPUT_WPM` = 300 words a minute: the prose asks the learner to consult these tables and
  printouts, and they look for the rows it names rather than read every cell; a skim, faster than
  prose, but slowed by numbers, which are not skimmed like words;
* each figure (a diagram or a plot) :data:`FIGURE_SECONDS` = 30 s to look at, its prose counted already;
  each interactive widget without text of its own (a slider, an explorer) :data:`WIDGET_SECONDS` = 60 s,
  a few settings tried.

Left out, because a learner does not read them: the cells tagged ``evidence`` (collapsed, they pin the
prose's numbers off the reading path) and their outputs; raw cells; stderr (warnings, progress); a progress
bar; the plain-text stand-ins (``<Figure size …>``, ``VBox(…)``) of what is shown as a figure or widget.
Until this clock the stated times counted only the sources, code at the prose rate (150 words a minute),
and none of the tables the prose sends the learner to.

tests/test_reading_time.py checks every stated time against the clock and the measurement, so a stated
time cannot drift from the notebook it describes; scripts/state_reading_times.py rewrites the stated
reading minutes from the clock after a chapter changes. Two word counts stay beside the clock as budgets:
:func:`reading_words` (the sources a learner reads) and :func:`notebook_words` (the whole notebook, evidence
included, since a collapsed cell is still there to scroll past and to maintain), each at most
:data:`NOTEBOOK_CAP`.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from workbook.views.course import CORE_PATH, number_of

PROSE_WPM = 225
CODE_WPM = 100
OUTPUT_WPM = 300
FIGURE_SECONDS = 30
WIDGET_SECONDS = 60
EVIDENCE_TAG = "evidence"
#: At most this many words in a chapter or going-further part, counting every cell (evidence included).
NOTEBOOK_CAP = 3_000
#: Where a checkout keeps the measurement and the guide, relative to its root (the package never guesses the root).
RUN_TIMES = Path("notebooks") / "run_times.json"
GUIDE = Path("notebooks") / "INSTRUCTORS.md"
STATED = re.compile(r"\*Reading: about (\d+) min · Run: about (\d+) min on 2 cores\*")
FIGURES = ("image/png", "image/svg+xml", "image/jpeg")
WIDGET = "application/vnd.jupyter.widget-view+json"
#: tqdm's text form ("real model:  40%|████      | 4/10"): a bar waited on, not read.
PROGRESS = re.compile(r"\d+%\|")


def load_notebook(path: Path) -> dict:
    """The notebook's JSON (nbformat 4)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def is_evidence(cell: dict) -> bool:
    """True for a cell that pins prose numbers and is collapsed off the reading path."""
    return EVIDENCE_TAG in cell.get("metadata", {}).get("tags", [])


def cell_text(cell: dict) -> str:
    """A cell's source as one string (nbformat allows a string or a list of lines)."""
    return joined(cell.get("source", ""))


def joined(text: str | list[str]) -> str:
    """One string from nbformat's string-or-list-of-lines."""
    return text if isinstance(text, str) else "".join(text)


def words(text: str) -> int:
    """Whitespace-separated tokens: the unit every rate here counts."""
    return len(text.split())


def reading_words(notebook: dict) -> int:
    """Words of every markdown and code cell's source, evidence cells excepted: the budget a chapter is written to."""
    return sum(words(cell_text(c)) for c in notebook["cells"]
               if c.get("cell_type") in ("markdown", "code") and not is_evidence(c))


def notebook_words(notebook: dict) -> int:
    """Words of every markdown and code cell's source, evidence cells included.

    What the whole-notebook cap counts: raw cells and outputs are left out, as in :func:`reading_words`.
    """
    return sum(words(cell_text(c)) for c in notebook["cells"] if c.get("cell_type") in ("markdown", "code"))


class _Text(HTMLParser):
    """Collects an HTML fragment's text nodes, so a table's cells count as its words and its tags do not."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def html_words(fragment: str) -> int:
    """Words a reader sees in an HTML fragment: text nodes only, cells kept apart, entities decoded."""
    parser = _Text()
    parser.feed(fragment)
    parser.close()
    return words(" ".join(parser.parts))


@dataclass(frozen=True)
class Reading:
    """What a learner meets in a notebook, by kind; :attr:`minutes` weighs each kind at its own rate."""

    prose: int = 0
    code: int = 0
    output: int = 0
    figures: int = 0
    widgets: int = 0

    def __add__(self, other: Reading) -> Reading:
        return Reading(self.prose + other.prose, self.code + other.code, self.output + other.output,
                       self.figures + other.figures, self.widgets + other.widgets)

    @property
    def minutes(self) -> float:
        """Prose at 225, code at 100, output at 300 words a minute; 30 s a figure, 60 s a widget."""
        return (self.prose / PROSE_WPM + self.code / CODE_WPM + self.output / OUTPUT_WPM
                + (self.figures * FIGURE_SECONDS + self.widgets * WIDGET_SECONDS) / 60)


def output_reading(output: dict) -> Reading:
    """One output as the learner meets it: a figure, a widget, words to consult, or nothing (stderr, progress)."""
    if output.get("output_type") == "stream":
        return Reading(output=words(joined(output.get("text", "")))) if output.get("name") == "stdout" else Reading()
    data = output.get("data", {})
    if any(kind in data for kind in FIGURES):
        return Reading(figures=1)
    if "text/html" in data:
        return Reading(output=html_words(joined(data["text/html"])))
    if WIDGET in data:
        return Reading() if PROGRESS.search(joined(data.get("text/plain", ""))) else Reading(widgets=1)
    return Reading(output=words(joined(data.get("text/plain", ""))))


def cell_reading(cell: dict) -> Reading:
    """A cell on the reading path: markdown is prose; code is its source and what it printed; evidence is nothing."""
    if is_evidence(cell) or cell.get("cell_type") not in ("markdown", "code"):
        return Reading()
    if cell["cell_type"] == "markdown":
        return Reading(prose=words(cell_text(cell)))
    return sum((output_reading(o) for o in cell.get("outputs", [])), Reading(code=words(cell_text(cell))))


def reading(notebook: dict) -> Reading:
    """Everything a learner reads, consults and looks at in the notebook, by kind."""
    return sum((cell_reading(c) for c in notebook["cells"]), Reading())


def reading_minutes(notebook: dict) -> int:
    """The reading clock: whole minutes a learner spends on the notebook (:class:`Reading`), rounded up.

    Rounded to a millionth first, so that a sum of fractions which is a whole number in exact arithmetic stays it.
    """
    return math.ceil(round(reading(notebook).minutes, 6))


def chapter_paths(root: Path) -> dict[str, Path]:
    """The course's number → its chapter notebook, for the checkout at ``root``: '5b' → notebooks/05b_….ipynb."""
    return {number_of(p): p for p in sorted((Path(root) / "notebooks").glob("*.ipynb"))}


def chapter_minutes(root: Path) -> dict[str, int]:
    """The course's number → the clock's reading minutes of that chapter, for the checkout at ``root``."""
    return {number: reading_minutes(load_notebook(path)) for number, path in chapter_paths(root).items()}


def stated_minutes(root: Path) -> dict[str, tuple[int, int]]:
    """The course's number → (reading, run) minutes its first cell states, for the checkout at ``root``.

    What everything downstream of a chapter uses (the core path's total, the guide's plans): the stated minutes
    are held to the clock within a minute, and do not move when a re-run prints a few more words.
    """
    out = {}
    for number, path in chapter_paths(root).items():
        stated = stated_times(load_notebook(path))
        if stated is None:
            raise ValueError(f"{path.name} states no '*Reading: about N min · Run: about M min on 2 cores*' line.")
        out[number] = stated
    return out


def core_path_minutes(minutes: dict[str, int]) -> int:
    """The core path's reading time: the sum of its chapters' minutes (the clock's or the stated, as ``minutes`` holds).

    Summed per chapter, each rounded up, because that is how a learner adds up the chapters' own first lines.
    """
    return sum(minutes[number] for number in CORE_PATH)


def run_minutes(seconds: float) -> int:
    """A measured run in whole minutes, rounded up, at least 1 (what a chapter states)."""
    return max(1, math.ceil(seconds / 60))


def with_reading_minutes(first_cell: str, minutes: int) -> str:
    """The first cell's text with its stated reading minutes replaced (its run minutes kept); unchanged when it states none."""
    return STATED.sub(lambda m: m[0].replace(f"about {m[1]} min ·", f"about {minutes} min ·", 1), first_cell, count=1)


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


# The README's chapter and exercise tables end each row with the notebook's run time, "| ≈ 20 s |" (a chapter row
# links notebooks/NAME.ipynb; an exercise row links its solution, exercises/solutions/NAME.ipynb, whose run it is).
README_ROW = re.compile(r"^(\|[^\n]*?\]\(((?:notebooks|exercises/solutions)/\w+\.ipynb)\)[^\n]*\| )≈ (\d+) (s|min)", re.MULTILINE)


def readme_times(text: str) -> dict[str, float]:
    """The README's stated run times: repository-relative notebook path → seconds."""
    return {row[1]: float(row[2]) * (60 if row[3] == "min" else 1) for row in README_ROW.findall(text)}


def readme_with_measured_times(text: str, measured: dict[str, float]) -> str:
    """The README with every stated run time replaced by the measured one, said as :func:`spoken_time` says it."""
    return README_ROW.sub(lambda m: m[1] + spoken_time(measured[m[2]]), text)


#: An exercise's first cell (starter and solution) states its solution's run: "*Run: about 15 s on 2 cores (measured) · …".
EXERCISE_RUN = re.compile(r"(\*Run: about )\d+ (?:s|min)( on 2 cores \(measured\))")


def with_exercise_run_time(first_cell: str, seconds: float) -> str:
    """An exercise's first cell with its stated run replaced by ``seconds``, said as :func:`spoken_time` says it."""
    return EXERCISE_RUN.sub(lambda m: m[1] + spoken_time(seconds).removeprefix("≈ ") + m[2], first_cell)


#: The column after the run time: a chapter's stated reading minutes, an exercise's estimated solving minutes.
GUIDE_MINUTES = re.compile(r"^(\| (\w+) · [^|]+\|[^|]*\| ≈ \d+ (?:s|min) \| )(\d+) min( \|)", re.MULTILINE)


def guide_minutes(text: str, exercise: bool = False) -> dict[str, int]:
    """The guide's column after the run time, chapters' (reading) or exercises' (solving): number → minutes."""
    part = text.split(EXERCISES_START, 1)[exercise]
    return {number: int(minutes) for _, number, minutes, _ in GUIDE_MINUTES.findall(part)}


def with_guide_minutes(text: str, minutes: dict[str, int], exercise: bool = False) -> str:
    """The guide with the column after the run time set from ``minutes`` (number → minutes), in one of its tables."""
    parts = text.split(EXERCISES_START, 1)
    parts[exercise] = GUIDE_MINUTES.sub(lambda m: f"{m[1]}{minutes[m[2]]} min{m[4]}", parts[exercise])
    return EXERCISES_START.join(parts)


def with_measured_times(text: str, root: Path, measured: dict[str, float]) -> str:
    """The guide with every stated run time replaced by the measured one, said as :func:`spoken_time` says it."""
    chapters, exercises = text.split(EXERCISES_START, 1)

    def fill(part: str, exercise: bool) -> str:
        return GUIDE_ROW.sub(lambda m: m[1] + spoken_time(measured[_guide_notebook(root, m[2], exercise)]) + m[5], part)

    return fill(chapters, False) + EXERCISES_START + fill(exercises, True)
