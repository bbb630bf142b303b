"""The baseline: BM25 over each tool's name and description.

Introduced in Chapter 6a (``notebooks/06a_public_benchmarks.ipynb``) as the line every other retriever
must beat; it is what most tool-search systems ship (Codex CLI, mcpproxy, Stacklok's optimizer, the
Anthropic API's BM25 tool search). It is Chapter 2's one BM25 (:class:`~harness.selection.bm25_index.CatalogBM25`)
over a catalog's records; the chapters check it against rank_bm25, the reference, which the library does not need.
"""
from __future__ import annotations

from typing import Callable, Sequence

from harness.retrieval.records import CatalogTool
from harness.selection.bm25_index import CatalogBM25
from harness.selection.ranking import require_tools


def name_and_description(t: CatalogTool) -> str:
    return f"{t.name} {t.description}"


def bm25(tools: Sequence[CatalogTool], *, document: Callable[[CatalogTool], str] = name_and_description,
         name: str = "bm25") -> CatalogBM25:
    """BM25 over one text per tool (``document``: name and description by default), answering with the tools' ids."""
    require_tools(tools)
    return CatalogBM25([t.id for t in tools], [document(t) for t in tools], name=name)
