"""The notes MCP server: the demo world's notes and scratchpad. Run: ``python -m workbook.servers.notes``.

Introduced in Chapter 5 (MCP integration); the tools themselves are Chapter 1's
(:mod:`workbook.demo.notes`), served by :func:`workbook.servers.serve.run_demo_server`.
"""
from workbook.demo import notes
from workbook.servers.serve import run_demo_server

if __name__ == "__main__":
    run_demo_server("notes", notes.make_tools,
                    "Personal notes (titled, tagged, searchable) and a session scratchpad; not project files.")
