"""The tool catalog: Chapter 2's BM25 ranker over every tool, behind the selector.

Introduced in Chapter 2 (``notebooks/02_catalog_and_selector.ipynb``); Chapter 3's loop selects
from it every turn (through :class:`harness.selection.ranking.Selector`) and Chapter 4's search ranks with it.

Each tool becomes one BM25 document: its name (whole and split), its description, and its
parameter names and descriptions (the same ``search_text`` Codex CLI indexes). The scores are
rank_bm25's ``BM25Okapi`` to the last bit, computed by the catalog BM25 of
:mod:`harness.selection.bm25_index` (Chapter 2 checks the two agree); ``explain`` reads its
factors from that same index. ``rank`` answers the one ranking contract
(:class:`harness.selection.ranking.Ranker`): the tools that share a term with the query, best first — a
tool that shares none is noise, not a candidate.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from harness.selection.ranking import DEFAULT_K, Selector
from harness.core.registry import DuplicateToolError, ToolRegistry
from harness.selection.bm25_index import CatalogBM25, InvertedBM25
from harness.core.text import tokenize
from harness.core.tools import Tool


def tool_document(t: Tool) -> str:
    """The text BM25 indexes for a tool: :attr:`Tool.search_text`."""
    return t.search_text


@dataclass(frozen=True)
class TermContribution:
    """Why one query term added what it did to one tool's score."""

    term: str
    idf: float
    tf: int
    tf_part: float  # tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl))

    @property
    def contribution(self) -> float:
        return self.idf * self.tf_part


class ToolCatalog:
    """Every tool the agent could use, ranked by BM25 (k1 1.5, b 0.75, rank_bm25's idf floor)."""

    name = "catalog-bm25"

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            if t.name in self._tools:
                raise DuplicateToolError(f"The catalog already has a tool named {t.name!r}; tool names must be unique.")
            self._tools[t.name] = t
        self.ids = list(self._tools)
        self.bm25 = CatalogBM25(self.ids, [tool_document(t) for t in self._tools.values()])

    @classmethod
    def from_registry(cls, registry: ToolRegistry) -> "ToolCatalog":
        return cls(iter(registry))

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def get(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except KeyError:
            raise KeyError(f"No tool named {name!r} in the catalog.") from None

    def all_names(self) -> list[str]:
        return list(self.ids)

    @property
    def tools(self) -> list[Tool]:
        return list(self._tools.values())

    @property
    def index(self) -> InvertedBM25 | None:
        """The BM25 index (None for an empty catalog), for chapters that inspect its statistics."""
        return self.bm25.index

    def scores(self, query: str) -> np.ndarray:
        """Every tool's BM25 score for ``query``, in catalog order (all 0 for a stop-word-only query)."""
        return self.bm25.scores(query)

    def rank_with_scores(self, query: str, k: int | None = None) -> tuple[list[str], np.ndarray]:
        """:meth:`rank` and :meth:`scores` from one pass over the index."""
        return self.bm25.rank_with_scores(query, k)

    def rank(self, query: str, k: int | None = None) -> list[str]:
        """Names of the tools sharing a term with ``query``, best first (ties keep catalog order)."""
        return self.bm25.rank(query, k)

    def select(self, query: str, k: int = DEFAULT_K) -> list[Tool]:
        """The ``k`` best tools for ``query`` (a :class:`~harness.selection.ranking.Selector` with no pins)."""
        return Selector(self, self.tools, k=k).select(query)

    def explain(self, query: str, tool: Tool | str) -> list[TermContribution]:
        """Each query term's share of ``tool``'s BM25 score; the contributions sum to the score."""
        name = tool if isinstance(tool, str) else tool.name
        doc = self.ids.index(self.get(name).name)
        if self.index is None:
            return []
        return [TermContribution(term, *self.index.term_stats(term, doc)) for term in tokenize(query)]
