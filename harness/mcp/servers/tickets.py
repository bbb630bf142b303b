"""The tickets MCP server: the demo project's issue tracker. Run: ``python -m harness.mcp.servers.tickets``.

Introduced in Chapter 5 (MCP integration); the tools themselves are Chapter 1's
(:mod:`harness.demo.issues`), served by :func:`harness.mcp.servers.serve.run_demo_server`.
"""
from harness.demo import issues
from harness.mcp.servers.serve import run_demo_server

if __name__ == "__main__":
    run_demo_server("tickets", issues.make_tools,
                    "The project's issue tracker: open, find, discuss, assign, label and close tickets.")
