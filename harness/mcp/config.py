"""MCP server configuration: the ``{"mcpServers": {...}}`` file people already write, checked.

Introduced in Chapter 5 (MCP integration).

The shape is the one Claude Desktop, Claude Code and Cursor use, plus the switches tool search
needs (``deferLoading``, ``disabledTools``, timeouts). A config is read once and checked whole:
a wrong field fails here with one sentence naming the server and the field, instead of later as
a server that silently never starts. A remote (``http``/``sse``/``url``) server is kept in the
config as skipped, with the reason, so the stdio servers beside it still run. ``${VAR}`` in ``env`` values is filled from the parent
environment because keys belong in the environment, not in a committed file; a server is given
only the variables its config names (the SDK adds HOME, LOGNAME, PATH, SHELL, TERM and USER).
"""
from __future__ import annotations

import difflib
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from harness.core.registry import DEFAULT_TIMEOUT as REGISTRY_TIMEOUT
from harness.core.json_types import JSON, JSONObject

#: Seconds a server may take to start, initialize and list its tools.
DEFAULT_STARTUP_TIMEOUT = 20.0
#: Seconds one tool call may take: under the registry's own limit, so the clearer MCP message comes first.
DEFAULT_CALL_TIMEOUT = REGISTRY_TIMEOUT - 5.0
#: The longest timeout a config may set (a day): longer ones are typos, and some clocks overflow on them.
MAX_TIMEOUT = 86_400.0

_FIELDS = ("type", "command", "args", "env", "cwd", "deferLoading", "enabled", "disabledTools",
           "startupTimeout", "callTimeout")
#: Transports other clients run; a server of one of these is skipped with a reason, not an error.
_REMOTE_TYPES = ("http", "sse", "streamable-http", "streamableHttp", "ws", "websocket")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class MCPConfigError(ValueError):
    """A malformed MCP config; the message is one sentence naming the server and the field."""


class _DuplicateKey(ValueError):
    """A JSON object names one key twice (``json`` would silently keep the last)."""


def _unique_keys(pairs: list[tuple[str, JSON]]) -> JSONObject:
    """``object_pairs_hook`` for :func:`json.loads` that refuses an object naming one key twice."""
    seen: JSONObject = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen[key] = value
    return seen


@dataclass(frozen=True)
class ServerConfig:
    """One server: how to launch it and how its tools are exposed."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    defer_loading: bool | None = None  # None: the session-wide threshold decides
    enabled: bool = True
    disabled_tools: frozenset[str] = frozenset()
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    skipped: str = ""  # why a server the config lists is not run (an http server), else ""


@dataclass(frozen=True)
class MCPConfig:
    servers: Mapping[str, ServerConfig]

    def __iter__(self):
        return iter(self.servers.values())

    def __len__(self) -> int:
        return len(self.servers)

    @property
    def enabled(self) -> list[ServerConfig]:
        return [s for s in self.servers.values() if s.enabled]


def _type_name(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _expand(value: str, where: str, environ: Mapping[str, str]) -> str:
    def fill(m: re.Match[str]) -> str:
        if m.group(1) not in environ:
            raise MCPConfigError(f"{where} refers to ${{{m.group(1)}}}, which is not set in the environment.")
        return environ[m.group(1)]

    return _VAR.sub(fill, value)


def _string_list(value: JSON, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        got = _type_name(value) if not isinstance(value, list) else "a list with " + ", ".join(
            sorted({_type_name(v) for v in value if not isinstance(v, str)}))
        raise MCPConfigError(f"{where} must be a list of strings, got {got}.")
    return tuple(value)


def _seconds(value: JSON, where: str, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_TIMEOUT:
        shown = value if not isinstance(value, float) or math.isfinite(value) else str(value)
        raise MCPConfigError(f"{where} must be a positive number of seconds up to {MAX_TIMEOUT:.0f}, got {shown!r}.")
    return float(value)


def _flag(value: JSON, where: str, default: bool | None) -> bool | None:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise MCPConfigError(f"{where} must be true or false, got {_type_name(value)} {value!r}.")
    return value


def parse_server(name: str, spec: JSON, environ: Mapping[str, str]) -> ServerConfig:
    """One ``mcpServers`` entry as a :class:`ServerConfig`, or :class:`MCPConfigError`."""
    where = f"mcpServers.{name}"
    if not name or not isinstance(name, str):
        raise MCPConfigError("mcpServers has a server with an empty name; give every server a name.")
    if not isinstance(spec, dict):
        raise MCPConfigError(f"{where} must be an object with at least 'command', got {_type_name(spec)}.")
    kind = spec.get("type", "stdio")
    if kind in _REMOTE_TYPES or (kind == "stdio" and "url" in spec and "command" not in spec):
        what = f"type {kind!r} servers are" if kind != "stdio" else "a 'url' server is"
        return ServerConfig(name=name, command="", enabled=False,
                            skipped=f"skipped: {what} not supported here; this harness runs stdio servers only")
    unknown = [k for k in spec if k not in _FIELDS]
    if unknown:
        close = difflib.get_close_matches(unknown[0], _FIELDS, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else f" (known fields: {', '.join(_FIELDS)})"
        raise MCPConfigError(f"{where} has an unknown field '{unknown[0]}'{hint}.")
    if kind != "stdio":
        raise MCPConfigError(f"{where}.type must be 'stdio' (the only transport this harness runs), got {kind!r}.")
    command = spec.get("command")
    if not isinstance(command, str) or not command.strip():
        got = "nothing" if "command" not in spec else f"{_type_name(command)} {command!r}"
        raise MCPConfigError(f"{where}.command must be a non-empty string, got {got}.")
    env_spec = spec.get("env", {})
    if not isinstance(env_spec, dict):
        raise MCPConfigError(f"{where}.env must be an object of strings, got {_type_name(env_spec)}.")
    env: dict[str, str] = {}
    for key, value in env_spec.items():
        if not isinstance(value, str):
            raise MCPConfigError(f"{where}.env.{key} must be a string, got {_type_name(value)}.")
        env[key] = _expand(value, f"{where}.env.{key}", environ)
    cwd = spec.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise MCPConfigError(f"{where}.cwd must be a string path, got {_type_name(cwd)}.")
    return ServerConfig(
        name=name,
        command=command,
        args=_string_list(spec.get("args", []), f"{where}.args"),
        env=env,
        cwd=cwd,
        defer_loading=_flag(spec.get("deferLoading"), f"{where}.deferLoading", None),
        enabled=bool(_flag(spec.get("enabled"), f"{where}.enabled", True)),
        disabled_tools=frozenset(_string_list(spec.get("disabledTools", []), f"{where}.disabledTools")),
        startup_timeout=_seconds(spec.get("startupTimeout"), f"{where}.startupTimeout", DEFAULT_STARTUP_TIMEOUT),
        call_timeout=_seconds(spec.get("callTimeout"), f"{where}.callTimeout", DEFAULT_CALL_TIMEOUT),
    )


def read_source(source: Mapping[str, JSON] | str | os.PathLike[str]) -> JSON:
    """The config's raw data: a mapping as given, or a file's JSON (a one-sentence error if it is not)."""
    if isinstance(source, Mapping):
        return source
    if not isinstance(source, (str, os.PathLike)):
        raise MCPConfigError(f"The MCP config must be a dict, a JSON string or a path, got {_type_name(source)}.")
    text = str(source)
    if isinstance(source, str) and text.lstrip().startswith(("{", "[")):
        origin = "The MCP config"
    else:
        path = Path(text).expanduser()
        if path.is_dir():
            raise MCPConfigError(f"The MCP config file '{path}' is a folder, not a file: pass the mcpServers JSON file itself.")
        if not path.is_file():
            raise MCPConfigError(f"The MCP config file '{path}' does not exist.")
        origin = f"The MCP config file '{path}'"
        try:
            text = path.read_text(encoding="utf-8-sig")  # a BOM (Windows editors) is not an error
        except UnicodeDecodeError as exc:
            raise MCPConfigError(f"{origin} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}): "
                                 "save it as UTF-8.") from None
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise MCPConfigError(f"{origin} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}.") from None
    except _DuplicateKey as exc:
        raise MCPConfigError(f"{origin} names {str(exc)!r} twice in one object (JSON keeps only the last): "
                             "keep one of them.") from None
    except RecursionError:
        raise MCPConfigError(f"{origin} is nested too deeply to read: an mcpServers file is a few levels deep, "
                             "so check it is the right file.") from None


def load_config(
    source: MCPConfig | Mapping[str, JSON] | str | os.PathLike[str],
    environ: Mapping[str, str] | None = None,
) -> MCPConfig:
    """A checked config from a dict, a JSON string or a path to a JSON file.

    ``environ`` (default ``os.environ``) fills ``${VAR}`` references in ``env`` values.
    """
    if isinstance(source, MCPConfig):
        return source
    data = read_source(source)
    if not isinstance(data, Mapping) or not isinstance(data.get("mcpServers"), dict):
        got = _type_name(data.get("mcpServers")) if isinstance(data, Mapping) else _type_name(data)
        raise MCPConfigError(f"The MCP config needs a top-level object 'mcpServers' mapping names to servers, got {got}.")
    env = os.environ if environ is None else environ
    return MCPConfig({name: parse_server(name, spec, env) for name, spec in data["mcpServers"].items()})
