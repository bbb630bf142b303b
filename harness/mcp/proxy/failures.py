"""Servers that are not running, said where a user and a model look: the status, stderr, searches and calls.

Introduced in Chapter 7 with ``harness serve``. A server that fails to start is otherwise invisible
through the proxy: its tools are simply absent, so a search returns other servers' tools and a call
says "no such tool". Here each server that should run and does not gets one phrase
(``failed: command 'mcp-server-gti' not found``) which :class:`~harness.mcp.proxy.server.ToolProxy`
puts in the status's ``problems``, at start-up on stderr (where Claude Desktop and Claude Code show
a server's log), in a search whose words point at that server (or that found nothing), and in the
error of a call to one of its tools.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from harness.core.redaction import hide_values
from harness.core.text import tokenize
from harness.mcp.names import sanitize

if TYPE_CHECKING:
    from harness.mcp.client import MCPHub, ServerConnection

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


def startup_lines(hub: MCPHub) -> list[str]:
    """One line per configured server for stderr once start-up has ended: ready with how many tools, or why not."""
    lines = []
    failed = down(hub)
    for name, conn in hub.connections.items():
        if name in failed:
            lines.append(f"harness serve: {problem(name, *failed[name])}")
        elif conn.status.state == "ready":
            seconds = conn.status.startup_seconds or 0.0
            lines.append(f"harness serve: server `{name}` ready with {len(conn.definitions)} tools ({seconds:.1f} s)")
        else:
            lines.append(f"harness serve: server `{name}` is {conn.status.state}: {shown_reason(conn)}")
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
