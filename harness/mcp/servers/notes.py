"""The notes MCP server: the demo world's notes and scratchpad. Run: ``python -m harness.mcp.servers.notes``.

Introduced in Chapter 5 (MCP integration); the tools themselves are Chapter 1's
(:mod:`harness.demo.notes`), served by :func:`harness.mcp.servers.serve.run_demo_server`.
"""
from harness.demo import notes
from harness.mcp.servers.serve import run_demo_server

if __name__ == "__main__":
    run_demo_server("notes", notes.make_tools,
                    "Personal notes (titled, tagged, searchable) and a session scratchpad; not project files.")
