"""``harness serve`` through clients the workbook did not write: the MCP Python SDK's client, the MCP Inspector's CLI.

Real processes end to end: a client starts ``python -m harness serve --config mcp.json``, which
starts the workbook's servers and misbehaving ones (workbook.servers.faulty) behind it.
"""
from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path

import mcp.types as types
import pytest
from mcp import ClientSession, stdio_client

from conftest import reindexed, run
from harness.__main__ import main as cli
from harness.selection.agent import arun
from harness.selection.discovery import Deferral
from harness.selection.catalog import ToolCatalog
from harness.mcp.client import MCPHub
from harness.mcp.config import MCPConfigError
from workbook.landscape import default_node_dir
from harness.mcp.proxy.server import ToolProxy, proxy_policy, split_always_load
from harness.mcp.proxy.client import ProxyTools
from harness.mcp.proxy.measure import serve_parameters
from workbook.servers import server_entry, workbook_servers_config
from workbook.providers.offline import OfflineModel
from harness.retrieval.dense import dense_unavailable_reason

pytestmark = pytest.mark.mcp
CHANGING = str(Path(__file__).parent / "mcp_fixtures" / "changing_server.py")


def landscape(tmp_path: Path) -> Path:
    """Four workbook servers, one always-loaded and one with a disabled tool, plus hostile ones."""
    cfg = workbook_servers_config()
    servers = cfg["mcpServers"]
    servers["calendar"]["alwaysLoad"] = True
    servers["tickets"]["disabledTools"] = ["close_issue"]
    servers["bad"] = server_entry("faulty", "misbehave", callTimeout=2)
    servers["weather"] = server_entry("faulty", "poisoned")
    servers["dead"] = server_entry("faulty", "exit-on-start")
    servers["stuck"] = server_entry("faulty", "hang-on-start", startupTimeout=3)
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(cfg), encoding="utf-8")
    return path


def text(result: types.CallToolResult) -> str:
    return result.content[0].text


async def call(session: ClientSession, tool: str, **arguments) -> types.CallToolResult:
    return await session.call_tool(tool, arguments)


def test_the_official_client_connects_lists_searches_calls_and_gets_errors(tmp_path):
    async def session_run():
        with open(tmp_path / "proxy.log", "w") as errlog:
            async with stdio_client(serve_parameters(landscape(tmp_path), "--retriever", "bm25-fielded"), errlog=errlog) as (r, w):
                async with ClientSession(r, w, read_timeout_seconds=60) as s:
                    init = await s.initialize()
                    assert init.server_info.name == "harness-tool-search" and init.capabilities.tools.list_changed
                    names = [t.name for t in (await s.list_tools()).tools]
                    # the always-loaded server's tools are the proxy's own; nothing else is listed
                    assert names[:2] == ["search_tools", "call_tool"]
                    assert names[2:] and all(n.startswith("calendar__") for n in names[2:])

                    found = json.loads(text(await call(s, "search_tools", query="open a new issue in the tracker", limit=3)))
                    assert found["matches"][0]["name"] == "tickets__create_issue"
                    assert set(found["matches"][0]) >= {"name", "description", "input_schema"}
                    assert "\n" not in found["matches"][0]["description"]
                    # an exact name comes first, in any of its forms; listed and disabled tools are never found
                    for exact in ("notes__read_note", "mcp__notes__read_note", "notes/read_note"):
                        hits = json.loads(text(await call(s, "search_tools", query=f"please use {exact}", limit=2)))["matches"]
                        assert hits[0]["name"] == "notes__read_note", exact
                    every = json.loads(text(await call(s, "search_tools", query="calendar event meeting close issue", limit=50)))
                    assert not any(m["name"].startswith("calendar__") or m["name"] == "tickets__close_issue" for m in every["matches"])

                    # a call has its effect, read back through the proxy
                    made = await call(s, "call_tool", name="notes__create_note", arguments={"title": "proxy", "content": "via harness serve"})
                    assert not made.is_error
                    assert "via harness serve" in text(await call(s, "call_tool", name="notes__read_note", arguments={"title": "proxy"}))
                    reminders = await call(s, "calendar__list_reminders")  # an always-loaded tool, by its own name
                    assert not reminders.is_error and text(reminders)

                    huge = await call(s, "call_tool", name="bad__huge_report")
                    assert not huge.is_error and len(text(huge)) < 30_000  # capped, not a million characters
                    errors = {
                        "disabled": await call(s, "call_tool", name="tickets__close_issue", arguments={"issue_id": 1}),
                        "unknown": await call(s, "call_tool", name="notes__read_notes"),
                        "no name": await call(s, "call_tool"),
                        "bad arguments": await call(s, "call_tool", name="notes__read_note", arguments={}),
                        "bad limit": await call(s, "search_tools", query="notes", limit=0),
                        "empty query": await call(s, "search_tools", query=" "),
                        "fails": await call(s, "call_tool", name="bad__always_fails"),
                        "hangs": await call(s, "call_tool", name="bad__slow_operation"),
                        "crashes": await call(s, "call_tool", name="bad__crash_server"),
                        "after the crash": await call(s, "call_tool", name="bad__read_file", arguments={"path": "README.md"}),
                    }
                    # a deferred tool called by its own name runs too (a client that loads what a search found)
                    assert "via harness serve" in text(await call(s, "notes__read_note", title="proxy"))
                    assert all(r.is_error for r in errors.values()), [k for k, r in errors.items() if not r.is_error]
                    assert "disabled" in text(errors["disabled"]) and "disabledTools" in text(errors["disabled"])
                    assert "Did you mean notes__read_note" in text(errors["unknown"])
                    assert "did not answer within 2 s" in text(errors["hangs"])
                    assert "crashed" in text(errors["crashes"])
                    poisoned = json.loads(text(await call(s, "search_tools", query="add_numbers", limit=1)))["matches"][0]
                    assert poisoned["name"] == "weather__add_numbers" and "warning" in poisoned

                    # still serving after all of that; the status says who failed and what is flagged
                    assert not (await call(s, "search_tools", query="weather in a city")).is_error
                    status = json.loads((await s.read_resource("harness://status")).contents[0].text)
                    states = {row["name"]: row["state"] for row in status["servers"]}
                    assert states == {"notes": "ready", "tickets": "ready", "calendar": "ready", "team_chat": "ready",
                                      "bad": "crashed", "weather": "ready", "dead": "failed", "stuck": "timed out"}
                    assert status["disabled"] == ["tickets__close_issue"]
                    assert any(row["flags"] for row in status["servers"] if row["name"] == "weather")

    run(session_run())


def test_an_upstream_list_changed_reindexes_and_the_proxy_tells_its_client(tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"garden": {"command": sys.executable, "args": [CHANGING]},
                                                 **workbook_servers_config(("notes",))["mcpServers"]}}))
    notices: list[object] = []

    async def on_message(message) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            notices.append(message)

    async def session_run():
        with open(tmp_path / "proxy.log", "w") as errlog:
            async with stdio_client(serve_parameters(config, "--retriever", "bm25-fielded"), errlog=errlog) as (r, w):
                async with ClientSession(r, w, read_timeout_seconds=60, message_handler=on_message) as s:
                    await s.initialize()
                    await s.list_tools()
                    before = json.loads(text(await call(s, "search_tools", query="harvest ripe tomatoes")))["matches"]
                    assert "garden__harvest_tomatoes" not in [m["name"] for m in before]
                    assert not (await call(s, "call_tool", name="garden__grow", arguments={"name": "harvest_tomatoes"})).is_error
                    for _ in range(200):
                        if notices:
                            break
                        await asyncio.sleep(0.05)
                    assert notices, "the proxy never sent notifications/tools/list_changed"
                    after = json.loads(text(await call(s, "search_tools", query="harvest ripe tomatoes")))["matches"]
                    assert after[0]["name"] == "garden__harvest_tomatoes"
                    assert text(await call(s, "call_tool", name="garden__harvest_tomatoes")) == "harvest_tomatoes: done"
                    status = json.loads((await s.read_resource("harness://status")).contents[0].text)
                    assert status["reindexed"] == 1

    run(session_run())


@pytest.mark.skipif(dense_unavailable_reason() is not None, reason=f"{dense_unavailable_reason()}")
def test_reindexing_embeds_only_the_tool_that_changed(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_EMBEDDING_CACHE", str(tmp_path / "cache"))

    async def session_run():
        config = {"mcpServers": {"garden": {"command": sys.executable, "args": [CHANGING]},
                                 **workbook_servers_config(("notes",))["mcpServers"]}}
        async with MCPHub(config, log_dir=tmp_path / "logs", policy=proxy_policy()) as hub:
            proxy = ToolProxy(hub, retriever="hybrid")
            proxy.watch()
            await proxy.indexed()
            first = proxy.encoder.texts_encoded
            assert first == len(hub.tools)  # an empty cache: every tool embedded once
            assert (await proxy.call_tool("garden__grow", {"name": "harvest_pumpkins"})) == ("added harvest_pumpkins", False)
            assert await reindexed(proxy) == 1
            await proxy.indexed()
            assert proxy.encoder.texts_encoded - first == 1  # only the new tool; the others came from the cache
            assert json.loads(proxy.search_tools("harvest the pumpkins", 1))["matches"][0]["name"] == "garden__harvest_pumpkins"

    run(session_run())


def test_the_offline_stand_in_works_only_through_the_proxy(tmp_path):
    inner = landscape(tmp_path)
    config = {"mcpServers": {"tools": {"command": sys.executable, "args": ["-m", "harness", "serve", "--config", str(inner),
                                                                          "--retriever", "bm25-fielded"],
                                       "env": serve_parameters(inner).env, "startupTimeout": 120}}}

    async def session_run():
        async with MCPHub(config, log_dir=tmp_path / "logs") as hub:
            # the agent's only server is the proxy: its search, its call, and the always-loaded calendar
            assert {"mcp__tools__search_tools", "mcp__tools__call_tool"} <= set(hub.tools)
            assert all(n.startswith("mcp__tools__calendar__") for n in set(hub.tools) - {"mcp__tools__search_tools", "mcp__tools__call_tool"})
            proxied = ProxyTools(hub, "tools")
            task = "Create a note titled 'groceries' with the content 'milk and eggs'"
            result = await arun(OfflineModel(), ToolCatalog([]), task, deferral=Deferral(extra_tools=proxied.tools_for_turn))
            assert [c[0] for c in result.calls()] == ["search_tools", "notes__create_note"]
            assert result.final_text.startswith("Done.") and proxied.calls == ["notes__create_note"]
            # the effect, checked through the proxy too: the note is there
            check = await hub.call_tool("mcp__tools__call_tool", {"name": "notes__read_note", "arguments": {"title": "groceries"}})
            assert not check.is_error and "milk and eggs" in check.content

    run(session_run())


def inspector_cli() -> Path | None:
    folder = default_node_dir()
    cli_js = folder / "node_modules" / "@modelcontextprotocol" / "inspector" / "cli" / "build" / "cli.js" if folder else None
    return cli_js if cli_js is not None and cli_js.exists() else None


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed, so the MCP Inspector cannot run")
@pytest.mark.skipif(inspector_cli() is None,
                    reason="the MCP Inspector is not installed (npm ci in mcp_servers/node installs the pinned one)")
def test_the_mcp_inspector_cli_lists_and_calls_the_proxys_tools(tmp_path):
    params = serve_parameters(landscape(tmp_path), "--retriever", "bm25-fielded")
    # The Inspector's own --config form, so the proxy's --config is not taken for the Inspector's.
    servers = tmp_path / "inspector.json"
    servers.write_text(json.dumps({"mcpServers": {"proxy": {"command": params.command, "args": params.args, "env": params.env}}}))

    def inspector(*args: str) -> dict:
        done = subprocess.run(["node", str(inspector_cli()), "--cli", "--config", str(servers), "--server", "proxy", *args],
                              capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr or done.stdout
        return json.loads(done.stdout)

    names = [t["name"] for t in inspector("--method", "tools/list")["tools"]]
    assert names[:2] == ["search_tools", "call_tool"] and all(n.startswith("calendar__") for n in names[2:])
    found = inspector("--method", "tools/call", "--tool-name", "search_tools", "--tool-arg", "query=tickets__get_issue", "limit=1")
    assert json.loads(found["content"][0]["text"])["matches"][0]["name"] == "tickets__get_issue"
    got = inspector("--method", "tools/call", "--tool-name", "call_tool", "--tool-arg", "name=notes__read_note",
                    'arguments={"title": "standup"}')
    assert got["isError"] is False and got["content"][0]["text"].startswith("Yesterday:")
    failed = inspector("--method", "tools/call", "--tool-name", "call_tool", "--tool-arg", "name=bad__always_fails")
    assert failed["isError"] is True and "disk full" in failed["content"][0]["text"]
    resources = inspector("--method", "resources/list")["resources"]
    assert [r["uri"] for r in resources] == ["harness://status"]


def test_always_load_is_checked_and_becomes_the_hubs_own_switch():
    cleaned, always = split_always_load({"mcpServers": {
        "a": {"command": "x", "alwaysLoad": True}, "b": {"command": "x", "alwaysLoad": ["t1"]}, "c": {"command": "x"}}})
    assert cleaned["mcpServers"]["a"] == {"command": "x", "deferLoading": False}
    assert "alwaysLoad" not in cleaned["mcpServers"]["b"] and always == {"a": None, "b": frozenset({"t1"})}
    with pytest.raises(MCPConfigError, match=r"mcpServers\.a\.alwaysLoad must be true, false or a list"):
        split_always_load({"mcpServers": {"a": {"command": "x", "alwaysLoad": "yes"}}})
    with pytest.raises(MCPConfigError, match="deferLoading is also true"):
        split_always_load({"mcpServers": {"a": {"command": "x", "alwaysLoad": True, "deferLoading": True}}})


def test_serve_with_bad_input_exits_with_one_sentence(tmp_path, capsys):
    assert cli(["serve"]) == 2
    assert "needs --config" in capsys.readouterr().err
    assert cli(["serve", "--config", str(tmp_path / "missing.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text('{"mcpServers": {"a": {"command": "x", "alwaysLoad": 3}}}')
    assert cli(["serve", "--config", str(tmp_path / "bad.json")]) == 2
    assert "alwaysLoad" in capsys.readouterr().err
    assert cli(["serve", "--config", str(tmp_path / "bad.json"), "--retriever", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No retriever named 'nope'" in err


def test_a_threshold_lists_every_tool_while_they_cost_less_than_it(tmp_path):
    async def session_run():
        config = workbook_servers_config(("notes",))
        async with MCPHub(config, log_dir=tmp_path / "small", policy=proxy_policy(10_000)) as hub:
            small = ToolProxy(hub, retriever="bm25-fielded")
            assert [t.name for t in small.listed_tools()][2:] == [n.removeprefix("mcp__") for n in hub.tools]
            assert json.loads(small.search_tools("read a note"))["matches"] == []  # nothing is deferred
        async with MCPHub(config, log_dir=tmp_path / "big", policy=proxy_policy(100)) as hub:
            assert [t.name for t in ToolProxy(hub, retriever="bm25-fielded").listed_tools()] == ["search_tools", "call_tool"]

    run(session_run())


def test_serve_measure_prints_tokens_latency_and_start_up(tmp_path, monkeypatch, capsys):
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("HARNESS_DATA", str(tmp_path / "empty"))
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(workbook_servers_config(("notes", "tickets"))))
    assert cli(["serve", "--config", str(config), "--measure", "--retriever", "bm25-fielded"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Tokens at connection (cl100k, tool definitions): direct ")
    assert "for 15 tools; through the proxy " in out[0] and "for 2 tools" in out[0]
    assert any(line.startswith("search_tools latency over 15 deferred tools: new queries (20) p50 ") for line in out)
    assert any("read them as rough" in line for line in out) and any(line.startswith("Start-up to a listed connection") for line in out)
    assert "MCP-Zero" not in "\n".join(out[:-1]) and "skipped" in out[-1]
