"""Where the workbook's optional pieces are: an environment variable first, else found from the working folder up.

Introduced in Chapter 0 (the environment), used by Chapters 5 and 6.

``harness`` is a library: installed into any environment, it cannot know where a checkout of the
workbook is, so it never derives a path from where its own files lie. The pieces that live
outside the package — the public data (``shared/data``), the pinned Node MCP servers
(``mcp_servers/node``), the reader's ``.env`` — are named by an environment variable, or found the
way git finds ``.git``: in the working folder or the nearest folder above it that has them. A
notebook runs in ``notebooks/``, so the checkout above it is found; a script elsewhere names them.
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


def located(env_var: str, relative: str) -> Path | None:
    """``$env_var`` when set (None if it names nothing), else :func:`find_upward` of ``relative``."""
    named = os.environ.get(env_var, "").strip()
    if named:
        path = Path(named).expanduser()
        return path if path.exists() else None
    return find_upward(relative)
