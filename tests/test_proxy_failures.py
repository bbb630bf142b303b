"""What a client of ``harness serve`` is told about servers that do not run, and the protocol's own errors (issue 43).

A real client (the MCP SDK's) starts ``python -m harness serve`` over stdio in front of real servers:
mcp-server-time and the workbook's, beside mcp-server-git pointed at a repository that does not exist,
a misspelled command and a WebSocket server. Each failure must be named in the status's problems,
on stderr, in a search that may have wanted the server, and in a call to one of its tools.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import mcp.types as types
import pytest
from mcp import ClientSession, MCPError, stdio_client

from conftest import run
from harness.mcp.proxy.measure import serve_parameters
from workbook.servers import workbook_servers_config

pytestmark = pytest.mark.mcp
GIT = Path(sys.executable).with_name("mcp-server-git")
TIME = Path(sys.executable).with_name("mcp-server-time")


def text(result: types.CallToolResult) -> str:
    return result.content[0].text


@pytest.mark.skipif(not (GIT.exists() and TIME.exists()), reason="mcp-server-git and mcp-server-time are not installed "
                                                                  "(the servers extra)")
def test_failed_and_skipped_servers_are_named_in_status_stderr_searches_and_calls(tmp_path):
    config = workbook_servers_config(("notes", "calendar"))
    servers = config["mcpServers"]
    servers["calendar"]["alwaysLoad"] = True
    servers["notes"]["disabledTools"] = ["append_to_note"]
    servers["time"] = {"command": str(TIME), "args": ["--local-timezone", "UTC"]}
    servers["broken"] = {"command": str(GIT), "args": ["--repository", str(tmp_path / "no-such-repo")]}
    servers["typo"] = {"command": "mcp-server-gti"}
    servers["ws"] = {"type": "ws", "url": "ws://127.0.0.1:9/mcp"}
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config))
    log = tmp_path / "proxy.log"

    async def session_run():
        with open(log, "w") as errlog:
            async with stdio_client(serve_parameters(path, "--retriever", "bm25-fielded"), errlog=errlog) as (r, w):
                async with ClientSession(r, w, read_timeout_seconds=60) as s:
                    await s.initialize()

                    async def search(query) -> dict:
                        return json.loads(text(await s.call_tool("search_tools", {"query": query})))

                    status = json.loads((await s.read_resource("harness://status")).contents[0].text)
                    problems = status["problems"]
                    assert problems[0].startswith("server `broken` failed: the server exited during start-up; its last words: ")
                    assert "no-such-repo does not exist" in problems[0]
                    assert problems[1:] == ["server `typo` failed: command 'mcp-server-gti' not found",
                                            "server `ws` is skipped: type 'ws' servers are not supported here; "
                                            "this harness runs stdio, streamable HTTP and SSE servers"]

                    # a search whose words point at a server that is down says so; one that does not, does not
                    git = await search("read my notes and show the git status")
                    assert git["matches"] and "server `broken` is unavailable (failed): the server exited during start-up" in git["note"]
                    assert "typo" not in git["note"]
                    tokyo = await search("what time is it in Tokyo")
                    assert tokyo["matches"][0]["name"].startswith("time__") and "unavailable" not in tokyo["note"]
                    nothing = await search("zzqx")  # found nothing: every server that is down is named
                    assert all(f"server `{s}` is unavailable (" in nothing["note"] for s in ("broken", "typo", "ws"))
                    assert "server `ws` is unavailable (skipped): type 'ws' servers are not supported here" in nothing["note"]

                    # a call to a tool of a server that is down names the server and why
                    for name in ("broken__git_status", "mcp__broken__git_status", "broken/git_status"):
                        called = await s.call_tool("call_tool", {"name": name, "arguments": {"repo_path": "."}})
                        assert called.is_error and text(called).startswith("server `broken` failed: the server exited"), name
                    typo = await s.call_tool("call_tool", {"name": "typo__anything"})
                    assert text(typo) == "server `typo` failed: command 'mcp-server-gti' not found"

                    # exact names of tools search never returns: listed directly, or disabled
                    listed = await search("calendar__list_events")
                    assert listed == {"matches": [], "note": "calendar__list_events is listed directly (alwaysLoad): "
                                                             "call it by that name, not through search_tools."}
                    for name in ("notes__append_to_note", "append_to_note", "notes/append_to_note"):
                        disabled = await search(name)
                        assert disabled["matches"] == [] and disabled["note"] == (
                            "notes__append_to_note is disabled (it is listed in mcpServers.notes.disabledTools): "
                            "it cannot be found or called."), name
                    inside = await search("append a line with notes__append_to_note")
                    assert inside["matches"] and "notes__append_to_note is disabled" in inside["note"]

                    # a query of the wrong type is a type error, not "empty"
                    wrong = await s.call_tool("search_tools", {"query": 42})
                    assert wrong.is_error and text(wrong) == ("search_tools: query must be text (what you want to do, "
                                                              "or a tool's name), got int.")
                    missing = await s.call_tool("search_tools", {})
                    assert missing.is_error and "needs a non-empty query" in text(missing)

                    # the protocol's own error codes, and no traceback in the log
                    with pytest.raises(MCPError) as unknown:
                        await s.read_resource("file:///nowhere.txt")
                    assert unknown.value.code == -32002 and unknown.value.data == {"uri": "file:///nowhere.txt"}
                    with pytest.raises(MCPError) as no_prompt:
                        await s.get_prompt("no_such_prompt")
                    assert no_prompt.value.code == types.INVALID_PARAMS
                    assert not (await s.call_tool("call_tool", {"name": "time__get_current_time",
                                                                "arguments": {"timezone": "Asia/Tokyo"}})).is_error

    run(session_run())
    stderr = log.read_text()
    lines = [line for line in stderr.splitlines() if line.startswith("harness serve: server ")]
    assert [line.split("`")[1] for line in lines] == ["notes", "calendar", "time", "broken", "typo", "ws"]
    assert lines[2].startswith("harness serve: server `time` ready with 2 tools (")
    assert lines[3].startswith("harness serve: server `broken` failed: the server exited during start-up")
    assert lines[4] == "harness serve: server `typo` failed: command 'mcp-server-gti' not found"
    assert "Traceback" not in stderr


@pytest.mark.skipif(shutil.which("mcp-server-gti") is not None, reason="someone installed a command named mcp-server-gti")
def test_a_proxy_whose_every_server_failed_still_answers_and_says_why(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"typo": {"command": "mcp-server-gti"}}}))

    async def session_run():
        with open(tmp_path / "proxy.log", "w") as errlog:
            async with stdio_client(serve_parameters(path, "--retriever", "bm25-fielded"), errlog=errlog) as (r, w):
                async with ClientSession(r, w, read_timeout_seconds=60) as s:
                    await s.initialize()
                    found = json.loads(text(await s.call_tool("search_tools", {"query": "anything at all"})))
                    assert found["matches"] == [] and "server `typo` is unavailable (failed): command 'mcp-server-gti' not found" in found["note"]

    run(session_run())
