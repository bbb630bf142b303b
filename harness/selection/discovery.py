"""A pinned discovery tool: how a model finds the tools the selector did not show it.

Introduced in Chapter 4 (``notebooks/04_pinned_discovery.ipynb``); Chapter 5's MCP hub and Chapter 7's
proxy configure the same :class:`ToolSearch` with their own names and result entries.

Per-turn selection fails in two predictable places: a vague opener ("hi") that selects nothing,
and a mid-task pivot whose query is still dominated by the old task. A discovery tool pinned on
every turn lets the model ask. Three designs, compared in Chapter 4:

* ``list_available_tools()`` — every tool, one line each (costs tokens in the result);
* ``list_available_tools(filter_term)`` — only lines mentioning the filter's words;
* ``search_tools(query, limit)`` — BM25-ranked matches with their parameters, which become
  callable on the next turn (as Codex CLI and PizzaPi do); exact names first; when nothing
  matches, the names of what exists rather than silence (:class:`ToolSearch`).
"""
from __future__ import annotations

import functools
import json
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence

from harness.core.json_types import JSONObject
from harness.core.messages import Message, ToolResult
from harness.selection.catalog import ToolCatalog
from harness.selection.ranking import Ranker, Selector
from harness.core.safe_text import shown
from harness.core.text import tokenize
from harness.core.tokens import count_text
from harness.core.tools import Tool

#: How a search gets its ranker: a function that builds one over the tools (None: Chapter 2's BM25 catalog).
#: Chapter 6's retrievers by name: :func:`harness.retrieval.named.maker` (``maker("bm25-fielded")``).
RankerSpec = Optional[Callable[[Sequence[Tool]], Ranker]]


def checked_spec(spec: RankerSpec) -> RankerSpec:
    """``spec`` itself, or a one-sentence TypeError when it is no function (a retriever's name, say)."""
    if spec is not None and not callable(spec):
        raise TypeError(f"A search takes a function that builds a ranker, not {spec!r}; for a retriever by name "
                        f"pass harness.retrieval.named.maker({spec!r}).")
    return spec


def build_ranker(spec: RankerSpec, tools: Sequence[Tool]) -> Ranker:
    """The ranker ``spec`` builds over ``tools`` (Chapter 2's BM25 catalog when ``spec`` is None)."""
    spec = checked_spec(spec)
    return ToolCatalog(tools) if spec is None else spec(tools)


def listing(tools: Sequence[Tool]) -> str:
    """``name — one-line summary``, a line per tool."""
    return "\n".join(f"{t.name} — {t.summary}" for t in tools)


def discovery_tool(catalog: ToolCatalog, *, filtered: bool = True) -> Tool:
    """``list_available_tools(filter_term=None)``: the catalog as one line per tool.

    With ``filtered=False`` the tool takes no argument and always lists everything.
    """
    def list_available_tools(filter_term: str | None = None) -> str:
        if not filter_term or not filter_term.strip():
            return listing(catalog.tools)
        wanted = set(tokenize(filter_term))
        hits = [t for t in catalog.tools if wanted & set(tokenize(f"{t.name} {t.description}"))]
        if not hits:
            return f"No tool mentions {filter_term!r}. All tools:\n" + listing(catalog.tools)
        return listing(hits)

    schema: JSONObject = {"type": "object", "properties": {}}
    if filtered:
        schema["properties"]["filter_term"] = {
            "type": "string", "description": "Optional words; only tools whose name or description mention one are listed.",
        }
    return Tool(
        name="list_available_tools",
        description=(
            "List every tool you can use, one line each (name — what it does). Call this when no tool you "
            "have fits the request; then call the tool you need by its name."
        ),
        input_schema=schema,
        fn=list_available_tools,
        tags=frozenset({"discovery", "read"}),
    )


SEARCH_TOOL_NAME = "search_tools"
#: Results per search when the model names no limit. Not the tools shown per turn
#: (:data:`harness.selection.ranking.DEFAULT_K`): the model's own words rank them, and found tools stay loaded,
#: so several searches add up; 5 is what Claude Code returns and inside Anthropic's 3–5 (Exercise 7 tunes it).
DEFAULT_LIMIT = 5
MAX_LIMIT = 50
#: Above this many deferred tools, a failed search lists tools per domain/server instead of names.
MAX_LISTED_NAMES = 200
#: One search answer costs at most this many tokens (cl100k): a single tool with a 400 KB input schema made
#: an answer of 78,542 tokens. A match that does not fit is shown without its long parts, and the note says so.
MAX_ANSWER_TOKENS = 8_000
#: What the note and the answer's JSON around the matches may take of :data:`MAX_ANSWER_TOKENS`.
_NOTE_TOKENS = 600
#: A part of a match longer than this (as JSON characters) is left out when the match does not fit whole.
_SHORT_PART = 300

_SEARCH_DESCRIPTION = (
    "Search the tools that are available but not loaded yet, by what you want to do or by a tool's name. "
    "Returns matching tools with their names, descriptions and parameters; the tools found become callable "
    "on your next step. Use it whenever no loaded tool fits the task."
)


def parameters_summary(t: Tool) -> dict[str, str]:
    """``{parameter: "type (required)"}``: a compact view of the input schema."""
    required = set(t.required)
    out = {}
    for pname, spec in (t.input_schema.get("properties") or {}).items():
        kind = spec.get("type", "any") if isinstance(spec, dict) else "any"
        kind = "|".join(kind) if isinstance(kind, list) else str(kind)
        out[pname] = f"{kind} (required)" if pname in required else kind
    return out


def own_name(t: Tool) -> set[str]:
    """The names under which ``t`` counts as an exact match by default: its own (lower-cased)."""
    return {t.name.lower()}


def name_of(t: Tool) -> str:
    """The name a result shows by default: the tool's own, the one the model calls."""
    return t.name


def match_entry(t: Tool) -> JSONObject:
    """What a result shows of a found tool besides its name: its description and compact parameters."""
    return {"description": t.description, "parameters": parameters_summary(t)}


#: What a result with matches tells the model by default (found tools become callable).
FOUND_NOTE = "These tools are now loaded: call them by name."


def listed(result: str) -> list[str]:
    """The names a ``search_tools`` result lists as matches (none when ``result`` is not one)."""
    if not result.startswith('{"matches"'):
        return []
    try:
        payload = json.loads(result)
    except ValueError:
        return []
    matches = payload.get("matches") if isinstance(payload, dict) else None
    return [m["name"] for m in matches if isinstance(m, dict) and isinstance(m.get("name"), str)] if isinstance(matches, list) else []


def found_in(messages: Sequence[Message]) -> dict[str, int]:
    """Each tool a search result in ``messages`` listed, and how many messages run up to the first result that
    listed it: where its definition sits when found tools are placed after the conversation, as Anthropic's
    ``tool_reference`` and OpenAI's ``tool_search_output`` place them (the prompt before stays a cacheable prefix)."""
    out: dict[str, int] = {}
    for i, m in enumerate(messages, 1):
        for block in m.content:
            if isinstance(block, ToolResult) and not block.is_error:
                for name in listed(block.content):
                    out.setdefault(name, i)
    return out


@dataclass(frozen=True)
class Deferral:
    """Tools that exist beyond the selector's and how they reach the model (Chapter 5's deferred MCP tools).

    ``extra_tools`` is asked every turn for tools that became available during the run (those a
    search activated). ``known`` names tools that exist but may not be loaded, so a call to one
    says so, followed by ``hint`` (how to load it). ``all_tools_tokens`` is what showing every
    tool would cost, for the events' comparison (by default the selector's tools and pins).
    ``on_finish`` runs when the user's turn ends — to unload what a search found, say.
    """

    extra_tools: Callable[[], Sequence[Tool]] | None = None
    known: Iterable[str] = ()
    hint: str | None = None
    all_tools_tokens: int | None = None
    on_finish: Callable[[], None] | None = None


def _tokens(value: JSONObject) -> int:
    """Tokens of ``value`` as an answer carries it (compact JSON)."""
    return count_text(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _checked_limit(limit: object) -> int:
    """``limit`` as a whole number of tools from 1 to :data:`MAX_LIMIT`, or a one-sentence ValueError."""
    if isinstance(limit, float) and limit.is_integer():  # JSON Schema counts 5.0 as an integer
        limit = int(limit)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be a whole number from 1 to {MAX_LIMIT}, got {limit!r}.")
    return limit


class ToolSearch:
    """``search_tools(query, limit)`` over deferred tools; what it finds becomes callable.

    ``loaded`` tools are always shown; ``deferred`` ones only once a search found them. They are
    ranked by ``retriever`` (a maker, see :data:`RankerSpec`; BM25 by default) through a
    :class:`~harness.selection.ranking.Selector` with exact names first — BM25 alone can rank a tool below others that merely repeat its words (Codex CLI
    bug #21503: prepend exact matches, drop duplicates, then cut to the limit). A search that finds
    nothing returns the names of what exists (PizzaPi), never silence — or, above
    :data:`MAX_LISTED_NAMES` tools, the count per domain, since an unranked dump drowns the model.
    Found tools stay for the session (``keep_loaded``) or go when :meth:`end_turn` is called.
    ``limit`` is what a search returns when the model names no limit (models rarely do), so it is
    the setting to tune (Exercise 7).
    Callers configure it rather than subclass it: ``names_of`` adds names a tool also answers to
    (Chapter 5: the MCP server's own name), ``shown_name`` and ``entry`` say how a result shows a tool
    and ``found_note`` what it tells the model (Chapter 7's proxy: its own names, the input schema).
    """

    def __init__(self, loaded: Sequence[Tool], deferred: Sequence[Tool], *, keep_loaded: bool = True,
                 retriever: RankerSpec = None, limit: int = DEFAULT_LIMIT,
                 names_of: Callable[[Tool], set[str]] = own_name, shown_name: Callable[[Tool], str] = name_of,
                 entry: Callable[[Tool], JSONObject] = match_entry, found_note: str = FOUND_NOTE) -> None:
        self.limit = _checked_limit(limit)
        self.loaded = list(loaded)
        self.keep_loaded = keep_loaded
        self.names_of, self.shown_name, self.entry, self.found_note = names_of, shown_name, entry, found_note
        self._deferred = list(deferred)
        self._retriever = checked_spec(retriever)
        self._activated: dict[str, Tool] = {}
        self.tool = Tool(
            name=SEARCH_TOOL_NAME,
            description=_SEARCH_DESCRIPTION,
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What you want to do, or a tool name."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": self.limit,
                              "description": "How many tools to return at most."},
                },
                "required": ["query"],
            },
            fn=self.search,
            tags=frozenset({"discovery"}),
        )

    @functools.cached_property
    def selector(self) -> Selector:
        """The deferred tools' ranker behind exact names first, built at the first search (a hub
        behind Chapter 7's proxy is never searched, so it never pays for an index)."""
        ranker = build_ranker(self._retriever, self._deferred) if self._deferred else ToolCatalog([])
        return Selector(ranker, self._deferred, k=self.limit, exact_first=True, names_of=self.names_of)

    @property
    def deferred(self) -> list[Tool]:
        return list(self._deferred)

    @property
    def activated(self) -> list[Tool]:
        return list(self._activated.values())

    def exact_matches(self, query: str) -> list[Tool]:
        """Deferred tools the query names exactly (any name ``names_of`` gives), in the order it names them."""
        return [self.selector.get(n) for n in self.selector.exact_matches(query)]

    def find(self, query: str, limit: int | None = None) -> list[Tool]:
        """Exact-name matches first, then the ranker's ranking; no duplicates; at most ``limit`` tools (the search's own when None)."""
        if not isinstance(query, str) or not query.strip():
            raise ValueError("search_tools needs a non-empty query: describe the task or name a tool.")
        return self.selector.select(query, self.limit if limit is None else _checked_limit(limit))

    def search(self, query: str, limit: int | None = None) -> str:
        """Run ``search_tools``: the matches as compact JSON, activated; or the names that exist."""
        found = self.find(query, limit)
        for t in found:
            self._activated[t.name] = t
        return self.answer(query, found)

    def answer(self, query: str, found: Sequence[Tool], note: str = "") -> str:
        """The ``search_tools`` result for ``found`` (what :meth:`find` gave for ``query``), ``note`` added to its note.

        Every search's one formatting: the matches, each as :attr:`entry` shows it under its
        :attr:`shown_name`; or, when nothing was found, the names that exist (PizzaPi).
        """
        if not found:
            payload: JSONObject = {
                "matches": [],
                "note": f"No tool matched '{shown(query.strip())}'. These tools exist; search again with words "
                        "from their names, or with an exact name." + note,
                "available": self._available(),
            }
        else:
            matches, cut = self._fitted(found)
            payload = {"matches": matches, "note": self.found_note + note + cut}
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))

    def _fitted(self, found: Sequence[Tool]) -> tuple[list[JSONObject], str]:
        """The matches' entries within :data:`MAX_ANSWER_TOKENS`, and a sentence saying what was cut ('' if nothing).

        In rank order: a match that fits is shown whole; one that does not loses its long parts (its input schema,
        say), listed under ``omitted``; one that does not fit even so is left out."""
        budget = MAX_ANSWER_TOKENS - _NOTE_TOKENS
        matches: list[JSONObject] = []
        slimmed: list[str] = []
        left_out = 0
        for t in found:
            entry: JSONObject = {"name": self.shown_name(t), **self.entry(t)}
            cost = _tokens(entry)
            if cost > budget:
                long = [k for k, v in entry.items() if k != "name" and len(json.dumps(v, ensure_ascii=False)) > _SHORT_PART]
                entry = {k: v for k, v in entry.items() if k not in long}
                if "description" in long:  # a long description is cut to its first sentence, not left out
                    entry["description"] = t.summary[:_SHORT_PART]
                    long.remove("description")
                entry["omitted"] = long
                slimmed.append(f"{shown(str(entry['name']))} ({cost:,} tokens whole)")
                cost = _tokens(entry)
            if cost > budget:
                left_out += 1
                continue
            matches.append(entry)
            budget -= cost
        if not slimmed and not left_out:
            return matches, ""
        parts = ([f"the long parts of {', '.join(slimmed)} were cut (listed under 'omitted')"] if slimmed else []) + \
                ([f"{left_out} more match{'es' if left_out > 1 else ''} left out"] if left_out else [])
        return matches, f" To keep this answer under {MAX_ANSWER_TOKENS:,} tokens, {' and '.join(parts)}."

    def _available(self) -> list[str] | dict[str, int]:
        tools = self._deferred
        if len(tools) <= MAX_LISTED_NAMES:
            return [self.shown_name(t) for t in tools]
        return dict(Counter(t.domain or "local" for t in tools))

    def tools_for_turn(self) -> list[Tool]:
        """What to show the model now: always-loaded tools, activated ones, and ``search_tools`` if anything is deferred."""
        pinned = [self.tool] if self._deferred else []
        return self.loaded + self.activated + pinned

    def deferral(self, *, known: Iterable[str] = (), hint: str | None = None) -> Deferral:
        """This search in the agent loop (:func:`harness.selection.agent.arun`'s ``deferral``): its tools each turn,
        its found tools unloaded when a turn ends (unless kept loaded). ``known`` names tools that exist but are not
        loaded, so a call to one says so, followed by ``hint``."""
        return Deferral(extra_tools=self.tools_for_turn, on_finish=self.end_turn, known=known, hint=hint)

    def end_turn(self) -> None:
        """Called when a user turn ends: unloads discoveries unless ``keep_loaded``."""
        if not self.keep_loaded:
            self._activated.clear()

    def reset(self) -> None:
        """Forget every discovery (PizzaPi's ``/tool-search reset``)."""
        self._activated.clear()
