"""Remote MCP servers (streamable HTTP and SSE) in the hub: the same timeouts, statuses and containment as stdio.

Real servers on 127.0.0.1 that the MCP SDK runs (tests/mcp_fixtures/http_server.py): one that works,
one behind a bearer token, one that dies mid-call, one that never answers and one that answers HTML.
"""
from __future__ import annotations

import time

import pytest

from conftest import run
from harness.mcp.client import MCPHub
from proxy_http_support import remote  # noqa: F401  (the fixture)

pytestmark = pytest.mark.mcp
TOKEN = "s3cret-bearer-token-for-test"


def url(port: int, path: str = "/mcp") -> str:
    return f"http://127.0.0.1:{port}{path}"


def test_http_and_sse_servers_list_and_answer_calls_with_their_headers(remote):
    ok, sse, guarded = remote.start("ok"), remote.start("ok", "--transport", "sse"), remote.start("ok", "--token", TOKEN)
    config = {"mcpServers": {
        "web": {"type": "http", "url": url(ok), "headers": {"X-Team": "${TEAM:-tools}"}},
        "events": {"type": "sse", "url": url(sse, "/sse")},
        "private": {"url": url(guarded), "headers": {"Authorization": "Bearer ${API_TOKEN}"}},
    }}

    async def scenario():
        async with MCPHub(config, environ={"API_TOKEN": TOKEN}) as hub:
            assert {n: s.state for n, s in hub.statuses.items()} == {"web": "ready", "events": "ready", "private": "ready"}
            assert (await hub.call_tool("mcp__web__add", {"a": 2, "b": 3})).content == "5"
            assert (await hub.call_tool("mcp__events__add", {"a": 1, "b": 1})).content == "2"
            assert (await hub.call_tool("mcp__web__echo_header", {"name": "x-team"})).content == "tools"
            assert (await hub.call_tool("mcp__private__echo_header", {"name": "x-team"})).content == ""
            assert (await hub.call_tool("mcp__web__picture", {})).content == "[image: image/png, 69 bytes]"

    run(scenario())


def test_broken_remote_servers_are_statuses_that_say_why_and_hide_the_token(remote):
    ok, guarded, hang, garbage = remote.start("ok"), remote.start("ok", "--token", TOKEN), remote.start("hang"), remote.start("garbage")
    guarded_sse = remote.start("ok", "--transport", "sse", "--token", TOKEN)
    config = {"mcpServers": {
        "dies": {"type": "http", "url": url(ok), "callTimeout": 5},
        "wrong-token": {"type": "http", "url": url(guarded), "headers": {"Authorization": "Bearer not-the-right-one"}},
        "hangs": {"type": "http", "url": url(hang), "startupTimeout": 2},
        "html": {"type": "streamable-http", "url": url(garbage)},
        "html-sse": {"type": "sse", "url": url(garbage, "/sse")},
        "nobody": {"type": "http", "url": "http://127.0.0.1:9/mcp"},
        "sse-key": {"type": "sse", "url": url(guarded_sse, "/sse?key=query-secret-value")},
    }}

    async def scenario():
        began = time.monotonic()
        async with MCPHub(config) as hub:
            assert time.monotonic() - began < 15  # the hanging one costs its start-up timeout, concurrently
            states = {n: (s.state, s.reason) for n, s in hub.statuses.items()}
            assert states["dies"] == ("ready", "5 tools listed")
            assert states["wrong-token"] == ("failed", f"{url(guarded)} answered HTTP 401 Unauthorized: check the credentials in its headers")
            assert states["hangs"] == ("timed out", "did not finish start-up within 2 s")
            assert states["html"] == ("failed", f"no MCP session with {url(garbage)}: MCPError: Unexpected content type: text/html; charset=utf-8")
            assert states["html-sse"][0] == "failed" and "got 'text/html'" in states["html-sse"][1]
            assert states["nobody"] == ("failed", "no MCP session with http://127.0.0.1:9/mcp: ConnectError: All connection attempts failed")
            assert states["sse-key"] == ("failed", f"{url(guarded_sse, '/sse?key=***')} answered HTTP 401 Unauthorized: "
                                                   "check the credentials in its headers")
            assert "not-the-right-one" not in repr(states) and "query-secret" not in repr(states)

            crashed = await hub.call_tool("mcp__dies__crash", {})
            assert crashed.is_error and crashed.content == "MCP server 'dies' crashed during the call to 'crash'; its tools are unavailable."
            after = await hub.call_tool("mcp__dies__add", {"a": 1, "b": 1})
            assert after.is_error and after.content == (f"MCP server 'dies' is crashed: the connection to {url(ok)} closed "
                                                        "during a call to 'crash'.")

    run(scenario())


def test_a_remote_call_that_never_answers_is_abandoned_at_its_timeout(remote):
    ok = remote.start("ok")

    async def scenario():
        async with MCPHub({"mcpServers": {"slow": {"url": url(ok), "callTimeout": 1.5}}}) as hub:
            began = time.monotonic()
            result = await hub.call_tool("mcp__slow__sleep", {})
            assert result.is_error and 1.4 < time.monotonic() - began < 5
            assert result.content == "Tool 'sleep' on MCP server 'slow' did not answer within 1.5 s; the call was abandoned."
            assert (await hub.call_tool("mcp__slow__add", {"a": 1, "b": 2})).content == "3"  # the session goes on

    run(scenario())
