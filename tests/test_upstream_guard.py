"""The guard between the hub and each upstream server (harness/mcp/guard.py): a killed hub or proxy leaves no
upstream running, stubborn ones and their helpers included; a huge reply is cut, in linear time, with a notice
(issue 40: SIGKILL of ``harness serve`` left them running; results of 1 / 20 / 60 MB took 1.1 / 8.5 / 57.5 s)."""
from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import run
from harness.mcp.client import MAX_MESSAGE_BYTES, MCPHub
from harness.mcp.guard import cut_message, relay
from test_proxy_hardening import STUBBORN, RawProxy, alive, kill_all, write_config
from workbook.servers import server_entry

psutil = pytest.importorskip("psutil")
pytestmark = pytest.mark.mcp
ROOT = Path(__file__).resolve().parents[1]
LISTING = json.dumps([{"name": "dump", "description": "Dump everything.", "inputSchema": {"type": "object", "properties": {}}}])


def relayed(data: bytes, max_bytes: int) -> list[bytes]:
    source, out = io.BytesIO(data), io.BytesIO()
    relay(source.read, out.write, max_bytes)
    return out.getvalue().split(b"\n")


def test_the_relay_passes_lines_and_cuts_only_those_over_the_cap():
    result = json.dumps({"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "x" * 5_000}]}})
    error = json.dumps({"jsonrpc": "2.0", "id": 8, "error": {"code": 1, "message": "y" * 5_000}})
    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "z" * 5_000}})
    small = json.dumps({"jsonrpc": "2.0", "id": 9, "result": {}})
    lines = relayed("\n".join([small, result, note, error, small, ""]).encode(), 1_000)
    assert lines[0] == lines[3] == small.encode() and lines[-1] == b""
    cut = json.loads(lines[1])
    assert cut["id"] == 7 and cut["result"]["content"][0]["text"].startswith("[The server's reply was 0.0 MB")
    assert "x" * 100 in cut["result"]["content"][0]["text"]
    assert json.loads(lines[2])["id"] == 8 and "a reply may have" in json.loads(lines[2])["error"]["message"]
    assert len(lines) == 5  # the notification was dropped


def test_a_cut_reply_finds_its_id_at_either_end_and_says_so_when_it_cannot():
    node = b'{"result":{"content":[{"type":"text","text":"ab\\u00e9\\"' + b"q" * 50 + b'"}]},"jsonrpc":"2.0","id":"r-1"}'
    cut = json.loads(cut_message(node[:60], node[-256:], 9_000_000, 4_000_000))
    assert cut["id"] == "r-1" and cut["result"]["content"][0]["text"].endswith('\nabé"qqqqq')  # the escapes decoded
    lost = cut_message(b'{"result":{"content":[', b"...]}}", 9_000_000, 4_000_000)
    assert lost.startswith(b"A reply of 9,000,000 bytes was dropped")


def test_a_60_mb_result_comes_back_cut_with_a_notice_in_linear_time(tmp_path):
    servers = {"m": server_entry("faulty", "misbehave"),
               "node": server_entry("faulty", "raw", "--listing", LISTING, "--reply", "huge")}

    async def session_run():
        async with MCPHub({"mcpServers": servers}, log_dir=tmp_path / "logs") as hub:
            began = time.perf_counter()
            big = await hub.call_tool("mcp__m__huge_report", {"characters": 60_000_000})
            took = time.perf_counter() - began
            node = await hub.call_tool("mcp__node__dump", {"characters": 30_000_000})
            after = await hub.call_tool("mcp__m__read_file", {"path": "README.md"})
            return big, took, node, after

    big, took, node, after = run(session_run())
    assert not big.is_error and re.match(r"\[The server's reply was 6\d\.\d MB", big.content) and "row: all quiet" in big.content
    assert f"{MAX_MESSAGE_BYTES / 1e6:g} MB a reply may have" in big.content
    assert took < 10, f"a 60 MB result took {took:.1f} s"
    assert not node.is_error and node.content.startswith("[The server's reply was") and 'abé"abé"' in node.content
    assert after.content.startswith("# Example")  # the server still answers


def left_after(pids: set[int], seconds: float) -> list[int]:
    """Which of ``pids`` are still running ``seconds`` from now (or as soon as none is)."""
    deadline = time.monotonic() + seconds
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


OWNER = textwrap.dedent("""\
    import asyncio, json, sys
    from harness.mcp.client import MCPHub
    config = json.loads(sys.argv[1])
    async def main():
        async with MCPHub(config):
            print("ready", flush=True)
            await asyncio.sleep(600)
    asyncio.run(main())
""")


def test_a_hub_killed_with_sigkill_leaves_no_upstream_running(tmp_path):
    pid_file = tmp_path / "stubborn.pids"
    config = {"mcpServers": {"stubborn": {"command": sys.executable, "args": [STUBBORN, str(pid_file)]}}}
    owner = subprocess.Popen([sys.executable, "-c", OWNER, json.dumps(config)], stdout=subprocess.PIPE, text=True,
                             cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True)
    started: set[int] = set()
    try:
        assert owner.stdout.readline().strip() == "ready"
        started = {p.pid for p in psutil.Process(owner.pid).children(recursive=True)} | \
            {int(p) for p in pid_file.read_text().split()}
        assert len(started) >= 2  # the stubborn server and its helper (and, guarded, its guard)
        owner.kill()
        owner.wait(timeout=10)
        assert not left_after(started, 5), "upstream processes outlived the hub killed with SIGKILL"
    finally:
        owner.kill()
        kill_all(started)


def test_sigkill_of_harness_serve_leaves_no_upstream_running(tmp_path):
    pid_file = tmp_path / "stubborn.pids"
    config = write_config(tmp_path, {"stubborn": {"command": sys.executable, "args": [STUBBORN, str(pid_file)]}})
    proxy = RawProxy(config, tmp_path / "proxy.log")
    started: set[int] = set()
    try:
        proxy.handshake()
        started = proxy.upstream() | {int(p) for p in pid_file.read_text().split()}
        proxy.proc.send_signal(signal.SIGKILL)
        proxy.proc.wait(timeout=10)
        assert not left_after(started, 5), "upstream processes outlived harness serve killed with SIGKILL"
    finally:
        proxy.close()
        kill_all(started)
