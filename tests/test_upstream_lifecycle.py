"""An upstream server over time (issue 40, minor): a crashed one is restarted with backoff, a bounded number of
times, and the status says so; a reply whose id is a string never answers a request asked with a number; a storm
of ``list_changed`` notices costs at most two re-lists and two notices to a client."""
from __future__ import annotations

import asyncio
import json
import sys
import time

import mcp.types as types
import pytest

import harness.mcp.client as client
from conftest import run
from harness.mcp.client import MCPHub
from harness.mcp.proxy.server import ToolProxy, proxy_policy
from test_proxy_hardening import CHANGING, connected, hub_proxy, until
from workbook.servers import server_entry

psutil = pytest.importorskip("psutil")
pytestmark = pytest.mark.mcp
LISTING = json.dumps([{"name": "ask", "description": "Ask something.", "inputSchema": {"type": "object", "properties": {}}}])


def test_a_crashed_server_is_restarted_and_the_status_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(client, "RESTART_DELAYS", (0.3, 0.3))
    servers = {"bad": server_entry("faulty", "misbehave")}

    async def session_run():
        async with MCPHub({"mcpServers": servers}, log_dir=tmp_path / "logs", policy=proxy_policy()) as hub:
            proxy = ToolProxy(hub, retriever="bm25-fielded")
            crashed = await hub.call_tool("mcp__bad__crash_server")
            said: list[tuple[str, str, list[str]]] = []  # what the status says while it waits to restart
            await until(lambda: said.append((hub.statuses["bad"].state, hub.statuses["bad"].reason,
                                              list(hub.statuses["bad"].notes))) or "restarting in 0.3 s" in str(said[-1][2]), 10)
            right_after = said[-1]
            back = await until(lambda: hub.statuses["bad"].state == "ready", 20)
            status = proxy.status()["servers"][0]
            answer = await hub.call_tool("mcp__bad__read_file", {"path": "README.md"})
            return crashed, right_after, back, status, answer

    crashed, (state, reason, notes), back, status, answer = run(session_run())
    assert crashed.is_error and "crashed during the call" in crashed.content
    assert state == "crashed" and "crashing on purpose" in reason and notes[-1] == "restarting in 0.3 s (restart 1 of 2)", notes
    assert back and status["state"] == "ready" and "restarted after it crashed (restart 1 of 2)" in status["reason"]
    assert not answer.is_error and answer.content.startswith("# Example")


def test_a_server_that_keeps_crashing_is_restarted_a_bounded_number_of_times(tmp_path, monkeypatch):
    monkeypatch.setattr(client, "RESTART_DELAYS", (0.1, 0.1))

    async def session_run():
        async with MCPHub({"mcpServers": {"bad": server_entry("faulty", "misbehave")}}, log_dir=tmp_path / "logs") as hub:
            for _ in range(3):  # the first start and two restarts, each crashed by a call
                assert await until(lambda: hub.statuses["bad"].state == "ready", 60), hub.statuses["bad"]
                await hub.call_tool("mcp__bad__crash_server")
            assert await until(lambda: "not restarted again" in " ".join(hub.statuses["bad"].notes), 30), hub.statuses["bad"]
            await asyncio.sleep(1.0)  # no third restart comes
            return hub.statuses["bad"]

    status = run(session_run())
    assert status.state == "crashed" and status.notes[-1] == "not restarted again after 2 restarts", status
    assert [n.split(":")[0] for n in status.notes[:-1]] == ["restarted after it crashed (restart 1 of 2)",
                                                             "restarted after it crashed (restart 2 of 2)"]


def test_a_server_that_exits_between_calls_is_seen_crashed_at_once(tmp_path, monkeypatch):
    monkeypatch.setattr(client, "RESTART_DELAYS", (60.0,))  # no restart while the test looks

    async def session_run():
        async with MCPHub({"mcpServers": {"bad": server_entry("faulty", "misbehave")}}, log_dir=tmp_path / "logs") as hub:
            marker = hub.connections["bad"].marker.encode()
            server = next(p for p in psutil.Process().children(recursive=True)
                          if "workbook.servers.faulty" in " ".join(p.cmdline()) and marker in open(f"/proc/{p.pid}/environ", "rb").read())
            server.kill()  # no call is under way
            seen = await until(lambda: hub.statuses["bad"].state == "crashed" and hub.statuses["bad"].notes, 10)
            return seen, hub.statuses["bad"]

    seen, status = run(session_run())
    assert seen and status.reason.startswith("the server exited while idle"), status
    assert status.notes[-1] == "restarting in 60 s (restart 1 of 1)"


def test_a_reply_whose_id_is_a_string_does_not_answer_a_numbered_request(tmp_path):
    servers = {"liar": server_entry("faulty", "raw", "--listing", LISTING, "--reply", "string-id", callTimeout=20)}

    async def session_run():
        async with MCPHub({"mcpServers": servers}, log_dir=tmp_path / "logs") as hub:
            began = time.perf_counter()
            result = await hub.call_tool("mcp__liar__ask")
            return result, time.perf_counter() - began

    result, took = run(session_run())
    assert result.is_error and "not an MCP message" in result.content and "a string" in result.content, result.content
    assert took < 5  # said at once, not after the call's timeout


def test_a_storm_of_list_changed_notices_costs_at_most_two_relists_and_notices(tmp_path):
    notices = 0

    async def on_message(message) -> None:
        nonlocal notices
        if isinstance(message, types.ToolListChangedNotification):
            notices += 1

    async def session_run():
        async with hub_proxy(tmp_path, {"garden": {"command": sys.executable, "args": [CHANGING, "--storm"]}}) as proxy:
            proxy.watch()
            async with connected(proxy, on_message) as s:
                sent = await s.call_tool("call_tool", {"name": "garden__storm", "arguments": {"count": 500}})
                assert await until(lambda: proxy.reindexed >= 1, 15)
                await asyncio.sleep(2.0)  # any further re-list or notice would come by now
                return sent, proxy.reindexed

    sent, relists = run(session_run())
    assert not sent.is_error and "sent 500 notices" in sent.content[0].text
    assert 1 <= relists <= 2 and 1 <= notices <= 2, (relists, notices)
