"""An MCP server that ignores SIGTERM and a closed stdin, and starts a helper that ignores SIGTERM too.

Run with ``python tests/mcp_fixtures/stubborn_server.py PID_FILE``: it writes its own pid and its
helper's, one a line, once it serves. Only SIGKILL ends either; used by tests/test_proxy_hardening.py.
"""
from __future__ import annotations

import signal
import subprocess
import sys
import time

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

IGNORE_TERM = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[types.Tool(name="stay", description="Stay running whatever happens.",
                                                   input_schema={"type": "object", "properties": {}})])


async def main(pid_file: str) -> None:
    helper = subprocess.Popen([sys.executable, "-c", IGNORE_TERM])
    with open(pid_file, "w", encoding="utf-8") as f:
        f.write(f"{__import__('os').getpid()}\n{helper.pid}\n")
    server = Server("stubborn", version="0.1.0", on_list_tools=list_tools)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    anyio.run(main, sys.argv[1])
    time.sleep(600)  # a closed stdin does not end it either
