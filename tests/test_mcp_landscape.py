"""The real-server landscape: third-party servers in a sandbox, offline, launched without npx."""
from __future__ import annotations

import http.server
import json
import shutil
import subprocess
import threading
from functools import partial
from pathlib import Path

import pytest

from conftest import run
from harness.mcp.client import MCPHub
from workbook.landscape import NODE_SERVERS, STARTUP_TIMEOUT, default_node_dir, landscape_config
from workbook.servers import WORKBOOK_SERVERS, workbook_servers_config
from harness.mcp.status import session_status

PYTHON_SERVERS = ("git", "time", "fetch")
NODE_DIR = Path(__file__).resolve().parents[1] / "mcp_servers" / "node"  # the tests know the checkout; harness does not
needs_node = pytest.mark.skipif(not (NODE_DIR / "node_modules").is_dir(),
                                reason="the Node MCP servers are not installed (npm ci in mcp_servers/node)")


def only(landscape, names):
    return {"mcpServers": {k: v for k, v in landscape.config["mcpServers"].items() if k in names}}


def test_without_node_modules_the_node_servers_are_skipped_in_one_sentence(tmp_path):
    land = landscape_config(tmp_path / "sandbox", node_dir=tmp_path / "no-node")
    assert land.servers == [*WORKBOOK_SERVERS, *PYTHON_SERVERS]
    assert land.skipped == [f"The 6 Node servers are skipped: {tmp_path / 'no-node' / 'node_modules'} is missing "
                            f"(run `npm ci` in {tmp_path / 'no-node'}, or scripts/setup.sh full)."]
    log = subprocess.run(["git", "log", "--format=%s"], cwd=land.sandbox / "repo", capture_output=True, text=True)
    assert log.stdout.split("\n")[:2] == ["Add app.py", "Start the sandbox"]
    assert land.config["mcpServers"]["fetch"]["args"] == ["--allow-private-ips"]
    assert all(entry["startupTimeout"] == STARTUP_TIMEOUT for entry in land.config["mcpServers"].values())
    inside = landscape_config(tmp_path / "sandbox", node_dir=NODE_DIR.parent / "not-installed")
    assert inside.skipped == ["The 6 Node servers are skipped: mcp_servers/not-installed/node_modules is missing "
                              "(run `npm ci` in mcp_servers/not-installed, or scripts/setup.sh full)."]
    with pytest.raises(ValueError, match=r"Unknown workbook server\(s\) \['chat'\]; choose from"):
        workbook_servers_config(("notes", "chat"))


def test_the_node_servers_are_found_from_the_working_folder_or_named(tmp_path, monkeypatch):
    monkeypatch.delenv("HARNESS_NODE_SERVERS", raising=False)
    monkeypatch.chdir(NODE_DIR.parents[1] / "notebooks")  # where a chapter runs
    assert default_node_dir() == NODE_DIR
    monkeypatch.chdir(tmp_path)  # outside any checkout: nothing found, and the landscape says so
    assert default_node_dir() is None
    land = landscape_config(tmp_path / "sandbox", include_workbook=False)
    if shutil.which("node"):
        assert "mcp_servers/node is not here or above (set HARNESS_NODE_SERVERS" in land.skipped[-1]
    monkeypatch.setenv("HARNESS_NODE_SERVERS", str(NODE_DIR))
    assert default_node_dir() == NODE_DIR


@needs_node
def test_node_servers_run_from_the_pinned_entry_points_not_npx(tmp_path):
    land = landscape_config(tmp_path, include_workbook=False)
    assert land.skipped == []
    for name, (package, _, _) in NODE_SERVERS.items():
        entry = land.config["mcpServers"][name]
        assert entry["command"].endswith("node") and "npx" not in json.dumps(entry)
        assert entry["args"][0].startswith(str(NODE_DIR / "node_modules" / package))
    assert land.config["mcpServers"]["mongodb"]["env"]["MDB_MCP_TELEMETRY"] == "disabled"
    assert land.config["mcpServers"]["memory"]["env"]["MEMORY_FILE_PATH"] == str(tmp_path / "memory" / "memory.jsonl")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.mark.mcp
def test_the_python_servers_answer_offline_in_the_sandbox(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "page.html").write_text("<html><body><h1>Local page</h1><p>served on 127.0.0.1</p></body></html>")
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    land = landscape_config(tmp_path / "sandbox", include_workbook=False)

    async def session():
        async with MCPHub(only(land, PYTHON_SERVERS), log_dir=tmp_path / "logs") as hub:
            status = await hub.call_tool("mcp__git__git_status", {"repo_path": str(land.sandbox / "repo")})
            now = await hub.call_tool("mcp__time__get_current_time", {"timezone": "UTC"})
            page = await hub.call_tool("mcp__fetch__fetch", {"url": f"http://127.0.0.1:{httpd.server_port}/page.html",
                                                             "raw": True})
            return hub, status, now, page

    try:
        hub, status, now, page = run(session())
    finally:
        httpd.shutdown()
    assert {s.state for s in hub.statuses.values()} == {"stopped"}  # all were ready, then closed
    assert all(hub.statuses[n].startup_seconds for n in PYTHON_SERVERS)
    assert not status.is_error and "On branch main" in status.content
    assert not now.is_error and json.loads(now.content)["timezone"] == "UTC"
    assert not page.is_error and "<h1>Local page</h1>" in page.content


@pytest.mark.mcp
@needs_node
def test_the_node_servers_list_and_answer_and_their_schemas_get_deferred(tmp_path):
    land = landscape_config(tmp_path, include_workbook=False)

    async def session():
        async with MCPHub(only(land, NODE_SERVERS), log_dir=tmp_path / "logs") as hub:
            listing = await hub.call_tool("mcp__filesystem__list_directory", {"path": str(tmp_path / "files")})
            echo = await hub.call_tool("mcp__everything__echo", {"message": "offline"})
            graph = await hub.call_tool("mcp__memory__read_graph", {})
            return hub, listing, echo, graph, session_status(hub), [t.name for t in hub.tools_for_turn()]

    hub, listing, echo, graph, status, shown = run(session())
    assert all(s.startup_seconds for s in hub.statuses.values())
    assert not listing.is_error and "[FILE] welcome.txt" in listing.content
    assert not echo.is_error and "offline" in echo.content
    assert not graph.is_error and json.loads(graph.content) == {"entities": [], "relations": []}
    # The default policy (10 % of a 200k window) defers these schemas: only search_tools is shown.
    assert hub.plan.total_tokens > hub.plan.threshold == 20_000
    assert shown == ["search_tools"] and status.tokens_saved > 0.95 * status.schema_tokens
    assert sum(r.deferred for r in status.rows) == len(hub.tools)
    # The only flags: MongoDB parameters that begin "Note to LLM:" (benign advice, addressed to the model).
    flagged = {r.server: r.flags for r in status.rows if r.flags}
    assert set(flagged) == {"mongodb"} and all(f.endswith("addresses the model's own instructions") for f in flagged["mongodb"])
