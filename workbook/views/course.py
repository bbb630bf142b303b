"""The course's chapters and which of them make the core path: the one definition everything else reads.

Chapter 0's course map (:func:`workbook.views.diagrams.course_map`) draws it, tests/test_reading_time.py times it,
and the README, the instructor's guide and Chapter 0 state it in one line each (:func:`core_path_line`), which
:func:`stated_paths` reads back so that a test can hold them to this list and to the clock's minutes. Before there was one list the
reading-time test counted 5b in the core path while the map, the guide and Chapter 5's last part put it under
"going further": two answers to the question a learner asks first (what must I read?).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Chapter:
    """One notebook of the course: its number as the course says it ('5b'), its title, the piece it explains."""

    number: str
    title: str
    piece: str
    core: bool


COURSE = (
    Chapter("0", "Start here", "tools, the registry, tokens, the two models", True),
    Chapter("1", "The tool cliff", "what many tools cost in tokens and accuracy", True),
    Chapter("2", "Catalog and selector", "BM25 over tools: why a tool ranks where it does", True),
    Chapter("3", "Transcript queries", "the per-turn loop and the query it searches with", True),
    Chapter("4", "Pinned discovery", "a search tool the model calls itself", True),
    Chapter("5", "MCP integration", "real servers, deferral, tool search, the prompt cache", True),
    Chapter("7", "Use it in your agent", "harness serve: the proxy real clients use", True),
    Chapter("5b", "MCP operations", "config checks, failing and poisoned servers", False),
    Chapter("5c", "The whole loop, real model", "success, where runs fail, a loop guard", False),
    Chapter("6a", "Public benchmarks", "fielded, dense, hybrid on test rows", False),
    Chapter("6b", "Scale and speed", "misses, a fast BM25, catalog size", False),
    Chapter("6c", "Learned, end to end", "query logs, usage priors, end to end", False),
    Chapter("8a", "Zero-shot ideas", "servers first, query planning, re-ranking", False),
    Chapter("8b", "Embedder and query time", "the default, the embedder, query time", False),
)
#: The chapters a learner reads in order; everything else is optional depth read after them.
CORE_PATH = tuple(ch.number for ch in COURSE if ch.core)
GOING_FURTHER = tuple(ch.number for ch in COURSE if not ch.core)

#: The line the README, the guide and Chapter 0 each state once, as :func:`core_path_line` writes it.
PATH_LINE = re.compile(r"Core path: Chapters ([^(]+?) \(about (\d+) min of reading by the course's clock\); "
                       r"going further: ([^.]+)\.")
_NUMBER = re.compile(r"\b\d{1,2}[a-z]?\b")


def number_of(notebook: Path) -> str:
    """The course's number of a chapter's notebook: notebooks/05b_mcp_operations.ipynb → '5b', 00_start_here → '0'."""
    prefix = Path(notebook).name.split("_")[0]
    return prefix.lstrip("0") or "0"


def core_path_line(minutes: int) -> str:
    """The line that states the core path: its chapters, its reading time by the clock, and what goes further."""
    *first, last = CORE_PATH
    return (f"Core path: Chapters {', '.join(first)} and {last} (about {minutes} min of reading by the course's "
            f"clock); going further: {', '.join(GOING_FURTHER)}.")


def stated_paths(text: str) -> list[tuple[tuple[str, ...], int, tuple[str, ...]]]:
    """Every core-path line in ``text``, read back: (core chapters, stated minutes, going-further chapters)."""
    return [(tuple(_NUMBER.findall(core)), int(minutes), tuple(_NUMBER.findall(further)))
            for core, minutes, further in PATH_LINE.findall(text)]
