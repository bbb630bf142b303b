"""The team chat MCP server: the demo team's channels and DMs. Run: ``python -m workbook.servers.team_chat``.

Introduced in Chapter 5 (MCP integration); the tools themselves are Chapter 1's
(:mod:`workbook.demo.chat`), served by :func:`workbook.servers.serve.run_demo_server`.
"""
from workbook.demo import chat
from workbook.servers.serve import run_demo_server

if __name__ == "__main__":
    run_demo_server("team_chat", chat.make_tools,
                    "Team chat: channels (#name) and direct messages (@handle); read, search and post.")
