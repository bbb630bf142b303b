"""The offline stand-in model: deterministic, no network, and honest about being a stand-in.

Introduced in Chapter 0; every chapter runs on it unless ``ANTHROPIC_API_KEY`` is set.

It is **not an LLM**. It is a small, documented procedure that behaves like a tool-using model
in the ways this workbook needs to show, so every phenomenon can be demonstrated in a room with
no network and checked in CI:

* It reads the user's latest request, splits it into steps (", then", ". Then", "; "), and
  works through them one tool call per turn, reading each result before the next step.
* For a step it scores every tool it was *shown* against the request, through a small synonym
  lexicon (:mod:`workbook.providers.offline_concepts`), and calls the best one if it matches
  well enough; arguments come from :mod:`workbook.providers.offline_args`.
* It can call only tools it was shown: tools in this turn's schemas, names it read in a
  discovery tool's result, or tools it used for an earlier request (calling one that is not
  loaded this turn gets the registry's error, and the next turn's query can bring it in).
* When nothing shown matches and a discovery tool (tag ``discovery``) is shown, it calls that
  tool with the request's keywords, then picks from what it lists.
* **Attention is limited, by construction.** It reads tool definitions in full only up to a
  reading budget of schema tokens, split between the start and the end of the list; tools in
  the middle are skimmed by name only ("lost in the middle", Liu et al. 2023). That is a
  modelling assumption with one parameter, ``reading_budget``, not a measurement of any real
  model: the stand-in's accuracy falls where a tool list's schema tokens pass it (Chapter 1,
  Section 3, sweeps it and watches the fall move). Curves drawn with the stand-in show the
  mechanism; the real small model (:mod:`workbook.providers.local_llama`) and Claude (with a
  key) give evidence.
"""
from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from typing import Sequence

from harness.core.messages import Message, TextBlock, ToolCall, ToolResult, Transcript
from harness.providers.base import ModelTurn, Usage
from workbook.providers.offline_args import fill_arguments, intent_text
from workbook.providers.offline_concepts import concepts
from workbook.steps import split_steps
from harness.core.text import split_identifier, tokenize
from harness.core.tokens import count_text, tool_tokens
from harness.core.tools import Tool

#: A step must score at least this for the stand-in to act on it (else it searches or says so).
MATCH_THRESHOLD = 0.6
#: Schema tokens the stand-in reads in full; the rest of a long tool list is skimmed by name.
#: Chosen, not measured: it decides where the stand-in's tool cliff is (Chapter 1 shows it).
READING_BUDGET = 3000
#: Failed calls on one step before the stand-in gives up and explains.
MAX_FAILURES_PER_STEP = 3

_LISTED_NAME = re.compile(r"^\s*(?:[-*•]\s*)?`?([A-Za-z][A-Za-z0-9_-]{1,63})`?\s*(?:—|–|-|:)\s*(.*)$")
_JSON_NAME = re.compile(r'"name"\s*:\s*"([A-Za-z][A-Za-z0-9_-]{1,63})"(?:\s*,\s*"description"\s*:\s*"([^"]*)")?')


def work_steps(request: str) -> list[str]:
    """The steps the stand-in works on: :func:`workbook.steps.split_steps`, keeping those it has a concept for."""
    return [step for step in split_steps(request) if concepts(step)]


def is_discovery(t: Tool) -> bool:
    return "discovery" in t.tags


@dataclass(frozen=True)
class Choice:
    """What the stand-in decided for one step, with the evidence (for Chapter 1's views)."""

    tool: str | None
    score: float
    scores: dict[str, float] = field(default_factory=dict)
    skimmed: frozenset[str] = frozenset()


@functools.lru_cache(maxsize=50_000)
def concept_set(text: str) -> frozenset[str]:
    """The distinct concepts of a text; cached, because sweeps score the same tools thousands of times."""
    return frozenset(concepts(text))


@functools.lru_cache(maxsize=50_000)
def name_concepts(name: str) -> frozenset[str]:
    return concept_set(" ".join(split_identifier(name)))


def relevance(step: str, t_name: str, description: str | None) -> float:
    """How well a tool (name, and description when read) fits the step, through the lexicon.

    Name words count double and are normalised by the name's length (a name is a claim about
    what the tool does); description words are normalised by √length (long descriptions
    shouldn't win by volume). A literal mention of the tool's name is decisive.
    """
    want = concept_set(step)
    if not want:
        return 0.0
    name_c = name_concepts(t_name)
    score = 2.0 * len(want & name_c) / len(name_c) if name_c else 0.0
    if description:
        desc_c = concept_set(description)
        if desc_c:
            score += len(want & desc_c) / math.sqrt(len(desc_c))
    lowered = step.lower()
    if t_name.lower() in lowered and re.search(rf"\b{re.escape(t_name.lower())}\b", lowered):
        score += 3.0
    return score


def does_the_action(step: str, t: Tool) -> bool:
    """Does the tool's text name the step's action — its first content word ("*email* dana …")?

    A model reads a request verb-first; a tool that matches only the request's nouns ("the
    returns *file*" for ``find_files``) is a loose fit worth a discovery call before settling.
    """
    words = concepts(intent_text(step))
    return not words or words[0] in concept_set(t.search_text)


def read_fully(tools: Sequence[Tool], budget: int) -> set[str]:
    """Names of the tools whose definitions fit the reading budget: the head and the tail."""
    sizes = [tool_tokens(t) for t in tools]
    if sum(sizes) <= budget:
        return {t.name for t in tools}
    seen: set[str] = set()
    for order in (range(len(tools)), reversed(range(len(tools)))):
        used = 0
        for i in order:
            if used + sizes[i] > budget / 2:
                break
            used += sizes[i]
            seen.add(tools[i].name)
    return seen


class OfflineModel:
    """The deterministic stand-in for an LLM (see the module docstring for exactly what it does)."""

    name = "offline stand-in"

    def __init__(self, *, reading_budget: int = READING_BUDGET, threshold: float = MATCH_THRESHOLD) -> None:
        self.reading_budget = reading_budget
        self.threshold = threshold

    def __repr__(self) -> str:
        return f"OfflineModel(reading_budget={self.reading_budget}, threshold={self.threshold})"

    # --- one decision ----------------------------------------------------------------------

    def choose(self, request: str, tools: Sequence[Tool]) -> Choice:
        """Which shown tool the stand-in would call for a one-step request (None: none fits)."""
        request = intent_text(request)
        candidates = [t for t in tools if not is_discovery(t)]
        full = read_fully(candidates, self.reading_budget)
        scores = {t.name: relevance(request, t.name, t.search_text if t.name in full else None) for t in candidates}
        best = max(scores, key=lambda n: scores[n], default=None)  # first shown wins ties
        if best is None or scores[best] < self.threshold:
            return Choice(None, scores.get(best, 0.0) if best else 0.0, scores, frozenset(scores.keys() - full))
        return Choice(best, scores[best], scores, frozenset(scores.keys() - full))

    def pick(self, request: str, tools: Sequence[Tool], previous_result: str | None = None,
             context: str = "") -> tuple[str | None, dict]:
        """The tool and arguments the stand-in would call for one step (None, {} when nothing fits).

        ``context`` is what the user said before this step, for values the step refers back to.
        """
        choice = self.choose(request, tools)
        if choice.tool is None:
            return None, {}
        t = next(t for t in tools if t.name == choice.tool)
        return t.name, _arguments(request, t, previous_result, context)

    # --- a turn ------------------------------------------------------------------------------

    async def complete(self, *, system: str, transcript: Transcript, tools: Sequence[Tool], max_tokens: int = 1024) -> ModelTurn:
        message = self.respond(transcript, tools)
        usage = Usage(count_text(transcript.to_json()) + sum(tool_tokens(t) for t in tools), count_text(str(message.to_api())))
        return ModelTurn(message, "tool_use" if message.tool_calls else "end_turn", usage, self.name)

    def respond(self, transcript: Transcript, tools: Sequence[Tool]) -> Message:
        msgs = transcript.messages
        start = max((i for i, m in enumerate(msgs) if m.role == "user" and m.text), default=-1)
        if start < 0:
            return _say("There is no request to work on.")
        request = msgs[start].text
        steps = work_steps(request)
        n_calls = sum(len(m.tool_calls) for m in msgs)
        by_name = {t.name: t for t in tools}
        discovery = next((t for t in tools if is_discovery(t)), None)

        events: list[tuple[ToolCall, ToolResult | None]] = [
            (c, transcript.result_for(c.id)) for m in msgs[start + 1:] for c in m.tool_calls
        ]
        done = [(c, r) for c, r in events if r is not None and not r.is_error and not _names_discovery(c.name, by_name)]
        since = events[_last_index(events, done) + 1:] if done else events
        failures = [r for _, r in since if r is not None and r.is_error]
        found = _discovered(since, by_name) + _remembered(transcript, start, by_name)
        searched = any(_names_discovery(c.name, by_name) for c, _ in since)

        if not steps:  # an opener: "hi", "what can you do?"
            if discovery and not searched:
                return _call(n_calls, discovery.name, {})
            names = [n for n, _ in found] or [t.name for t in tools if not is_discovery(t)]
            if not names:
                return _say("Hello! I have no tools loaded right now, so I can only chat. What would you like to do?")
            return _say("Hello! I can help with: " + ", ".join(names[:12]) + ". What would you like to do?")

        if len(done) >= len(steps):
            return _say(_summary(done))
        step = steps[len(done)]
        if len(failures) >= MAX_FAILURES_PER_STEP:
            return _say(f"I could not complete '{step}': {failures[-1].content}")

        previous = done[-1][1].content if done else None
        context = " ".join(steps[: len(done)])
        choice = self.choose(step, tools)
        shown = by_name.get(choice.tool) if choice.tool else None
        if shown is not None and discovery and not searched and not does_the_action(step, shown):
            shown = None  # it fits only loosely: ask the discovery tool before settling for it
        elif shown is None and discovery and not searched:
            return _call(n_calls, discovery.name, _discovery_args(discovery, step))
        intent = intent_text(step)
        best = max(((relevance(intent, n, d), n) for n, d in found if n not in by_name), default=(0.0, ""))
        if best[0] >= self.threshold and (shown is None or best[0] > choice.score):
            # a tool it read about (a discovery result) or used before fits better: call it by name, loaded or not
            return _call(n_calls, best[1], fill_arguments(step, {"properties": {}}, previous_result=previous))
        if shown is None and choice.tool is not None and searched:
            shown = by_name[choice.tool]  # searched, found nothing better: the loose fit it is
        if shown is not None:
            return _call(n_calls, shown.name, _arguments(step, shown, previous, context))
        if discovery and not searched:
            return _call(n_calls, discovery.name, _discovery_args(discovery, step))
        return _say(f"I don't have a tool that can do this: '{step}'.")


# --- helpers ----------------------------------------------------------------------------------

def _arguments(step: str, t: Tool, previous: str | None, context: str) -> dict:
    """Arguments for ``t`` from the step, what the user said before it, and the previous result."""
    return fill_arguments(step, t.input_schema, tool_words=_words(t.name), previous_result=previous,
                          context=context, tool_text=t.search_text)


def _say(text: str) -> Message:
    return Message("assistant", [TextBlock(text)])


def _call(n_calls: int, name: str, args: dict) -> Message:
    return Message("assistant", [ToolCall(f"toolu_offline_{n_calls + 1:03d}", name, args)])


def _words(name: str) -> set[str]:
    return set(split_identifier(name))


def _names_discovery(name: str, by_name: dict[str, Tool]) -> bool:
    t = by_name.get(name)
    return t is not None and is_discovery(t)


def _last_index(events: list, done: list) -> int:
    last_done = done[-1][0]
    return next(i for i, (c, _) in enumerate(events) if c is last_done)


def _discovered(events: list[tuple[ToolCall, ToolResult | None]], by_name: dict[str, Tool]) -> list[tuple[str, str]]:
    """(name, summary) pairs listed by discovery results since the last completed step."""
    out: dict[str, str] = {}
    for call, result in events:
        if result is None or result.is_error or not _names_discovery(call.name, by_name):
            continue
        for m in _JSON_NAME.finditer(result.content):
            out.setdefault(m.group(1), m.group(2) or "")
        for line in result.content.splitlines():
            listed = _LISTED_NAME.match(line)
            if listed:
                out.setdefault(listed.group(1), listed.group(2))
    return list(out.items())


def _remembered(transcript: Transcript, start: int, by_name: dict[str, Tool]) -> list[tuple[str, str]]:
    """Tools the model called successfully for earlier requests: it has seen their schemas before."""
    names = [c.name for m in transcript.messages[:start] for c in m.tool_calls
             if not _names_discovery(c.name, by_name) and (r := transcript.result_for(c.id)) is not None and not r.is_error]
    return [(n, "") for n in dict.fromkeys(names)]


def _discovery_args(t: Tool, step: str) -> dict:
    """Keywords for a discovery tool's query-like parameter (none for a plain list)."""
    words = tokenize(step) + concepts(step)  # its own words, plus the plain word for each synonym
    keywords = " ".join(dict.fromkeys(w for w in words if "_" not in w))
    props = t.input_schema.get("properties", {})
    for name in props:
        if props[name].get("type", "string") == "string":
            return {name: keywords}
    return {}


def _summary(done: Sequence[tuple[ToolCall, ToolResult | None]]) -> str:
    lines = [f"- {c.name}: {(r.content if r else '').strip()[:160]}" for c, r in done]
    return "Done.\n" + "\n".join(lines)
