"""MCP integration: real servers over stdio, canonical names, deferred loading and ``search_tools``.

Introduced in Chapter 5 (MCP integration). One module per idea:

* :mod:`~harness.mcp.config` — the ``{"mcpServers": ...}`` config, checked;
* :mod:`~harness.mcp.names` — ``mcp__server__tool`` names and the table that routes them back;
* :mod:`~harness.mcp.mcp_tool` — an MCP tool as a harness ``Tool``;
* :mod:`~harness.mcp.client` — ``MCPHub``: start, list, call, shut down;
* :mod:`~harness.mcp.deferral` and :mod:`~harness.mcp.tool_search` — what stays out of the
  prompt, and the pinned tool that brings it back;
* :mod:`~harness.mcp.suspicious` — flags for descriptions that address the model;
* :mod:`~harness.mcp.status` — the session at a glance (the workbook's own servers and its sandbox of real
  third-party ones are :mod:`workbook.servers` and :mod:`workbook.landscape`);
* :mod:`~harness.mcp.server_search` — the same tools behind Anthropic's server-side tool search;
* :mod:`~harness.mcp.proxy.server` (Chapter 7) — ``harness serve``, the search as an MCP server in front of
  many; :mod:`~harness.mcp.proxy.client` and :mod:`~harness.mcp.proxy.measure` — an agent through it,
  and what it saves and costs.
"""
from __future__ import annotations

import importlib
from typing import Any

# Exports load on first use: a process that needs one module should not pay for the client side it never uses.
_EXPORTS = {
    "MCPCallError": "client", "MCPHub": "client", "ServerStatus": "client",
    "MCPConfig": "config", "MCPConfigError": "config", "ServerConfig": "config", "load_config": "config",
    "DeferralPlan": "deferral", "DeferralPolicy": "deferral", "plan_deferral": "deferral",
    "MCPTool": "mcp_tool", "NameTable": "names", "flag_suspicious": "suspicious", "flag_tool": "suspicious",
    "SEARCH_TOOL_NAME": "tool_search", "mcp_search": "tool_search",
    "session_status": "status", "status_html": "status", "status_widget": "status",
    "deferred_tools_param": "server_search", "run_with_server_search": "server_search",
    "ToolProxy": "proxy.server", "ProxyTools": "proxy.client",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:  # Any: lazily loads a class or function; each has its own type
    if name not in _EXPORTS:
        raise AttributeError(f"module 'harness.mcp' has no attribute {name!r}")
    return getattr(importlib.import_module(f"harness.mcp.{_EXPORTS[name]}"), name)
