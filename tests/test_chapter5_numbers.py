"""Chapter 5's regressions, off the chapter's reading path: what its evidence cells used to re-check on every run.

The chapter pins the figures its prose states (workbook.evidence.check_prose); what teaches nothing
there lives here: the status view shows no file paths, and exact names come first for *every* tool, shared raw
names included. Real calls to every kind of server and names that route back are tests/test_mcp_landscape.py's
and tests/test_mcp_hub.py's.
"""
from __future__ import annotations

import json
from pathlib import Path

import mcp.types as mcp_types
import pytest

from conftest import run
from harness.mcp import MCPHub
from harness.mcp.mcp_tool import build_mcp_tool
from harness.mcp.names import NameTable
from workbook.servers import workbook_servers_config
from harness.mcp.status import session_status, status_html
from harness.mcp.tool_search import mcp_search

FIXTURE = Path(__file__).parent / "mcp_fixtures" / "filesystem_tools.json"
SERVERS = ("filesystem", "backup")  # the same eight tools on two servers: every raw name is shared


async def _never_called(**_: object) -> str:
    raise AssertionError("these tests never call a server")


def shared_tools():
    definitions = [mcp_types.Tool.model_validate(d) for d in json.loads(FIXTURE.read_text())["tools"]]
    names = NameTable((server, d.name) for server in SERVERS for d in definitions)
    return [build_mcp_tool(d, server, names.name(server, d.name), _never_called) for server in SERVERS for d in definitions]


def test_search_tools_puts_every_tool_first_for_its_name_identity_and_shared_raw_name():
    tools = shared_tools()
    search = mcp_search([], tools)
    for t in tools:
        same_raw = [u.name for u in tools if u.raw_name == t.raw_name]
        assert [u.name for u in search.find(t.raw_name, len(same_raw))] == same_raw
        assert search.find(t.name, 1)[0].name == t.name and search.find(t.identity, 1)[0].name == t.name


@pytest.mark.mcp
def test_the_status_view_shows_no_log_or_sandbox_path(tmp_path):
    async def session():
        async with MCPHub(workbook_servers_config(("notes",)), log_dir=tmp_path / "logs") as hub:
            return session_status(hub)

    status = run(session())
    assert [r.server for r in status.rows] == ["notes"]
    for text in (str(status), status_html(status)):
        assert str(tmp_path) not in text and ".log" not in text
