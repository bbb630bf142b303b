"""The team chat MCP server: the demo team's channels and DMs. Run: ``python -m harness.mcp.servers.team_chat``.

Introduced in Chapter 5 (MCP integration); the tools themselves are Chapter 1's
(:mod:`harness.demo.chat`), served by :func:`harness.mcp.servers.serve.run_demo_server`.
"""
from harness.demo import chat
from harness.mcp.servers.serve import run_demo_server

if __name__ == "__main__":
    run_demo_server("team_chat", chat.make_tools,
                    "Team chat: channels (#name) and direct messages (@handle); read, search and post.")
