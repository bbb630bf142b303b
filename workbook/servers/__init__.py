"""The workbook's own MCP servers, each runnable as ``python -m workbook.servers.NAME``.

Introduced in Chapter 5 (MCP integration).

Four servers for the office assistant — notes, tickets, calendar, team_chat — serve the demo
world's own tools (Chapter 1) through the SDK's ``MCPServer`` (see :mod:`.serve`), over in-memory
state seeded the same way every time, so runs are reproducible. ``faulty`` holds the misbehaving
servers the failure handling is tested against (and Chapter 5 demonstrates).
:func:`workbook_servers_config` is the config that launches the four with this interpreter.
"""
from __future__ import annotations

import sys
from pathlib import Path
from harness.core.json_types import JSON, JSONObject

#: The checkout this ``workbook`` package was imported from: servers start there, so ``python -m`` finds the same
#: package (a server's environment carries no PYTHONPATH). Found from this file (workbook/servers/__init__.py).
_IMPORT_ROOT = str(Path(__file__).resolve().parents[2])

WORKBOOK_SERVERS = ("notes", "tickets", "calendar", "team_chat")


def server_entry(module: str, *args: str, **options: JSON) -> JSONObject:
    """The ``mcpServers`` entry that runs ``workbook.servers.<module>`` with this Python."""
    entry = {"command": sys.executable, "args": ["-m", f"workbook.servers.{module}", *args], "cwd": _IMPORT_ROOT}
    return {**entry, **options}


def workbook_servers_config(names: tuple[str, ...] = WORKBOOK_SERVERS) -> JSONObject:
    """``{"mcpServers": ...}`` for the workbook's own servers."""
    unknown = [n for n in names if n not in WORKBOOK_SERVERS]
    if unknown:
        raise ValueError(f"Unknown workbook server(s) {unknown}; choose from {list(WORKBOOK_SERVERS)}.")
    return {"mcpServers": {name: server_entry(name) for name in names}}
