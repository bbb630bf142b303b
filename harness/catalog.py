"""The tool catalog: BM25 over every tool, and the per-turn selector built on it.

Introduced in Chapter 2 (``notebooks/02_catalog_and_selector.ipynb``); Chapter 3's loop calls
``select`` every turn and Chapter 5 ranks deferred MCP tools with it.

Each tool becomes one BM25 document: its name (whole and split), its description, and its
parameter names and descriptions (the same ``search_text`` Codex CLI indexes). ``select``
returns pinned tools first, then the best-scoring others, and never a tool whose score is
≤ 0: a tool that shares no term with the query is noise, not a candidate.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from rank_bm25 import BM25Okapi

from harness.registry import DuplicateToolError, ToolRegistry
from harness.text import tokenize
from harness.tools import Tool


def tool_document(t: Tool) -> str:
    """The text BM25 indexes for a tool: :attr:`Tool.search_text`."""
    return t.search_text


@dataclass(frozen=True)
class Ranked:
    tool: Tool
    score: float
    pinned: bool = False


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
    """Every tool the agent could use, indexed with rank_bm25's BM25Okapi."""

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            if t.name in self._tools:
                raise DuplicateToolError(f"The catalog already has a tool named {t.name!r}; tool names must be unique.")
            self._tools[t.name] = t
        self._order = list(self._tools)
        self._docs = [tokenize(tool_document(t)) for t in self._tools.values()]
        # rank_bm25 divides by the corpus size, so an empty catalog gets no index at all.
        self._bm25 = BM25Okapi(self._docs) if self._docs else None

    @classmethod
    def from_registry(cls, registry: ToolRegistry) -> "ToolCatalog":
        return cls(iter(registry))

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def get(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except KeyError:
            raise KeyError(f"No tool named {name!r} in the catalog.") from None

    def all_names(self) -> list[str]:
        return list(self._order)

    @property
    def tools(self) -> list[Tool]:
        return [self._tools[n] for n in self._order]

    @property
    def bm25(self) -> BM25Okapi | None:
        """The underlying rank_bm25 index (None for an empty catalog), for chapters that inspect it."""
        return self._bm25

    def scores(self, query: str) -> dict[str, float]:
        """Every tool's BM25 score for ``query`` (all zero for an empty or stop-word-only query)."""
        terms = tokenize(query)
        if self._bm25 is None:
            return {}
        if not terms:
            return dict.fromkeys(self._order, 0.0)
        return dict(zip(self._order, (float(s) for s in self._bm25.get_scores(terms))))

    def search(self, query: str, k: int | None = None) -> list[Ranked]:
        """Tools with a positive score, best first (ties keep catalog order)."""
        if k is not None and k <= 0:
            raise ValueError(f"k must be a positive number of tools, got {k}.")
        scored = [(s, i, n) for i, (n, s) in enumerate(self.scores(query).items()) if s > 0]
        scored.sort(key=lambda x: (-x[0], x[1]))
        return [Ranked(self._tools[n], s) for s, _, n in scored[:k]]

    def _check_pins(self, must_include: Sequence[str]) -> None:
        unknown = [n for n in must_include if n not in self._tools]
        if unknown:
            raise KeyError(
                f"must_include names tool(s) not in the catalog: {', '.join(unknown)}. "
                f"The catalog has {len(self)} tools."
            )

    def rank(self, query: str, k: int = 7, must_include: Sequence[str] | None = None) -> list[Ranked]:
        """Pinned tools first (in the order given), then the ``k`` best others with score > 0."""
        pins = list(dict.fromkeys(must_include or ()))
        self._check_pins(pins)
        if k <= 0:
            raise ValueError(f"k must be a positive number of tools, got {k}.")
        scores = self.scores(query)
        pinned = [Ranked(self._tools[n], scores.get(n, 0.0), pinned=True) for n in pins]
        rest = [r for r in self.search(query) if r.tool.name not in pins][:k]
        return pinned + rest

    def select(self, query: str, k: int = 7, must_include: Sequence[str] | None = None) -> list[Tool]:
        """The tools to show the model this turn: pinned ones plus up to ``k`` ranked ones."""
        return [r.tool for r in self.rank(query, k, must_include)]

    def explain(self, query: str, tool: Tool | str) -> list[TermContribution]:
        """Each query term's share of ``tool``'s BM25 score; the contributions sum to the score."""
        name = tool if isinstance(tool, str) else tool.name
        doc = self._docs[self._order.index(self.get(name).name)]
        bm = self._bm25
        if bm is None:
            return []
        out = []
        for term in tokenize(query):
            tf = doc.count(term)
            denom = tf + bm.k1 * (1 - bm.b + bm.b * len(doc) / bm.avgdl)
            out.append(TermContribution(term, float(bm.idf.get(term, 0.0)), tf, tf * (bm.k1 + 1) / denom))
        return out
