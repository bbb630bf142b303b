"""Serve harness tools over MCP with the SDK's ``MCPServer``, schemas and descriptions unchanged.

Introduced in Chapter 5 (MCP integration).

The workbook's MCP servers are the demo world's own tools (Chapter 1) behind a real server, not
a second copy of them: the agent meets the same notes, tickets, calendar and chat, once as local
functions and once across a process boundary, and the chapters can compare the two directly.
``MCPServer`` builds an input schema from each function's signature; the harness's schema is the
same signature plus the parameter descriptions from the docstring, so it is published instead.
An anticipated failure (``ValueError``, ``LookupError``) is re-raised as the SDK's ``ToolError``,
whose message reaches the model; anything else the SDK reports as a crash, without details.
"""
from __future__ import annotations

import functools
import os
import signal
from typing import TYPE_CHECKING, Any, Callable, Sequence

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool as ServedTool
from mcp.types import ToolAnnotations

from harness.core.registry import render_result
from harness.core.tools import Tool

if TYPE_CHECKING:
    from workbook.demo.world import DemoWorld


def annotations_for(t: Tool) -> ToolAnnotations:
    """MCP behaviour hints from the harness's side-effect tags."""
    writes = bool({"write", "destructive"} & t.tags)
    return ToolAnnotations(
        read_only_hint="read" in t.tags and not writes,
        destructive_hint="destructive" in t.tags,
        open_world_hint="network" in t.tags,
    )


def _served(t: Tool) -> ServedTool:
    fn = t.fn
    assert fn is not None, f"tool {t.name!r} has no function to serve"

    @functools.wraps(fn)  # keeps the signature, which MCPServer validates arguments with
    def run(*args: Any, **kwargs: Any) -> str:  # Any: forwarded unchanged to the tool's function
        try:
            return render_result(fn(*args, **kwargs))
        except (ValueError, LookupError) as exc:
            raise ToolError(str(exc)) from exc

    served = ServedTool.from_function(run, name=t.name, description=t.description,
                                      annotations=annotations_for(t), structured_output=False)
    return served.model_copy(update={"parameters": t.input_schema})


def serve_tools(name: str, tools: Sequence[Tool], *, instructions: str, version: str = "0.1.0") -> MCPServer:
    """An ``MCPServer`` named ``name`` offering ``tools`` exactly as the harness describes them."""
    return MCPServer(name, version=version, instructions=instructions, tools=[_served(t) for t in tools],
                     log_level="WARNING")


def run_demo_server(name: str, make_tools: Callable[["DemoWorld"], list[Tool]], instructions: str) -> None:
    """Run one domain of a fresh demo world (seeded, in a temp folder) as an MCP server over stdio."""
    from harness.core.temp_folders import exit_cleanly_on_sigterm
    from workbook.demo.world import DemoWorld  # the world imports the whole demo; only servers need it

    # SIGTERM while the world is being seeded (a client that gives up at once) unwinds, so the half-made world's
    # finalizer removes its folder; the default ended the process there and left it
    exit_cleanly_on_sigterm()
    # a temp sandbox named after this process: one killed with SIGKILL leaves a folder the next server removes
    with DemoWorld() as world:
        def ended(signum: int, frame: object) -> None:
            """A client (or the proxy) ends its servers with SIGTERM: remove the sandbox, then end by the signal."""
            world.close()
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)

        signal.signal(signal.SIGTERM, ended)
        serve_tools(name, make_tools(world), instructions=instructions).run()
