"""``search_tools`` for MCP: deferred MCP tools are also found by their server's own names.

Introduced in Chapter 5 (MCP integration). The search itself — exact names first, BM25, no
duplicates, the limit, activation, "what exists" when nothing matches — is Chapter 4's
:class:`harness.selection.discovery.ToolSearch`; an MCP tool adds the names users and models type for it:
the server's raw tool name and ``server/tool`` (:func:`mcp_names`), which :func:`mcp_search` configures.
"""
from __future__ import annotations

from typing import Any, Sequence

from harness.selection.discovery import DEFAULT_LIMIT, MAX_LIMIT, MAX_LISTED_NAMES, SEARCH_TOOL_NAME, ToolSearch
from harness.mcp.mcp_tool import MCPTool
from harness.core.tools import Tool

# ``ToolSearch`` is not re-exported: built here without mcp_search it would miss the server's own names.
__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "MAX_LISTED_NAMES", "SEARCH_TOOL_NAME", "mcp_names", "mcp_search"]


def mcp_names(t: Tool) -> set[str]:
    """Every name under which ``t`` counts as an exact match (lower-cased): canonical, raw and ``server/tool``."""
    names = {t.name}
    if isinstance(t, MCPTool):
        names |= {t.raw_name, t.identity}
    return {n.lower() for n in names}


def mcp_search(loaded: Sequence[Tool], deferred: Sequence[Tool], **options: Any) -> ToolSearch:  # Any: forwarded unchanged to ToolSearch
    """Chapter 4's search over MCP tools, matching each exactly by any of :func:`mcp_names`."""
    return ToolSearch(loaded, deferred, names_of=mcp_names, **options)
