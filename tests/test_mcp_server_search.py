"""Server-side tool search: the request the SDK sends, and the loop over a real MCP server.

The Messages API is a local HTTP server answering in the API's own shape with the blocks tool
search produces (``server_tool_use``, ``tool_search_tool_result``), so the real anthropic SDK
parses them; the tool Claude "found" runs on a real MCP server process.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import run
from harness.mcp.client import MCPHub
from harness.mcp.server_search import BM25_SEARCH_TOOL, deferred_tools_param, run_with_server_search
from workbook.servers import server_entry
from harness.providers.base import Usage
from test_mcp_search import filesystem_tools

SEARCH_BLOCKS = [
    {"type": "text", "text": "Let me look for a notes tool."},
    {"type": "server_tool_use", "id": "srvtoolu_01", "name": "tool_search_tool_bm25", "input": {"query": "list notes"}},
    {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_01",
     "content": {"type": "tool_search_tool_search_result",
                 "tool_references": [{"type": "tool_reference", "tool_name": "mcp__notes__list_notes"}]}},
    {"type": "tool_use", "id": "toolu_01", "name": "mcp__notes__list_notes", "input": {}},
]


def message(content: list[dict], stop_reason: str, input_tokens: int) -> dict:
    return {"id": f"msg_{input_tokens}", "type": "message", "role": "assistant", "model": "claude-test",
            "content": content, "stop_reason": stop_reason, "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 20, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": input_tokens // 10}}


class ScriptedMessagesAPI:
    """Answers POST /v1/messages with the next scripted message and records every request."""

    def __init__(self, replies: list[dict]) -> None:
        self.replies, self.requests = list(replies), []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                api.requests.append((dict(self.headers), body))
                data = json.dumps(api.replies.pop(0)).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.httpd.server_port}"


def test_every_tool_is_deferred_behind_the_bm25_search_tool_unless_kept_loaded():
    tools = filesystem_tools()
    param = deferred_tools_param(tools, loaded=["mcp__filesystem__read_file"])
    assert param[0] == BM25_SEARCH_TOOL and "defer_loading" not in param[0]
    assert [p["name"] for p in param[1:]] == [t.name for t in tools]
    assert {p["name"] for p in param[1:] if not p["defer_loading"]} == {"mcp__filesystem__read_file"}
    assert all(p["input_schema"] == t.input_schema for p, t in zip(param[1:], tools))
    with pytest.raises(ValueError, match=r"^loaded names tools that are not offered: nope\.$"):
        deferred_tools_param(tools, loaded=["nope"])


@pytest.mark.mcp
def test_claude_searches_on_the_server_and_the_found_tool_runs_on_the_mcp_server(tmp_path):
    from harness.providers.anthropic_provider import AnthropicProvider

    api = ScriptedMessagesAPI([message(SEARCH_BLOCKS, "tool_use", 310),
                               message([{"type": "text", "text": "You have three notes."}], "end_turn", 655)])
    provider = AnthropicProvider(api_key="sk-ant-test-" + "x" * 30, base_url=api.base_url, max_retries=0)

    async def session():
        async with MCPHub({"mcpServers": {"notes": server_entry("notes")}}, log_dir=tmp_path) as hub:
            return hub, await run_with_server_search(provider, hub, "What notes do I have?")

    try:
        hub, result = run(session())
    finally:
        api.httpd.shutdown()
    assert result.searches == ["list notes"] and result.found == [["mcp__notes__list_notes"]]
    assert result.calls == [("mcp__notes__list_notes", {}, True)]
    assert (result.final_text, result.stopped) == ("You have three notes.", "end_turn")
    assert result.input_tokens == [310, 655]
    assert result.usage == [Usage(310, 20, 0, 31), Usage(655, 20, 0, 65)]  # cache reads kept

    (headers1, first), (headers2, second) = api.requests
    assert not any(h.lower() == "anthropic-beta" for h in headers1)  # tool search is in the main API in 2.12
    assert first["tools"][0] == BM25_SEARCH_TOOL
    assert sorted(t["name"] for t in first["tools"][1:]) == sorted(hub.tools)
    assert all(t["defer_loading"] is True for t in first["tools"][1:])
    assert second["messages"][1] == {"role": "assistant", "content": SEARCH_BLOCKS}  # sent back unchanged
    (tool_result,) = second["messages"][2]["content"]
    assert tool_result["tool_use_id"] == "toolu_01" and "release checklist" in tool_result["content"]
