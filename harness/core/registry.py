"""The tool registry: what a model may call this turn, and the one place calls are run.

Introduced in Chapter 0; Chapter 3 builds a fresh registry every turn from the selected tools.

``dispatch`` never raises into the agent loop. Whatever goes wrong — an unknown or unloaded
tool, arguments that fail the schema, an invalid schema, an exception in the tool (even
``SystemExit``, which argparse-style tools raise), a tool that never returns — comes back as an
error *result* the model can read and recover from, because an exception would end the
conversation while an error result lets the next turn fix it.

A synchronous tool runs in a daemon thread of its own rather than in a shared pool: a tool that
never returns then costs one parked thread, not a pool slot every later call waits for, and it
cannot keep the interpreter from exiting (a pool's threads are joined at exit).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import difflib
import inspect
import json
import re
import threading
from typing import Awaitable, Callable, Iterable, Iterator, TypeVar

from harness.core.json_types import JSON, JSONObject
from harness.core.messages import ToolResult
from harness.core.safe_text import valid_unicode
from harness.core.schema_check import first_error, schema_problem
from harness.core.tools import Tool

#: Results longer than this are cut before the model sees them (with a note saying so).
MAX_RESULT_CHARS = 20_000
#: Seconds a tool may run before its call becomes an error result.
DEFAULT_TIMEOUT = 30.0
#: What a call to a known but unshown tool is told, unless the loop says how its tools get loaded.
UNLOADED_HINT = "Say what you need it for and it will be offered on the next turn."


class _ToolExited(Exception):
    """A coroutine tool raised SystemExit; asyncio would stop the whole event loop for it."""

    def __init__(self, exit: SystemExit) -> None:
        super().__init__(exit.code)
        self.exit = exit


T = TypeVar("T")  # what a tool call returns


async def _exit_as_exception(coroutine: Awaitable[T]) -> T:
    try:
        return await coroutine
    except SystemExit as exc:
        raise _ToolExited(exc) from None


def _in_daemon_thread(name: str, fn: Callable[[], T]) -> concurrent.futures.Future[T]:
    """Run ``fn()`` in a new daemon thread; its outcome (any exception included) lands in the future."""
    future: concurrent.futures.Future[T] = concurrent.futures.Future()

    def work() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(fn())
        except BaseException as exc:  # SystemExit too: it is reported, never lost in the thread
            future.set_exception(exc)

    threading.Thread(target=work, name=f"tool:{name}", daemon=True).start()
    return future


class DuplicateToolError(ValueError):
    """Two tools with one name: a model could not tell which one it called."""


def render_result(value: JSON) -> str:
    """A tool's return value as the text a model reads."""
    if value is None:
        return "ok"
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, indent=None, default=str)
    except (TypeError, ValueError):
        return str(value)


_NOTE = re.compile(r"\n\[truncated: [\d,]+ of [\d,]+ characters cut\]\Z")


def truncate(text: str, limit: int = MAX_RESULT_CHARS) -> str:
    """Cut a long result to ``limit`` characters and say how much was cut (once: a cut text stays as it is)."""
    if len(text) <= limit:
        return text
    note = _NOTE.search(text, max(0, len(text) - 80))
    if note and note.start() <= limit:
        return text
    cut = len(text) - limit
    return f"{text[:limit]}\n[truncated: {cut:,} of {len(text):,} characters cut]"


class ToolRegistry:
    """Tools by name, their API schemas, and safe dispatch.

    ``known`` names tools that exist elsewhere (the full catalog) but are not loaded in this
    registry; calling one gives an error that says so, instead of pretending it doesn't exist,
    followed by ``unloaded_hint`` (how this harness loads a tool: the next turn's selection, or
    a search tool).
    """

    def __init__(
        self,
        tools: Iterable[Tool] = (),
        *,
        known: Iterable[str] = (),
        unloaded_hint: str = UNLOADED_HINT,
        timeout: float = DEFAULT_TIMEOUT,
        max_result_chars: int = MAX_RESULT_CHARS,
    ) -> None:
        self._tools: dict[str, Tool] = {}
        self.invalid: dict[str, str] = {}  # tool name -> why its input schema cannot be used
        self.known = set(known)
        self.unloaded_hint = unloaded_hint
        self.timeout = timeout
        self.max_result_chars = max_result_chars
        for t in tools:
            self.register(t)

    def register(self, t: Tool) -> Tool:
        if t.name in self._tools:
            raise DuplicateToolError(f"A tool named {t.name!r} is already registered; tool names must be unique.")
        self._tools[t.name] = t
        problem = schema_problem(t.input_schema)
        if problem:
            self.invalid[t.name] = problem
        return t

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def get(self, name: str) -> Tool:
        return self._tools[name]

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def schemas(self) -> list[JSONObject]:
        """Every tool's definition in the Anthropic Messages API shape."""
        return [t.to_api() for t in self._tools.values()]

    # --- checking a call before running it ---------------------------------------------

    def check(self, name: str, args: JSON) -> str | None:
        """Why this call cannot run (one sentence), or None when it can."""
        if name not in self._tools:
            if name in self.known:
                return f"Tool '{name}' exists but is not loaded this turn. {self.unloaded_hint}"
            close = difflib.get_close_matches(name, list(self._tools) + sorted(self.known), n=3, cutoff=0.5)
            hint = f" Did you mean: {', '.join(close)}?" if close else f" Available: {', '.join(self._tools) or 'none'}."
            return f"Unknown tool '{name}'.{hint}"
        if name in self.invalid:
            return f"Tool '{name}' cannot be called: its input schema is invalid ({self.invalid[name]})."
        if not isinstance(args, dict):
            return f"Arguments for '{name}' must be a JSON object, got {type(args).__name__}."
        schema = self._tools[name].input_schema
        allowed = schema.get("properties", {})
        extra = [k for k in args if k not in allowed]
        if extra and schema.get("additionalProperties") in (None, False):
            takes = ", ".join(allowed) or "no arguments"
            return f"Invalid arguments for '{name}': unexpected argument(s) {', '.join(map(repr, extra))}; it takes {takes}."
        problem = first_error(args, schema)
        return f"Invalid arguments for '{name}': {problem}." if problem else None

    # --- running it ----------------------------------------------------------------------

    # Results enter the transcript, which is sent as JSON: they must be valid Unicode.
    def _error(self, call_id: str, text: str) -> ToolResult:
        return ToolResult(call_id, valid_unicode(text), is_error=True)

    def _ok(self, call_id: str, value: JSON) -> ToolResult:
        return ToolResult(call_id, valid_unicode(truncate(render_result(value), self.max_result_chars)))

    def _failed(self, call_id: str, name: str, exc: BaseException) -> ToolResult:
        if isinstance(exc, SystemExit):
            return self._error(call_id, f"Tool '{name}' tried to exit the program (SystemExit: {exc.code}); the program goes on.")
        return self._error(call_id, f"Tool '{name}' failed: {type(exc).__name__}: {exc}")

    def _timed_out(self, call_id: str, name: str) -> ToolResult:
        return self._error(call_id, f"Tool '{name}' did not return within {self.timeout:g} s and was abandoned.")

    def dispatch(self, name: str, args: JSON, call_id: str = "call") -> ToolResult:
        """Run a synchronous tool; every failure becomes an error result."""
        problem = self.check(name, args)
        if problem:
            return self._error(call_id, problem)
        t = self._tools[name]
        if t.fn is None:
            return self._error(call_id, f"Tool '{name}' has no implementation attached.")
        if inspect.iscoroutinefunction(t.fn):
            return self._error(call_id, f"Tool '{name}' is asynchronous; call it with adispatch().")
        fn = t.fn
        future = _in_daemon_thread(name, lambda: fn(**args))
        try:
            return self._ok(call_id, future.result(timeout=self.timeout))
        except concurrent.futures.TimeoutError:
            return self._timed_out(call_id, name)
        except (Exception, SystemExit) as exc:  # a tool's bug must not end the conversation
            return self._failed(call_id, name, exc)

    async def adispatch(self, name: str, args: JSON, call_id: str = "call") -> ToolResult:
        """Run a tool (sync or async) from an event loop; every failure becomes an error result."""
        problem = self.check(name, args)
        if problem:
            return self._error(call_id, problem)
        t = self._tools[name]
        if t.fn is None:
            return self._error(call_id, f"Tool '{name}' has no implementation attached.")
        try:
            if inspect.iscoroutinefunction(t.fn):
                value = await asyncio.wait_for(_exit_as_exception(t.fn(**args)), self.timeout)
            else:
                fn = t.fn
                future = asyncio.wrap_future(_in_daemon_thread(name, lambda: fn(**args)))
                value = await asyncio.wait_for(future, self.timeout)
            return self._ok(call_id, value)
        except asyncio.TimeoutError:
            return self._timed_out(call_id, name)
        except (Exception, SystemExit) as exc:
            return self._failed(call_id, name, exc.exit if isinstance(exc, _ToolExited) else exc)
