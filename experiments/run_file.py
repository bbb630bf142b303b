"""A long run's results as a JSON-lines file that resumes: one row per line, appended as each finishes.

Introduced with the real model's per-step rows (Chapter 3, :mod:`experiments.real_steps`); its
whole-task runs (Chapter 5c, :mod:`experiments.real_tasks`) are kept the same way. A run
killed mid-write leaves a last line without its newline: :func:`trim_partial_line` cuts it before new
rows are appended, and :func:`read_rows` skips it, so the resumed run does that row again.
"""
from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar

if TYPE_CHECKING:
    from importlib.abc import Traversable  # importlib.resources.abc from Python 3.11 on

RowT = TypeVar("RowT")


def read_rows(path: str | Path | Traversable, make: Callable[..., RowT]) -> list[RowT]:
    """The rows saved so far, each built by ``make(**fields)`` (none when the file is absent)."""
    path = Path(path) if isinstance(path, str) else path
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(make(**json.loads(line)))
        except (json.JSONDecodeError, TypeError):
            continue  # a line cut off by a killed run; the resumed run does it again
    return rows


def trim_partial_line(path: Path) -> None:
    """Cut a last line a killed run left without its newline, so appended rows start on a line of their own."""
    if path.is_file() and path.stat().st_size:
        text = path.read_bytes()
        if not text.endswith(b"\n"):
            path.write_bytes(text[: text.rfind(b"\n") + 1])


def append_row(path: Path, row: Any) -> None:  # Any: a dataclass instance, written as its fields
    """Append one row as a JSON line, flushed, so a run stopped after it keeps it."""
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(asdict(row), ensure_ascii=False) + "\n")


def run_parser(description: str, *, configs: list[str] | None, configs_help: str, limit_help: str) -> argparse.ArgumentParser:
    """The command line every resumable real-model run takes: where its rows go, which configurations,
    a smoke-test limit, which scenario sets, the server's threads, and ``--report`` to print what the file holds."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", required=True, help="the JSON-lines file to append to (resumed when it exists)")
    parser.add_argument("--configs", nargs="+", default=configs, help=configs_help)
    parser.add_argument("--limit", type=int, default=None, help=limit_help)
    parser.add_argument("--splits", nargs="+", choices=("dev", "heldout"), default=["dev", "heldout"],
                        help="which scenario sets, in order (default: dev, then heldout)")
    parser.add_argument("--threads", type=int, default=None, help="llama-server threads (default: all cores but one)")
    parser.add_argument("--report", action="store_true", help="print the table of what --out holds, and run nothing")
    return parser
