"""The per-turn agent loop: derive a query, select tools, call the model, run its calls.

Introduced in Chapter 3 (``notebooks/03_transcript_queries.ipynb``); Chapters 4 and 5 run it
with a pinned discovery tool and with MCP tools.

Every turn rebuilds the model's tool list from the conversation so far — the tools are a
function of the transcript, not a fixed menu — and records what it did as a :class:`TurnEvent`,
so a widget or a test sees every turn. Tool failures come back as error results (see
:mod:`harness.registry`); the loop itself stops on a final text, after ``max_turns``, or when a
stop reason ends the run (``max_tokens``, ``refusal``, ``model_context_window_exceeded``: the
tool calls of that turn are not run). ``pause_turn`` sends the conversation back to continue.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Iterable, Sequence, Union

from harness.catalog import Ranked, ToolCatalog
from harness.messages import Message, ToolResult, Transcript
from harness.providers.base import Provider, Usage, stop_outcome, unrun_results
from harness.queries import QueryFn, query_from_transcript
from harness.registry import DEFAULT_TIMEOUT, ToolRegistry
from harness.tokens import ContextAccountant, ContextSnapshot, tools_tokens
from harness.tools import Tool

DEFAULT_SYSTEM = (
    "You are a helpful assistant with tools. Use a tool when it helps; "
    "if no tool you have fits, say so or use a discovery tool if one is offered."
)


@dataclass
class TurnEvent:
    """Everything one turn did, in the order it did it."""

    turn: int
    query: str
    ranked: list[Ranked]
    tools: list[Tool]
    snapshot: ContextSnapshot
    pinned: list[str]
    catalog_tokens: int  # tokens had every catalog tool been shown
    response: Message
    results: list[ToolResult] = field(default_factory=list)

    @property
    def tool_names(self) -> list[str]:
        return [t.name for t in self.tools]


@dataclass
class RunResult:
    final_text: str
    transcript: Transcript
    turns: list[TurnEvent]
    stopped: str  # "end_turn", "max_turns", or the stop reason that ended it (max_tokens, refusal, ...)
    usage: Usage

    def calls(self) -> list[tuple[str, dict, bool]]:
        """(tool name, arguments, succeeded) for every call this run made, in order."""
        out = []
        for ev in self.turns:
            ok = {r.tool_use_id: not r.is_error for r in ev.results}
            out += [(c.name, c.input, ok.get(c.id, False)) for c in ev.response.tool_calls]
        return out

    def succeeded(self) -> list[str]:
        return [name for name, _, ok in self.calls() if ok]


EventHook = Callable[[TurnEvent], Union[None, Awaitable[None]]]


async def arun(
    provider: Provider,
    catalog: ToolCatalog,
    user_message: str,
    *,
    transcript: Transcript | None = None,
    pinned_tools: Sequence[Tool | str] = (),
    extra_tools: Callable[[], Sequence[Tool]] | None = None,
    tools_per_turn: int = 7,
    max_turns: int = 10,
    query_fn: QueryFn = query_from_transcript,
    system: str = DEFAULT_SYSTEM,
    accountant: ContextAccountant | None = None,
    on_event: EventHook | None = None,
    on_finish: Callable[[], None] | None = None,
    tool_timeout: float = DEFAULT_TIMEOUT,
    known_tools: Iterable[str] = (),
    unloaded_hint: str | None = None,
    all_tools_tokens: int | None = None,
) -> RunResult:
    """Run one user request to a final answer (or ``max_turns``), selecting tools every turn.

    ``pinned_tools`` are shown every turn whatever their score: catalog names, or Tool objects
    that live outside the catalog (a discovery tool). ``extra_tools`` is asked every turn for
    tools that became available during the run (MCP tools a search activated).
    ``known_tools`` names tools beyond the catalog that exist but may not be loaded (deferred MCP
    tools), so a call to one says so, followed by ``unloaded_hint`` (how to load it) when given;
    ``all_tools_tokens`` is what showing every tool would cost, for the events' comparison (by
    default the catalog's and the pinned tools' schemas). ``tool_timeout`` bounds each tool call
    in seconds. ``on_finish`` runs when the user's turn ends — the run returns — to unload tools a search
    found during it, say.
    """
    if max_turns <= 0:
        raise ValueError(f"max_turns must be positive, got {max_turns}.")
    transcript = transcript if transcript is not None else Transcript()
    accountant = accountant or ContextAccountant()
    pinned_names = [p for p in pinned_tools if isinstance(p, str)]
    pinned_objects = [p for p in pinned_tools if isinstance(p, Tool)]
    catalog_tokens = all_tools_tokens if all_tools_tokens is not None else tools_tokens(catalog.tools) + tools_tokens(pinned_objects)
    known = set(catalog.all_names()) | set(known_tools)
    hint = {"unloaded_hint": unloaded_hint} if unloaded_hint else {}
    transcript.add_user(user_message)
    turns: list[TurnEvent] = []
    used_in = used_out = 0

    try:
        for n in range(1, max_turns + 1):
            query = query_fn(transcript)
            ranked = catalog.rank(query, tools_per_turn, must_include=pinned_names) if len(catalog) else []
            shown: dict[str, Tool] = {t.name: t for t in pinned_objects}
            for t in [r.tool for r in ranked] + list(extra_tools() if extra_tools else []):
                shown.setdefault(t.name, t)
            tools = list(shown.values())
            registry = ToolRegistry(tools, known=known, timeout=tool_timeout, **hint)
            snapshot = accountant.snapshot(tools, transcript, system)

            turn = await provider.complete(system=system, transcript=transcript, tools=tools)
            used_in += turn.usage.input_tokens
            used_out += turn.usage.output_tokens
            outcome = stop_outcome(turn)  # max_tokens, refusal, context window: the run ends, no call runs
            if turn.message.content:  # the API rejects an empty assistant turn in a transcript reused later
                transcript.append(turn.message)
            results = (unrun_results(turn.message, outcome) if outcome else
                       [await registry.adispatch(c.name, c.input, c.id) for c in turn.message.tool_calls])
            if results:
                transcript.append(Message("user", list(results)))
            pins = pinned_names + [t.name for t in pinned_objects]
            event = TurnEvent(n, query, ranked, tools, snapshot, pins, catalog_tokens, turn.message, results)
            turns.append(event)
            if on_event is not None:
                maybe = on_event(event)
                if inspect.isawaitable(maybe):
                    await maybe
            if outcome or (not turn.message.tool_calls and turn.stop_reason != "pause_turn"):
                break
    finally:
        if on_finish is not None:
            on_finish()
    last = turns[-1].response
    stopped = outcome or ("max_turns" if last.tool_calls else "end_turn")
    return RunResult(last.text if not last.tool_calls else "", transcript, turns, stopped, Usage(used_in, used_out))
