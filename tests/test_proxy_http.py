"""``harness serve --http``: several official SDK clients share one proxy, each in a session of its own (issue 43).

Real processes: ``python -m harness serve --http 127.0.0.1:0`` in front of the workbook's servers, a server
whose tool list grows, and remote servers the SDK runs on 127.0.0.1 (one that works, one that dies mid-call,
one that never answers, one that answers HTML). Clients are the SDK's ``streamable_http_client``.
"""
from __future__ import annotations

import asyncio
import http.client
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import mcp.types as types
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from conftest import run
from proxy_http_support import ROOT, remote, served  # noqa: F401  (remote: the fixture)
from workbook.servers import workbook_servers_config

pytestmark = pytest.mark.mcp
CHANGING = str(Path(__file__).parent / "mcp_fixtures" / "changing_server.py")
CLIENTS = 4


def text(result: types.CallToolResult) -> str:
    return result.content[0].text


def children(pid: int) -> set[int]:
    """Every process below ``pid`` (Linux /proc)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*"):
            try:
                kids = {int(k) for k in (task / "children").read_text().split()}
            except OSError:
                continue
            todo += list(kids - found)
            found |= kids
    return found


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs /proc to find the proxy's child processes")
def test_concurrent_clients_share_one_proxy_each_in_its_own_session(tmp_path, remote):
    ok, dies, hang, garbage = remote.start("ok"), remote.start("ok"), remote.start("hang"), remote.start("garbage")
    config = workbook_servers_config(("notes",))
    config["mcpServers"].update({
        "garden": {"command": sys.executable, "args": [CHANGING]},
        "web": {"type": "http", "url": f"http://127.0.0.1:{ok}/mcp"},
        "dies": {"type": "streamable-http", "url": f"http://127.0.0.1:{dies}/mcp"},
        "hangs": {"url": f"http://127.0.0.1:{hang}/mcp", "startupTimeout": 3},
        "html": {"type": "http", "url": f"http://127.0.0.1:{garbage}/mcp"},
    })
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config))
    notices = [0] * CLIENTS
    grown = asyncio.Event()

    async def client(i: int, url: str) -> str | None:
        async def on_message(message) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                notices[i] += 1

        async with streamable_http_client(url) as (r, w):
            async with ClientSession(r, w, read_timeout_seconds=60, message_handler=on_message) as s:
                await s.initialize()
                assert [t.name for t in (await s.list_tools()).tools] == ["search_tools", "call_tool"]
                for n in range(5):  # interleaved with the other clients: each gets its own answers
                    sums = await s.call_tool("call_tool", {"name": "web__add", "arguments": {"a": i, "b": n}})
                    assert text(sums) == str(i + n)
                    title = f"client {i} note {n}"
                    await s.call_tool("call_tool", {"name": "notes__create_note", "arguments": {"title": title, "content": f"from {i}"}})
                    read = await s.call_tool("call_tool", {"name": "notes__read_note", "arguments": {"title": title}})
                    assert f"from {i}" in text(read)
                found = json.loads(text(await s.call_tool("search_tools", {"query": f"add two whole numbers {i}"})))
                assert found["matches"][0]["name"] == "web__add"
                if i == 0:  # one client changes an upstream's tools: every client is told once, and all see the new tool
                    await s.call_tool("call_tool", {"name": "garden__grow", "arguments": {"name": "harvest_tomatoes"}})
                    grown.set()
                await grown.wait()
                for _ in range(200):
                    if notices[i]:
                        break
                    await asyncio.sleep(0.05)
                after = json.loads(text(await s.call_tool("search_tools", {"query": "harvest ripe tomatoes"})))
                assert after["matches"][0]["name"] == "garden__harvest_tomatoes"
                if i == 1:
                    crashed = await s.call_tool("call_tool", {"name": "dies__crash"})
                    assert crashed.is_error and "crashed during the call to 'crash'" in text(crashed)
                    status = json.loads((await s.read_resource("harness://status")).contents[0].text)
                    return "\n".join(status["problems"])
        return None

    with served(path, "--retriever", "bm25-fielded") as proxy:
        async def clients():
            return await asyncio.gather(*(client(i, proxy.url) for i in range(CLIENTS)))

        problems = run(clients())[1]
        below = children(proxy.process.pid)
        assert below, "the proxy runs its stdio servers as child processes"
    assert all(n == 1 for n in notices), notices
    assert f"server `hangs` timed out: did not finish start-up within 3 s" in problems
    assert f"server `html` failed: no MCP session with http://127.0.0.1:{garbage}/mcp: MCPError: Unexpected content type" in problems
    assert f"server `dies` crashed: the connection to http://127.0.0.1:{dies}/mcp closed during a call to 'crash'" in problems
    lines = [line for line in proxy.stderr.splitlines() if line.startswith("harness serve: server ")]
    assert [line.split("`")[1] for line in lines] == ["notes", "garden", "web", "dies", "hangs", "html"]
    assert "Traceback" not in proxy.stderr
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in below) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in below if alive(pid)], "SIGTERM left upstream processes running"


def request(port: int, host: str, origin: str | None = None) -> int:
    """The status of an MCP initialize POST with these Host and Origin headers."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
    headers = {"Host": host, "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               **({"Origin": origin} if origin else {})}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("POST", "/mcp", body, headers)
        return connection.getresponse().status
    finally:
        connection.close()


def test_only_this_machine_is_served_unless_hosts_are_named_and_origins_are_checked(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {}}))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    refused = subprocess.run([sys.executable, "-m", "harness", "serve", "--config", str(path), "--http", "0.0.0.0:0"],
                             capture_output=True, text=True, env=env, timeout=60)
    assert refused.returncode == 2 and refused.stderr.strip() == (
        "error: --http 0.0.0.0:0 listens beyond this machine, where anyone who reaches it runs your servers' tools: "
        "name the host names clients will use with --allow-host NAME, or listen on 127.0.0.1.")
    bad = subprocess.run([sys.executable, "-m", "harness", "serve", "--config", str(path), "--http", "localhost:http"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert bad.returncode == 2 and "--http takes PORT or HOST:PORT" in bad.stderr

    with served(path) as proxy:
        port = int(proxy.url.rsplit(":", 1)[1].split("/")[0])
        assert proxy.url.startswith("http://127.0.0.1:")
        assert request(port, f"127.0.0.1:{port}") == 200
        assert request(port, f"localhost:{port}", origin=f"http://localhost:{port}") == 200
        assert request(port, "evil.example.com") == 421  # DNS rebinding: a name that resolves here, not this machine's
        assert request(port, f"127.0.0.1:{port}", origin="http://evil.example.com") == 403  # a web page elsewhere
    with served(path, "--allow-host", "tools.lan", listen="0.0.0.0:0") as lan:
        port = int(lan.url.rsplit(":", 1)[1].split("/")[0])
        assert request(port, f"tools.lan:{port}", origin=f"http://tools.lan:{port}") == 200
        assert request(port, f"other.lan:{port}") == 421
