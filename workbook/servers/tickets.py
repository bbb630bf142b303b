"""The tickets MCP server: the demo project's issue tracker. Run: ``python -m workbook.servers.tickets``.

Introduced in Chapter 5 (MCP integration); the tools themselves are Chapter 1's
(:mod:`workbook.demo.issues`), served by :func:`workbook.servers.serve.run_demo_server`.
"""
from workbook.demo import issues
from workbook.servers.serve import run_demo_server

if __name__ == "__main__":
    run_demo_server("tickets", issues.make_tools,
                    "The project's issue tracker: open, find, discuss, assign, label and close tickets.")
