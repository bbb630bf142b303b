"""``MCPHub``: every configured MCP server started, listed, called and shut down as one session.

Introduced in Chapter 5 (MCP integration).

Why it is built this way:

* Each server lives in **its own asyncio task** that enters the SDK's transport (``stdio_client``
  for a command; ``streamable_http_client`` or ``sse_client`` for a ``url``) and ``ClientSession``
  and stays inside them until told to stop. The SDK's context managers hold anyio
  cancel scopes that must be left by the task that entered them; one task per server keeps that
  true, lets servers start concurrently, and lets ``start()`` and ``aclose()`` sit in different
  notebook cells.
* A server that is missing, exits, hangs or crashes — or, remote, refuses the connection, answers
  an HTTP error or something that is not MCP — is a **status**, not an exception: the others
  keep working. A crashed one is started again after :data:`RESTART_DELAYS` (5 s, then 30 s, then
  120 s; then it stays crashed), its status's notes saying so. A tool call that fails, hangs or
  hits a crashed server becomes an **error result** the model can read
  (``ToolResult(is_error=True)``), never an exception that ends the loop.
* Shutdown is **shielded**: interrupting a notebook cell cancels the task running it, and the hub
  still closes every server (the SDK closes stdin, then terminates, then kills the process group).
* Each server's stderr goes to its own log file (the SDK needs a real file there), so a failure's
  reason can quote the server's last words (with the values of its ``env`` and URL passwords
  hidden, :mod:`harness.core.redaction`). The file is named from the server name made safe
  (a server called ``../x`` cannot write outside the folder), and a folder the hub created is
  removed when the hub closes, or at exit.
* A server's tools are checked one by one: a definition the SDK's types reject, an invalid
  input schema or a name that lands on another tool's costs that tool only (a status note).
* A line on a server's stdout that is not an MCP message fails start-up, or the calls waiting
  on that server, **at once** with the line quoted, instead of waiting for a timeout.
* A relative ``command`` with a ``cwd`` is looked for in that ``cwd``, by the pre-check and the
  spawn alike (:func:`command_path`).
* When a server exits, the helper processes it started go too: the SDK runs each server in a
  process group of its own but ends the group only when the server itself will not exit. Each
  server gets a random id in its environment, which its helpers inherit; at the end every process
  still carrying it is ended (found through ``/proc``: on systems without it, only the SDK's
  process-group kill applies).
* Each server runs under a **guard** (:mod:`harness.mcp.guard`) that leads its process group: when
  the hub's process dies without clean-up (SIGKILL), the guard ends the server and its helpers; and
  it passes the server's stdout on line by line, cutting a line over :data:`MAX_MESSAGE_BYTES` (the
  SDK reads a long line in quadratic time) with a notice of what was cut.

MCP tools become :class:`~harness.mcp.mcp_tool.MCPTool` objects, so the harness's own
``ToolRegistry.adispatch`` runs them; deferral and ``search_tools`` sit on top
(:mod:`harness.mcp.deferral`, :mod:`harness.mcp.tool_search`).
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import signal
import sys
import time
import uuid
import weakref
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable, Iterable, Literal, Mapping, TypeVar
from urllib.parse import parse_qsl, urlsplit

import anyio
import mcp.types as mcp_types
import pydantic
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.message import SessionMessage

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup  # a builtin from Python 3.11; anyio installs the backport before

from harness.mcp.config import MCPConfig, ServerConfig, load_config
from harness.mcp.deferral import DeferralPolicy, plan_deferral
from harness.mcp.guard import SERVER_ID_VARIABLE, guarded, ids_carrying
from harness.mcp.mcp_tool import MCPTool, build_mcp_tool
from harness.mcp.names import NameTable, identity_hash, sanitize
from harness.mcp.suspicious import LookAlikes, flag_tool
from harness.selection.discovery import RankerSpec, checked_spec
from harness.mcp.tool_search import SEARCH_TOOL_NAME, mcp_search
from harness.core.messages import ToolResult
from harness.core.redaction import hide_values, secrets_in_args, url_credentials
from harness.core.registry import MAX_RESULT_CHARS, ToolRegistry, truncate
from harness.core.safe_text import printable, shown, valid_unicode
from harness.core.schema_check import schema_problem
from harness.core.temp_folders import owned_temp_folder
from harness.core.tools import Tool
from harness.core.json_types import JSON

State = Literal["starting", "ready", "failed", "timed out", "crashed", "disabled", "stopped"]
#: A server that answers ``tools/list`` with more pages than this is treated as broken.
MAX_TOOL_PAGES = 1_000
#: A line a server writes longer than this is cut by its guard (:mod:`harness.mcp.guard`): what a model reads of
#: a result is at most ``max_result_chars`` anyway, and the SDK reads a long line in quadratic time (60 MB: 57 s).
MAX_MESSAGE_BYTES = 4_000_000
#: Seconds before each restart of a server that crashed; after the last one, a crashed server stays crashed.
RESTART_DELAYS = (5.0, 30.0, 120.0)
_RESTARTED = "restarted after it crashed"
#: A hub's own log folder is ``<temp>/mcp-logs-<pid>-<random>``.
LOG_PREFIX = "mcp-logs-"


def _without_parse_errors(record: logging.LogRecord) -> bool:
    """Drop the SDK's log of a line a server wrote that is not an MCP message: it quotes the line (a token the
    server printed, say) to stderr in full. The hub reports the line itself, with the server's secrets hidden."""
    return not str(record.msg).startswith("Failed to parse JSONRPC message")


logging.getLogger("mcp.client.stdio").addFilter(_without_parse_errors)


T = TypeVar("T")


class UpstreamError(Exception):
    """A request to an upstream server that got no result: one sentence, and the JSON-RPC code to pass on
    (the server's own when it refused the request, else INTERNAL_ERROR)."""

    def __init__(self, message: str, code: int = mcp_types.INTERNAL_ERROR) -> None:
        super().__init__(message)
        self.message, self.code = message, code


class MCPCallError(RuntimeError):
    """A tool call that came back as an error; raised by an MCP tool's ``fn`` so the registry reports it."""


@dataclass
class ServerStatus:
    """What happened to one server, in words a person can act on."""

    name: str
    state: State = "starting"
    reason: str = ""
    startup_seconds: float | None = None
    log_path: Path | None = None
    server_info: str = ""
    notes: list[str] = field(default_factory=list)



def temp_folder_env() -> dict[str, str]:
    """Where the user put temp files (``TMPDIR``), for each server: the SDK passes only a safe few variables, and a
    server would otherwise write its scratch to the system's temp folder behind the user's back."""
    return {k: os.environ[k] for k in ("TMPDIR",) if k in os.environ}

def _leaf(exc: BaseException) -> BaseException:
    """The first real exception inside (nested) exception groups from anyio task groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _last_line(path: Path | None, hidden: Iterable[str] = ()) -> str:
    """The last non-empty line a server wrote to stderr (often the reason it died), escapes shown.

    The values in ``hidden`` (the server's ``env``: a failed login often prints its token) and
    passwords in URLs are replaced by ``***`` before the line is cut to length.
    """
    if path is None or not path.exists():
        return ""
    lines = [ln.strip() for ln in path.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    return printable(hide_values(lines[-1][-2_000:], hidden)[:200]) if lines else ""


def command_path(config: ServerConfig) -> str:
    """The command as the spawn runs it: a relative path with a separator is found in ``cwd``, as POSIX exec does.

    The pre-check and the spawn both use this, so they cannot disagree about where the file is.
    """
    command, separators = config.command, [s for s in (os.sep, os.altsep) if s]
    if config.cwd is not None and any(s in command for s in separators) and not os.path.isabs(command):
        return os.path.join(config.cwd, command)
    return command


def log_file_name(server: str) -> str:
    """A file name for a server's log that stays inside the log folder, whatever the server is called."""
    safe = sanitize(server)[:48]
    return f"{safe}.log" if safe == server else f"{safe}-{identity_hash(server, '')[:8]}.log"


def one_line(error: BaseException) -> str:
    """An exception as one short line: a pydantic dump becomes 'field: message' of its first error."""
    if isinstance(error, pydantic.ValidationError) and error.errors():
        first = error.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return printable(f"{where}: {first.get('msg', '')}" if where else str(first.get("msg", "")), keep_newlines=False)
    text = printable(str(error), keep_newlines=False)
    return text[:200]


def _garbage_text(error: Exception) -> str:
    """The start of the line that was not an MCP message, as far as the parse error kept it (secrets not yet hidden)."""
    raw: JSON = None
    if isinstance(error, pydantic.ValidationError) and error.errors():
        raw = error.errors()[0].get("input")
    text = raw if isinstance(raw, str) else str(error).split("\n", 1)[0]
    return printable(text.strip()[:2_000], keep_newlines=False)


class _CheckedReplies:
    """A server's messages as its session reads them, with two things the SDK does not check.

    A reply whose id is a string answers nothing: the session asks with whole numbers, and the SDK would
    take ``"7"`` for ``7``; so it becomes protocol garbage, which fails the calls waiting on the server at
    once. And the end of the stream sets ``closed``: a server that exits between calls is seen crashed
    then, not at the next call.
    """

    def __init__(self, stream: Any, closed: asyncio.Event) -> None:  # Any: the SDK's receive stream
        self._stream, self.closed = stream, closed

    async def receive(self) -> SessionMessage | Exception:
        try:
            item = await self._stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self.closed.set()
            raise
        message = getattr(item, "message", None)
        if isinstance(message, (mcp_types.JSONRPCResponse, mcp_types.JSONRPCError)) and isinstance(message.id, str):
            return ValueError(f"a reply whose id {shown(message.id)} is a string; every request's id is a number")
        return item

    def __aiter__(self) -> "_CheckedReplies":
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> "_CheckedReplies":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:  # Any: whatever else the SDK asks of its stream
        return getattr(self._stream, name)


class _LenientToolList(pydantic.BaseModel):
    """A ``tools/list`` page whose entries are checked one by one instead of all or nothing."""

    model_config = pydantic.ConfigDict(extra="allow")
    tools: list[JSON] = []
    nextCursor: str | None = None  # noqa: N815 (the wire name)


def signal_marked(markers: Iterable[str], sig: int) -> bool:
    """Send ``sig`` to every process carrying a marker, and to the process group each server leads; False if none is left."""
    pids = ids_carrying(*markers)
    own_group = os.getpgid(0)
    for pid in pids:
        try:
            if os.getpgid(pid) == pid != own_group:  # a server the SDK started in a group of its own
                os.killpg(pid, sig)
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
    return bool(pids)


async def end_leftovers(*markers: str, grace: float = 2.0) -> None:
    """SIGTERM, then after ``grace`` seconds SIGKILL, every process still carrying one of ``markers`` (and its group)."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 0.5)):
        if not signal_marked(markers, sig):
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and ids_carrying(*markers):
            await anyio.sleep(0.05)


def render_content(result: mcp_types.CallToolResult, limit: int | None = None) -> str:
    """A ``tools/call`` result as the text a model reads; non-text blocks are described, not dropped.

    With ``limit``, the text is cut to that many characters with a note of what was cut.
    """
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, (mcp_types.ImageContent, mcp_types.AudioContent)):
            parts.append(f"[{block.type}: {block.mime_type}, {len(block.data) * 3 // 4:,} bytes]")
        elif isinstance(block, mcp_types.EmbeddedResource):
            res = block.resource
            text = getattr(res, "text", None)
            parts.append(text if text is not None else f"[resource {res.uri}: {res.mime_type or 'binary'}]")
        elif isinstance(block, mcp_types.ResourceLink):
            parts.append(f"[resource link: {block.uri}]")
        else:
            parts.append(f"[{getattr(block, 'type', type(block).__name__)} content]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    text = "\n".join(parts)
    return truncate(text, limit) if limit is not None else text


async def _list_page(session: ClientSession, cursor: str | None, notes: list[str]) -> tuple[list[mcp_types.Tool], str | None]:
    """One ``tools/list`` page; when one entry breaks the SDK's types, the rest are still used."""
    params = mcp_types.PaginatedRequestParams(cursor=cursor)
    try:
        page = await session.list_tools(params=params)
        return page.tools, page.next_cursor
    except pydantic.ValidationError:
        dispatcher = getattr(session, "_dispatcher", None)
        if dispatcher is None:  # no raw path in this SDK version: the server fails as a whole
            raise
    # The SDK validates a result by its method before any result type is applied, so the raw page
    # is asked for again below its typed layer (mcp 2.x; pinned <3 in pyproject.toml).
    wire = params.model_dump(by_alias=True, mode="json", exclude_none=True) or None
    raw = _LenientToolList.model_validate(await dispatcher.send_raw_request("tools/list", wire, {}))
    tools: list[mcp_types.Tool] = []
    for number, entry in enumerate(raw.tools, 1):
        try:
            tools.append(mcp_types.Tool.model_validate(entry))
        except pydantic.ValidationError as exc:
            name = entry.get("name") if isinstance(entry, dict) else None
            label = f"tool #{number} skipped" + (f" ({printable(name, keep_newlines=False)[:64]!r})" if isinstance(name, str) else "")
            notes.append(f"{label}: {one_line(exc)}")
    # The SDK keeps per-tool state (output schemas) from listings; give it the tools that passed.
    absorb = getattr(session, "_absorb_tool_listing", None)
    if absorb is not None:
        absorb(mcp_types.ListToolsResult(tools=tools, next_cursor=raw.nextCursor), complete=cursor is None and raw.nextCursor is None)
    return tools, raw.nextCursor


async def all_pages(page: Callable[[str | None], Awaitable[tuple[list[Any], str | None]]], what: str) -> list[Any]:  # Any: the SDK's listed items
    """Every item of a paginated listing, following the cursor ``page(cursor)`` returns until it is None."""
    items: list[Any] = []  # Any: the SDK's listed items
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_TOOL_PAGES):
        found, cursor = await page(cursor)
        items.extend(found)
        if cursor is None:
            return items
        if cursor in seen:
            raise RuntimeError(f"the server sent the cursor {cursor!r} twice while listing {what}")
        seen.add(cursor)
    raise RuntimeError(f"the server listed more than {MAX_TOOL_PAGES} pages of {what}")


async def list_all_tools(session: ClientSession, notes: list[str] | None = None) -> list[mcp_types.Tool]:
    """Every tool a server offers, following ``next_cursor`` page after page.

    A definition the SDK's types reject is left out with a one-line reason appended to ``notes``.
    """
    kept = notes if notes is not None else []
    return await all_pages(lambda cursor: _list_page(session, cursor, kept), "tools")


async def list_offered(session: ClientSession, capabilities: mcp_types.ServerCapabilities,
                       notes: list[str]) -> tuple[list[mcp_types.Resource], list[mcp_types.ResourceTemplate], list[mcp_types.Prompt]]:
    """A server's resources, resource templates and prompts, as far as it offers them (for the proxy to pass on).

    A listing that fails is left empty with a note: the server's tools still count.
    """
    async def every(what: str, lister: Callable[..., Awaitable[Any]], field: str) -> list[Any]:  # Any: the SDK's results
        async def page(cursor: str | None) -> tuple[list[Any], str | None]:  # Any: the SDK's listed items
            result = await lister(params=mcp_types.PaginatedRequestParams(cursor=cursor))
            return getattr(result, field), result.next_cursor

        try:
            return await all_pages(page, what)
        except Exception as exc:
            notes.append(f"listing its {what} failed: {type(exc).__name__}: {one_line(exc)}")
            return []

    resources, prompts = capabilities.resources is not None, capabilities.prompts is not None
    return (await every("resources", session.list_resources, "resources") if resources else [],
            await every("resource templates", session.list_resource_templates, "resource_templates") if resources else [],
            await every("prompts", session.list_prompts, "prompts") if prompts else [])


class ServerConnection:
    """One server's process and session, owned by the task that runs :meth:`run`."""

    def __init__(self, config: ServerConfig, log_path: Path, max_result_chars: int = MAX_RESULT_CHARS,
                 child_env: Mapping[str, str] | None = None) -> None:
        self.config = config
        self.child_env = dict(child_env or {})  # variables every server of the hub is given besides its own
        self.max_result_chars = max_result_chars
        self.log_path = log_path  # where the server's stderr goes (the status shows it too)
        self.status = ServerStatus(config.name, log_path=log_path)
        self.definitions: list[mcp_types.Tool] = []
        self.resources: list[mcp_types.Resource] = []  # listed at start-up, passed on by the proxy
        self.templates: list[mcp_types.ResourceTemplate] = []
        self.prompts: list[mcp_types.Prompt] = []
        self.session: ClientSession | None = None
        self.ready = asyncio.Event()  # set once start-up has ended, however it ended
        self.stop = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.marker = f"{SERVER_ID_VARIABLE}={uuid.uuid4().hex}"
        self.garbage: str | None = None  # the last line on stdout that was not an MCP message
        self.refusal = ""  # a remote server's last HTTP error status ("HTTP 401 Unauthorized")
        self._waiting: set[anyio.CancelScope] = set()  # start-up and calls that garbage cancels
        self.on_tools_changed: Callable[[], None] | None = None  # called on notifications/tools/list_changed
        self._restarted: str | None = None  # the note a restart under way adds once the server is ready

    async def _on_message(self, message: Any) -> None:  # Any: the SDK hands a responder, a notification or an exception
        """The session's message handler: a parse error is protocol garbage, which ends what waits;
        a ``tools/list_changed`` notice is passed on (the SDK calls this from its reading loop, so the
        callback must not wait for a reply itself)."""
        if isinstance(message, mcp_types.ToolListChangedNotification):
            if self.on_tools_changed is not None:
                self.on_tools_changed()
            return
        if isinstance(message, Exception):
            self.garbage = self.hidden(_garbage_text(message))[:120]  # cut after hiding: no secret's head is left
            if self.status.state == "ready":
                note = f"it wrote something that is not an MCP message: {self.garbage}"
                if note not in self.status.notes:
                    self.status.notes.append(note)
            for scope in list(self._waiting):
                scope.cancel()

    def end_startup(self, state: State, reason: str) -> None:
        self.status.state, self.status.reason = state, reason
        if state == "ready" and self._restarted:  # back after a crash: say so, and list its tools again
            self.status.notes.append(self._restarted)
            if self.on_tools_changed is not None:
                self.on_tools_changed()
        self._restarted = None
        self.ready.set()

    def _precheck(self) -> str | None:
        """Why the server cannot even be spawned (one sentence), or None."""
        cfg = self.config
        if cfg.remote:
            return None  # whether the address answers is what start-up finds out
        if cfg.cwd is not None and not Path(cfg.cwd).is_dir():
            return f"working directory '{cfg.cwd}' does not exist"
        path = cfg.env.get("PATH", os.environ.get("PATH"))
        command = command_path(cfg)
        if shutil.which(command, path=path) is None:
            exists = os.sep in command and Path(command).exists()
            where = f" in '{cfg.cwd}'" if command != cfg.command else ""
            return f"command '{cfg.command}' is not executable{where}" if exists else f"command '{cfg.command}' not found{where}"
        return None

    @property
    def secrets(self) -> list[str]:
        """What this server was given that may be secret: its ``env`` values, the secrets in its ``args``, and for a
        remote one its header values, the URL's user and password and the values in its query string (``?key=…``)."""
        cfg = self.config
        remote = [*cfg.headers.values(), *(v for _, v in parse_qsl(urlsplit(cfg.url).query)), *url_credentials(cfg.url)] \
            if cfg.remote else []
        return [*cfg.env.values(), *secrets_in_args(cfg.args), *remote]

    def hidden(self, text: str) -> str:
        """``text`` (what the server printed, or an error quoting it) with :attr:`secrets` and URL passwords as ``***``."""
        return hide_values(text, self.secrets)

    def _exited_reason(self, during: str) -> str:
        if self.config.remote:
            return self.hidden(f"the connection to {self.config.url} closed {during}")
        said = _last_line(self.status.log_path, self.secrets)
        return f"the server exited {during}" + (f"; its last words: {said}" if said else "")

    @asynccontextmanager
    async def _streams(self) -> AsyncIterator[tuple[Any, Any]]:  # Any: the SDK's read and write streams
        """The server's message streams: its process over stdio (stderr to the log file), or its URL."""
        cfg = self.config
        if cfg.transport == "http":
            async with self._http_client(headers=dict(cfg.headers)) as http:
                async with streamable_http_client(cfg.url, http_client=http) as streams:
                    yield streams
        elif cfg.transport == "sse":
            async with sse_client(cfg.url, headers=dict(cfg.headers), timeout=cfg.startup_timeout,
                                  httpx_client_factory=self._http_client) as streams:
                yield streams
        else:
            name, value = self.marker.split("=", 1)
            command, args = guarded(command_path(cfg), cfg.args, MAX_MESSAGE_BYTES)  # ends with its owner; caps each line
            params = StdioServerParameters(command=command, args=args, cwd=cfg.cwd,
                                           env={**temp_folder_env(), **cfg.env, **self.child_env, name: value},
                                           encoding_error_handler="replace")
            with open(self.log_path, "w", encoding="utf-8") as errlog:
                async with stdio_client(params, errlog=errlog) as streams:
                    yield streams

    def _http_client(self, headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None) -> Any:  # Any: httpx2's
        """The SDK's HTTP client for this server, keeping its last HTTP error status (the SDK's own message
        for one is only 'Server returned an error response')."""
        async def note_refusal(response: Any) -> None:  # Any: an httpx.Response
            if response.status_code >= 400:
                self.refusal = f"HTTP {response.status_code} {response.reason_phrase}".strip()

        client = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)
        client.event_hooks["response"].append(note_refusal)
        return client

    def _remote_failure(self, exc: BaseException) -> str:
        """Why a remote server could not start, in words that say what to check; secrets hidden."""
        if self.refusal:
            hint = ": check the credentials in its headers" if self.refusal.split()[1] in ("401", "403") else ""
            return self.hidden(f"{self.config.url} answered {self.refusal}{hint}")
        return self.hidden(f"no MCP session with {self.config.url}: {type(exc).__name__}: {one_line(exc)}")

    async def run(self) -> None:
        """Start, initialize and list; then hold the session open until :attr:`stop` is set."""
        cfg = self.config
        problem = self._precheck()
        if problem:
            return self.end_startup("failed", problem)
        began = time.perf_counter()
        try:
            async with self._streams() as (read, write):
                closed = asyncio.Event()  # the server's stream ended: it exited, or the connection closed
                async with ClientSession(_CheckedReplies(read, closed), write, message_handler=self._on_message) as session:
                    with anyio.move_on_after(cfg.startup_timeout) as deadline:
                        self._waiting.add(deadline)
                        init = await session.initialize()
                        self.definitions = await list_all_tools(session, self.status.notes)
                        self.resources, self.templates, self.prompts = await list_offered(
                            session, init.capabilities, self.status.notes)
                    self._waiting.discard(deadline)
                    if deadline.cancelled_caught and self.garbage is not None:
                        return self.end_startup(
                            "failed", f"the server wrote something that is not an MCP message on stdout: {self.garbage}")
                    if deadline.cancelled_caught:
                        return self.end_startup("timed out", f"did not finish start-up within {cfg.startup_timeout:g} s")
                    self.status.startup_seconds = time.perf_counter() - began
                    self.status.server_info = f"{init.server_info.name} {init.server_info.version}".strip()
                    self.session = session
                    self.end_startup("ready", f"{len(self.definitions)} tools listed")
                    await _first_of(self.stop, closed)
                    if not self.stop.is_set() and self.status.state == "ready":  # it exited between calls
                        self.status.state, self.status.reason = "crashed", self._exited_reason("while idle")
        except Exception as error:  # every start-up failure becomes a status
            exc = _leaf(error)
            if self.status.state == "ready":
                self.status.state, self.status.reason = "crashed", self.hidden(f"the session broke: {type(exc).__name__}: {one_line(exc)}")
            elif isinstance(exc, MCPError) and exc.code == mcp_types.CONNECTION_CLOSED:
                self.end_startup("failed", self._exited_reason("during start-up"))
            elif cfg.remote:
                self.end_startup("failed", self._remote_failure(exc))
            else:
                self.end_startup("failed", self.hidden(f"start-up failed: {type(exc).__name__}: {one_line(exc)}"))
        finally:
            self.session = None
            with anyio.CancelScope(shield=True):
                await end_leftovers(self.marker)  # helpers the server started and left behind
            if self.status.state == "ready":
                self.status.state, self.status.reason = "stopped", "the session was closed"
            elif self.status.state == "starting":
                self.status.state, self.status.reason = "stopped", "the session was closed during start-up"
            self.ready.set()

    async def supervise(self) -> None:
        """:meth:`run`, and after a crash run again, :data:`RESTART_DELAYS` apart: a server that crashes more
        often than that stays crashed. The crash stays the status's reason (what the person acts on); its
        notes say each step: the restart to come, each restart done, the last one given up."""
        await self.run()
        for attempt, delay in enumerate(RESTART_DELAYS, 1):
            restartable = ("crashed",) if attempt == 1 else ("crashed", "failed", "timed out")  # a restart may fail too
            if self.stop.is_set() or self.status.state not in restartable:
                return
            crash, which = self.status.reason, f"restart {attempt} of {len(RESTART_DELAYS)}"
            kept = [n for n in self.status.notes if n.startswith(_RESTARTED)]  # start-up writes its own notes again
            self.status.notes = [*kept, f"restarting in {delay:g} s ({which})"]
            with anyio.move_on_after(delay):
                await self.stop.wait()
            if self.stop.is_set():
                return
            self.ready.clear()  # MCPHub.aclose() stops a start-up under way at once
            self.garbage = None
            self.status.notes = kept
            self.status.state, self.status.reason = "starting", f"restarting after it crashed ({which})"
            self._restarted = f"{_RESTARTED} ({which}): {crash}"  # noted once it is ready again
            await self.run()
        if not self.stop.is_set() and self.status.state in ("crashed", "failed", "timed out"):
            self.status.notes.append(f"not restarted again after {len(RESTART_DELAYS)} restarts")

    async def request(self, label: str, what: str, send: Callable[[ClientSession], Awaitable[T]]) -> T:
        """``send(session)``'s result; a failure on the server's side is an :class:`UpstreamError` saying why.

        ``label`` ("Tool 'x'") and ``what`` ("the call to 'x'") word the sentence; ``send`` applies
        the server's call timeout (``read_timeout_seconds``), whose expiry is reported here.
        """
        name, timeout = self.config.name, self.config.call_timeout
        session = self.session
        if session is None or self.status.state != "ready":
            raise UpstreamError(f"MCP server '{name}' is {self.status.state}: {self.status.reason}.")
        scope = anyio.CancelScope()
        self._waiting.add(scope)
        try:
            with scope:
                return await send(session)
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED and self.stop.is_set():
                raise UpstreamError(f"MCP server '{name}' was shut down during {what}.") from None
            if exc.code == mcp_types.CONNECTION_CLOSED:  # the status says "a call to 'x'", the reply "the call"
                self.status.state, self.status.reason = "crashed", self._exited_reason("during " + what.replace("the ", "a ", 1))
                raise UpstreamError(f"MCP server '{name}' crashed during {what}; its tools are unavailable.") from None
            if exc.code == mcp_types.REQUEST_TIMEOUT:
                raise UpstreamError(f"{label} on MCP server '{name}' did not answer within {timeout:g} s; "
                                    "the call was abandoned.") from None
            raise UpstreamError(self.hidden(f"MCP server '{name}' refused {what}: {exc.message}"), exc.code) from None
        except Exception as exc:  # a malformed reply must not end the agent loop either
            raise UpstreamError(self.hidden(f"{what[0].upper()}{what[1:]} on MCP server '{name}' failed: "
                                            f"{type(exc).__name__}: {one_line(exc)}")) from None
        finally:
            self._waiting.discard(scope)
        raise UpstreamError(f"MCP server '{name}' answered {what} with something that is not an MCP message: {self.garbage}")

    async def call_result(self, raw_name: str, arguments: Mapping[str, JSON],
                          progress: ProgressFnT | None = None) -> mcp_types.CallToolResult:
        """The server's own ``tools/call`` result (``progress`` gets its progress notices), or an error result saying why."""
        try:
            return await self.request(f"Tool '{raw_name}'", f"the call to '{raw_name}'", lambda session: session.call_tool(
                raw_name, dict(arguments), read_timeout_seconds=self.config.call_timeout, progress_callback=progress))
        except UpstreamError as exc:
            return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=exc.message)], is_error=True)

    async def call(self, raw_name: str, arguments: Mapping[str, JSON]) -> tuple[str, bool]:
        """(text, is_error) for one ``tools/call``; never raises for a failure on the server's side."""
        result = await self.call_result(raw_name, arguments)
        return render_content(result, self.max_result_chars), bool(result.is_error)


async def _first_of(*events: asyncio.Event) -> None:
    """Return when any of ``events`` is set."""
    waiters = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()


async def _finish_shielded(awaitable: asyncio.Future[Any]) -> bool:  # Any: a future of any result; only its end is awaited
    """Wait for ``awaitable`` even while being cancelled; True when a cancellation arrived meanwhile."""
    cancelled = False
    while not awaitable.done():
        try:
            await asyncio.shield(awaitable)
        except asyncio.CancelledError:
            cancelled = True
    return cancelled


class MCPHub:
    """All configured MCP servers as one session: start, tools, search, calls, shutdown.

    Use ``async with MCPHub(config) as hub:`` (in a notebook cell or inside ``asyncio.run``), or
    ``hub = await MCPHub(config).start()`` and later ``await hub.aclose()`` across cells.
    """

    def __init__(
        self,
        config: MCPConfig | Mapping[str, JSON] | str | os.PathLike[str],
        *,
        log_dir: str | os.PathLike[str] | None = None,
        policy: DeferralPolicy = DeferralPolicy(),
        keep_loaded: bool = True,
        max_result_chars: int = MAX_RESULT_CHARS,
        environ: Mapping[str, str] | None = None,
        retriever: RankerSpec = None,
        child_env: Mapping[str, str] | None = None,
    ) -> None:
        self.config = load_config(config, environ)
        self.child_env = dict(child_env or {})  # given to every server besides its own env (the proxy marks its children)
        self.retriever = checked_spec(retriever)  # what ranks the deferred tools for search_tools (BM25 by default)
        self.log_dir = Path(log_dir) if log_dir is not None else owned_temp_folder(LOG_PREFIX)
        # A folder the hub made is the hub's to remove: on aclose(), or at exit if it never closed, or by the
        # next hub when this process was killed (its name carries the process id).
        self._remove_logs = (weakref.finalize(self, shutil.rmtree, self.log_dir, ignore_errors=True)
                             if log_dir is None else None)
        self.policy = policy
        self.max_result_chars = max_result_chars
        self.connections: dict[str, ServerConnection] = {}
        self.names = NameTable(())
        self.tools: dict[str, MCPTool] = {}  # every enabled tool of every ready server, by canonical name
        self.disabled: dict[str, str] = {}  # canonical name -> why it cannot be called
        self.plan = plan_deferral({}, {}, policy)
        self.search = mcp_search([], [], keep_loaded=keep_loaded)
        self.look_alikes = LookAlikes()  # every tool's raw name by skeleton, for the look-alike check
        self.flag_cache: dict[str, list[str]] = {}  # the detector's flags by tool name, until the tools change
        #: Called with a server's name when it says its tools changed; :meth:`refresh` re-lists them.
        self.on_tools_changed: Callable[[str], None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # --- lifecycle --------------------------------------------------------------------------

    async def start(self) -> "MCPHub":
        """Start every enabled server concurrently; return when each is ready or has failed."""
        if self._loop is not None:
            raise RuntimeError("This MCPHub has already been started; create a new one for a new session.")
        self._loop = asyncio.get_running_loop()
        if self._remove_logs is None:  # the caller's folder; the hub's own is not made again once removed
            self.log_dir.mkdir(parents=True, exist_ok=True)
        for cfg in self.config:
            conn = ServerConnection(cfg, self.log_dir / log_file_name(cfg.name), self.max_result_chars, self.child_env)
            conn.on_tools_changed = lambda name=cfg.name: self.on_tools_changed and self.on_tools_changed(name)
            self.connections[cfg.name] = conn
            if not cfg.enabled:
                conn.end_startup("disabled", cfg.skipped or "enabled is false in the config")
                continue
            conn.task = asyncio.create_task(conn.supervise(), name=f"mcp-server:{cfg.name}")
        try:
            await asyncio.gather(*(c.ready.wait() for c in self.connections.values()))
            self._build_tools()
        except BaseException:  # interrupted while starting (or unusable names): leave no process behind
            await self.aclose()
            raise
        return self

    async def aclose(self) -> None:
        """Stop every server and wait until their processes are gone, even if this task is cancelled."""
        for conn in self.connections.values():
            conn.stop.set()
            if conn.task is not None and not conn.ready.is_set():
                conn.task.cancel()  # still starting: stop now, not when its start-up timeout runs out
        tasks = [c.task for c in self.connections.values() if c.task is not None]
        cancelled = bool(tasks) and await _finish_shielded(asyncio.gather(*tasks, return_exceptions=True))
        if self._remove_logs is not None:
            self._remove_logs()
        if cancelled:
            raise asyncio.CancelledError()

    async def terminate(self, grace: float) -> None:
        """End every server now, helpers and process groups included: SIGTERM, SIGKILL after ``grace`` seconds.

        For a process that is itself being ended by a signal: it skips the orderly close (stdin
        closed, two seconds' wait) and returns as soon as the processes are gone.
        """
        await end_leftovers(*(c.marker for c in self.connections.values()), grace=grace)

    def kill(self) -> None:
        """SIGKILL every server, its helpers and its process group at once (nothing is awaited)."""
        signal_marked([c.marker for c in self.connections.values()], signal.SIGKILL)

    async def refresh(self, server: str) -> bool:
        """List ``server``'s tools again and rebuild every tool, name and deferral from the new lists.

        What a ``tools/list_changed`` notice asks for. A server that is not ready, or breaks while
        listing, keeps its old tools (with a status note); returns whether the tools were rebuilt.
        """
        conn = self.connections.get(server)
        if conn is None or conn.session is None:
            return False
        try:
            conn.definitions = await list_all_tools(conn.session)
        except Exception as exc:
            conn.status.notes.append(f"re-listing after list_changed failed: {type(exc).__name__}: {one_line(exc)}")
            return False
        for c in self.connections.values():  # the rebuild writes its skip notes afresh
            c.status.notes = [n for n in c.status.notes if not n.startswith("tool '")]
        self.tools.clear()
        self.disabled.clear()
        self._build_tools()
        return True

    async def __aenter__(self) -> "MCPHub":
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # --- tools ------------------------------------------------------------------------------

    def _build_tools(self) -> None:
        """Name every listed tool, wrap the enabled ones, and decide what is deferred."""
        ready = [c for c in self.connections.values() if c.status.state == "ready"]
        self.names = NameTable((c.config.name, d.name) for c in ready for d in c.definitions)
        by_server: dict[str, list[Tool]] = {}
        for conn in ready:
            server = conn.config.name
            by_server[server] = []
            for definition in {d.name: d for d in conn.definitions}.values():  # a repeated name counts once
                label = printable(definition.name, keep_newlines=False)[:64]
                if (server, definition.name) in self.names.skipped:
                    conn.status.notes.append(f"tool '{label}' skipped: {self.names.skipped[(server, definition.name)]}")
                    continue
                canonical = self.names.name(server, definition.name)
                problem = schema_problem(definition.input_schema)
                if problem:
                    conn.status.notes.append(f"tool '{label}' skipped: its input schema is invalid ({problem})")
                    continue
                if definition.name in conn.config.disabled_tools:
                    self.disabled[canonical] = f"it is listed in mcpServers.{server}.disabledTools"
                    continue
                try:
                    t = build_mcp_tool(definition, server, canonical, self._caller(conn, definition.name))
                except ValueError as exc:
                    conn.status.notes.append(f"tool '{label}' skipped: {one_line(exc)}")
                    continue
                self.tools[canonical] = t
                by_server[server].append(t)
        self.look_alikes = LookAlikes(t.raw_name for t in self.tools.values())
        self.flag_cache = {}
        overrides = {name: c.config.defer_loading for name, c in self.connections.items()}
        self.plan = plan_deferral(by_server, overrides, self.policy)
        self.search = mcp_search(
            [self.tools[n] for n in self.plan.loaded],
            [self.tools[n] for n in self.plan.deferred],
            keep_loaded=self.keep_loaded,
            retriever=self.retriever,
        )

    def flags(self, t: Tool) -> list[str]:
        """The poisoning detector's flags for ``t`` (a tool of this session, or one shown beside them), its
        name held against every tool's (a look-alike impersonates another server's tool); computed once
        per tool until the tools change, since a status shows every tool's."""
        cache = self.flag_cache  # a thread may fill it while the tools change: it then fills the old one
        found = cache.get(t.name)
        if found is None:
            found = cache[t.name] = flag_tool(t, self.look_alikes)
        return found

    @staticmethod
    def _caller(conn: ServerConnection, raw_name: str) -> Callable[..., Awaitable[str]]:
        """The ``fn`` of an MCP tool: errors are raised, so the registry turns them into error results."""

        async def call(**arguments: JSON) -> str:
            text, is_error = await conn.call(raw_name, arguments)
            if is_error:
                raise MCPCallError(text)
            return text

        return call

    def tools_for_turn(self) -> list[Tool]:
        """The tools to show the model now: always-loaded MCP tools, activated ones, and ``search_tools``."""
        return self.search.tools_for_turn()

    @property
    def keep_loaded(self) -> bool:
        """Whether tools a search found stay for the session (else :meth:`end_turn` unloads them); settable."""
        return self.search.keep_loaded

    @keep_loaded.setter
    def keep_loaded(self, value: bool) -> None:
        self.search.keep_loaded = value

    def end_turn(self) -> None:
        """The agent loop calls this when a user turn ends (unloads discoveries unless keep_loaded)."""
        self.search.end_turn()

    def registry(self) -> ToolRegistry:
        """A registry of this turn's tools; the other enabled MCP tools are ``known`` but not loaded."""
        timeout = max([c.config.call_timeout for c in self.connections.values()], default=30.0) + 5.0
        return ToolRegistry(self.tools_for_turn(), known=self.tools, timeout=timeout,
                            max_result_chars=self.max_result_chars)

    # --- calls ------------------------------------------------------------------------------

    async def call_tool(self, name: str, arguments: Mapping[str, JSON] | None = None, call_id: str = "call") -> ToolResult:
        """Call any enabled MCP tool (or ``search_tools``) by canonical name; failures are error results.

        This is the direct path for notebooks and tests; it does not check deferral. The agent
        loop uses :meth:`registry`, which offers only this turn's tools.
        """
        if self._loop is not asyncio.get_running_loop():
            return ToolResult(call_id, "This MCP session was started in another event loop (or not at all); "
                              "start it and call it inside the same asyncio.run() or notebook kernel.", True)
        if arguments is not None and not isinstance(arguments, Mapping):
            return ToolResult(call_id, f"Arguments for '{name}' must be a JSON object, got {type(arguments).__name__}.", True)
        args = dict(arguments or {})
        if name == SEARCH_TOOL_NAME:
            try:
                return ToolResult(call_id, self.search.search(**args))
            except (TypeError, ValueError) as exc:
                return ToolResult(call_id, f"search_tools: {exc}", True)
        if name in self.disabled:
            return ToolResult(call_id, f"Tool '{name}' is disabled: {self.disabled[name]}.", True)
        t = self.tools.get(name)
        if t is None:
            return ToolResult(call_id, f"Unknown MCP tool '{shown(name)}'.", True)
        text, is_error = await self.connections[t.server].call(t.raw_name, args)
        return ToolResult(call_id, valid_unicode(truncate(text, self.max_result_chars)), is_error)

    # --- views ------------------------------------------------------------------------------

    @property
    def statuses(self) -> dict[str, ServerStatus]:
        return {name: c.status for name, c in self.connections.items()}
