"""Issue 43's "done when", end to end: real third-party servers, a remote one and two broken entries behind
``harness serve --http``, driven by the official SDK client.

The servers nobody here wrote — mcp-server-git, -time, -fetch and the Node filesystem, memory and everything
servers (Chapter 5's landscape, in a sandbox) — plus a streamable-HTTP server on 127.0.0.1, mcp-server-git
pointed at a repository that does not exist and a misspelled command. The client must reach every working
server's tools by search and call, and find each failure by name in the status, on stderr, in a search and a call.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import mcp.types as types
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from conftest import run
from proxy_http_support import remote, served  # noqa: F401  (remote: the fixture)
from workbook.landscape import default_node_dir, landscape_config

pytestmark = pytest.mark.mcp
SIX = ("git", "time", "fetch", "filesystem", "memory", "everything")


def text(result: types.CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def installed() -> str | None:
    """Why the six servers cannot all run here, or None."""
    if shutil.which("node") is None:
        return "Node.js is not installed, so the Node servers cannot run"
    folder = default_node_dir()
    if folder is None or not (folder / "node_modules").is_dir():
        return "the Node MCP servers are not installed (npm ci in mcp_servers/node)"
    if not Path(sys.executable).with_name("mcp-server-git").exists():
        return "the PyPI MCP servers are not installed (the servers extra)"
    return None


@pytest.mark.skipif(installed() is not None, reason=f"{installed()}")
def test_six_real_servers_a_remote_one_and_two_broken_entries_through_harness_serve_http(tmp_path, remote):
    land = landscape_config(tmp_path / "sandbox", include_workbook=False)
    servers = {name: land.config["mcpServers"][name] for name in SIX}
    port = remote.start("ok")
    servers["web"] = {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}
    servers["broken"] = {"command": str(Path(sys.executable).with_name("mcp-server-git")),
                         "args": ["--repository", str(tmp_path / "no-such-repo")]}
    servers["gti"] = {"command": "mcp-server-gti"}
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    calls = {
        "git__git_status": {"repo_path": str(land.sandbox / "repo")},
        "time__get_current_time": {"timezone": "UTC"},
        "filesystem__list_directory": {"path": str(land.sandbox / "files")},
        "memory__read_graph": {},
        "everything__echo": {"message": "through the proxy"},
        "web__add": {"a": 20, "b": 22},
    }

    async def session(url: str) -> dict:
        async with streamable_http_client(url) as (r, w):
            async with ClientSession(r, w, read_timeout_seconds=120) as s:
                await s.initialize()
                status = json.loads((await s.read_resource("harness://status")).contents[0].text)
                for name, arguments in calls.items():
                    found = json.loads(text(await s.call_tool("search_tools", {"query": name, "limit": 1})))
                    assert found["matches"][0]["name"] == name, found
                    result = await s.call_tool("call_tool", {"name": name, "arguments": arguments})
                    assert not result.is_error, (name, text(result))
                assert "through the proxy" in text(await s.call_tool("everything__echo", {"message": "through the proxy"}))
                git = json.loads(text(await s.call_tool("search_tools", {"query": "show the git log of the repository"})))
                assert git["matches"] and "server `broken` is unavailable (failed)" in git["note"]
                broken = await s.call_tool("call_tool", {"name": "broken__git_log", "arguments": {}})
                assert broken.is_error and text(broken).startswith("server `broken` failed: ")
                typo = await s.call_tool("call_tool", {"name": "gti__anything"})
                assert text(typo) == "server `gti` failed: command 'mcp-server-gti' not found"
                return status

    with served(path, "--retriever", "bm25-fielded") as proxy:
        status = run(session(proxy.url))
    states = {row["name"]: row["state"] for row in status["servers"]}
    assert states == {**{name: "ready" for name in (*SIX, "web")}, "broken": "failed", "gti": "failed"}
    assert status["problems"][0].startswith("server `broken` failed: the server exited during start-up")
    assert status["problems"][1] == "server `gti` failed: command 'mcp-server-gti' not found"
    lines = [line for line in proxy.stderr.splitlines() if line.startswith("harness serve: server ")]
    assert len(lines) == len(servers) and all(f"`{name}` ready with " in line for name, line in zip(SIX, lines))
    assert lines[-2].startswith("harness serve: server `broken` failed: ") and lines[-1].endswith("'mcp-server-gti' not found")
