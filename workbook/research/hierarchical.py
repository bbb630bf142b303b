"""Hierarchical retrieval: rank the servers first, then the tools inside the best servers.

Introduced in Chapter 8a (``notebooks/08a_zero_shot_ideas.ipynb``).

MCP-Zero and Tool-to-Agent (2025) retrieve in two steps: a server's own description and the
text of all its tools say what the *server* is for ("a Word document server", "a trends hub"),
which one tool's terse description often does not; and the tools one task needs tend to live on
a few servers. So each server becomes one document (its name, its description, and its tools'
names and first sentences), the servers are ranked by the same hybrid search as tools
(fielded BM25 and MiniLM fused by RRF), and the tools of the top ``servers`` servers come first,
in the tool-level ranking's order; every other tool follows, in that order too, so nothing is
lost. A server the query names (a name of two or more parts: "Context7", "K-POP") is chosen first,
through a :class:`~harness.selection.ranking.Selector` as a tool the query names would be. One
knob: how many servers.
"""
from __future__ import annotations

from typing import Sequence

from harness.selection.ranking import Ranker, Selector, check_k, name_index, require_tools
from harness.retrieval.dense import DenseRetriever, Encoder
from harness.retrieval.fielded import FieldedBM25
from harness.retrieval.hybrid import HybridRetriever
from harness.retrieval.records import CatalogTool
from harness.core.text import first_sentence, split_identifier

def server_records(tools: Sequence[CatalogTool]) -> list[CatalogTool]:
    """One record per server, in first-seen order: its description, then each tool's name in words
    and first sentence (what hybrid search indexes for the server)."""
    grouped: dict[str, list[CatalogTool]] = {}
    for t in tools:
        grouped.setdefault(t.server, []).append(t)
    records = []
    for server, members in grouped.items():
        about = members[0].server_description
        listing = "; ".join(f"{' '.join(split_identifier(t.name))}: {first_sentence(t.description, 160)}" for t in members)
        extra = {"server_description": about, "server_title": members[0].extra.get("server_title", "")}
        records.append(CatalogTool(id=server, name=server, description=f"{about} Tools: {listing}".strip(),
                                   server=server, extra=extra))
    return records


class HierarchicalRetriever:
    """Servers ranked by hybrid search over server documents; their tools first, by a tool-level ranking."""

    name = "hierarchical"

    def __init__(self, tools: Sequence[CatalogTool], *, servers: int = 3, encoder: Encoder | None = None,
                 tool_ranker: Ranker | None = None) -> None:
        require_tools(tools)
        check_k(servers)
        self.servers = servers
        self.ids = [t.id for t in tools]
        self._server_of = {t.id: t.server for t in tools}
        encoder = encoder or Encoder()
        self.tool_ranker = tool_ranker or HybridRetriever(tools, dense=DenseRetriever(tools, encoder=encoder))
        records = server_records(tools)
        named = name_index((n, r.id) for r in records for n in (r.name, r.id))
        lexical = Selector.around(FieldedBM25(records), exact_first=True, names=named)
        hybrid = HybridRetriever(records, lexical=lexical, dense=DenseRetriever(records, encoder=encoder))
        self.server_ranker = Selector.around(hybrid, exact_first=True, names=named)

    def top_servers(self, query: str) -> list[str]:
        """The ``servers`` best servers for ``query``, best first."""
        return self.server_ranker.rank(query, self.servers)

    def rank(self, query: str, k: int | None = None) -> list[str]:
        check_k(k)
        chosen = set(self.top_servers(query))
        ranked = self.tool_ranker.rank(query)
        seen = set(ranked)
        inside = [i for i in ranked if self._server_of[i] in chosen]
        unranked = [i for i in self.ids if i not in seen and self._server_of[i] in chosen]
        outside = [i for i in ranked if self._server_of[i] not in chosen]
        rest = [i for i in self.ids if i not in seen and self._server_of[i] not in chosen]
        return (inside + unranked + outside + rest)[:k]
