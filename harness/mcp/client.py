"""``MCPHub``: every configured MCP server started, listed, called and shut down as one session.

Introduced in Chapter 5 (MCP integration).

Why it is built this way:

* Each server lives in **its own asyncio task** that enters the SDK's ``stdio_client`` and
  ``ClientSession`` and stays inside them until told to stop. The SDK's context managers hold anyio
  cancel scopes that must be left by the task that entered them; one task per server keeps that
  true, lets servers start concurrently, and lets ``start()`` and ``aclose()`` sit in different
  notebook cells.
* A server that is missing, exits, hangs or crashes is a **status**, not an exception: the others
  keep working. A tool call that fails, hangs or hits a crashed server becomes an **error result**
  the model can read (``ToolResult(is_error=True)``), never an exception that ends the loop.
* Shutdown is **shielded**: interrupting a notebook cell cancels the task running it, and the hub
  still closes every server (the SDK closes stdin, then terminates, then kills the process group).
* Each server's stderr goes to its own log file (the SDK needs a real file there), so a failure's
  reason can quote the server's last words.

MCP tools become :class:`~harness.mcp.mcp_tool.MCPTool` objects, so the harness's own
``ToolRegistry.adispatch`` runs them; deferral and ``search_tools`` sit on top
(:mod:`harness.mcp.deferral`, :mod:`harness.mcp.tool_search`).
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Literal, Mapping

import anyio
import mcp.types as mcp_types
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client

from harness.mcp.config import MCPConfig, ServerConfig, load_config
from harness.mcp.deferral import DeferralPolicy, plan_deferral
from harness.mcp.mcp_tool import MCPTool, build_mcp_tool
from harness.mcp.names import NameTable
from harness.discovery import RankerSpec
from harness.mcp.tool_search import SEARCH_TOOL_NAME, ToolSearch
from harness.messages import ToolResult
from harness.registry import MAX_RESULT_CHARS, ToolRegistry, truncate
from harness.tools import Tool

State = Literal["starting", "ready", "failed", "timed out", "crashed", "disabled", "stopped"]
#: A server that answers ``tools/list`` with more pages than this is treated as broken.
MAX_TOOL_PAGES = 1_000


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


def _leaf(exc: BaseException) -> BaseException:
    """The first real exception inside (nested) exception groups from anyio task groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _last_line(path: Path | None) -> str:
    """The last non-empty line a server wrote to stderr (often the reason it died)."""
    if path is None or not path.exists():
        return ""
    lines = [ln.strip() for ln in path.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


def render_content(result: mcp_types.CallToolResult) -> str:
    """A ``tools/call`` result as the text a model reads; non-text blocks are described, not dropped."""
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
    return "\n".join(parts)


async def list_all_tools(session: ClientSession) -> list[mcp_types.Tool]:
    """Every tool a server offers, following ``next_cursor`` page after page."""
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_TOOL_PAGES):
        page = await session.list_tools(params=mcp_types.PaginatedRequestParams(cursor=cursor))
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return tools
        if cursor in seen:
            raise RuntimeError(f"the server sent the cursor {cursor!r} twice while listing tools")
        seen.add(cursor)
    raise RuntimeError(f"the server listed more than {MAX_TOOL_PAGES} pages of tools")


class ServerConnection:
    """One server's process and session, owned by the task that runs :meth:`run`."""

    def __init__(self, config: ServerConfig, log_path: Path) -> None:
        self.config = config
        self.status = ServerStatus(config.name, log_path=log_path)
        self.definitions: list[mcp_types.Tool] = []
        self.session: ClientSession | None = None
        self.ready = asyncio.Event()  # set once start-up has ended, however it ended
        self.stop = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    def end_startup(self, state: State, reason: str) -> None:
        self.status.state, self.status.reason = state, reason
        self.ready.set()

    def _precheck(self) -> str | None:
        """Why the server cannot even be spawned (one sentence), or None."""
        cfg = self.config
        if cfg.cwd is not None and not Path(cfg.cwd).is_dir():
            return f"working directory '{cfg.cwd}' does not exist"
        path = cfg.env.get("PATH", os.environ.get("PATH"))
        if shutil.which(cfg.command, path=path) is None:
            exists = os.sep in cfg.command and Path(cfg.command).exists()
            return f"command '{cfg.command}' is not executable" if exists else f"command '{cfg.command}' not found"
        return None

    def _exited_reason(self, during: str) -> str:
        said = _last_line(self.status.log_path)
        return f"the server exited {during}" + (f"; its last words: {said}" if said else "")

    async def run(self) -> None:
        """Start, initialize and list; then hold the session open until :attr:`stop` is set."""
        cfg = self.config
        problem = self._precheck()
        if problem:
            return self.end_startup("failed", problem)
        began = time.perf_counter()
        params = StdioServerParameters(command=cfg.command, args=list(cfg.args), env=dict(cfg.env), cwd=cfg.cwd)
        try:
            with open(self.status.log_path, "w", encoding="utf-8") as errlog:
                async with stdio_client(params, errlog=errlog) as (read, write):
                    async with ClientSession(read, write) as session:
                        with anyio.move_on_after(cfg.startup_timeout) as deadline:
                            init = await session.initialize()
                            self.definitions = await list_all_tools(session)
                        if deadline.cancelled_caught:
                            return self.end_startup("timed out", f"did not finish start-up within {cfg.startup_timeout:g} s")
                        self.status.startup_seconds = time.perf_counter() - began
                        self.status.server_info = f"{init.server_info.name} {init.server_info.version}".strip()
                        self.session = session
                        self.end_startup("ready", f"{len(self.definitions)} tools listed")
                        await self.stop.wait()
        except Exception as error:  # every start-up failure becomes a status
            exc = _leaf(error)
            if self.status.state == "ready":
                self.status.state, self.status.reason = "crashed", f"the session broke: {type(exc).__name__}: {exc}"
            elif isinstance(exc, MCPError) and exc.code == mcp_types.CONNECTION_CLOSED:
                self.end_startup("failed", self._exited_reason("during start-up"))
            else:
                self.end_startup("failed", f"start-up failed: {type(exc).__name__}: {exc}")
        finally:
            self.session = None
            if self.status.state == "ready":
                self.status.state, self.status.reason = "stopped", "the session was closed"
            self.ready.set()

    async def call(self, raw_name: str, arguments: Mapping[str, Any]) -> tuple[str, bool]:
        """(text, is_error) for one ``tools/call``; never raises for a failure on the server's side."""
        name, timeout = self.config.name, self.config.call_timeout
        session = self.session
        if session is None or self.status.state != "ready":
            return f"MCP server '{name}' is {self.status.state}: {self.status.reason}.", True
        try:
            result = await session.call_tool(raw_name, dict(arguments), read_timeout_seconds=timeout)
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED and self.stop.is_set():
                return f"MCP server '{name}' was shut down during the call to '{raw_name}'.", True
            if exc.code == mcp_types.CONNECTION_CLOSED:
                self.status.state, self.status.reason = "crashed", self._exited_reason(f"during a call to '{raw_name}'")
                return f"MCP server '{name}' crashed during the call to '{raw_name}'; its tools are unavailable.", True
            if exc.code == mcp_types.REQUEST_TIMEOUT:
                return f"Tool '{raw_name}' on MCP server '{name}' did not answer within {timeout:g} s; the call was abandoned.", True
            return f"MCP server '{name}' refused the call to '{raw_name}': {exc.message}", True
        except Exception as exc:  # a malformed reply must not end the agent loop either
            return f"The call to '{raw_name}' on MCP server '{name}' failed: {type(exc).__name__}: {exc}", True
        return render_content(result), bool(result.is_error)


async def _finish_shielded(awaitable: asyncio.Future[Any]) -> bool:
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
        config: MCPConfig | Mapping[str, Any] | str | os.PathLike[str],
        *,
        log_dir: str | os.PathLike[str] | None = None,
        policy: DeferralPolicy = DeferralPolicy(),
        keep_loaded: bool = True,
        max_result_chars: int = MAX_RESULT_CHARS,
        environ: Mapping[str, str] | None = None,
        retriever: RankerSpec = None,
    ) -> None:
        self.config = load_config(config, environ)
        self.retriever = retriever  # what ranks the deferred tools for search_tools (BM25 by default)
        self.log_dir = Path(log_dir) if log_dir is not None else Path(tempfile.mkdtemp(prefix="mcp-logs-"))
        self.policy = policy
        self.max_result_chars = max_result_chars
        self.connections: dict[str, ServerConnection] = {}
        self.names = NameTable(())
        self.tools: dict[str, MCPTool] = {}  # every enabled tool of every ready server, by canonical name
        self.disabled: dict[str, str] = {}  # canonical name -> why it cannot be called
        self.plan = plan_deferral({}, {}, policy)
        self.search = ToolSearch([], [], keep_loaded=keep_loaded)
        self._loop: asyncio.AbstractEventLoop | None = None

    # --- lifecycle --------------------------------------------------------------------------

    async def start(self) -> "MCPHub":
        """Start every enabled server concurrently; return when each is ready or has failed."""
        if self._loop is not None:
            raise RuntimeError("This MCPHub has already been started; create a new one for a new session.")
        self._loop = asyncio.get_running_loop()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        for cfg in self.config:
            conn = ServerConnection(cfg, self.log_dir / f"{cfg.name}.log")
            self.connections[cfg.name] = conn
            if not cfg.enabled:
                conn.end_startup("disabled", "enabled is false in the config")
                continue
            conn.task = asyncio.create_task(conn.run(), name=f"mcp-server:{cfg.name}")
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
        tasks = [c.task for c in self.connections.values() if c.task is not None]
        if tasks and await _finish_shielded(asyncio.gather(*tasks, return_exceptions=True)):
            raise asyncio.CancelledError()

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
                canonical = self.names.name(server, definition.name)
                if definition.name in conn.config.disabled_tools:
                    self.disabled[canonical] = f"it is listed in mcpServers.{server}.disabledTools"
                    continue
                try:
                    t = build_mcp_tool(definition, server, canonical, self._caller(conn, definition.name))
                except ValueError as exc:
                    conn.status.notes.append(f"tool '{definition.name}' skipped: {exc}")
                    continue
                self.tools[canonical] = t
                by_server[server].append(t)
        overrides = {name: c.config.defer_loading for name, c in self.connections.items()}
        self.plan = plan_deferral(by_server, overrides, self.policy)
        self.search = ToolSearch(
            [self.tools[n] for n in self.plan.loaded],
            [self.tools[n] for n in self.plan.deferred],
            keep_loaded=self.keep_loaded,
            retriever=self.retriever,
        )

    @staticmethod
    def _caller(conn: ServerConnection, raw_name: str) -> Callable[..., Awaitable[str]]:
        """The ``fn`` of an MCP tool: errors are raised, so the registry turns them into error results."""

        async def call(**arguments: Any) -> str:
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

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, call_id: str = "call") -> ToolResult:
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
            return ToolResult(call_id, f"Unknown MCP tool '{name}'.", True)
        text, is_error = await self.connections[t.server].call(t.raw_name, args)
        return ToolResult(call_id, truncate(text, self.max_result_chars), is_error)

    # --- views ------------------------------------------------------------------------------

    @property
    def statuses(self) -> dict[str, ServerStatus]:
        return {name: c.status for name, c in self.connections.items()}
