"""The registry of retrievers: every retriever by name, with what a reader needs to know about it.

Introduced in Chapter 6a (``notebooks/06a_public_benchmarks.ipynb``).

A name is what a user types (``harness search QUERY --retriever hybrid``), what a table row says
and what every part of the package builds: the CLI and its ``--help``, the benchmark and its
``tuned`` column, the scale curve, tuning, Chapter 8's measurement, the proxy and the selector all
go through :func:`make_retriever`, so one name means one piece of code everywhere. The library
registers the retrievers a user would pick — BM25 (Chapter 2's catalog, and over name and
description), fielded BM25, dense MiniLM and their hybrid; **adding one is** :func:`register` of an
:class:`Entry` — its maker and its metadata: its kind, whether it needs the embedding extra, where its
constants come from, the chapter that introduces it, its aliases. The workbook's research retrievers
register themselves that way (``import workbook.research``), outside the library.

A maker takes the catalog's records (:class:`~harness.retrieval.records.CatalogTool`; harness
:class:`~harness.core.tools.Tool` objects are converted here, once, by :meth:`CatalogTool.from_tool`),
an :class:`~harness.retrieval.dense.Encoder`, and the settings its entry lists: tuned knobs
(``alpha=0.3``), ``vectors`` (the tools' embeddings, already computed, so a caller that builds many
catalogs from one pool embeds nothing twice), ``base``/``tool_ranker`` (a ranker to build on), and
``log`` for the learned ones. A setting an entry does not list is a one-sentence error.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping, Sequence, Union, cast

import numpy as np

from harness.core.tools import Tool
from harness.retrieval.bm25 import bm25
from harness.retrieval.dense import DenseRetriever, Encoder, dense_unavailable_reason
from harness.retrieval.fielded import DEFAULT_WEIGHTS, FieldedBM25
from harness.retrieval.hybrid import HybridRetriever
from harness.retrieval.records import CatalogTool
from harness.selection.ranking import Ranker

Kind = Literal["lexical", "dense", "hybrid", "published system", "zero-shot idea", "learned"]
#: Where a retriever's constants come from: a library's or a paper's defaults, a named system's published
#: rule, a choice on development rows (``experiments/data/tuning.json``, Chapter 8's ``zero_shot_results.json``),
#: or a log it learns from.
Constants = Literal["library", "published", "tuned", "learned"]
CONSTANTS: dict[str, str] = {"library": "library or paper defaults", "published": "the system's published constants",
                             "tuned": "tuned on development rows", "learned": "learned from labelled queries (a log)"}
#: What the benchmark's ``tuned`` column says for each (:mod:`experiments.bench`).
BENCH_TUNED: dict[str, str] = {"library": "-", "published": "published", "tuned": "dev", "learned": "dev"}
Maker = Callable[..., Ranker]


@dataclass(frozen=True)
class Entry:
    """One retriever: how it is built and what it is."""

    name: str
    make: Maker  # (records, encoder, **settings) -> Ranker
    kind: Kind
    constants: Constants
    chapter: str  # the chapter that introduces it, e.g. "6a" (notebooks/06a_*.ipynb)
    summary: str  # one line, for ``--help``
    settings: tuple[str, ...] = ()  # the keyword settings the maker takes
    needs_embeddings: bool = False
    aliases: tuple[str, ...] = ()

    def line(self) -> str:
        """One line of metadata: what ``harness search --help`` prints for it."""
        extra = ", needs the embedding extra" if self.needs_embeddings else ""
        also = f" (also: {', '.join(self.aliases)})" if self.aliases else ""
        return f"{self.name}{also}: {self.summary} [{self.kind}; {CONSTANTS[self.constants]}; Chapter {self.chapter}{extra}]"


def _dense(tools: Sequence[CatalogTool], e: Encoder, vectors: Mapping[str, np.ndarray] | None = None) -> DenseRetriever:
    """MiniLM over the tools, or over their ``vectors`` (by tool id) when the caller has them already."""
    if vectors is None:
        return DenseRetriever(tools, encoder=e)
    return DenseRetriever.from_vectors([t.id for t in tools], np.stack([vectors[t.id] for t in tools]), e)


def _fielded(tools: Sequence[CatalogTool], e: Encoder, name_weight: float = DEFAULT_WEIGHTS["name"],
             **options: Any) -> FieldedBM25:  # Any: keyword settings forwarded unchanged to the retriever
    """Fielded BM25; ``name_weight`` replaces the name field's weight (the knob tuning tries)."""
    return FieldedBM25(tools, weights={**DEFAULT_WEIGHTS, "name": name_weight}, **options)


def _hybrid(tools: Sequence[CatalogTool], e: Encoder, vectors: Mapping[str, np.ndarray] | None = None,
            lexical: FieldedBM25 | None = None) -> HybridRetriever:
    return HybridRetriever(tools, lexical=lexical, dense=_dense(tools, e, vectors))


_NEEDS_LOG = "learns from a query log: pass log= (past queries with their gold tools)"

#: Every retriever, in the order ``--help`` and the error for an unknown name list them: the library's own here,
#: others as they :func:`register`.
REGISTRY: dict[str, Entry] = {e.name: e for e in (
    Entry("catalog-bm25", lambda t, e: bm25(t, document=lambda r: r.search_text, name="catalog-bm25"),
          "lexical", "library", "2", "Chapter 2's catalog: BM25 over name, description and parameters",
          aliases=("catalog",)),
    Entry("bm25", lambda t, e: bm25(t), "lexical", "library", "6a", "BM25 over name and description"),
    Entry("bm25-fielded", _fielded, "lexical", "tuned", "6a",
          "BM25 per field (name, verbs, description, parameters) with abbreviations and synonyms",
          settings=("name_weight", "verb_weight")),
    Entry("dense-minilm", _dense, "dense", "library", "6a", "cosine similarity of all-MiniLM-L6-v2 embeddings",
          settings=("vectors",), needs_embeddings=True, aliases=("dense",)),
    Entry("hybrid-rrf", _hybrid, "hybrid", "tuned", "6a",
          "fielded BM25 and MiniLM fused by Reciprocal Rank Fusion (k = 60)",
          settings=("vectors", "lexical"), needs_embeddings=True, aliases=("hybrid",)),
)}

#: Short names a user may type.
ALIASES: dict[str, str] = {a: e.name for e in REGISTRY.values() for a in e.aliases}


def register(new: Entry) -> Entry:
    """Add a retriever to the registry under its name and aliases (again with the same maker: no change), so every
    consumer — the CLI, a search, the proxy — builds it by name; a name taken by another is a ValueError."""
    for key in (new.name, *new.aliases):
        taken = REGISTRY.get(ALIASES.get(key, key))
        if taken is not None and taken.make is not new.make:
            raise ValueError(f"A retriever named {key!r} is registered already; choose another name.")
    REGISTRY[new.name] = new
    ALIASES.update({a: new.name for a in new.aliases})
    return new


def retriever_names(dense: bool | None = None, *, learned: bool = False) -> list[str]:
    """The names :func:`make_retriever` builds from tools alone (the dense ones only when ``dense``; by
    default when installed); ``learned=True`` adds the ones that need a log."""
    dense = dense_unavailable_reason() is None if dense is None else dense
    return [n for n, e in REGISTRY.items() if (dense or not e.needs_embeddings) and (learned or e.kind != "learned")]


def entry(name: str) -> Entry:
    """The registry's entry for ``name`` (or an alias); a one-sentence ValueError when there is none."""
    key = ALIASES.get(name, name)
    if key not in REGISTRY:
        known = ", ".join([*REGISTRY, *ALIASES])
        raise ValueError(f"No retriever named {name!r}; the names are: {known}.")
    return REGISTRY[key]


def check_name(name: str) -> str:
    """The registry's key for ``name``; a one-sentence ValueError when there is none, or its embeddings are missing."""
    found = entry(name)
    if found.needs_embeddings:
        reason = dense_unavailable_reason()
        if reason:
            raise ValueError(f"The {name!r} retriever needs embeddings: {reason}")
    return found.name


def check_from_tools(name: str) -> str:
    """:func:`check_name`, and a one-sentence ValueError for a retriever that learns from a log of past queries:
    what a caller that has only the tools checks before it starts anything (``harness serve``)."""
    found = check_name(name)
    if "log" in REGISTRY[found].settings:
        raise ValueError(f"The {found!r} retriever learns from a log of past queries, which only Python can pass it "
                         f"(make_retriever(name, tools, log=...)); choose one built from tools alone: "
                         f"{', '.join(retriever_names())}.")
    return found


def needs_embeddings(name: str) -> bool:
    """Whether the retriever called ``name`` needs the embedding extra."""
    return entry(name).needs_embeddings


def make_retriever(name: str, tools: Sequence[Union[Tool, CatalogTool]], *, encoder: Encoder | None = None,
                   **settings: Any) -> Ranker:  # Any: keyword settings forwarded unchanged to the retriever
    """The retriever called ``name`` (or one of :data:`ALIASES`), built over ``tools`` with ``settings``."""
    found = REGISTRY[check_name(name)]
    unknown = sorted(set(settings) - set(found.settings))
    if unknown:
        takes = f"it takes {', '.join(found.settings)}" if found.settings else "it takes none"
        raise ValueError(f"The {found.name!r} retriever has no setting {unknown[0]!r}; {takes}.")
    if "log" in found.settings and not settings.get("log"):
        raise ValueError(f"The {found.name!r} retriever {_NEEDS_LOG}.")
    records = [t if isinstance(t, CatalogTool) else CatalogTool.from_tool(t) for t in tools]
    return found.make(records, encoder or Encoder(), **settings)


def maker(name: str, *, encoder: Encoder | None = None, **settings: Any  # Any: keyword settings forwarded unchanged to the retriever
          ) -> Callable[[Sequence[Union[Tool, CatalogTool]]], Ranker]:
    """A function that builds the retriever called ``name`` over any tools: what a search or a hub takes.

    The name is checked now (one-sentence ValueError), so a typo fails where it is written, not at the first search.
    """
    check_name(name)
    return functools.partial(make_retriever, name, encoder=encoder, **settings)


def help_lines(names: Sequence[str] | None = None) -> list[str]:
    """One line of metadata per retriever (every one by default): the CLI's ``--help`` lists these."""
    return [REGISTRY[n].line() for n in (names or REGISTRY)]
