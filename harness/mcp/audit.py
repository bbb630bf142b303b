"""An audit of one's own MCP servers: what each server and tool costs, what deferral would save, which tools a
model may confuse, which a search cannot find, which descriptions are weak, and which look poisoned.

Introduced in Chapter 7 (``notebooks/07_use_it_in_your_agent.ipynb``); ``harness audit --config mcp.json`` runs it
on a user's own setup and writes the text report and, with ``--html``, a self-contained page.

Each finding applies one of the workbook's lessons to the user's tools rather than to the demo world:

* **cost** (Chapter 1): every definition shown is paid on every request, counted with the real tokenizer;
* **deferral** (Chapter 5): what a request costs at each threshold, ``search_tools`` included once anything is
  deferred;
* **confusable pairs** (the seed's name and parameter collisions): two tools whose names are near-identical,
  whose descriptions say nearly the same, or that take the same parameters and are described alike;
* **not findable** (Chapters 2 and 4): a tool that ``search_tools`` does not return within its default limit for
  its own name in words or its description's first sentence will be found by no request in other words either;
* **weak descriptions** (Chapter 2): too terse to rank, parameters without a description, or a description that
  names another tool (it gains that tool's words and outranks it for them);
* **flags** (Chapter 5b): the poisoning and look-alike detector of :mod:`harness.mcp.suspicious`.

The recommendation is a starting point the report argues for, not an oracle: the audit cannot know which tools
a user calls on every request, so it never recommends ``alwaysLoad`` on its own.
"""
from __future__ import annotations

import difflib
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from harness.core.html import bar, esc, table
from harness.core.json_types import JSON
from harness.core.safe_text import printable
from harness.core.text import split_identifier, tokenize
from harness.core.tokens import tool_tokens
from harness.core.tools import Tool
from harness.mcp.suspicious import LookAlikes, flag_tool, shown_name
from harness.selection.discovery import DEFAULT_LIMIT, RankerSpec, ToolSearch

#: Thresholds (tokens of definitions at session start) at which the report prices a request.
THRESHOLDS = (0, 1_000, 2_000, 5_000, 10_000, 20_000)
#: Below this many words a description gives BM25 too little to rank it by (the demo world's are 10–30).
TERSE_WORDS = 6
#: Names this similar (difflib's ratio on their words) read as one name to a model.
NAME_SIMILARITY = 0.85
#: Descriptions this similar (cosine of their term counts) say the same thing.
DESCRIPTION_SIMILARITY = 0.75
#: With the same parameters, descriptions this similar are enough to confuse.
SHAPE_DESCRIPTION_SIMILARITY = 0.45


@dataclass(frozen=True)
class ServerCost:
    """One server's tools and what their definitions cost a request."""

    server: str
    tools: int
    tokens: int


@dataclass(frozen=True)
class Confusable:
    """Two tools a model may take for each other, and why."""

    a: str
    b: str
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class Finding:
    """One tool's problem of one kind, said in a sentence."""

    tool: str
    detail: str


@dataclass(frozen=True)
class Recommendation:
    """What the report suggests for the config: a deferral threshold and tools to disable."""

    threshold: int
    disabled: tuple[str, ...]
    why: tuple[str, ...]


@dataclass(frozen=True)
class Audit:
    """Everything the report says, as data a test can check."""

    servers: list[ServerCost]
    tool_tokens: dict[str, int]
    savings: list[tuple[int, int, int]]  # (threshold, tokens a request shows, tools deferred)
    confusable: list[Confusable]
    not_findable: list[Finding]
    weak: list[Finding]
    flagged: list[Finding]
    recommendation: Recommendation
    unavailable: dict[str, str] = field(default_factory=dict)  # server -> why it gave no tools

    @property
    def total_tokens(self) -> int:
        return sum(self.tool_tokens.values())


def _words(name: str) -> str:
    return " ".join(p.lower() for p in split_identifier(name) if p)


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s|\n", text.strip(), maxsplit=1)[0]


def _shape(t: Tool) -> tuple[tuple[str, str], ...]:
    """The tool's parameters as (name, type), sorted: what a call to it looks like."""
    props = t.input_schema.get("properties", {})
    if not isinstance(props, dict):
        return ()
    return tuple(sorted((str(n), str(s.get("type", "")) if isinstance(s, dict) else "") for n, s in props.items()))


def _description_similarity(tools: Sequence[Tool]) -> np.ndarray:
    """Cosine similarity of every pair of descriptions over their terms (BM25's own tokens, stop words dropped)."""
    vocab: dict[str, int] = {}
    counts = [Counter(tokenize(t.description)) for t in tools]
    for c in counts:
        for term in c:
            vocab.setdefault(term, len(vocab))
    matrix = np.zeros((len(tools), max(len(vocab), 1)))
    for i, c in enumerate(counts):
        for term, n in c.items():
            matrix[i, vocab[term]] = n
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = matrix / np.where(norms == 0, 1, norms)
    return unit @ unit.T


def confusable_pairs(tools: Sequence[Tool]) -> list[Confusable]:
    """Pairs whose names, descriptions or parameters and descriptions nearly coincide (most reasons first)."""
    similar = _description_similarity(tools)
    words = [_words(getattr(t, "raw_name", "") or t.name) for t in tools]
    shapes = [_shape(t) for t in tools]
    pairs: list[Confusable] = []
    for i in range(len(tools)):
        for j in range(i + 1, len(tools)):
            reasons = []
            ratio = difflib.SequenceMatcher(None, words[i], words[j]).ratio()
            if ratio >= NAME_SIMILARITY:
                reasons.append("the same name" if words[i] == words[j] else f"near-identical names ({ratio:.2f})")
            if similar[i, j] >= DESCRIPTION_SIMILARITY:
                reasons.append(f"near-identical descriptions ({similar[i, j]:.2f})")
            elif shapes[i] and shapes[i] == shapes[j] and similar[i, j] >= SHAPE_DESCRIPTION_SIMILARITY:
                reasons.append(f"the same parameters and similar descriptions ({similar[i, j]:.2f})")
            if reasons:
                pairs.append(Confusable(tools[i].name, tools[j].name, tuple(reasons)))
    return sorted(pairs, key=lambda p: (-len(p.reasons), p.a, p.b))


def not_findable(tools: Sequence[Tool], retriever: RankerSpec = None, limit: int = DEFAULT_LIMIT) -> list[Finding]:
    """Tools ``search_tools`` does not return within ``limit`` for their own name in words or their description's
    first sentence — the easiest requests there are for them."""
    search = ToolSearch([], tools, retriever=retriever, limit=limit)
    out = []
    for t in tools:
        for what, query in (("its name in words", _words(getattr(t, "raw_name", "") or t.name)),
                            ("its description's first sentence", _first_sentence(t.description))):
            if not tokenize(query):
                continue
            found = [f.name for f in search.find(query)]
            if t.name not in found:
                first = found[0] if found else "nothing"
                out.append(Finding(t.name, f"search for {what} ({query[:60]!r}) returns {first} first, and not this "
                                           f"tool in its top {limit}"))
                break
    return out


def weak_descriptions(tools: Sequence[Tool]) -> list[Finding]:
    """Descriptions too terse to rank by, parameters without descriptions, and descriptions naming another tool."""
    names = {t.name: t for t in tools} | {getattr(t, "raw_name", ""): t for t in tools if getattr(t, "raw_name", "")}
    out = []
    for t in tools:
        problems = []
        words = len(t.description.split())
        if words < TERSE_WORDS:
            problems.append(f"a {words}-word description" if words else "no description")
        props = t.input_schema.get("properties", {})
        bare = [n for n, s in props.items() if not (isinstance(s, dict) and s.get("description"))] if isinstance(props, dict) else []
        if bare:
            problems.append(f"parameters without a description: {', '.join(bare[:5])}{'…' if len(bare) > 5 else ''}")
        own = {t.name, getattr(t, "raw_name", "")}
        named = sorted({n for n in re.findall(r"[A-Za-z][\w\-]*[_\-][\w\-]+", t.description)
                        if n in names and names[n].name not in own and n not in own})
        if named:
            problems.append(f"it names another tool ({', '.join(named[:3])}), so it gains that tool's words")
        if problems:
            out.append(Finding(t.name, "; ".join(problems)))
    return out


def savings(tool_tokens_by_name: Mapping[str, int], search_tokens: int, thresholds: Sequence[int] = THRESHOLDS,
            ) -> list[tuple[int, int, int]]:
    """(threshold, tokens a request shows, tools deferred) at each threshold: everything loaded while the total
    fits, else everything deferred behind ``search_tools`` (the proxy's rule, Chapter 5)."""
    total = sum(tool_tokens_by_name.values())
    return [(th, total, 0) if total <= th else (th, search_tokens, len(tool_tokens_by_name)) for th in thresholds]


def recommend(total: int, flagged: Sequence[Finding], confusable: Sequence[Confusable]) -> Recommendation:
    """Defer everything once the definitions are more than a search tool's worth (the page's item 3); disable
    the second of two tools with the same name and parameters, and every flagged tool until read by a person."""
    why = []
    threshold = 0 if total > 1_000 else total
    why.append(f"the definitions cost {total:,} tokens a request: " + (
        "defer them all behind search_tools (threshold 0)" if threshold == 0 else "they fit; deferring would save little"))
    duplicates = tuple(p.b for p in confusable if "the same name" in p.reasons and any("description" in r for r in p.reasons))
    disabled = tuple(dict.fromkeys([*(f.tool for f in flagged), *duplicates]))
    if flagged:
        why.append(f"{len(flagged)} flagged tool(s): disable until a person has read the description")
    if duplicates:
        why.append(f"{len(duplicates)} duplicate tool(s) (same name, same description): keep one of each")
    why.append("alwaysLoad: none recommended — the audit cannot see which tools nearly every request uses (Chapter 4)")
    return Recommendation(threshold, disabled, tuple(why))


def audit(tools_by_server: Mapping[str, Sequence[Tool]], unavailable: Mapping[str, str] | None = None,
          retriever: RankerSpec = None) -> Audit:
    """The audit of these servers' tools (``unavailable``: servers that gave none, and why)."""
    tools = [t for group in tools_by_server.values() for t in group]
    costs = {t.name: tool_tokens(t) for t in tools}
    search_tokens = tool_tokens(ToolSearch([], tools).tool)
    names = LookAlikes(shown_name(t) for t in tools)  # one index of names for every tool's look-alike check
    flagged = [Finding(t.name, "; ".join(flags)) for t in tools if (flags := flag_tool(t, names))]
    pairs = confusable_pairs(tools)
    servers = [ServerCost(s, len(g), sum(costs[t.name] for t in g)) for s, g in tools_by_server.items()]
    return Audit(sorted(servers, key=lambda s: -s.tokens), costs, savings(costs, search_tokens), pairs,
                 not_findable(tools, retriever), weak_descriptions(tools), flagged,
                 recommend(sum(costs.values()), flagged, pairs), dict(unavailable or {}))


async def audit_config(config: Mapping[str, JSON] | str | os.PathLike[str], *, retriever: RankerSpec = None,
                       environ: Mapping[str, str] | None = None) -> Audit:
    """Start every server of an ``mcpServers`` config (:class:`~harness.mcp.client.MCPHub`), audit what they list,
    and stop them; a server that failed, was disabled or listed no tool is reported as unavailable, with why."""
    from harness.mcp.client import MCPHub  # the SDK and the hub load only when servers are audited

    async with MCPHub(config, environ=environ) as hub:
        grouped = {name: [t for t in hub.tools.values() if t.server == name] for name in hub.statuses}
        unavailable = {name: st.reason or st.state for name, st in hub.statuses.items() if not grouped[name]}
        return audit({name: tools for name, tools in grouped.items() if tools}, unavailable, retriever)


def report_text(a: Audit, shown: int | None = None) -> str:
    """The audit as plain text, every finding (or the first ``shown`` of each section), each name and reason escaped
    to one printable line."""
    def safe(text: str) -> str:
        return printable(text, keep_newlines=False)

    lines = [f"{sum(s.tools for s in a.servers)} tools on {len(a.servers)} servers: {a.total_tokens:,} tokens of "
             "definitions on every request", ""]
    lines += [f"  {safe(s.server):<24} {s.tools:>4} tools  {s.tokens:>7,} tokens" for s in a.servers]
    lines += [f"  {safe(s)}: unavailable — {safe(why)}" for s, why in a.unavailable.items()]
    lines += ["", "Deferral (tokens a request shows at each threshold):"]
    lines += [f"  threshold {th:>6,}: {shown_tokens:>7,} tokens, {deferred} tools deferred" for th, shown_tokens, deferred in a.savings]
    sections = (("Tools a model may confuse", [f"{safe(p.a)} ~ {safe(p.b)}: {'; '.join(p.reasons)}" for p in a.confusable]),
                ("Tools search_tools does not find", [f"{safe(f.tool)}: {safe(f.detail)}" for f in a.not_findable]),
                ("Weak descriptions", [f"{safe(f.tool)}: {safe(f.detail)}" for f in a.weak]),
                ("Flagged (poisoning, look-alike names)", [f"{safe(f.tool)}: {safe(f.detail)}" for f in a.flagged]))
    for title, items in sections:
        lines += ["", f"{title}: {len(items)}"] + [f"  {i}" for i in items[:shown]]
        if shown is not None and len(items) > shown:
            lines.append(f"  … and {len(items) - shown} more (the HTML report lists every one)")
    r = a.recommendation
    lines += ["", "Recommended:", f"  threshold: {r.threshold}",
              f"  disabledTools: {', '.join(map(safe, r.disabled)) or 'none'}"] + [f"  - {w}" for w in r.why]
    return "\n".join(lines)


def _bars(rows: Sequence[tuple[str, int]], color: str = "#4a7") -> str:
    top = max((v for _, v in rows), default=0) or 1
    return table(("", "tokens", ""), [(label, f"{v:,}", bar(v / top, 240, color)) for label, v in rows], raw_columns={2})


def report_html(a: Audit) -> str:
    """The audit as one self-contained HTML page (no script, no outside resource): tables and bar plots."""
    r = a.recommendation

    def listing(title: str, headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
        body = table(headers, rows) if rows else "<p>None found.</p>"
        return f"<h2>{esc(title)} ({len(rows)})</h2>{body}"

    parts = [
        "<h1>MCP tool audit</h1>",
        f"<p>{sum(s.tools for s in a.servers)} tools on {len(a.servers)} servers: <b>{a.total_tokens:,}</b> tokens of "
        "definitions on every request.</p>",
        "<h2>Cost by server</h2>", _bars([(s.server, s.tokens) for s in a.servers]),
        *(f"<p class='unavailable'>{esc(s)}: unavailable — {esc(w)}</p>" for s, w in a.unavailable.items()),
        "<h2>Tokens a request shows at each deferral threshold</h2>",
        _bars([(f"threshold {th:,} ({d} deferred)", shown) for th, shown, d in a.savings], "#47a"),
        "<h2>Most expensive tools</h2>",
        _bars(sorted(a.tool_tokens.items(), key=lambda kv: -kv[1])[:15], "#a74"),
        listing("Tools a model may confuse", ("tool", "tool", "why"), [(p.a, p.b, "; ".join(p.reasons)) for p in a.confusable]),
        listing("Tools search_tools does not find", ("tool", "why"), [(f.tool, f.detail) for f in a.not_findable]),
        listing("Weak descriptions", ("tool", "what"), [(f.tool, f.detail) for f in a.weak]),
        listing("Flagged: poisoning, look-alike names", ("tool", "flags"), [(f.tool, f.detail) for f in a.flagged]),
        "<h2>Recommended</h2>",
        f"<p>threshold: <code>{r.threshold}</code>; disabledTools: <code>{esc(', '.join(r.disabled) or 'none')}</code></p>",
        "<ul>" + "".join(f"<li>{esc(w)}</li>" for w in r.why) + "</ul>",
    ]
    style = ("body{font-family:sans-serif;max-width:60em;margin:2em auto;color:#222}table{border-collapse:collapse}"
             "td,th{border-bottom:1px solid #ddd;padding:2px 8px;text-align:left;vertical-align:top}"
             ".unavailable{color:#a33}")
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'/><title>MCP tool audit</title>"
            f"<style>{style}</style></head><body>{''.join(parts)}</body></html>")
