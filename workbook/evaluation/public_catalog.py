"""Public tool catalogs as harness tools: real MCP definitions, named as an MCP harness names them.

Introduced in Chapter 1 (real tools as distractors) and Chapter 2 (the selector on 527 real
MCP tools); Chapter 3 replays LiveMCPBench's step lists through it.

A public catalog's records (:class:`harness.retrieval.records.CatalogTool`) carry ids like
``filesystem/read_file``; a model API wants unique names of ``[A-Za-z0-9_-]``. Chapter 5's
:class:`harness.mcp.names.NameTable` gives each one the name a harness would
(``mcp__filesystem__read_file``), so the same :class:`harness.selection.catalog.ToolCatalog` indexes them.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from harness.selection.catalog import ToolCatalog
from harness.mcp.names import NameTable
from harness.retrieval.records import CatalogTool
from harness.core.tools import Tool


def catalog_of(records: Sequence[CatalogTool]) -> tuple[ToolCatalog, dict[str, str]]:
    """A ToolCatalog over the records under canonical MCP names, and canonical name → record id."""
    table = NameTable((r.server, r.name) for r in records)
    names = {r.id: table.name(r.server, r.name) for r in records}
    return ToolCatalog(r.to_tool(names[r.id]) for r in records), {n: i for i, n in names.items()}


class PublicCatalogRanker:
    """Chapter 2's BM25 over a public catalog under MCP names, answering with the records' ids (what its labels use)."""

    name = "catalog-bm25 (MCP names)"

    def __init__(self, records: Sequence[CatalogTool]) -> None:
        self.catalog, self.id_of = catalog_of(records)

    def rank(self, query: str, k: int | None = None) -> list[str]:
        return [self.id_of[n] for n in self.catalog.rank(query, k)]


def public_distractors(records: Iterable[CatalogTool], taken: set[str]) -> list[Tool]:
    """Real tool definitions as distractors: shown, never called, under their own names.

    Only records whose name is a valid, not-yet-used tool name are kept, so no two tools in a
    sweep share a name (a model could not tell them apart, and neither could the grader).
    """
    out: list[Tool] = []
    seen = set(taken)
    for r in records:
        if r.name in seen:
            continue
        try:
            out.append(r.to_tool())
        except ValueError:  # not a valid API tool name ("/v1/nutrition"): a model could not be shown it
            continue
        seen.add(r.name)
    return out
