"""The MCP session at a glance: each server's state, its tools, their token cost and any flags.

Introduced in Chapter 5 (MCP integration).

PizzaPi has ``/tool-search status``; users of every client ask "why is this server missing?" and
"what is it costing me?". :func:`session_status` answers both as plain data (rows a test can
check), ``str()`` renders it as text, and :func:`status_html` / :func:`status_widget` show the same
rows in a notebook — the widget is a thin wrapper that imports ipywidgets only when asked.

A server that should run and does not is otherwise invisible behind Chapter 7's proxy: its tools are
simply absent, so a search returns other servers' tools and a call says "no such tool". So each gets one
phrase (:func:`down`), which the proxy puts in its status's ``problems``, at start-up on stderr
(:func:`startup_lines`), in a search whose words point at that server (:func:`wanted`) and in the
error of a call to one of its tools (:func:`named_server`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from harness.mcp.names import sanitize
from harness.core.redaction import hide_values
from harness.core.text import tokenize
from harness.core.safe_text import printable
from harness.core.tokens import tools_tokens
from harness.core.html import esc, table

if TYPE_CHECKING:
    from harness.mcp.client import MCPHub, ServerConnection

HEADERS = ("server", "state", "loaded", "deferred", "disabled", "schema tokens", "start-up", "flags", "reason")


@dataclass(frozen=True)
class StatusRow:
    server: str
    state: str
    reason: str
    loaded: int
    deferred: int
    disabled: int
    schema_tokens: int  # tokens of this server's enabled tool definitions
    startup_seconds: float | None
    flags: tuple[str, ...]  # "tool: reason" for descriptions that address the model

    def cells(self) -> tuple[object, ...]:
        startup = f"{self.startup_seconds:.1f} s" if self.startup_seconds is not None else "-"
        # Names and reasons come from config files and servers: shown escaped, one line each.
        return (printable(self.server, keep_newlines=False), self.state, self.loaded, self.deferred, self.disabled,
                f"{self.schema_tokens:,}", startup, len(self.flags), printable(self.reason, keep_newlines=False))


@dataclass(frozen=True)
class SessionStatus:
    rows: list[StatusRow]
    schema_tokens: int  # every enabled MCP tool definition
    shown_tokens: int  # what this turn's tool list costs (search_tools included)

    @property
    def tokens_saved(self) -> int:
        """Tokens deferral keeps out of every request right now."""
        return self.schema_tokens - self.shown_tokens

    def __str__(self) -> str:
        cells = [tuple(str(c) for c in r.cells()) for r in self.rows]
        widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(HEADERS)]

        def line(values: tuple[str, ...]) -> str:
            return "  ".join(v.ljust(w) for v, w in zip(values, widths)).rstrip()

        out = [line(HEADERS), *(line(c) for c in cells)]
        out.append(f"MCP tool definitions: {self.schema_tokens:,} tokens; shown this turn: {self.shown_tokens:,}; "
                   f"deferral saves {self.tokens_saved:,} tokens per request.")
        out += [printable(f"flag  {r.server}/{f}", keep_newlines=False) for r in self.rows for f in r.flags]
        return "\n".join(out)


def session_status(hub: MCPHub) -> SessionStatus:
    """One row per configured server, and the token totals, as the hub stands now."""
    deferred = set(hub.plan.deferred) - {t.name for t in hub.search.activated}
    rows = []
    for name, st in hub.statuses.items():
        tools = [t for t in hub.tools.values() if t.server == name]
        disabled = sum(1 for n in hub.disabled if hub.names.identity(n)[0] == name)
        rows.append(StatusRow(
            server=name,
            state=st.state,
            reason="; ".join([st.reason, *st.notes]),
            loaded=sum(1 for t in tools if t.name not in deferred),
            deferred=sum(1 for t in tools if t.name in deferred),
            disabled=disabled,
            schema_tokens=sum(hub.plan.tokens.get(t.name, 0) for t in tools),
            startup_seconds=st.startup_seconds,
            flags=tuple(f"{t.raw_name}: {f}" for t in tools for f in hub.flags(t)),
        ))
    return SessionStatus(rows, hub.plan.total_tokens, tools_tokens(hub.tools_for_turn(), hub.policy.encoding))


def status_html(status: SessionStatus) -> str:
    """The status as an HTML table (every value escaped), with flags listed under it."""
    flags = "".join(f"<li>{esc(r.server)}/{esc(f)}</li>" for r in status.rows for f in r.flags)
    summary = (f"<p>MCP tool definitions: {status.schema_tokens:,} tokens; shown this turn: "
               f"{status.shown_tokens:,}; deferral saves <b>{status.tokens_saved:,}</b> tokens per request.</p>")
    return table(HEADERS, [r.cells() for r in status.rows]) + summary + (f"<ul>{flags}</ul>" if flags else "")


def status_widget(hub: MCPHub) -> Any:  # Any: an ipywidgets box; ipywidgets ships no type hints
    """An ipywidgets view of :func:`session_status` with a refresh button."""
    import ipywidgets as widgets

    view = widgets.HTML(status_html(session_status(hub)))
    refresh = widgets.Button(description="Refresh", icon="refresh")
    refresh.on_click(lambda _: setattr(view, "value", status_html(session_status(hub))))
    return widgets.VBox([refresh, view])


# --- servers that are not running ---------------------------------------------------------

#: Words in server names and commands that say nothing about what a server does.
GENERIC = frozenset(tokenize("mcp server servers node python python3 npx uvx docker bun deno run serve stdio "
                             "http https www com org io net localhost"))


def shown_reason(conn: ServerConnection) -> str:
    """A server's status reason with the values of its ``env`` and ``headers`` hidden (it may quote them)."""
    cfg = conn.config
    return hide_values(conn.status.reason, [*cfg.env.values(), *cfg.headers.values()])


def down(hub: MCPHub) -> dict[str, tuple[str, str]]:
    """Each server the config asks for that is not running: (``failed``, ``timed out``, ``crashed`` or
    ``skipped``, why). A server turned off with ``enabled: false`` is the user's choice, not a failure."""
    out = {}
    for name, conn in hub.connections.items():
        state, skipped = conn.status.state, conn.config.skipped
        if state in ("ready", "starting", "stopped") or (state == "disabled" and not skipped):
            continue
        out[name] = ("skipped", skipped.removeprefix("skipped: ")) if skipped else (state, shown_reason(conn))
    return out


def problem(server: str, state: str, reason: str) -> str:
    """``server `broken` failed: …`` — the status's line, and a call's error, for a server that is not running."""
    return f"server `{server}` {'is skipped' if state == 'skipped' else state}: {reason}"


def problems(hub: MCPHub) -> list[str]:
    """The status's lines for servers that are not running."""
    return [problem(name, *why) for name, why in down(hub).items()]


def startup_lines(hub: MCPHub, prefix: str = "") -> list[str]:
    """One line per configured server once start-up has ended (``harness serve`` writes them to stderr, where
    Claude Desktop and Claude Code show a server's log): ready with how many tools, or why not."""
    lines = []
    failed = down(hub)
    for name, conn in hub.connections.items():
        if name in failed:
            lines.append(f"{prefix}{problem(name, *failed[name])}")
        elif conn.status.state == "ready":
            seconds = conn.status.startup_seconds or 0.0
            lines.append(f"{prefix}server `{name}` ready with {len(conn.definitions)} tools ({seconds:.1f} s)")
        else:
            lines.append(f"{prefix}server `{name}` is {conn.status.state}: {shown_reason(conn)}")
    return lines


def _words(conn: ServerConnection) -> set[str]:
    """What a query may call a server by: its name, its command's file name, its URL's host."""
    cfg = conn.config
    text = " ".join([cfg.name, os.path.basename(cfg.command), urlsplit(cfg.url).hostname or ""])
    return set(tokenize(text)) - GENERIC


def named_server(name: str, servers: list[str]) -> str | None:
    """The server a tool name is written under (``broken__git_status``, ``mcp__broken__x``, ``broken/x``), if any."""
    fits = [s for s in servers if name.startswith((f"{sanitize(s)}__", f"mcp__{sanitize(s)}__", f"{s}/"))]
    return max(fits, key=len, default=None)


def wanted(query: str, hub: MCPHub, found_nothing: bool) -> list[str]:
    """Search-result lines for servers that are not running and that the query may have wanted: those it
    names or shares a word with (their name, command or host), or every one when the search found nothing."""
    failed = down(hub)
    terms = set(tokenize(query))  # "broken__git_status" gives itself, "broken", "git" and "status"
    hits = [s for s in failed if found_nothing or terms & _words(hub.connections[s])]
    return [f"server `{s}` is unavailable ({failed[s][0]}): {failed[s][1]}" for s in hits]
