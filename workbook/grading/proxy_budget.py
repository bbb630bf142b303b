"""Grader for exercise 10, configuring ``harness serve`` for a team (``exercises/10_proxy_budget.ipynb``).

The exercise follows Chapter 7 (use it in your own agent): given an ordinary ``mcpServers`` file —
the workbook's own four servers, which need no Node.js and no network — write the configuration
the proxy reads (``alwaysLoad`` as ``true`` or a list of tool names, ``disabledTools``) so that

* the tool definitions a client is given at connection cost at most :data:`BUDGET` tokens;
* the tools the team's assistant uses every turn (:data:`MUST_LIST`) are listed at connection;
* no tool that cancels or closes something (:data:`NEVER_CALLABLE`) can be run through the proxy;
* every task of :data:`TASKS` still succeeds through the proxy alone, with the offline stand-in,
  judged on its effect: the grader reads the result back through the proxy afterwards.

The file as given fails (nothing is listed, everything is callable), and so does listing a whole
server to be safe (over the budget): the exercise is the proxy's per-tool settings. The grader
starts the proxy exactly as a client would (``harness serve --config``), once, in a temporary
folder that goes with it.
"""
from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Callable

from harness.selection.agent import arun

from harness.selection.discovery import Deferral
from harness.selection.catalog import ToolCatalog
from workbook.grading.learner import Passed, call
from harness.mcp.client import MCPHub
from harness.mcp.proxy.server import split_always_load
from harness.mcp.proxy.client import ProxyTools
from harness.mcp.proxy.measure import serve_parameters
from workbook.servers import workbook_servers_config
from workbook.providers.offline import OfflineModel
from harness.core.tokens import tools_tokens
from harness.core.tools import Tool
from harness.core.json_types import JSONObject

BUDGET = 600  # tokens of tool definitions at connection
MUST_LIST = ("calendar__list_events", "calendar__create_event")
NEVER_CALLABLE = ("calendar__cancel_event", "tickets__close_issue")
#: (request, the tool that reads the effect back, its arguments, text the effect must show)
TASKS: tuple[tuple[str, str, dict[str, str], str], ...] = (
    ("Create a note titled 'groceries' with the content 'milk and eggs'", "notes__read_note", {"title": "groceries"},
     "milk and eggs"),
    ("Post 'deploy at 5' to the #dev channel", "team_chat__read_channel_history", {"channel": "#dev"}, "deploy at 5"),
    ("Create an issue titled 'Login page is blank'", "tickets__list_issues", {}, "Login page is blank"),
    ("Create a calendar event 'Export review' on 2025-03-11 at 15:00", "calendar__list_events", {"date": "2025-03-11"},
     "Export review"),
)
SERVER = "tools"  # the proxy's name in the agent's own mcpServers


def team_config() -> JSONObject:
    """The ``mcpServers`` file the exercise starts from: the workbook's four servers, nothing configured."""
    return workbook_servers_config()


def check_config(config: object) -> JSONObject:
    """An ``mcpServers`` mapping that keeps every server and that the proxy can read (its own one-sentence errors)."""
    if not isinstance(config, dict) or not isinstance(config.get("mcpServers"), dict):
        raise AssertionError(f"configure(config) should return the config, a dict with 'mcpServers'; got {type(config).__name__}.")
    dropped = sorted(set(team_config()["mcpServers"]) - set(config["mcpServers"]))
    if dropped:
        raise AssertionError(f"Your config drops the server(s) {', '.join(dropped)}; the team uses every server: "
                             "configure them, do not remove them.")
    try:
        split_always_load(config)
    except ValueError as exc:
        raise AssertionError(f"The proxy cannot read your config: {exc}") from None
    return config


def listed(hub: MCPHub) -> list[Tool]:
    """The tools a client is given at connection, under the proxy's own names (as a client counts them)."""
    return [Tool(name=t.raw_name, description=t.description, input_schema=dict(t.input_schema)) for t in hub.tools.values()]


async def run_task(hub: MCPHub, request: str, reader: str, args: dict, want: str) -> str | None:
    """None when the task's effect shows; else a sentence saying what was called and what was read back."""
    through = ProxyTools(hub, SERVER)
    always = [t for t in hub.tools.values() if t.name not in (through.search_name, through.call_name)]
    run = await arun(OfflineModel(), ToolCatalog(always), request, deferral=Deferral(extra_tools=through.tools_for_turn))
    back = await hub.call_tool(hub.names.name(SERVER, "call_tool"), {"name": reader, "arguments": args})
    if want in back.content and not back.is_error:
        return None
    calls = ", ".join(f"{name} ({'ok' if ok else 'failed'})" for name, _, ok in run.calls()) or "no tool"
    return (f"The task {request!r} did not take effect: the stand-in called {calls}, and {reader} shows no {want!r}. "
            "A tool it needs may be disabled, or hidden behind a listed tool that does something else.")


async def check(configure: Callable[[JSONObject], object]) -> Passed:
    """Grade exercise 10: budget, listed tools, disabled tools, and every task's effect through the proxy."""
    config = check_config(call("configure", configure, copy.deepcopy(team_config())))
    with tempfile.TemporaryDirectory(prefix="exercise10-") as sandbox:
        path = Path(sandbox) / "mcp.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        params = serve_parameters(path, "--retriever", "bm25-fielded")
        agent = {"mcpServers": {SERVER: {"command": params.command, "args": params.args, "env": params.env,
                                          "startupTimeout": 120}}}
        async with MCPHub(agent, log_dir=Path(sandbox) / "logs") as hub:
            if hub.statuses[SERVER].state != "ready":
                raise AssertionError(f"The proxy did not start with your config: {hub.statuses[SERVER].reason}")
            shown = listed(hub)
            names = [t.name for t in shown]
            tokens = tools_tokens(shown)
            if tokens > BUDGET:
                raise AssertionError(f"A client is given {tokens:,} tokens of tool definitions at connection, over the budget "
                                     f"of {BUDGET:,}: it lists {', '.join(names)}. List single tools, not whole servers.")
            missing = [n for n in MUST_LIST if n not in names]
            if missing:
                raise AssertionError(f"{', '.join(missing)} must be listed at connection (the assistant uses them every turn), "
                                     f"but the client is given only {', '.join(names)}: use alwaysLoad with tool names.")
            for name in NEVER_CALLABLE:
                result = await hub.call_tool(hub.names.name(SERVER, "call_tool"), {"name": name, "arguments": {}})
                if "disabled" not in result.content:
                    raise AssertionError(f"{name} can still be run through the proxy (it answered {result.content[:80]!r}); "
                                         "list it in its server's disabledTools.")
            for request, reader, args, want in TASKS:
                failure = await run_task(hub, request, reader, args, want)
                if failure:
                    raise AssertionError(failure)
    return Passed(f"✓ a client is given {tokens:,} tokens at connection (budget {BUDGET:,}): {', '.join(names)}; "
                  f"{', '.join(NEVER_CALLABLE)} cannot be run; all {len(TASKS)} tasks took effect through the proxy.")
