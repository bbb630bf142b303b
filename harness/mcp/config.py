"""MCP server configuration: the ``{"mcpServers": {...}}`` file people already write, checked.

Introduced in Chapter 5 (MCP integration).

The shape is the one Claude Desktop, Claude Code and Cursor use, plus the switches tool search
needs (``deferLoading``, ``disabledTools``, timeouts); VS Code's and Codex's files are read too
(:mod:`harness.mcp.config_formats`). A config is read once and checked whole: a wrong field fails
here with one sentence naming the server and the field, instead of later as a server that silently
never starts. A server runs over stdio (``command``) or is remote (``url``, with ``type`` ``http``,
``streamable-http`` or ``sse``, and ``headers``); a WebSocket server is kept in the config as
skipped, with the reason, so the servers beside it still run.

``${VAR}`` and ``${VAR:-default}`` are filled from the parent environment in ``command``, ``args``,
``env``, ``url`` and ``headers``, as Claude Code does, because keys belong in the environment, not
in a committed file: an unset ``${VAR}`` is an error naming the field, and the default is used when
the variable is unset or empty (the shell's ``:-``). A server is given only the variables its
config names (the SDK adds HOME, LOGNAME, PATH, SHELL, TERM and USER).
"""
from __future__ import annotations

import dataclasses
import difflib
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from harness.core.redaction import redact_url_credentials
from harness.core.registry import DEFAULT_TIMEOUT as REGISTRY_TIMEOUT
from harness.core.json_types import JSON, JSONObject

#: Seconds a server may take to start, initialize and list its tools.
DEFAULT_STARTUP_TIMEOUT = 20.0
#: Seconds one tool call may take: under the registry's own limit, so the clearer MCP message comes first.
DEFAULT_CALL_TIMEOUT = REGISTRY_TIMEOUT - 5.0
#: The longest timeout a config may set (a day): longer ones are typos, and some clocks overflow on them.
MAX_TIMEOUT = 86_400.0

_COMMON = ("type", "deferLoading", "enabled", "disabledTools", "startupTimeout", "callTimeout")
_STDIO_FIELDS = ("command", "args", "env", "cwd", *_COMMON)
_REMOTE_FIELDS = ("url", "headers", *_COMMON)
#: ``type`` values and the transport each means.
TRANSPORTS = {"stdio": "stdio", "http": "http", "streamable-http": "http", "streamableHttp": "http", "sse": "sse"}
#: Transports other clients run that this one does not; a server of one of these is skipped with a reason, not an error.
_SKIPPED_TYPES = ("ws", "websocket")
#: ``${VAR}``, ``${VAR:-default}``; VS Code's ``${env:VAR}`` is the first.
_VAR = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


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
    """One server: how to launch or reach it and how its tools are exposed."""

    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    defer_loading: bool | None = None  # None: the session-wide threshold decides
    enabled: bool = True
    disabled_tools: frozenset[str] = frozenset()
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    skipped: str = ""  # why a server the config lists is not run (a WebSocket server), else ""
    transport: str = "stdio"  # "stdio", "http" (streamable HTTP) or "sse"
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def remote(self) -> bool:
        return self.transport != "stdio"


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


def expand(value: str, where: str, environ: Mapping[str, str]) -> str:
    """``value`` with ``${VAR}`` and ``${VAR:-default}`` filled from ``environ`` (one sentence for an unset one)."""
    def fill(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        if default is not None:
            return environ.get(name) or default
        if name not in environ:
            raise MCPConfigError(f"{where} refers to ${{{name}}}, which is not set in the environment.")
        return environ[name]

    if "${input:" in value:
        raise MCPConfigError(f"{where} uses VS Code's ${{input:…}}, which only the editor can ask for: "
                             "put the value in an environment variable and write ${VAR}.")
    return _VAR.sub(fill, value)


def _strings(value: JSON, where: str, environ: Mapping[str, str]) -> dict[str, str]:
    """An object of strings (``env``, ``headers``), each value expanded."""
    if not isinstance(value, dict):
        raise MCPConfigError(f"{where} must be an object of strings, got {_type_name(value)}.")
    out: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(item, str):
            raise MCPConfigError(f"{where}.{key} must be a string, got {_type_name(item)}.")
        out[key] = expand(item, f"{where}.{key}", environ)
    return out


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


def _transport(spec: JSONObject, where: str) -> str:
    """The transport an entry asks for: its ``type``, else ``http`` for a ``url`` alone (``sse`` when it ends in /sse)."""
    kind = spec.get("type")
    if kind is None:
        if "url" in spec and "command" in spec:
            raise MCPConfigError(f"{where} has both 'command' and 'url': give it \"type\": \"stdio\" or \"http\".")
        if "url" not in spec:
            return "stdio"
        url = spec["url"]
        return "sse" if isinstance(url, str) and url.rstrip("/").endswith("/sse") else "http"
    if kind not in TRANSPORTS:
        raise MCPConfigError(f"{where}.type must be one of {', '.join(repr(t) for t in TRANSPORTS)}, got {kind!r}.")
    return TRANSPORTS[kind]


def _checked_fields(spec: JSONObject, known: tuple[str, ...], where: str, transport: str) -> None:
    unknown = [k for k in spec if k not in known]
    if not unknown:
        return
    other = _REMOTE_FIELDS if transport == "stdio" else _STDIO_FIELDS
    if unknown[0] in other:
        kind = "a stdio server (one with 'command')" if transport == "stdio" else f"an {transport} server (one with 'url')"
        raise MCPConfigError(f"{where}.{unknown[0]} does not apply to {kind}.")
    close = difflib.get_close_matches(unknown[0], known, n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else f" (known fields: {', '.join(known)})"
    raise MCPConfigError(f"{where} has an unknown field '{unknown[0]}'{hint}.")


def _remote(name: str, spec: JSONObject, where: str, environ: Mapping[str, str]) -> ServerConfig:
    """An http or sse server's ``url`` and ``headers``, expanded and checked."""
    url = spec.get("url")
    if not isinstance(url, str) or not url.strip():
        got = "nothing" if "url" not in spec else f"{_type_name(url)} {url!r}"
        raise MCPConfigError(f"{where}.url must be an http:// or https:// address, got {got}.")
    url = expand(url, f"{where}.url", environ).strip()
    if not url.lower().startswith(("http://", "https://")):
        raise MCPConfigError(f"{where}.url must be an http:// or https:// address, got {redact_url_credentials(url)!r}.")
    return ServerConfig(name=name, url=url, headers=_strings(spec.get("headers", {}), f"{where}.headers", environ))


def _stdio(name: str, spec: JSONObject, where: str, environ: Mapping[str, str]) -> ServerConfig:
    """A stdio server's ``command``, ``args``, ``env`` and ``cwd``, expanded and checked."""
    command = spec.get("command")
    if not isinstance(command, str) or not command.strip():
        got = "nothing" if "command" not in spec else f"{_type_name(command)} {command!r}"
        raise MCPConfigError(f"{where}.command must be a non-empty string, got {got}.")
    cwd = spec.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise MCPConfigError(f"{where}.cwd must be a string path, got {_type_name(cwd)}.")
    args = _string_list(spec.get("args", []), f"{where}.args")
    return ServerConfig(name=name, command=expand(command, f"{where}.command", environ),
                        args=tuple(expand(a, f"{where}.args[{i}]", environ) for i, a in enumerate(args)),
                        env=_strings(spec.get("env", {}), f"{where}.env", environ), cwd=cwd)


def parse_server(name: str, spec: JSON, environ: Mapping[str, str]) -> ServerConfig:
    """One ``mcpServers`` entry as a :class:`ServerConfig`, or :class:`MCPConfigError`."""
    where = f"mcpServers.{name}"
    if not name or not isinstance(name, str):
        raise MCPConfigError("mcpServers has a server with an empty name; give every server a name.")
    if not isinstance(spec, dict):
        raise MCPConfigError(f"{where} must be an object with 'command' (stdio) or 'url' (http), got {_type_name(spec)}.")
    if spec.get("type") in _SKIPPED_TYPES:
        return ServerConfig(name=name, enabled=False,
                            skipped=f"skipped: type {spec['type']!r} servers are not supported here; "
                                    "this harness runs stdio, streamable HTTP and SSE servers")
    transport = _transport(spec, where)
    _checked_fields(spec, _STDIO_FIELDS if transport == "stdio" else _REMOTE_FIELDS, where, transport)
    reach = _stdio(name, spec, where, environ) if transport == "stdio" else _remote(name, spec, where, environ)
    return dataclasses.replace(
        reach,
        transport=transport,
        defer_loading=_flag(spec.get("deferLoading"), f"{where}.deferLoading", None),
        enabled=bool(_flag(spec.get("enabled"), f"{where}.enabled", True)),
        disabled_tools=frozenset(_string_list(spec.get("disabledTools", []), f"{where}.disabledTools")),
        startup_timeout=_seconds(spec.get("startupTimeout"), f"{where}.startupTimeout", DEFAULT_STARTUP_TIMEOUT),
        call_timeout=_seconds(spec.get("callTimeout"), f"{where}.callTimeout", DEFAULT_CALL_TIMEOUT),
    )


def read_source(source: Mapping[str, JSON] | str | os.PathLike[str],
                environ: Mapping[str, str] | None = None) -> JSONObject:
    """The config's data as ``{"mcpServers": {...}}``: a mapping as given, a JSON string, or a file — any
    client's (:mod:`harness.mcp.config_formats`) — with a one-sentence error for anything else."""
    from harness.mcp.config_formats import ConfigFormatError, as_mcp_servers  # other clients' formats, when read
    env = os.environ if environ is None else environ
    path: Path | None = None
    if isinstance(source, Mapping):
        data: JSON = dict(source)
    elif not isinstance(source, (str, os.PathLike)):
        raise MCPConfigError(f"The MCP config must be a dict, a JSON string or a path, got {_type_name(source)}.")
    elif isinstance(source, str) and source.lstrip().startswith(("{", "[")):
        data = _parse_json(source, "The MCP config")
    else:
        path = Path(source).expanduser()
        data = _read_file(path)
    try:
        return as_mcp_servers(data, path, env)
    except ConfigFormatError as exc:
        raise MCPConfigError(str(exc)) from None


def _read_file(path: Path) -> JSON:
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
    if path.suffix == ".toml":
        from harness.mcp.config_formats import ConfigFormatError, parse_toml

        try:
            return parse_toml(text, origin)
        except ConfigFormatError as exc:
            raise MCPConfigError(str(exc)) from None
    return _parse_json(text, origin)


def _parse_json(text: str, origin: str) -> JSON:
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
    """A checked config from a dict, a JSON string or a path to any client's config file.

    ``environ`` (default ``os.environ``) fills ``${VAR}`` and ``${VAR:-default}`` references.
    """
    if isinstance(source, MCPConfig):
        return source
    env = os.environ if environ is None else environ
    data = read_source(source, env)
    if not isinstance(data.get("mcpServers"), dict):
        raise MCPConfigError("The MCP config needs a top-level object 'mcpServers' mapping names to servers, "
                             f"got {_type_name(data.get('mcpServers'))}.")
    return MCPConfig({name: parse_server(name, spec, env) for name, spec in data["mcpServers"].items()})
