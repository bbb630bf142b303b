"""MCPHub against real server processes: failures, calls, names, env, deferral, search and shutdown."""
from __future__ import annotations

import asyncio
import hashlib
import json
import time

import pytest
from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS

from conftest import run
from harness.selection.agent import arun
from harness.selection.discovery import Deferral
from harness.selection.catalog import ToolCatalog
from harness.mcp.client import SERVER_ID_VARIABLE, MCPHub, temp_folder_env
from harness.mcp.deferral import DeferralPolicy
from harness.mcp.names import NameTable
from workbook.servers import server_entry
from workbook.servers.faulty import FILES, POISONED_DESCRIPTION
from harness.mcp.status import session_status, status_html, status_widget
from harness.mcp.tool_search import SEARCH_TOOL_NAME
from harness.core.messages import Message, ToolCall
from harness.providers.scripted import ScriptedProvider

psutil = pytest.importorskip("psutil")
pytestmark = pytest.mark.mcp


def children() -> set[int]:
    """Every process below this one, zombies included (an unreaped child is a leak too)."""
    return {p.pid for p in psutil.Process().children(recursive=True)}


@pytest.fixture
def no_leftover_processes():
    before = children()
    yield
    deadline = time.monotonic() + 5
    while children() - before and time.monotonic() < deadline:  # give the OS a moment to reap
        time.sleep(0.05)
    assert children() - before == set(), "server processes outlived the hub"


def test_start_up_failures_become_statuses_and_the_healthy_server_works(tmp_path, no_leftover_processes):
    config = {"mcpServers": {
        "notes": server_entry("notes"),
        "gone": server_entry("faulty", "exit-on-start"),
        "stuck": server_entry("faulty", "hang-on-start", startupTimeout=1.5),
        "nope": {"command": "no-such-mcp-server"},
        "nowhere": {"command": "python3", "cwd": str(tmp_path / "missing")},
        "off": {**server_entry("notes"), "enabled": False},
    }}

    async def session() -> MCPHub:
        hub = await MCPHub(config, log_dir=tmp_path / "logs").start()  # as in one notebook cell...
        assert len(children()) >= 1
        listed = await hub.call_tool("mcp__notes__list_notes", {})
        missing = await hub.call_tool("mcp__notes__read_note", {"title": "no such note"})
        not_an_object = await hub.call_tool("mcp__notes__list_notes", ["standup"])
        await hub.aclose()  # ...and the next
        return hub, listed, missing, not_an_object

    hub, listed, missing, not_an_object = run(session())
    states = {name: (s.state, s.reason) for name, s in hub.statuses.items()}
    assert states == {
        "notes": ("stopped", "the session was closed"),
        "gone": ("failed", "the server exited during start-up; its last words: "
                           "faulty: cannot open the database file 'missing.db'; exiting"),
        "stuck": ("timed out", "did not finish start-up within 1.5 s"),
        "nope": ("failed", "command 'no-such-mcp-server' not found"),
        "nowhere": ("failed", f"working directory '{tmp_path / 'missing'}' does not exist"),
        "off": ("disabled", "enabled is false in the config"),
    }
    assert hub.statuses["notes"].startup_seconds > 0 and hub.statuses["stuck"].startup_seconds is None
    assert hub.tools and all(name.startswith("mcp__notes__") for name in hub.tools)
    assert not listed.is_error and "release checklist" in listed.content
    assert missing.is_error and "No note titled 'no such note'" in missing.content
    assert not_an_object.is_error and not_an_object.content == "Arguments for 'mcp__notes__list_notes' must be a JSON object, got list."
    assert "missing.db" in (tmp_path / "logs" / "gone.log").read_text()
    # A hub belongs to the event loop that started it: another loop gets an error result, not a hang.
    other = run(hub.call_tool("mcp__notes__list_notes", {}))
    assert other.is_error and "started in another event loop" in other.content


def test_failing_hanging_huge_and_crashing_calls_become_error_results(tmp_path, no_leftover_processes):
    config = {"mcpServers": {
        "bad": server_entry("faulty", "misbehave", callTimeout=1),
        "paged": server_entry("faulty", "paged", "--tools", "25", "--page-size", "10"),
    }}

    async def session():
        async with MCPHub(config, log_dir=tmp_path, max_result_chars=5_000) as hub:
            registry = hub.registry()
            out = {"paged_names": sorted(t.raw_name for t in hub.tools.values() if t.server == "paged")}
            out["page_call"] = await hub.call_tool("mcp__paged__inventory_check_024", {"sku": "A-7"})
            out["fails"] = await hub.call_tool("mcp__bad__always_fails", {})
            out["fails_via_registry"] = await registry.adispatch("mcp__bad__always_fails", {}, "c1")
            out["read_via_registry"] = await registry.adispatch("mcp__bad__read_file", {"path": "README.md"}, "c2")
            out["huge"] = await hub.call_tool("mcp__bad__huge_report", {})
            began = time.perf_counter()
            out["hang"] = await hub.call_tool("mcp__bad__slow_operation", {})
            out["hang_seconds"] = time.perf_counter() - began
            out["crash"] = await hub.call_tool("mcp__bad__crash_server", {})
            out["after_crash"] = await hub.call_tool("mcp__bad__read_file", {"path": "README.md"})
            out["others_still_work"] = await hub.call_tool("mcp__paged__inventory_check_000", {"sku": "B-1"})
            out["status"] = hub.statuses["bad"].state, hub.statuses["bad"].reason
            return out

    out = run(session())
    assert out["paged_names"] == [f"inventory_check_{i:03d}" for i in range(25)]  # three pages, all followed
    assert out["page_call"].content == "inventory_check_024: A-7 in stock" and not out["page_call"].is_error
    assert out["fails"].is_error and out["fails"].content == "Error executing tool always_fails: cannot do that: disk full"
    assert out["fails_via_registry"].is_error and out["fails_via_registry"].content == (
        "Tool 'mcp__bad__always_fails' failed: MCPCallError: Error executing tool always_fails: cannot do that: disk full")
    assert out["read_via_registry"].content == FILES["README.md"] and not out["read_via_registry"].is_error
    assert len(out["huge"].content) < 5_100 and out["huge"].content.endswith(
        "[truncated: 995,000 of 1,000,000 characters cut]")
    assert out["hang"].is_error and out["hang"].content == (
        "Tool 'slow_operation' on MCP server 'bad' did not answer within 1 s; the call was abandoned.")
    assert out["hang_seconds"] < 4
    assert out["crash"].is_error and "crashed during the call to 'crash_server'" in out["crash"].content
    assert out["after_crash"].is_error and out["after_crash"].content.startswith("MCP server 'bad' is crashed:")
    assert out["status"] == ("crashed", "the server exited during a call to 'crash_server'; "
                                        "its last words: misbehave: crashing on purpose in crash_server")
    assert out["others_still_work"].content == "inventory_check_000: B-1 in stock"


def test_colliding_names_route_back_and_each_server_sees_only_its_own_env(tmp_path, monkeypatch, no_leftover_processes):
    monkeypatch.setenv("HARNESS_TEST_SECRET", "must-not-leak")
    monkeypatch.setenv("HARNESS_TEST_SHARED", "passed-on-purpose")
    config = {"mcpServers": {
        "example-server": server_entry("faulty", "misbehave", env={"SERVER_DASH": "1", "SHARED": "${HARNESS_TEST_SHARED}"}),
        "example_server": server_entry("faulty", "misbehave", env={"SERVER_UNDERSCORE": "1"}),
        "poison": server_entry("faulty", "poisoned"),
    }}

    async def session():
        async with MCPHub(config, log_dir=tmp_path) as hub:
            names = {server: hub.names.name(server, "environment_names") for server in ("example-server", "example_server")}
            seen = {server: (await hub.call_tool(name, {})).content.split("\n") for server, name in names.items()}
            return hub, names, seen, session_status(hub), status_widget(hub)

    hub, names, seen, status, widget = run(session())
    for server, name in names.items():
        assert name == f"mcp__example_server__environment_names_{hashlib.sha1(f'{server}/environment_names'.encode()).hexdigest()[:12]}"
        assert hub.names.identity(name) == (server, "environment_names")
    reversed_table = NameTable(reversed([identity for _, identity in hub.names.items()]))
    assert sorted(reversed_table.items()) == sorted(hub.names.items())  # the order servers answered in is irrelevant
    assert "mcp__poison__add_numbers" in hub.tools  # no collision, no suffix

    dash, underscore = set(seen["example-server"]), set(seen["example_server"])
    assert {"SERVER_DASH", "SHARED"} <= dash and "SERVER_UNDERSCORE" not in dash
    assert "SERVER_UNDERSCORE" in underscore and not {"SERVER_DASH", "SHARED"} & underscore
    # LC_CTYPE is set by the child Python itself (PEP 538 locale coercion), not inherited.
    # HARNESS_MCP_SERVER_ID is a random id the hub finds a server's helper processes by at the end.
    # TMPDIR, when set, says where the user wants temp files (temp_folder_env).
    allowed = set(DEFAULT_INHERITED_ENV_VARS) | {"SERVER_DASH", "SHARED", "LC_CTYPE", SERVER_ID_VARIABLE, *temp_folder_env()}
    assert dash <= allowed and "HARNESS_TEST_SECRET" not in dash | underscore

    assert hub.tools["mcp__poison__add_numbers"].description == POISONED_DESCRIPTION  # kept exactly as given
    flags = {row.server: row.flags for row in status.rows}
    assert len(flags["poison"]) == 5 and all(f.startswith("add_numbers: ") for f in flags["poison"])
    assert flags["example-server"] == flags["example_server"] == ()
    page = status_html(status)
    assert "an HTML tag &lt;important&gt; aimed at the model" in page and "<important>" not in page.lower()
    assert type(widget).__name__ == "VBox" and widget.children[1].value == page


def test_deferred_tools_are_found_activated_and_called_while_disabled_ones_never_are(tmp_path, no_leftover_processes):
    config = {"mcpServers": {
        "notes": server_entry("notes"),
        "tickets": server_entry("tickets", disabledTools=["close_issue"]),
        "calendar": server_entry("calendar", deferLoading=False),
    }}

    async def session():
        async with MCPHub(config, log_dir=tmp_path, policy=DeferralPolicy(threshold_tokens=500), keep_loaded=False) as hub:
            out = {"hub": hub, "first_turn": [t.name for t in hub.tools_for_turn()]}
            registry = hub.registry()
            out["unloaded_call"] = await registry.adispatch("mcp__notes__create_note", {"title": "x", "content": "y"})

            # Exact names that plain BM25 ranks below the top 2 among the deferred tools come first.
            catalog = ToolCatalog(hub.search.deferred)
            buried = [t for t in hub.search.deferred
                      if t.name not in catalog.rank(t.raw_name, k=2)]
            out["buried"] = [(t.name, json.loads(hub.search.search(t.raw_name, 2))["matches"][0]["name"]) for t in buried]
            hub.search.reset()

            found = await registry.adispatch(SEARCH_TOOL_NAME, {"query": "save a new note with a title", "limit": 3})
            out["found"] = json.loads(found.content)["matches"]
            out["status"] = session_status(hub)
            registry = hub.registry()  # the next model call sees the activated tools
            out["second_turn"] = [t.name for t in hub.tools_for_turn()]
            out["created"] = await registry.adispatch("mcp__notes__create_note", {"title": "MCP test", "content": "hello"})
            out["read_back"] = await hub.call_tool("mcp__notes__read_note", {"title": "MCP test"})

            out["disabled_exact"] = json.loads(hub.search.search("close_issue", 5))
            out["disabled_listed"] = json.loads(hub.search.search("zzqx kubernetes", 5))
            out["disabled_direct"] = await hub.call_tool("mcp__tickets__close_issue", {"issue_id": 1})
            out["disabled_registry"] = await hub.registry().adispatch("mcp__tickets__close_issue", {"issue_id": 1})
            hub.end_turn()
            out["after_turn"] = [t.name for t in hub.tools_for_turn()]
            return out

    out = run(session())
    hub = out["hub"]
    calendar = sorted(n for n in hub.tools if n.startswith("mcp__calendar__"))
    assert hub.plan.auto_defer and hub.plan.total_tokens > 500
    assert sorted(out["first_turn"][:-1]) == calendar and out["first_turn"][-1] == SEARCH_TOOL_NAME  # override wins
    assert set(hub.plan.deferred) == {n for n in hub.tools if not n.startswith("mcp__calendar__")}
    assert out["unloaded_call"].is_error and "exists but is not loaded this turn" in out["unloaded_call"].content

    assert out["buried"], "expected some exact names that BM25 alone ranks below 2nd in this real catalog"
    assert all(name == first for name, first in out["buried"])

    assert out["found"][0]["name"] == "mcp__notes__create_note" and len(out["found"]) <= 3
    assert "mcp__notes__create_note" in out["second_turn"] and SEARCH_TOOL_NAME in out["second_turn"]
    assert not out["created"].is_error and not out["read_back"].is_error and "hello" in out["read_back"].content

    assert "mcp__tickets__close_issue" not in hub.tools
    assert all(m["name"] != "mcp__tickets__close_issue" for m in out["disabled_exact"]["matches"])
    assert out["disabled_listed"]["matches"] == [] and "mcp__tickets__close_issue" not in out["disabled_listed"]["available"]
    assert set(out["disabled_listed"]["available"]) == set(hub.plan.deferred)
    assert out["disabled_direct"].is_error and out["disabled_direct"].content == (
        "Tool 'mcp__tickets__close_issue' is disabled: it is listed in mcpServers.tickets.disabledTools.")
    assert out["disabled_registry"].is_error and out["disabled_registry"].content.startswith(
        "Unknown tool 'mcp__tickets__close_issue'.")
    assert set(out["after_turn"]) == set(out["first_turn"])  # keep_loaded=False: discoveries unload at turn end

    rows = {r.server: r for r in out["status"].rows}
    n_notes = sum(1 for n in hub.tools if n.startswith("mcp__notes__"))
    activated_notes = sum(1 for m in out["found"] if m["name"].startswith("mcp__notes__"))
    assert (rows["notes"].loaded, rows["notes"].deferred) == (activated_notes, n_notes - activated_notes)
    assert rows["tickets"].disabled == 1 and rows["calendar"].deferred == 0 and rows["calendar"].loaded == len(calendar)
    assert out["status"].schema_tokens == hub.plan.total_tokens == sum(r.schema_tokens for r in rows.values())
    assert 0 < out["status"].tokens_saved < hub.plan.total_tokens
    assert out["status"].shown_tokens == out["status"].schema_tokens - out["status"].tokens_saved
    assert "deferral saves" in str(out["status"])


def test_shutdown_leaves_no_process_even_when_the_task_is_cancelled(tmp_path, no_leftover_processes):
    before = children()
    config = {"mcpServers": {"bad": server_entry("faulty", "misbehave"), "notes": server_entry("notes")}}

    async def cancelled_mid_call():
        entered = asyncio.Event()
        hubs, background = [], []

        async def cell():  # a notebook cell: interrupting it cancels the task running it
            async with MCPHub(config, log_dir=tmp_path) as hub:
                hubs.append(hub)
                background.append(asyncio.create_task(hub.call_tool("mcp__bad__slow_operation", {})))
                entered.set()
                await hub.call_tool("mcp__bad__slow_operation", {})  # hangs for an hour

        task = asyncio.create_task(cell())
        await entered.wait()
        await asyncio.sleep(0.2)
        running = len(children())  # both servers are up, one of them busy with the hanging call
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return running, hubs[0], await background[0]

    async def cancelled_during_start():
        task = asyncio.create_task(MCPHub({"mcpServers": {"notes": config["mcpServers"]["notes"]}}, log_dir=tmp_path).start())
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    running, hub, in_flight = run(cancelled_mid_call())
    assert running - len(before) >= 2
    assert in_flight.is_error and in_flight.content == "MCP server 'bad' was shut down during the call to 'slow_operation'."
    assert children() - before == set()  # gone already, not only at teardown
    assert {s.state for s in hub.statuses.values()} == {"stopped"}
    run(cancelled_during_start())
    assert children() - before == set()


def test_the_agent_loop_finds_and_calls_a_deferred_tool_then_unloads_it(tmp_path, no_leftover_processes):
    config = {"mcpServers": {"notes": server_entry("notes", deferLoading=True)}}
    provider = ScriptedProvider([
        lambda transcript, tools: Message("assistant", [ToolCall("c1", SEARCH_TOOL_NAME, {"query": "list my notes"})]),
        lambda transcript, tools: Message("assistant", [ToolCall("c2", "mcp__notes__list_notes", {})]),
        "You have three notes.",
    ])

    async def session():
        async with MCPHub(config, log_dir=tmp_path, keep_loaded=False) as hub:
            result = await arun(provider, ToolCatalog([]), "What notes do I have?",
                                deferral=Deferral(extra_tools=hub.tools_for_turn, on_finish=hub.end_turn))
            return result, [t.name for t in hub.tools_for_turn()]

    result, after = run(session())
    hub = MCPHub(config, log_dir=tmp_path)  # keep_loaded can change between requests; the search follows it
    assert not MCPHub(config, log_dir=tmp_path, keep_loaded=False).keep_loaded and hub.keep_loaded and hub.search.keep_loaded
    hub.keep_loaded = False
    assert not hub.search.keep_loaded
    shown = [call.tool_names for call in provider.calls]
    assert shown[0] == [SEARCH_TOOL_NAME]  # only the pinned search tool: every notes tool is deferred
    assert "mcp__notes__list_notes" in shown[1] and SEARCH_TOOL_NAME in shown[1]
    assert [(name, ok) for name, _, ok in result.calls()] == [(SEARCH_TOOL_NAME, True), ("mcp__notes__list_notes", True)]
    assert "release checklist" in result.transcript.result_for("c2").content
    assert result.final_text == "You have three notes." and after == [SEARCH_TOOL_NAME]  # unloaded at turn end
