"""Hostile and broken MCP servers (issue 18, items 1–3, 5–9): the session survives each of them.

"Survives" means: the other servers' tools still work, nothing waits past its timeout, nothing
outside the hub's own folders is touched, and no process or folder is left behind.
"""
from __future__ import annotations

import json
import os
import re
import tempfile
import time
from pathlib import Path

import pytest

from conftest import run
from harness.mcp.client import MCPHub
from harness.mcp.names import hashed_name
from workbook.servers import server_entry
from harness.mcp.status import session_status
from test_mcp_hub import no_leftover_processes  # noqa: F401 (a fixture)

psutil = pytest.importorskip("psutil")
pytestmark = pytest.mark.mcp


def raw(listing: list[dict], reply: str = "echo", **options) -> dict:
    return server_entry("faulty", "raw", "--listing", json.dumps(listing), "--reply", reply, **options)


def tool_def(name: str, schema: dict | None = None, description: str = "A tool.") -> dict:
    return {"name": name, "description": description, "inputSchema": schema or {"type": "object", "properties": {}}}


def test_a_server_name_cannot_write_outside_the_log_folder(tmp_path, no_leftover_processes):
    victim = tmp_path / "important.log"
    victim.write_text("keep me")
    logs = tmp_path / "logs"
    config = {"mcpServers": {"../important": server_entry("faulty", "exit-on-start"), "notes": server_entry("notes")}}

    async def session():
        async with MCPHub(config, log_dir=logs) as hub:
            return hub.statuses

    statuses = run(session())
    assert victim.read_text() == "keep me"
    log = statuses["../important"].log_path
    assert log.parent == logs and "missing.db" in log.read_text()
    assert statuses["notes"].log_path == logs / "notes.log"  # safe names stay readable


def test_logs_the_hub_created_are_removed_when_it_closes(no_leftover_processes):
    before = set(Path(tempfile.gettempdir()).glob("mcp-logs-*"))

    async def session():
        async with MCPHub({"mcpServers": {"gone": server_entry("faulty", "exit-on-start")}}) as hub:
            folder = hub.log_dir
            assert folder.is_dir()
            return hub, folder

    hub, folder = run(session())
    assert not folder.exists()
    assert set(Path(tempfile.gettempdir()).glob("mcp-logs-*")) == before
    assert "missing.db" in hub.statuses["gone"].reason  # the reason was read before the log went


def test_a_name_collision_costs_only_the_colliding_tool(tmp_path, no_leftover_processes):
    # 'a-b'/'t' and 'a_b'/'t' both sanitise to mcp__a_b__t, so both get hashed names; 'a_b' also
    # lists a tool whose plain name is exactly one of those hashed names.
    target = hashed_name("a-b", "t")
    crafted_raw = target[len("mcp__a_b__"):]  # server 'a_b', tool 't_<hash>': plain name == a-b/t's hashed name
    config = {"mcpServers": {
        "a-b": raw([tool_def("t")]),
        "a_b": raw([tool_def("t"), tool_def(crafted_raw), tool_def("fine")]),
        "notes": server_entry("notes"),
    }}

    async def session():
        async with MCPHub(config, log_dir=tmp_path) as hub:
            called = await hub.call_tool(target, {})
            return hub, called, session_status(hub)

    hub, called, status = run(session())
    assert {s.state for s in hub.statuses.values()} == {"stopped"}
    assert hub.names.identity(target) == ("a-b", "t") and not called.is_error
    assert "mcp__a_b__fine" in hub.tools and any(n.startswith("mcp__notes__") for n in hub.tools)
    assert not any(t.raw_name == crafted_raw for t in hub.tools.values())
    reason = {r.server: r.reason for r in status.rows}["a_b"]
    assert f"tool '{crafted_raw}' skipped: its name {target!r} is already the name of a-b/t" in reason
    assert "disabledTools" not in reason and "\n" not in reason


HOSTILE_SCHEMAS = {
    "ref_loop": {"type": "object", "properties": {"x": {"$ref": "#/properties/x"}}},
    "anyof_loop": {"type": "object", "$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}]}},
                   "properties": {"x": {"$ref": "#/$defs/a"}}},
    "enum_not_list": {"type": "object", "properties": {"x": {"enum": 5}}},
    "minimum_string": {"type": "object", "properties": {"x": {"type": "integer", "minimum": "3"}}},
}


def test_hostile_schemas_are_dropped_at_listing_and_never_break_the_loop(tmp_path, no_leftover_processes):
    listing = [tool_def(name, schema) for name, schema in HOSTILE_SCHEMAS.items()] + [tool_def("ok")]
    config = {"mcpServers": {"hostile": raw(listing)}}

    async def session():
        async with MCPHub(config, log_dir=tmp_path) as hub:
            registry = hub.registry()
            results = {name: await registry.adispatch(f"mcp__hostile__{name}", {"x": 1}) for name in HOSTILE_SCHEMAS}
            ok = await registry.adispatch("mcp__hostile__ok", {})
            return hub, results, ok, session_status(hub)

    hub, results, ok, status = run(session())
    assert sorted(hub.tools) == ["mcp__hostile__ok"] and not ok.is_error
    assert all(r.is_error and "not loaded" not in r.content for r in results.values())
    reason = status.rows[0].reason
    for name in HOSTILE_SCHEMAS:
        assert f"tool '{name}' skipped: its input schema is invalid" in reason
    assert "\n" not in reason


def test_one_bad_tool_definition_costs_only_that_tool(tmp_path, no_leftover_processes):
    listing = [tool_def("good"), {"name": 42, "inputSchema": {"type": "object"}},
               {"name": "no_schema", "description": "has no inputSchema"}, tool_def("also_good")]
    config = {"mcpServers": {"mixed": raw(listing)}}

    async def session():
        async with MCPHub(config, log_dir=tmp_path) as hub:
            return hub, await hub.call_tool("mcp__mixed__good", {"a": 1}), session_status(hub)

    hub, called, status = run(session())
    assert sorted(hub.tools) == ["mcp__mixed__also_good", "mcp__mixed__good"]
    assert called.content == '{"a": 1}'
    row = status.rows[0]
    assert row.state == "ready" and "\n" not in row.reason
    assert "tool #2 skipped: name: Input should be a valid string" in row.reason
    assert "tool #3 skipped ('no_schema'): inputSchema: Field required" in row.reason
    assert "\n" not in str(status).split("\n", 2)[1]  # the row is one line of the table


def test_protocol_garbage_is_reported_at_once(tmp_path, no_leftover_processes):
    config = {"mcpServers": {
        "bytes": server_entry("faulty", "garbage-on-start"),
        "liar": raw([tool_def("echo")], reply="garbage", callTimeout=20),
        "notes": server_entry("notes"),
    }}

    async def session():
        began = time.perf_counter()
        async with MCPHub(config, log_dir=tmp_path) as hub:
            started = time.perf_counter() - began
            began = time.perf_counter()
            garbage = await hub.call_tool("mcp__liar__echo", {})
            answered = time.perf_counter() - began
            notes = await hub.call_tool("mcp__notes__list_notes", {})
            return hub, started, garbage, answered, notes

    hub, started, garbage, answered, notes = run(session())
    assert started < 10  # not the 20 s start-up timeout
    state, reason = hub.statuses["bytes"].state, hub.statuses["bytes"].reason
    assert state == "failed" and reason.startswith("the server wrote something that is not an MCP message on stdout")
    assert answered < 10 and garbage.is_error
    assert garbage.content.startswith("MCP server 'liar' answered the call to 'echo' with something that is not an MCP message")
    assert "<html>502 Bad Gateway</html>" in garbage.content
    assert not notes.is_error


def test_huge_results_are_capped_before_they_are_kept(tmp_path, no_leftover_processes):
    config = {"mcpServers": {"bad": server_entry("faulty", "misbehave")}}

    async def session():
        async with MCPHub(config, log_dir=tmp_path, max_result_chars=1_000) as hub:
            began = time.perf_counter()
            result = await hub.call_tool("mcp__bad__huge_report", {"characters": 20_000_000})
            return result, time.perf_counter() - began

    result, seconds = run(session())
    # the guard keeps the reply's first 4 MB (harness.mcp.guard), and the hub the first 1,000 characters of those
    assert len(result.content) < 1_100 and result.content.startswith("[The server's reply was 20.")
    assert re.search(r"\[truncated: [\d,]+ of [\d,]+ characters cut\]$", result.content)
    assert seconds < 15


def test_helper_processes_of_a_server_end_with_it(tmp_path, no_leftover_processes):
    pid_file = tmp_path / "helper.pid"
    config = {"mcpServers": {"helper": server_entry("faulty", "helper", "--pid-file", str(pid_file))}}

    async def session():
        async with MCPHub(config, log_dir=tmp_path) as hub:
            assert hub.statuses["helper"].state == "ready"
            return int(pid_file.read_text())

    helper = run(session())
    deadline = time.monotonic() + 5
    while psutil.pid_exists(helper) and psutil.Process(helper).status() != psutil.STATUS_ZOMBIE and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = psutil.pid_exists(helper) and psutil.Process(helper).status() != psutil.STATUS_ZOMBIE
    if alive:
        os.kill(helper, 9)
    assert not alive, "the server's helper process outlived the hub"


def test_terminal_escapes_in_server_stderr_are_escaped_in_the_status(tmp_path, no_leftover_processes):
    config = {"mcpServers": {"esc": server_entry("faulty", "escape-on-start")}}

    async def session():
        async with MCPHub(config, log_dir=tmp_path) as hub:
            return hub, session_status(hub)

    hub, status = run(session())
    text = str(status)
    assert "\x1b" not in text and "\x07" not in text and "\x1b" not in hub.statuses["esc"].reason
    assert "\\x1b[2J" in hub.statuses["esc"].reason
