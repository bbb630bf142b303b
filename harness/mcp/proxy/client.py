"""The model's side of ``harness serve``: an agent loop that reaches every tool only through the proxy.

Introduced in Chapter 7 (``notebooks/07_use_it_in_your_agent.ipynb``).

A client such as Claude Code turns the tools a search returns into tools the model can call
(``tool_reference`` blocks); a client without that support has the model call ``call_tool``. The
harness's own loop does the first: :class:`ProxyTools` offers the proxy's ``search_tools`` as the
discovery tool (Chapter 4) and each tool it returned as a tool of its own, whose call goes to the
proxy's ``call_tool``. Nothing here talks to an upstream server: every call crosses the proxy.
"""
from __future__ import annotations

import json

from harness.mcp.client import MCPCallError, MCPHub
from harness.mcp.proxy.server import CALL, SEARCH
from harness.core.tools import Tool
from harness.core.json_types import JSON, JSONObject


class ProxyTools:
    """The tools of a turn for an agent connected to the proxy as ``server`` in ``hub``.

    Use as ``Deferral(extra_tools=proxy_tools.tools_for_turn)`` with :func:`harness.selection.agent.arun`.
    """

    def __init__(self, hub: MCPHub, server: str) -> None:
        self.hub = hub
        self.search_name = hub.names.name(server, SEARCH)
        self.call_name = hub.names.name(server, CALL)
        definition = hub.tools[self.search_name]
        self.found: dict[str, Tool] = {}
        self.search = Tool(name=SEARCH, description=definition.description, input_schema=dict(definition.input_schema),
                           fn=self._search, tags=frozenset({"discovery"}))
        self.calls: list[str] = []  # every tool run through the proxy's call_tool, in order

    async def _send(self, name: str, arguments: JSONObject) -> str:
        result = await self.hub.call_tool(name, arguments)
        if result.is_error:
            raise MCPCallError(result.content)
        return result.content

    async def _search(self, **arguments: JSON) -> str:
        text = await self._send(self.search_name, arguments)
        for match in json.loads(text).get("matches", []):
            if match.get("callable", True) and match["name"] not in self.found:
                self.found[match["name"]] = self._tool(match)
        return text

    def _tool(self, match: JSONObject) -> Tool:
        name = match["name"]

        async def run(**arguments: JSON) -> str:
            self.calls.append(name)
            return await self._send(self.call_name, {"name": name, "arguments": arguments})

        return Tool(name=name, description=match.get("description", ""), input_schema=match["input_schema"], fn=run)

    def tools_for_turn(self) -> list[Tool]:
        """``search_tools`` and every tool a search returned so far."""
        return [self.search, *self.found.values()]
