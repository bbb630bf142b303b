"""The session's status at catalog scale: the look-alike check is one lookup per name, computed once per
catalog, and reading ``harness://status`` never holds a call (issue 40: 5.0 s at 1,000 tools, 280.9 s at 5,000)."""
from __future__ import annotations

import asyncio
import json
import time

import pytest

from conftest import run
from harness.mcp.client import MCPHub
from harness.mcp.proxy.server import ToolProxy, proxy_policy
from harness.mcp.status import session_status
from harness.mcp.suspicious import LookAlikes, flag_name
from test_proxy_hardening import NOTES, connected
from workbook.servers import server_entry

pytestmark = pytest.mark.mcp


def test_look_alikes_of_thousands_of_names_take_one_lookup_each():
    # Every name holds a digit 0 or 1, so its skeleton differs from it: the case that compared it with every other.
    names = [f"inventory_check_{i:05d}" for i in range(5_000)]
    began = time.perf_counter()
    index = LookAlikes(names)
    flagged = [n for n in names if flag_name(n, index)]
    took = time.perf_counter() - began
    assert flagged == [] and took < 1.0, f"{took:.1f} s for 5,000 names"
    assert flag_name("inventory_check_0000l", LookAlikes([*names, "inventory_check_0000l"])) == [
        "the name looks like the tool 'inventory_check_00001' but uses different characters"]


def test_the_hub_flags_each_tool_once_per_catalog(tmp_path):
    servers = {"stock": server_entry("faulty", "paged", "--tools", "400", "--page-size", "400"),
               "weather": server_entry("faulty", "poisoned")}

    async def session_run():
        async with MCPHub({"mcpServers": servers}, log_dir=tmp_path / "logs") as hub:
            first = session_status(hub)
            cached = dict(hub.flag_cache)
            second = session_status(hub)
            assert hub.flag_cache == cached and len(cached) == len(hub.tools)
            return first, second

    first, second = run(session_run())
    assert first == second
    poisoned = next(r for r in first.rows if r.server == "weather")
    assert any(f.startswith("add_numbers:") for f in poisoned.flags)


def test_reading_the_status_of_thousands_of_tools_does_not_hold_a_call(tmp_path):
    servers = {"stock": server_entry("faulty", "paged", "--tools", "3000", "--page-size", "1000"), **NOTES}

    async def session_run():
        async with MCPHub({"mcpServers": servers}, log_dir=tmp_path / "logs", policy=proxy_policy()) as hub:
            proxy = ToolProxy(hub, retriever="bm25-fielded")
            async with connected(proxy) as s:
                began = time.perf_counter()
                status = asyncio.create_task(s.read_resource("harness://status"))
                await asyncio.sleep(0.05)  # the status read is under way
                called = await s.call_tool("call_tool", {"name": "notes__list_notes"})
                held = time.perf_counter() - began
                read = await status
                took = time.perf_counter() - began
            return called, held, json.loads(read.contents[0].text), took

    called, held, status, took = run(session_run())
    assert not called.is_error and held < 1.5, f"call_tool waited {held:.1f} s behind the status"
    assert {r["name"]: r["loaded"] + r["deferred"] for r in status["servers"]}["stock"] == 3000
    assert took < 30, f"the status took {took:.1f} s"
