"""What the proxy passes on from upstream servers besides tool definitions: results, prompts and resources.

Introduced in Chapter 7 with ``harness serve``. A client behind the proxy should get what it would get
from each server directly:

* a tool's **result** with its own content blocks — images, audio, embedded resources, structured
  content — not a text rendering of them (:func:`forwarded`); a result whose text is over the
  hub's cap, or whose whole is over :data:`MAX_FORWARDED_CHARS`, becomes the hub's text rendering,
  cut with a note, as before;
* **prompts**, named like tools (``server__prompt``), got from their server (:class:`Offered`);
* **resources** and resource templates: listed with their names namespaced the same way, but with
  their URIs unchanged, because a URI is what a client reads and what tool results cite; a read is
  routed to the server that listed the URI, else to the one whose template matches it. Where two
  servers list one URI, the first in the config serves it.

Names a client sends are found by :func:`find_named`: the proxy's name, the canonical ``mcp__``
name, ``server/name``, or the server's own name when exactly one server has it.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, Mapping, TypeVar

import mcp.types as types
import pydantic

from harness.core.registry import truncate
from harness.core.safe_text import shown, valid_unicode
from harness.mcp.client import UpstreamError, render_content
from harness.mcp.names import NameTable

if TYPE_CHECKING:
    from harness.mcp.client import MCPHub

#: The largest result (as JSON characters) passed on whole; a larger one is passed on as text, cut.
MAX_FORWARDED_CHARS = 5_000_000
#: Canonical MCP names start with this; the proxy's own names drop it (the client adds its own).
PREFIX = "mcp__"
#: The JSON-RPC code of an unknown resource: -32002 up to protocol 2025-11-25, -32602 from 2026-07-28 (SEP-2164).
RESOURCE_NOT_FOUND = -32002
NEW_NOT_FOUND_FROM = "2026-07-28"

X = TypeVar("X")
R = TypeVar("R", bound=pydantic.BaseModel)


def proxy_name(canonical: str) -> str:
    """The name a tool or prompt has on the proxy: its canonical MCP name without ``mcp__``."""
    return canonical[len(PREFIX):] if canonical.startswith(PREFIX) else canonical


def find_named(name: str, by_name: Mapping[str, X], identity: Callable[[X], tuple[str, str]]) -> X | None:
    """What ``name`` means among ``by_name`` (proxy name → item): the proxy's name, ``mcp__`` + it,
    ``server/name``, or the server's own name when only one server has it."""
    if name in by_name:
        return by_name[name]
    if name.startswith(PREFIX) and proxy_name(name) in by_name:
        return by_name[proxy_name(name)]
    if "/" in name:
        found = [item for item in by_name.values() if "/".join(identity(item)) == name]
        if found:
            return found[0]
    own = [item for item in by_name.values() if identity(item)[1] == name]
    return own[0] if len(own) == 1 else None


def forwarded(result: types.CallToolResult, text_limit: int) -> types.CallToolResult:
    """An upstream tool result as the client gets it: whole, unless its text is over ``text_limit`` or
    all of it over :data:`MAX_FORWARDED_CHARS` characters, when it becomes its text, cut with a note."""
    text = render_content(result)
    if len(text) <= text_limit and len(result.model_dump_json(exclude_none=True)) <= MAX_FORWARDED_CHARS:
        blocks = [b.model_copy(update={"text": valid_unicode(b.text)}) if isinstance(b, types.TextContent) else b
                  for b in result.content]
        return result.model_copy(update={"content": blocks})
    return types.CallToolResult(content=[types.TextContent(type="text", text=valid_unicode(truncate(text, text_limit)))],
                                is_error=result.is_error)


def _template_pattern(template: str) -> re.Pattern[str]:
    """An RFC 6570 URI template as a regular expression: ``{x}`` one path segment, ``{+x}`` and ``{#x}``
    anything, ``{?x}`` and ``{&x}`` an optional query."""
    out, last = [], 0
    for m in re.finditer(r"\{([+#?&/.;]?)[^}]*\}", template):
        out.append(re.escape(template[last:m.start()]))
        out.append({"+": ".+", "#": ".*", "?": r"(?:\?.*)?", "&": r"(?:&.*)?"}.get(m.group(1), "[^/?#]+"))
        last = m.end()
    out.append(re.escape(template[last:]))
    return re.compile("".join(out) + r"\Z")


class Offered:
    """The prompts, resources and resource templates of the hub's running servers, under the proxy's names."""

    def __init__(self, hub: MCPHub) -> None:
        self.hub = hub
        ready = [c for c in hub.connections.values() if c.status.state == "ready"]
        table = NameTable((c.config.name, p.name) for c in ready for p in c.prompts)
        self.prompts: dict[str, tuple[str, types.Prompt]] = {
            proxy_name(table.name(c.config.name, p.name)): (c.config.name, p)
            for c in ready for p in c.prompts if (c.config.name, p.name) not in table.skipped}
        self.resources: dict[str, tuple[str, types.Resource]] = {}
        for c in ready:
            for r in c.resources:
                self.resources.setdefault(str(r.uri), (c.config.name, r))
        self.templates = [(c.config.name, t, _template_pattern(t.uri_template)) for c in ready for t in c.templates]

    def listed_prompts(self) -> list[types.Prompt]:
        return [p.model_copy(update={"name": name}) for name, (_, p) in self.prompts.items()]

    def listed_resources(self) -> list[types.Resource]:
        return [r.model_copy(update={"name": f"{server}__{r.name}"}) for server, r in self.resources.values()]

    def listed_templates(self) -> list[types.ResourceTemplate]:
        return [t.model_copy(update={"name": f"{server}__{t.name}"}) for server, t, _ in self.templates]

    def server_of(self, uri: str) -> str | None:
        """The server that serves ``uri``: the one that listed it, else the first whose template matches."""
        if uri in self.resources:
            return self.resources[uri][0]
        return next((server for server, _, pattern in self.templates if pattern.match(uri)), None)

    async def read(self, uri: str, protocol_version: str) -> types.ReadResourceResult:
        """``resources/read`` of ``uri`` on its server; an :class:`UpstreamError` when no server has it or the read fails."""
        server = self.server_of(uri)
        if server is None:
            code = types.INVALID_PARAMS if protocol_version >= NEW_NOT_FOUND_FROM else RESOURCE_NOT_FOUND
            raise UpstreamError(f"No resource {shown(uri)}: no server behind this proxy lists it or a template "
                                "that matches it (resources/list and resources/templates/list show them).", code)
        request = types.ReadResourceRequest(params=types.ReadResourceRequestParams(uri=uri))
        return await self._send(server, f"Resource '{shown(uri)}'", f"the read of '{shown(uri)}'", request, types.ReadResourceResult)

    async def get_prompt(self, name: str, arguments: Mapping[str, str] | None) -> types.GetPromptResult:
        """``prompts/get`` of ``name`` on its server; an :class:`UpstreamError` when no server has it or the request fails."""
        found = find_named(name, self.prompts, lambda item: (item[0], item[1].name))
        if found is None:
            raise UpstreamError(f"No prompt is called '{shown(name)}' (prompts/list shows them).", types.INVALID_PARAMS)
        server, prompt = found
        request = types.GetPromptRequest(params=types.GetPromptRequestParams(name=prompt.name, arguments=dict(arguments or {})))
        return await self._send(server, f"Prompt '{shown(name)}'", f"the request for prompt '{shown(name)}'", request,
                                types.GetPromptResult)

    async def _send(self, server: str, label: str, what: str, request: types.ClientRequest | types.Request,
                    result_type: type[R]) -> R:
        conn = self.hub.connections[server]
        result = await conn.request(label, what, lambda session: session.send_request(
            request, result_type, request_read_timeout_seconds=conn.config.call_timeout))
        size = len(result.model_dump_json(exclude_none=True))
        if size > MAX_FORWARDED_CHARS:
            raise UpstreamError(f"{label} on MCP server '{server}' answered {size:,} characters, more than the proxy "
                                f"passes on ({MAX_FORWARDED_CHARS:,}).")
        return result
