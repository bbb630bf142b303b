"""The ways of loading tools the chapters compare end to end: all of them, BM25's top k per turn, every tool
deferred behind ``search_tools``, and the top k with ``search_tools`` beside them.

Introduced in Chapter 5 (``notebooks/05_mcp_integration.ipynb``, "Success and cost"); Chapter 5c runs the
real model under the same ways. Each is what :func:`workbook.evaluation.scenarios.run_scenarios` takes: a
``selector`` (per-turn choice over the catalog) and a ``deferral`` (tools loaded during a run).
"""
from __future__ import annotations

from typing import Callable, TypedDict

from harness.selection.catalog import ToolCatalog
from harness.selection.discovery import Deferral, ToolSearch
from harness.selection.ranking import DEFAULT_K, Selector


class LoadingStrategy(TypedDict, total=False):
    """What :func:`workbook.evaluation.scenarios.run_scenarios` takes to run one way of loading tools:
    ``selector`` (per-turn choice over the catalog) and ``deferral`` (tools loaded during a run)."""

    selector: Callable[[ToolCatalog], Selector]
    deferral: Callable[[ToolCatalog], Deferral]


def _nothing_per_turn(catalog: ToolCatalog) -> Selector:
    return Selector.over(ToolCatalog([]))


def _every_tool(catalog: ToolCatalog) -> Deferral:
    tools = list(catalog.tools)
    return Deferral(extra_tools=lambda: tools)


def _deferred_search(catalog: ToolCatalog, keep_loaded: bool = True) -> Deferral:
    search = ToolSearch([], catalog.tools, keep_loaded=keep_loaded)
    return search.deferral(known=[t.name for t in catalog.tools], hint="Call search_tools to load it.")


def _search_beside(catalog: ToolCatalog) -> Deferral:
    return ToolSearch([], catalog.tools).deferral()


def loading_strategies(k: int | None = None) -> dict[str, LoadingStrategy]:
    """Every tool on every turn (in one fixed order); BM25's top ``k`` per turn (the transcript
    query, :data:`harness.selection.ranking.DEFAULT_K` when None); every tool deferred behind ``search_tools``
    with found tools kept loaded for the session; and the top ``k`` with ``search_tools`` pinned beside them
    (Chapter 4's ranked discovery tool: what it finds is callable for the session)."""
    k = DEFAULT_K if k is None else k
    return {
        "all tools": {"selector": _nothing_per_turn, "deferral": _every_tool},
        f"per-turn top-{k}": {"selector": lambda c: Selector.over(c, k=k)},
        "deferred search, keep loaded": {"selector": _nothing_per_turn, "deferral": _deferred_search},
        f"per-turn top-{k} + search_tools": {"selector": lambda c: Selector.over(c, k=k), "deferral": _search_beside},
    }
