"""Anthropic's server-side tool search over the same MCP tools, to compare with ``search_tools``.

Introduced in Chapter 5 (MCP integration), section 7; it runs only with an API key.

The Messages API can do the deferring and the searching itself: every tool is sent with
``defer_loading: true`` next to the BM25 tool-search tool (``tool_search_tool_bm25_20251119``),
the API keeps deferred definitions out of the prompt, runs Claude's searches on its side
(``server_tool_use`` and ``tool_search_tool_result`` blocks whose ``tool_reference`` entries
expand into full definitions), and Claude then calls a found tool with an ordinary ``tool_use``
that the harness runs on the MCP server. anthropic 2.12 has these types in the main Messages API
(``ToolSearchToolBm25_20251119Param``, ``ToolParam.defer_loading``), so no beta header is sent.

The loop is written here rather than in the provider because the assistant's server-side
blocks must be sent back exactly as received, and the harness's ``Message`` keeps only text and
tool calls. Requests go through :class:`~harness.providers.anthropic_provider.AnthropicProvider`'s
client and retries, so failures are the same one-sentence :class:`ProviderError`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Collection, Sequence

from harness.selection.agent import DEFAULT_SYSTEM
from harness.core.tools import Tool
from harness.providers.base import Usage
from harness.core.json_types import JSONObject

if TYPE_CHECKING:
    from harness.mcp.client import MCPHub
    from harness.providers.anthropic_provider import AnthropicProvider

#: The API's BM25 tool-search tool (a server tool: no description or schema of ours).
BM25_SEARCH_TOOL: dict[str, str] = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}


def deferred_tools_param(tools: Sequence[Tool], loaded: Collection[str] = ()) -> list[JSONObject]:
    """The ``tools`` parameter: the search tool, then every tool deferred unless its name is in ``loaded``.

    The search tool itself is never deferred, which keeps the API's rule that at least one
    tool stays loaded.
    """
    unknown = set(loaded) - {t.name for t in tools}
    if unknown:
        raise ValueError(f"loaded names tools that are not offered: {', '.join(sorted(unknown))}.")
    return [dict(BM25_SEARCH_TOOL), *({**t.to_api(), "defer_loading": t.name not in loaded} for t in tools)]


@dataclass
class ServerSearchRun:
    """What Claude did with server-side search: its queries, what they found, the calls, the tokens."""

    final_text: str
    stopped: str  # the last stop_reason, or "max_turns"
    searches: list[str] = field(default_factory=list)  # queries Claude sent to the search tool
    found: list[list[str]] = field(default_factory=list)  # tool names each search returned
    calls: list[tuple[str, JSONObject, bool]] = field(default_factory=list)  # (tool, input, succeeded)
    usage: list[Usage] = field(default_factory=list)  # per request, as the API billed it

    @property
    def input_tokens(self) -> list[int]:
        return [u.input_tokens for u in self.usage]

    @property
    def output_tokens(self) -> list[int]:
        return [u.output_tokens for u in self.usage]


def _record_search_blocks(blocks: list[JSONObject], run: ServerSearchRun) -> None:
    for block in blocks:
        if block["type"] == "server_tool_use" and block.get("name") == BM25_SEARCH_TOOL["name"]:
            run.searches.append(str(block.get("input", {}).get("query", "")))
        elif block["type"] == "tool_search_tool_result":
            refs = block.get("content", {}).get("tool_references", [])
            run.found.append([r["tool_name"] for r in refs])


async def run_with_server_search(
    provider: AnthropicProvider,
    hub: MCPHub,
    user_message: str,
    *,
    system: str = DEFAULT_SYSTEM,
    max_turns: int = 10,
    max_tokens: int = 1024,
) -> ServerSearchRun:
    """One request on Claude with every MCP tool of ``hub`` deferred behind the API's BM25 tool search."""
    if max_turns <= 0:
        raise ValueError(f"max_turns must be positive, got {max_turns}.")
    tools: list[Any] = deferred_tools_param(list(hub.tools.values()))  # Any: JSON for the API; the SDK's typed params lack the server-tool blocks
    messages: list[Any] = [{"role": "user", "content": user_message}]  # Any: JSON for the API, as above
    run = ServerSearchRun("", "max_turns")
    for _ in range(max_turns):
        response = await provider.call(lambda client: client.messages.create(
            model=provider.model, max_tokens=max_tokens, system=system, messages=messages, tools=tools))
        blocks = [b.model_dump(mode="json", exclude_none=True) for b in response.content]
        run.usage.append(Usage.from_api(response.usage))
        _record_search_blocks(blocks, run)
        messages.append({"role": "assistant", "content": blocks})  # server-side blocks go back unchanged
        if response.stop_reason == "pause_turn":  # a long server-side turn: send it back to continue
            continue
        uses = [b for b in blocks if b["type"] == "tool_use"]
        if response.stop_reason != "tool_use" or not uses:
            run.final_text = "".join(b.get("text", "") for b in blocks if b["type"] == "text")
            run.stopped = response.stop_reason or ""
            return run
        results = [await hub.call_tool(u["name"], u["input"], u["id"]) for u in uses]
        run.calls += [(u["name"], u["input"], not r.is_error) for u, r in zip(uses, results)]
        messages.append({"role": "user", "content": [r.to_api() for r in results]})
    return run
