"""The MCP config files other clients write, read as the one ``mcpServers`` shape.

Introduced in Chapter 7 with ``harness serve``: a user points the proxy at the file their client
already has, so each client's file is read as that client reads it, and any other file is refused
in one sentence that names the key to use.

* Claude Desktop, Claude Code (``.mcp.json``), Cursor: ``{"mcpServers": {...}}``, as it is.
* VS Code (``.vscode/mcp.json``): ``{"servers": {...}}`` (also inside user settings as
  ``{"mcp": {"servers": ...}}``); ``${workspaceFolder}`` is the folder holding ``.vscode``,
  ``${env:VAR}`` is ``${VAR}``, and the editor-only ``inputs`` and ``dev`` settings are left to
  the editor (a value that needs an input is refused where it is used).
* Codex CLI (``~/.codex/config.toml``): ``[mcp_servers.NAME]`` tables, whose keys are renamed to
  this shape (``startup_timeout_sec`` → ``startupTimeout``, ``http_headers`` → ``headers``, …).
"""
from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Mapping

from harness.core.json_types import JSON, JSONObject

#: Codex's keys that mean one of ours, as they are (seconds) or converted (milliseconds).
_CODEX_KEYS = {"command": "command", "args": "args", "env": "env", "cwd": "cwd", "url": "url", "enabled": "enabled",
               "http_headers": "headers", "startup_timeout_sec": "startupTimeout", "tool_timeout_sec": "callTimeout",
               "disabled_tools": "disabledTools"}
_FORMATS = ("'mcpServers' (Claude Desktop, Claude Code, Cursor), 'servers' (VS Code's .vscode/mcp.json) "
            "or [mcp_servers.NAME] tables in a .toml file (Codex)")


class ConfigFormatError(ValueError):
    """A file that is no client's MCP config, or uses a setting this reader cannot honour; one sentence."""


def _type_name(value: object) -> str:
    return "null" if value is None else type(value).__name__


def parse_toml(text: str, origin: str) -> JSON:
    """A TOML file's data (Codex's config), or one sentence saying why it cannot be read."""
    if sys.version_info < (3, 11):
        raise ConfigFormatError(f"{origin} is TOML (Codex's format), which needs Python 3.11 or later to read: "
                                "run the proxy with a newer Python, or write the servers as JSON under 'mcpServers'.")
    tomllib = importlib.import_module("tomllib")  # by name: mypy checks for Python 3.10, which has none
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFormatError(f"{origin} is not valid TOML: {exc}.") from None


def _vscode(servers: JSONObject, folder: Path | None) -> JSONObject:
    """VS Code's ``servers`` as ``mcpServers`` entries: ``${workspaceFolder}`` filled, ``dev`` left to the editor."""
    out: JSONObject = {}
    for name, spec in servers.items():
        if isinstance(spec, dict):
            if "envFile" in spec:
                raise ConfigFormatError(f"servers.{name}.envFile is not read by this proxy: "
                                        "put the variables in 'env' (with ${VAR} for values from the environment).")
            spec = {k: v for k, v in spec.items() if k != "dev"}
            if folder is not None:
                spec = _fill_workspace(spec, str(folder))
        out[name] = spec
    return out


def _fill_workspace(value: JSON, folder: str) -> JSON:
    if isinstance(value, str):
        return value.replace("${workspaceFolder}", folder)
    if isinstance(value, list):
        return [_fill_workspace(v, folder) for v in value]
    if isinstance(value, dict):
        return {k: _fill_workspace(v, folder) for k, v in value.items()}
    return value


def _codex(servers: JSONObject, environ: Mapping[str, str]) -> JSONObject:
    """Codex's ``[mcp_servers.NAME]`` tables as ``mcpServers`` entries, key by key."""
    out: JSONObject = {}
    for name, table in servers.items():
        if not isinstance(table, dict):
            raise ConfigFormatError(f"mcp_servers.{name} must be a table ([mcp_servers.{name}]), got {_type_name(table)}.")
        spec: JSONObject = {}
        headers: JSONObject = {}
        for key, value in table.items():
            where = f"mcp_servers.{name}.{key}"
            if key in _CODEX_KEYS:
                spec[_CODEX_KEYS[key]] = value
            elif key == "startup_timeout_ms" and isinstance(value, (int, float)) and not isinstance(value, bool):
                spec["startupTimeout"] = value / 1000
            elif key == "bearer_token_env_var" and isinstance(value, str):
                headers["Authorization"] = f"Bearer ${{{value}}}"
            elif key == "env_http_headers" and isinstance(value, dict):
                headers.update({h: f"${{{v}}}" for h, v in value.items()})
            elif key == "env_vars" and isinstance(value, list):
                spec["env"] = {**{v: environ[v] for v in value if isinstance(v, str) and v in environ},
                               **(spec.get("env") or {})}
            elif key == "enabled_tools":
                raise ConfigFormatError(f"{where} (an allow-list) is not read by this proxy: "
                                        "list the tools to leave out under disabled_tools instead.")
            else:
                raise ConfigFormatError(f"{where} is not a setting this proxy reads (it reads "
                                        f"{', '.join([*_CODEX_KEYS, 'startup_timeout_ms', 'bearer_token_env_var', 'env_http_headers', 'env_vars'])}).")
        if headers:
            spec["headers"] = {**headers, **(spec.get("headers") or {})}
        out[name] = spec
    return out


def as_mcp_servers(data: JSON, path: Path | None, environ: Mapping[str, str]) -> JSONObject:
    """``data`` read from any client's file as ``{"mcpServers": {...}}``, or one sentence naming the key to use.

    ``path`` is where the data came from (None for a dict or a string): a ``.toml`` file is
    Codex's, and VS Code's ``${workspaceFolder}`` is the folder above its ``.vscode``.
    """
    if not isinstance(data, Mapping):
        raise ConfigFormatError(f"The MCP config must be an object with {_FORMATS}, got {_type_name(data)}.")
    if path is not None and path.suffix == ".toml":
        if not isinstance(data.get("mcp_servers"), dict):
            raise ConfigFormatError(f"The TOML file '{path}' has no [mcp_servers.NAME] tables (Codex's format for MCP servers).")
        return {"mcpServers": _codex(data["mcp_servers"], environ)}
    if "mcpServers" in data:
        return dict(data)
    nested = data.get("mcp")
    settings: Mapping[str, JSON] = nested if isinstance(nested, dict) else data
    if isinstance(settings.get("servers"), dict):
        folder = path.parent.parent if path is not None and path.parent.name == ".vscode" else None
        return {"mcpServers": _vscode(settings["servers"], folder)}
    keys = ", ".join(repr(k) for k in list(data)[:5]) or "none"
    raise ConfigFormatError(f"The MCP config needs {_FORMATS}; its top-level keys are {keys}.")
