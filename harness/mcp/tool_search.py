"""``search_tools``: the one pinned tool that finds deferred MCP tools and makes them callable.

Introduced in Chapter 5 (MCP integration).

The skeleton every tool-search system shares (Codex CLI, Claude Code, PizzaPi): deferred tools are
ranked with BM25 (:class:`harness.catalog.ToolCatalog`), the hits are returned to the model and
*activated* — shown, and so callable, from the next model call on. Three details users asked for:

* an exact name always comes first — the canonical name, the server's own tool name or
  ``server/tool`` — because BM25 alone can rank it below tools that merely repeat its words
  (Codex bug #21503: prepend exact matches, drop duplicates, then cut to the limit);
* a search that finds nothing returns the names of what exists (PizzaPi), never silence — or,
  above 200 tools, each server's tool count, since an unranked dump is what users complain of;
* discovered tools stay for the session (``keep_loaded=True``) or are dropped when the agent loop
  calls :meth:`ToolSearch.end_turn`.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any, Sequence

from harness.catalog import ToolCatalog
from harness.mcp.mcp_tool import MCPTool
from harness.tools import Tool

SEARCH_TOOL_NAME = "search_tools"
DEFAULT_LIMIT = 5
MAX_LIMIT = 50
#: Above this many deferred tools, a failed search lists servers and their tool counts instead of names.
MAX_LISTED_NAMES = 200

_SEARCH_DESCRIPTION = (
    "Search the tools that are available but not loaded yet, by what you want to do or by a tool's name. "
    "Returns matching tools with their names, descriptions and parameters; the tools found become callable "
    "on your next step. Use it whenever no loaded tool fits the task."
)


def _names_of(t: Tool) -> set[str]:
    """Every name under which ``t`` counts as an exact match (compared case-insensitively)."""
    names = {t.name}
    if isinstance(t, MCPTool):
        names |= {t.raw_name, t.identity}
    return {n.lower() for n in names}


def _parameters(t: Tool) -> dict[str, str]:
    """``{parameter: "type (required)"}``: a compact view of the input schema."""
    required = set(t.required)
    out = {}
    for pname, spec in (t.input_schema.get("properties") or {}).items():
        kind = spec.get("type", "any") if isinstance(spec, dict) else "any"
        kind = "|".join(kind) if isinstance(kind, list) else str(kind)
        out[pname] = f"{kind} (required)" if pname in required else kind
    return out


class ToolSearch:
    """Always-loaded tools, deferred tools behind ``search_tools``, and what searches have activated."""

    def __init__(self, loaded: Sequence[Tool], deferred: Sequence[Tool], *, keep_loaded: bool = True) -> None:
        self.loaded = list(loaded)
        self.keep_loaded = keep_loaded
        self._catalog = ToolCatalog(deferred)
        self._activated: dict[str, Tool] = {}
        self.tool = Tool(
            name=SEARCH_TOOL_NAME,
            description=_SEARCH_DESCRIPTION,
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What you want to do, or a tool name."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT,
                              "description": "How many tools to return at most."},
                },
                "required": ["query"],
            },
            fn=self.search,
            tags=frozenset({"discovery"}),
        )

    @property
    def deferred(self) -> list[Tool]:
        return self._catalog.tools

    @property
    def activated(self) -> list[Tool]:
        return list(self._activated.values())

    def exact_matches(self, query: str) -> list[Tool]:
        """Deferred tools whose name equals the query or one of its words, in the order the query names them."""
        words = [query.strip().lower(), *(w.lower() for w in re.split(r"[\s,]+", query.strip()) if w)]
        hits = [t for w in words for t in self._catalog.tools if w in _names_of(t)]
        return list({t.name: t for t in hits}.values())  # a dict keeps each tool at its first position

    def find(self, query: str, limit: int = DEFAULT_LIMIT) -> list[Tool]:
        """Exact-name matches first, then BM25's ranking; no duplicates; at most ``limit`` tools."""
        if not isinstance(query, str) or not query.strip():
            raise ValueError("search_tools needs a non-empty query: describe the task or name a tool.")
        if isinstance(limit, float) and limit.is_integer():  # JSON Schema counts 5.0 as an integer
            limit = int(limit)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            raise ValueError(f"limit must be a whole number from 1 to {MAX_LIMIT}, got {limit!r}.")
        ranked = self.exact_matches(query) + [r.tool for r in self._catalog.search(query)]
        return list({t.name: t for t in ranked}.values())[:limit]

    def search(self, query: str, limit: int = DEFAULT_LIMIT) -> str:
        """Run ``search_tools``: the matches as compact JSON, activated; or the names that exist."""
        found = self.find(query, limit)
        for t in found:
            self._activated[t.name] = t
        if not found:
            payload: dict[str, Any] = {
                "matches": [],
                "note": f"No tool matched {query.strip()!r}. These tools exist; search again with words "
                        "from their names, or with an exact name.",
                "available": self._available(),
            }
        else:
            payload = {
                "matches": [{"name": t.name, "description": t.description, "parameters": _parameters(t)}
                            for t in found],
                "note": "These tools are now loaded: call them by name.",
            }
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))

    def _available(self) -> list[str] | dict[str, int]:
        """Every deferred tool's name; for a very large catalog, tools per server (a dump would drown the model)."""
        tools = self._catalog.tools
        if len(tools) <= MAX_LISTED_NAMES:
            return [t.name for t in tools]
        return dict(Counter(t.domain or "local" for t in tools))

    def tools_for_turn(self) -> list[Tool]:
        """What to show the model now: always-loaded tools, activated ones, and ``search_tools`` if anything is deferred."""
        pinned = [self.tool] if len(self._catalog) else []
        return self.loaded + self.activated + pinned

    def end_turn(self) -> None:
        """Called by the agent loop when a user turn ends: unloads discoveries unless ``keep_loaded``."""
        if not self.keep_loaded:
            self._activated.clear()

    def reset(self) -> None:
        """Forget every discovery (PizzaPi's ``/tool-search reset``)."""
        self._activated.clear()
