"""An MCP server that lists the tools of a JSON file (a list of ``{name, description, inputSchema}``) and answers
every call with "done": a known setup for `harness audit` (tests/test_audit.py) to find planted problems in.

Run with ``python tests/mcp_fixtures/planted_server.py TOOLS.json``.
"""
from __future__ import annotations

import json
import sys

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


def tools_of(path: str) -> list[types.Tool]:
    with open(path, encoding="utf-8") as f:
        return [types.Tool(name=t["name"], description=t["description"], input_schema=t["inputSchema"]) for t in json.load(f)]


async def main(path: str) -> None:
    tools = tools_of(path)

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text="done")])

    server = Server("planted", version="0.1.0", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
