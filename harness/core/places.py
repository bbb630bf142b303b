"""Where the workbook's optional pieces are: an environment variable first, else found from the working folder up,
or — for the public data — beside the checkout the library runs from.

Introduced in Chapter 0 (the environment), used by Chapters 5 and 6.

``harness`` is a library: installed into any environment, it cannot know where a checkout of the
workbook is. The pieces that live outside the package — the pinned Node MCP servers
(``mcp_servers/node``), the reader's ``.env`` — are named by an environment variable, or found the
way git finds ``.git``: in the working folder or the nearest folder above it that has them. A
notebook runs in ``notebooks/``, so the checkout above it is found; a script elsewhere names them.

The public data is not looked for from the working folder up: an installed library run in a folder
under someone else's ``shared/`` (a temp folder, say) would find their data, and what it measures
would depend on where it runs. It is named by ``HARNESS_DATA``, or is ``../shared/data`` beside the
checkout the library is imported from (:func:`checkout_root`); an installed library has none.
"""
from __future__ import annotations

import os
from pathlib import Path


def find_upward(relative: str, start: Path | None = None) -> Path | None:
    """``folder/relative`` for the working folder (or ``start``) or the nearest folder above it that has it."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / relative
        if candidate.exists():
            return candidate
    return None


def checkout_root() -> Path | None:
    """The checkout of the workbook this library is imported from (``harness/`` beside ``pyproject.toml`` and
    ``workbook/``), or None when the library is installed."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() and (root / "workbook").is_dir() else None


def located(env_var: str, relative: str) -> Path | None:
    """``$env_var`` when set (None if it names nothing), else :func:`find_upward` of ``relative``."""
    named = os.environ.get(env_var, "").strip()
    if named:
        path = Path(named).expanduser()
        return path if path.exists() else None
    return find_upward(relative)
