"""A pinned discovery tool: how a model finds the tools the selector did not show it.

Introduced in Chapter 4 (``notebooks/04_pinned_discovery.ipynb``); Chapter 5's MCP tool search
builds on :class:`ToolSearch`.

Per-turn selection fails in two predictable places: a vague opener ("hi") that selects nothing,
and a mid-task pivot whose query is still dominated by the old task. A discovery tool pinned on
every turn lets the model ask. Three designs, compared in Chapter 4:

* ``list_available_tools()`` — every tool, one line each (costs tokens in the result);
* ``list_available_tools(filter_term)`` — only lines mentioning the filter's words;
* ``search_tools(query, limit)`` — BM25-ranked matches with their parameters, which become
  callable on the next turn (as Codex CLI and PizzaPi do); exact names first; when nothing
  matches, the names of what exists rather than silence.
"""
from __future__ import annotations

import json
import re
from typing import Sequence

from harness.catalog import ToolCatalog
from harness.text import tokenize
from harness.tools import Tool


def listing(tools: Sequence[Tool]) -> str:
    """``name — one-line summary``, a line per tool."""
    return "\n".join(f"{t.name} — {t.summary}" for t in tools)


def discovery_tool(catalog: ToolCatalog, *, filtered: bool = True) -> Tool:
    """``list_available_tools(filter_term=None)``: the catalog as one line per tool.

    With ``filtered=False`` the tool takes no argument and always lists everything.
    """
    def list_available_tools(filter_term: str | None = None) -> str:
        if not filter_term or not filter_term.strip():
            return listing(catalog.tools)
        wanted = set(tokenize(filter_term))
        hits = [t for t in catalog.tools if wanted & set(tokenize(f"{t.name} {t.description}"))]
        if not hits:
            return f"No tool mentions {filter_term!r}. All tools:\n" + listing(catalog.tools)
        return listing(hits)

    schema: dict = {"type": "object", "properties": {}}
    if filtered:
        schema["properties"]["filter_term"] = {
            "type": "string", "description": "Optional words; only tools whose name or description mention one are listed.",
        }
    return Tool(
        name="list_available_tools",
        description=(
            "List every tool you can use, one line each (name — what it does). Call this when no tool you "
            "have fits the request; then call the tool you need by its name."
        ),
        input_schema=schema,
        fn=list_available_tools,
        tags=frozenset({"discovery", "read"}),
    )


class ToolSearch:
    """``search_tools(query, limit)``: ranked search that also makes its matches callable.

    ``aliases`` maps other names a user or model may type (a raw MCP tool name, ``server/tool``)
    to catalog names, for the exact-name path. With ``keep_loaded`` found tools stay for the
    session; otherwise :meth:`end_turn` unloads them.
    """

    def __init__(self, catalog: ToolCatalog, *, keep_loaded: bool = True, aliases: dict[str, str] | None = None,
                 default_limit: int = 5) -> None:
        self.catalog = catalog
        self.keep_loaded = keep_loaded
        self.aliases = {k.lower(): v for k, v in (aliases or {}).items()}
        self.default_limit = default_limit
        self._active: dict[str, Tool] = {}
        self.tool = Tool(
            name="search_tools",
            description=(
                "Search the tools that are not loaded yet. Returns the best matches with their parameters; "
                "matches become callable on your next turn. Use words describing the task, or a tool's exact name."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What you need to do, or a tool name."},
                    "limit": {"type": "integer", "description": "How many matches to return.", "default": default_limit,
                              "minimum": 1, "maximum": 20},
                },
                "required": ["query"],
            },
            fn=self.search_tools,
            tags=frozenset({"discovery", "read"}),
        )

    def exact_matches(self, query: str) -> list[str]:
        """Catalog names the query names exactly (the whole query, or one of its words)."""
        candidates = [query.strip()] + re.findall(r"[\w./:-]+", query)
        out: list[str] = []
        for c in candidates:
            name = c if c in self.catalog else self.aliases.get(c.lower())
            if name and name not in out:
                out.append(name)
        return out

    def find(self, query: str, limit: int | None = None) -> list[Tool]:
        """Exact-name matches first, then BM25 ranking; no duplicates; at most ``limit``."""
        limit = limit or self.default_limit
        names = self.exact_matches(query)
        names += [r.tool.name for r in self.catalog.search(query) if r.tool.name not in names]
        return [self.catalog.get(n) for n in names[:limit]]

    def search_tools(self, query: str, limit: int = 5) -> str:
        found = self.find(query, limit)
        if not found:
            return "No tool matches that. Tools that exist: " + ", ".join(self.catalog.all_names())
        for t in found:
            self._active[t.name] = t
        return json.dumps(
            [{"name": t.name, "description": t.description, "parameters": t.input_schema.get("properties", {}),
              "required": t.required} for t in found],
            ensure_ascii=False,
        )

    def active(self) -> list[Tool]:
        """Tools found so far and still loaded (pass as the loop's ``extra_tools``)."""
        return list(self._active.values())

    def end_turn(self) -> None:
        """Unload what this turn found, unless tools are kept for the session."""
        if not self.keep_loaded:
            self._active.clear()

    def reset(self) -> None:
        self._active.clear()
