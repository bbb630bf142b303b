"""Term-level helpers for lexical retrieval: abbreviations, catalog verbs, action synonyms.

Introduced in Chapter 6a (``notebooks/06a_public_benchmarks.ipynb``); used by the fielded BM25.

Four mismatches cost BM25 the most on tool catalogs, and each has a cheap, general fix:
users abbreviate ("PR", "repo", "db") where tools spell out, or the reverse — so both sides
get the expansion appended; users say "save", "show", "find" where tools say write, get,
search — so a query gets the usual action synonyms added at a lower weight; the verbs that open most tool names (get, list, create, search…)
match almost everything — so the catalog's *own* leading-verb counts decide which terms to
down-weight, rather than a hand list that fits one catalog; and a user who types a tool's exact
name wants that tool first (Codex CLI bug #21503) — which no ranker does itself: the
:class:`~harness.selection.ranking.Selector` puts exact names first, for every ranker alike.
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

from harness.retrieval.records import CatalogTool
from harness.core.text import split_identifier, stem, tokenize

#: Common software abbreviations (keys are stemmed, as tokenize emits them) → their long form.
ABBREVIATIONS: dict[str, str] = {
    "pr": "pull request", "repo": "repository", "db": "database", "k8": "kubernetes", "k8s": "kubernetes",
    "msg": "message", "dir": "directory", "doc": "document", "img": "image", "pic": "picture",
    "config": "configuration", "cfg": "configuration", "env": "environment", "auth": "authentication",
    "info": "information", "stat": "statistic", "calc": "calculate", "param": "parameter", "arg": "argument",
    "pkg": "package", "dep": "dependency", "lib": "library", "js": "javascript", "ts": "typescript",
    "py": "python", "md": "markdown", "ppt": "powerpoint presentation", "pptx": "powerpoint presentation",
    "xlsx": "excel spreadsheet", "xls": "excel spreadsheet", "csv": "spreadsheet", "docx": "word document",
    "gh": "github", "ci": "continuous integration", "btc": "bitcoin", "eth": "ethereum", "tz": "timezone",
    "geo": "geographic", "addr": "address", "usr": "user", "dm": "direct message", "ip": "address",
    "url": "link", "vm": "virtual machine", "os": "operating system", "ui": "interface", "api": "endpoint",
    "ai": "artificial intelligence", "llm": "language model", "ml": "machine learning", "nlp": "language",
    "temp": "temperature", "sec": "security", "dns": "domain", "cal": "calendar", "q": "query",
}
_EXPANSIONS = {abbr: tokenize(long) for abbr, long in ABBREVIATIONS.items()}


#: Everyday action words → the words tool names and descriptions use for them (added to queries only).
ACTION_SYNONYMS: dict[str, str] = {
    "save": "write file", "store": "write save", "persist": "write save", "record": "write save",
    "show": "display", "display": "show", "fetch": "retrieve", "retrieve": "fetch", "obtain": "retrieve",
    "find": "search", "lookup": "search", "look": "search", "query": "search",
    "generate": "create", "build": "create", "new": "create",
    "remove": "delete", "erase": "delete", "modify": "update edit", "change": "update edit", "edit": "update",
    "write": "save", "read": "open", "open": "read", "draw": "chart plot", "plot": "chart", "chart": "plot",
    "latest": "recent current", "today": "current date", "current": "latest", "recent": "latest",
    "trending": "trend hot popular", "popular": "trending hot", "hot": "trending popular",
    "summary": "summarize", "summarize": "summary", "analyze": "analysis", "analysis": "analyze",
    "report": "document", "convert": "transform", "translate": "convert",
}
# (no stop words here: "get" and "make" never reach an index, see harness.core.text.STOP_WORDS)
_SYNONYMS = {stem(word): tokenize(alternatives) for word, alternatives in ACTION_SYNONYMS.items()}


def synonyms(terms: Sequence[str]) -> list[str]:
    """The action synonyms of ``terms`` (not the terms themselves), in order."""
    return [alt for term in terms for alt in _SYNONYMS.get(term, ())]


def expand(terms: Sequence[str]) -> list[str]:
    """``terms`` with each abbreviation's long form appended after it."""
    out: list[str] = []
    for term in terms:
        out.append(term)
        out.extend(_EXPANSIONS.get(term, ()))
    return out


def leading_verbs(tools: Iterable[CatalogTool], min_share: float = 0.02, min_tools: int = 3) -> dict[str, int]:
    """Terms that open at least ``min_share`` of the catalog's tool names (and ``min_tools`` of them).

    In an MCP catalog that is get, list, create, search, …; in another catalog it is whatever
    that catalog's names start with. A leading word that is the tool's server (``git_log`` on
    ``git``) is a namespace, not a verb, and is not counted. Counted from names, never queries.
    """
    tools = list(tools)
    counts: Counter[str] = Counter()
    for t in tools:
        parts = split_identifier(t.name)
        if len(parts) > 1 and parts[0] not in split_identifier(t.server):
            counts[stem(parts[0])] += 1
    floor = max(min_tools, min_share * len(tools))
    return {verb: n for verb, n in counts.items() if n >= floor}
