"""``search_tools`` for MCP: deferred MCP tools are also found by their server's own names.

Introduced in Chapter 5 (MCP integration). The search itself — exact names first, BM25, no
duplicates, the limit, activation, "what exists" when nothing matches — is Chapter 4's
:class:`harness.selection.discovery.ToolSearch`; an MCP tool adds the names users and models type for it:
the server's raw tool name and ``server/tool``.
"""
from __future__ import annotations

from harness.selection.discovery import DEFAULT_LIMIT, MAX_LIMIT, MAX_LISTED_NAMES, SEARCH_TOOL_NAME
from harness.selection.discovery import ToolSearch as _ToolSearch
from harness.mcp.mcp_tool import MCPTool
from harness.core.tools import Tool

__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "MAX_LISTED_NAMES", "SEARCH_TOOL_NAME", "ToolSearch"]


class ToolSearch(_ToolSearch):
    """Chapter 4's search, with MCP tools matched exactly by canonical, raw or ``server/tool`` name."""

    @staticmethod
    def names_of(t: Tool) -> set[str]:
        names = {t.name}
        if isinstance(t, MCPTool):
            names |= {t.raw_name, t.identity}
        return {n.lower() for n in names}
