"""Views: what a reader would rather see than read, as plain functions with thin widgets on top.

Each view is a pure function returning rows or HTML (unit-tested), plus a widget that only
re-renders that function's output when a control moves. Notebooks show the static HTML too,
so a notebook rendered without a kernel still shows the result. The mechanism diagrams
(:mod:`workbook.views.diagrams`) and the self-check questions (:mod:`workbook.views.selfcheck`)
are exported here, loaded on first use so that importing a light view stays light.
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    **dict.fromkeys(("Diagram", "request_layout", "per_turn_loop", "bm25_scoring", "deferral_and_search", "proxy",
                     "rrf_fusion", "course_map", "all_diagrams", "demo_rankings"), "diagrams"),
    **dict.fromkeys(("Question", "grade", "self_check", "static_html"), "selfcheck"),
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:  # Any: lazily loads a view function; each has its own type
    if name not in _EXPORTS:
        raise AttributeError(f"module 'workbook.views' has no attribute {name!r}")
    return getattr(importlib.import_module(f"workbook.views.{_EXPORTS[name]}"), name)
