"""An MCP server whose tool list grows: ``grow(name)`` adds a tool and sends ``notifications/tools/list_changed``.

Run with ``python tests/mcp_fixtures/changing_server.py``; used by tests/test_proxy.py. With ``--storm`` it also
has ``storm(count)``, which sends that notice ``count`` times in a row and changes nothing.
"""
from __future__ import annotations

import sys

import anyio
import mcp.types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server

TOOLS = [types.Tool(name="grow", description="Add a tool to this server's list.",
                    input_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
         types.Tool(name="water_plants", description="Water the plants in the greenhouse.",
                    input_schema={"type": "object", "properties": {}})]
if "--storm" in sys.argv:
    TOOLS.append(types.Tool(name="storm", description="Send the list_changed notice many times.",
                            input_schema={"type": "object", "properties": {"count": {"type": "integer"}}}))


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name == "grow":
        name = (params.arguments or {})["name"]
        TOOLS.append(types.Tool(name=name, description=f"Harvest the ripe {name.split('_')[-1]} from the greenhouse.",
                                input_schema={"type": "object", "properties": {}}))
        await ctx.session.send_tool_list_changed()
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"added {name}")])
    if params.name == "storm":
        count = int((params.arguments or {}).get("count", 500))
        for _ in range(count):
            await ctx.session.send_tool_list_changed()
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"sent {count} notices")])
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"{params.name}: done")])


async def main() -> None:
    server = Server("changing", version="0.1.0", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options(NotificationOptions(tools_changed=True)))


if __name__ == "__main__":
    anyio.run(main)
