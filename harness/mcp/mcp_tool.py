"""An MCP tool as a harness :class:`~harness.core.tools.Tool`, with its raw server and tool names kept.

Introduced in Chapter 5 (MCP integration).

The rest of the harness — the registry that dispatches, the BM25 catalog, the token counter —
works on ``Tool``; an MCP tool is one more ``Tool`` whose ``fn`` sends ``tools/call`` to its
server. The model sees only the canonical name (``mcp__server__tool``), but the raw names stay on
the object, because exact-name search and error messages need what the server called it.
Behaviour hints from the server (``readOnlyHint``, ``destructiveHint``, ``openWorldHint``) become
the harness's side-effect tags; they are hints from an untrusted party, not guarantees.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Awaitable, Callable

import mcp.types as mcp_types

from harness.core.tools import Tool


@dataclass(frozen=True)
class MCPTool(Tool):
    """A tool served by an MCP server: ``name`` is canonical, ``server``/``raw_name`` are the server's own."""

    server: str = ""
    raw_name: str = ""

    @property
    def identity(self) -> str:
        """``server/tool``, the raw identity (also accepted by exact-name search)."""
        return f"{self.server}/{self.raw_name}"


def tags_from_annotations(annotations: mcp_types.ToolAnnotations | None) -> frozenset[str]:
    """The harness side-effect tags a server's tool annotations suggest."""
    if annotations is None:
        return frozenset()
    tags = set()
    if annotations.read_only_hint:
        tags.add("read")
    elif annotations.destructive_hint:
        tags.add("destructive")
    elif annotations.read_only_hint is False:
        tags.add("write")
    if annotations.open_world_hint:
        tags.add("network")
    return frozenset(tags)


def build_mcp_tool(
    definition: mcp_types.Tool,
    server: str,
    name: str,
    call: Callable[..., Awaitable[object]],
) -> MCPTool:
    """The harness tool for one ``tools/list`` entry; ``call(**arguments)`` runs it on the server."""
    return MCPTool(
        name=name,
        description=definition.description or "",
        input_schema=dict(definition.input_schema),
        fn=call,
        tags=tags_from_annotations(definition.annotations),
        domain=server,
        server=server,
        raw_name=definition.name,
    )
