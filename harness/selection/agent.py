"""The per-turn agent loop: derive a query, select tools, call the model, run its calls.

Introduced in Chapter 3 (``notebooks/03_transcript_queries.ipynb``); Chapters 4 and 5 run it
with a pinned discovery tool and with MCP tools.

Every turn rebuilds the model's tool list from the conversation so far — the tools are a
function of the transcript, not a fixed menu — and records what it did as a :class:`TurnEvent`,
so a widget or a test sees every turn. *Which* tools a query selects is a
:class:`~harness.selection.ranking.Selector`'s business (any ranker: BM25, fielded, dense, hybrid…, plus
pins, ``k``, a floor); tools that exist but are not loaded yet (deferred MCP tools) are a
:class:`Deferral`'s. Tool failures come back as error results (see :mod:`harness.core.registry`);
the loop itself stops on a final text, after ``max_turns``, or when a stop reason ends the run
(``max_tokens``, ``refusal``, ``model_context_window_exceeded``: the tool calls of that turn are
not run). ``pause_turn`` sends the conversation back to continue.

What a turn that repeats the previous turn's calls exactly does is ``on_repeat``'s choice (Chapter 5c
measures each): a small model often makes its last call again, unchanged, until ``max_turns``.

* ``"run"`` (the default) runs it again, as an API does;
* ``"remind"`` does not run it: each call's result says it was just made and its result is above, and
  asks for the next step or the answer — what the model was shown, said where it is read;
* ``"answer"`` (the loop guard) does not run it: the model is asked once more with no tools shown — it
  answers from the results it already has, as smolagents asks for a final answer when its steps run
  out — and the run ends (``repeated_call``).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field, replace
from typing import Awaitable, Callable, Iterable, Sequence, Union

from harness.selection.catalog import ToolCatalog
from harness.selection.discovery import Deferral, found_in
from harness.core.json_types import JSONObject
from harness.core.messages import Message, ToolResult, Transcript
from harness.providers.base import Provider, Usage, stop_outcome, unrun_results
from harness.selection.queries import DEFAULT_QUERY, QueryFn
from harness.selection.ranking import Ranked, Selector
from harness.core.registry import DEFAULT_TIMEOUT, UNLOADED_HINT, ToolRegistry
from harness.core.tokens import ContextAccountant, ContextSnapshot, tools_tokens
from harness.core.tools import Tool

DEFAULT_SYSTEM = (
    "You are a helpful assistant with tools. Use a tool when it helps; "
    "if no tool you have fits, say so or use a discovery tool if one is offered."
)


#: What ``on_repeat`` may be (see the module).
REPEATS = ("run", "remind", "answer")
#: The result of a call repeated on the next turn under ``on_repeat="remind"``.
REPEAT_REMINDER = ("Not run again: you made this same {name} call, with the same arguments, on your previous step, and "
                   "its result is just above. Use that result: take the next step of the request, or answer if it is done.")


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
    stopped: str  # "end_turn", "max_turns", "repeated_call" (the loop guard), or the stop reason that ended it (max_tokens, ...)
    usage: Usage

    def calls(self) -> list[tuple[str, JSONObject, bool]]:
        """(tool name, arguments, succeeded) for every call this run made, in order."""
        out = []
        for ev in self.turns:
            ok = {r.tool_use_id: not r.is_error for r in ev.results}
            out += [(c.name, c.input, ok.get(c.id, False)) for c in ev.response.tool_calls]
        return out

    def succeeded(self) -> list[str]:
        return [name for name, _, ok in self.calls() if ok]


EventHook = Callable[[TurnEvent], Union[None, Awaitable[None]]]


def same_calls(a: Message, b: Message) -> bool:
    """Whether ``a`` makes exactly ``b``'s tool calls (names and arguments, in order), and some."""
    return bool(a.tool_calls) and [(c.name, c.input) for c in a.tool_calls] == [(c.name, c.input) for c in b.tool_calls]


def as_selector(tools: Selector | ToolCatalog) -> Selector:
    """A catalog on its own is selected from with BM25, :data:`~harness.selection.ranking.DEFAULT_K` tools, no pins."""
    return tools if isinstance(tools, Selector) else Selector.over(tools)


@dataclass(frozen=True)
class LoopSettings:
    """What a caller rarely changes about the loop: the system prompt, each tool call's time limit, the context
    accounting, and a hook that sees every turn as it ends (a widget, a log, a test)."""

    system: str = DEFAULT_SYSTEM
    tool_timeout: float = DEFAULT_TIMEOUT
    accountant: ContextAccountant | None = None
    on_event: EventHook | None = None


async def arun(
    provider: Provider,
    selector: Selector | ToolCatalog,
    user_message: str,
    *,
    transcript: Transcript | None = None,
    deferral: Deferral = Deferral(),
    max_turns: int = 10,
    query_fn: QueryFn = DEFAULT_QUERY,
    on_repeat: str = "run",
    settings: LoopSettings = LoopSettings(),
) -> RunResult:
    """Run one user request to a final answer (or ``max_turns``), selecting tools every turn.

    ``selector`` chooses each turn's tools from the query ``query_fn`` derives from the
    transcript (a bare :class:`~harness.selection.catalog.ToolCatalog` means BM25's best :data:`~harness.selection.ranking.DEFAULT_K`);
    ``deferral`` adds tools loaded during the run (a search: :meth:`~harness.selection.discovery.ToolSearch.deferral`).
    ``on_repeat``: what a turn that repeats the previous turn's calls exactly does — ``"run"``, ``"remind"`` or
    ``"answer"`` (see the module). ``settings``: the system prompt, the tool time limit, the accountant, a hook.
    """
    if max_turns <= 0:
        raise ValueError(f"max_turns must be positive, got {max_turns}.")
    if on_repeat not in REPEATS:
        raise ValueError(f"on_repeat must be one of {', '.join(map(repr, REPEATS))}, got {on_repeat!r}.")
    system, on_event = settings.system, settings.on_event
    transcript = transcript if transcript is not None else Transcript()
    accountant = settings.accountant or ContextAccountant()
    selector = as_selector(selector)
    pinned = list(selector.pinned_tools)
    pins = [t.name for t in pinned]
    outside = [t for t in pinned if t.name not in {s.name for s in selector.tools}]
    every = deferral.all_tools_tokens
    catalog_tokens = every if every is not None else tools_tokens(selector.tools) + tools_tokens(outside)
    known = {t.name for t in selector.tools} | set(deferral.known)
    hint = deferral.hint or UNLOADED_HINT
    transcript.add_user(user_message)
    turns: list[TurnEvent] = []
    usage = Usage()

    try:
        for n in range(1, max_turns + 1):
            query = query_fn(transcript)
            ranked = selector.ranked(query)
            shown: dict[str, Tool] = {}
            for t in [r.tool for r in ranked]:
                shown.setdefault(t.name, t)
            found = found_in(transcript.messages)  # a found tool's definition sits after the result that found it
            for t in deferral.extra_tools() if deferral.extra_tools else []:
                shown.setdefault(t.name, replace(t, found_after=found[t.name]) if t.name in found else t)
            tools = list(shown.values())
            registry = ToolRegistry(tools, known=known, unloaded_hint=hint, timeout=settings.tool_timeout)
            snapshot = accountant.snapshot(tools, transcript, system)

            turn = await provider.complete(system=system, transcript=transcript, tools=tools)
            usage += turn.usage
            repeated = on_repeat != "run" and bool(turns) and same_calls(turn.message, turns[-1].response)
            if repeated and on_repeat == "answer":  # its calls are not run: the model answers from the results it has, shown no tools
                tools, snapshot = [], accountant.snapshot([], transcript, system)
                turn = await provider.complete(system=system, transcript=transcript, tools=[])
                usage += turn.usage
            # max_tokens, refusal, context window: the run ends, no call runs
            outcome = stop_outcome(turn) or ("repeated_call" if repeated and on_repeat == "answer" else None)
            if turn.message.content:  # the API rejects an empty assistant turn in a transcript reused later
                transcript.append(turn.message)
            if outcome:
                results = unrun_results(turn.message, outcome)
            elif repeated:  # on_repeat == "remind": not run again; the result says where the first one's is
                results = [ToolResult(c.id, REPEAT_REMINDER.format(name=c.name), is_error=True) for c in turn.message.tool_calls]
            else:
                results = [await registry.adispatch(c.name, c.input, c.id) for c in turn.message.tool_calls]
            if results:
                transcript.append(Message("user", list(results)))
            event = TurnEvent(n, query, ranked, tools, snapshot, pins, catalog_tokens, turn.message, results)
            turns.append(event)
            if on_event is not None:
                maybe = on_event(event)
                if inspect.isawaitable(maybe):
                    await maybe
            if outcome or (not turn.message.tool_calls and turn.stop_reason != "pause_turn"):
                break
    finally:
        if deferral.on_finish is not None:
            deferral.on_finish()
    last = turns[-1].response
    stopped = outcome or ("max_turns" if last.tool_calls else "end_turn")
    return RunResult(last.text if not last.tool_calls else "", transcript, turns, stopped, usage)
