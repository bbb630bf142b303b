"""The MCP session at a glance: each server's state, its tools, their token cost and any flags.

Introduced in Chapter 5 (MCP integration).

PizzaPi has ``/tool-search status``; users of every client ask "why is this server missing?" and
"what is it costing me?". :func:`session_status` answers both as plain data (rows a test can
check), ``str()`` renders it as text, and :func:`status_html` / :func:`status_widget` show the same
rows in a notebook — the widget is a thin wrapper that imports ipywidgets only when asked.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.core.safe_text import printable
from harness.core.tokens import tools_tokens
from harness.core.html import esc, table

if TYPE_CHECKING:
    from harness.mcp.client import MCPHub

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
