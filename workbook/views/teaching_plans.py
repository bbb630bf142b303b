"""The instructor's guide's plans, block by block: minutes that come from the clock and add up to the plan.

notebooks/INSTRUCTORS.md gives each plan (90 minutes, half day, full day) as a table of blocks:

    | min | block | minutes from |
    | 15 | Chapter 0 live: … | reading 14 + run 1 |
    | 19 | Chapter 5c read: … | reading 19 |
    | 31 | Exercise 3 in the room: … | solving 30 (estimate) + run 1 |
    | 8 | Questions, and slack | the rest |
    | **90** | **total** | |

A chapter block takes the chapter's stated reading minutes (the reading clock's, workbook.views.reading_time) and,
when the room runs it live, its stated run minutes; an exercise block takes the exercise's stated solving time
(an estimate, its header says so) and its solution's measured run. Other blocks (a break, a diagram the
instructor shows) are the instructor's choice, and the one block whose source is "the rest" is the slack that
makes the plan add up. The plans used to name chapters without minutes, and the 90-minute one asked for more
than 90 minutes of the chapters' own stated reading: a plan that cannot be kept is worse than none, so the
sums are computed and tested, and scripts/state_reading_times.py rewrites the computed blocks and the slack
when a chapter's time changes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from workbook.views.course import number_of

#: A plan's heading names its length: "### 90 minutes: …", "### Half day, 210 minutes: …".
PLAN = re.compile(r"^### (.*?(\d+) minutes.*)$", re.MULTILINE)
BLOCK = re.compile(r"^\| (\d+) \| ([^|]+?) \| ([^|]*?) \|$", re.MULTILINE)
TOTAL = re.compile(r"^\| \*\*(\d+)\*\* \| \*\*total\*\* \| *\|$", re.MULTILINE)
SLACK = "the rest"
_CHAPTER = re.compile(r"^Chapter (\w+) (live|read)\b")
_EXERCISE = re.compile(r"^Exercise (\d+)\b")
#: An exercise's header: "*Run: about 30 s on 2 cores (measured) · Solving: about 30 min (an estimate)*".
SOLVING = re.compile(r"Solving: about (\d+) min \(an estimate\)")


@dataclass(frozen=True)
class Block:
    """One row of a plan: its minutes, what happens, and where the minutes come from."""

    minutes: int
    what: str
    source: str


@dataclass(frozen=True)
class Plan:
    """A plan's heading, the length it states, its blocks in order and the total its last row states (None: no row)."""

    heading: str
    length: int
    blocks: tuple[Block, ...]
    total: int | None


def _sections(text: str) -> list[tuple[re.Match[str], str]]:
    """Each plan heading with the text up to the next heading of any level (its table)."""
    found = list(PLAN.finditer(text))
    out = []
    for match in found:
        rest = text[match.end():]
        end = re.search(r"^#{1,3} ", rest, re.MULTILINE)
        out.append((match, rest[: end.start()] if end else rest))
    return out


def plans(text: str) -> list[Plan]:
    """Every plan in the guide, read from its heading and its table."""
    out = []
    for match, body in _sections(text):
        total = TOTAL.search(body)
        blocks = tuple(Block(int(m[1]), m[2].strip(), m[3].strip()) for m in BLOCK.finditer(body))
        out.append(Plan(match[1], int(match[2]), blocks, int(total[1]) if total else None))
    return out


def computed_source(block: Block, chapters: dict[str, tuple[int, int]], exercises: dict[str, tuple[int, int]]) -> str | None:
    """What the block's "minutes from" must say when its minutes are computed, or None when they are the instructor's.

    ``chapters``: the course's number → (stated reading minutes, stated run minutes);
    ``exercises``: the exercise's number → (estimated solving minutes, its solution's run minutes).
    """
    chapter, exercise = _CHAPTER.match(block.what), _EXERCISE.match(block.what)
    if chapter:
        reading, run = chapters[chapter[1]]
        return f"reading {reading} + run {run}" if chapter[2] == "live" else f"reading {reading}"
    if exercise:
        solving, run = exercises[exercise[1]]
        return f"solving {solving} (estimate) + run {run}"
    return None


def source_minutes(source: str) -> int:
    """The minutes a computed source adds up to: 'reading 14 + run 1' → 15."""
    return sum(int(n) for n in re.findall(r"\d+", source))


def plan_problems(plan: Plan, chapters: dict[str, tuple[int, int]], exercises: dict[str, tuple[int, int]]) -> list[str]:
    """One sentence per way the plan fails to add up or to use the stated times; [] when it holds."""
    problems = []
    for block in plan.blocks:
        expected = computed_source(block, chapters, exercises)
        if expected is not None and (block.source != expected or block.minutes != source_minutes(expected)):
            problems.append(f"{plan.heading}: '{block.what[:40]}' should be {source_minutes(expected)} min ({expected}), "
                            f"not {block.minutes} ({block.source})")
    added = sum(b.minutes for b in plan.blocks)
    if not added == plan.total == plan.length:
        problems.append(f"{plan.heading}: the blocks add up to {added} min, the total row says {plan.total}, "
                        f"the plan is {plan.length}")
    if [b.source for b in plan.blocks].count(SLACK) != 1:
        problems.append(f"{plan.heading}: exactly one block takes '{SLACK}' (the slack)")
    return problems


def with_computed_blocks(text: str, chapters: dict[str, tuple[int, int]], exercises: dict[str, tuple[int, int]]) -> str:
    """The guide with every computed block rewritten from the stated times and each plan's slack re-balanced.

    Raises ValueError when a plan no longer fits its length (the slack would go below zero): a plan must then be
    cut by hand, not stretched by a script.
    """
    pieces, last = [], 0
    for match, body in _sections(text):
        start = match.end()
        pieces.append(text[last:start])
        pieces.append(_rebalanced(match[1], int(match[2]), body, chapters, exercises))
        last = start + len(body)
    return "".join(pieces) + text[last:]


def _rebalanced(heading: str, length: int, body: str, chapters: dict[str, tuple[int, int]],
                exercises: dict[str, tuple[int, int]]) -> str:
    """One plan's table with its computed blocks rewritten and its slack set to what the plan's length leaves."""
    def computed(m: re.Match[str]) -> str:
        expected = computed_source(Block(int(m[1]), m[2].strip(), m[3].strip()), chapters, exercises)
        return m[0] if expected is None else f"| {source_minutes(expected)} | {m[2].strip()} | {expected} |"

    body = BLOCK.sub(computed, body)
    fixed = sum(int(m[1]) for m in BLOCK.finditer(body) if m[3].strip() != SLACK)
    slack = length - fixed
    if slack < 0:
        raise ValueError(f"The plan '{heading}' needs {fixed} min without slack, over its {length}: cut a block by hand.")
    body = BLOCK.sub(lambda m: f"| {slack} | {m[2].strip()} | {SLACK} |" if m[3].strip() == SLACK else m[0], body)
    return TOTAL.sub(f"| **{length}** | **total** | |", body)


def exercise_times(root: Path, run_minutes_of: dict[str, int]) -> dict[str, tuple[int, int]]:
    """The exercise's number → (its header's estimated solving minutes, its solution's run minutes).

    ``run_minutes_of`` maps a repository-relative solution path to its run minutes.
    """
    out = {}
    for starter in sorted((Path(root) / "exercises").glob("[0-9][0-9]_*.ipynb")):
        solving = SOLVING.search(starter.read_text(encoding="utf-8"))
        if not solving:
            raise ValueError(f"{starter.name} states no 'Solving: about N min (an estimate)'.")
        solution = (Path("exercises") / "solutions" / starter.name).as_posix()
        out[number_of(starter)] = (int(solving[1]), run_minutes_of[solution])
    return out
