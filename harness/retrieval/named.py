"""The registry of retrievers: every retriever by name, with what a reader needs to know about it.

Introduced in Chapter 6a (``notebooks/06a_public_benchmarks.ipynb``).

A name is what a user types (``harness search QUERY --retriever hybrid``), what a table row says
and what every part of the package builds: the CLI and its ``--help``, the benchmark and its
``tuned`` column, the scale curve, tuning, Chapter 8's measurement, the proxy and the selector all
go through :func:`make_retriever`, so one name means one piece of code everywhere. **Adding a
retriever is one entry in** :data:`REGISTRY`: its maker and its metadata — its kind, whether it
needs the embedding extra, where its constants come from, the chapter that introduces it, its aliases.

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

from harness.selection.ranking import Ranker, Scorer
from harness.retrieval.bm25 import BM25Retriever
from harness.retrieval.dense import DenseRetriever, Encoder, dense_unavailable_reason
from harness.retrieval.expansion import expanded
from harness.retrieval.model_documents import with_committed_documents
from harness.retrieval.fielded import DEFAULT_WEIGHTS, FieldedBM25
from harness.retrieval.hierarchical import HierarchicalRetriever
from harness.retrieval.hybrid import HybridRetriever
from harness.retrieval.learned import QueryLogRetriever
from harness.retrieval.planning import PlannedRetriever
from harness.retrieval.records import CatalogTool
from harness.retrieval.rerank import RerankRetriever
from harness.retrieval.systems import PizzaPiRetriever, StacklokRetriever, StackOneRetriever
from harness.retrieval.task import TaskRetriever
from harness.retrieval.usage import UsagePriorRetriever
from harness.core.tools import Tool

Kind = Literal["lexical", "dense", "hybrid", "published system", "zero-shot idea", "learned"]
#: Where a retriever's constants come from: a library's or a paper's defaults, a named system's published
#: rule, a choice on development rows (``harness/data/tuning.json``, Chapter 8's ``zero_shot_results.json``),
#: or a log it learns from.
Constants = Literal["library", "published", "tuned", "learned"]
CONSTANTS: dict[str, str] = {"library": "library or paper defaults", "published": "the system's published constants",
                             "tuned": "tuned on development rows", "learned": "learned from labelled queries (a log)"}
#: What the benchmark's ``tuned`` column says for each (:mod:`harness.experiments.bench`).
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


def _expanded_hybrid(tools: Sequence[CatalogTool], e: Encoder) -> HybridRetriever:
    more = expanded(tools)
    r = HybridRetriever(more, dense=_dense(more, e))
    r.name = "hybrid-rrf+expand"
    return r


#: The named retriever that searches the real model's committed tool documents (Chapter 8b).
DOCUMENTED = "hybrid-rrf+documents"


def _documented_hybrid(tools: Sequence[CatalogTool], e: Encoder) -> HybridRetriever:
    more = with_committed_documents(tools)
    r = HybridRetriever(more, dense=_dense(more, e))
    r.name = DOCUMENTED
    return r


def _plan(tools: Sequence[CatalogTool], e: Encoder, base: Ranker | None = None, **options: Any) -> PlannedRetriever:  # Any: keyword settings forwarded unchanged to the retriever
    return PlannedRetriever(base or _hybrid(tools, e), **options)


def _usage_base(tools: Sequence[CatalogTool], e: Encoder) -> Scorer:
    """What the usage prior re-orders by default: hybrid-task with the embedding extra, fielded BM25 without."""
    name = "hybrid-task" if dense_unavailable_reason() is None else "bm25-fielded"
    return cast(Scorer, make_retriever(name, tools, encoder=e))


_NEEDS_LOG = "learns from a query log: pass log= (past queries with their gold tools)"

#: Every retriever, in the order ``--help`` and the error for an unknown name list them.
REGISTRY: dict[str, Entry] = {e.name: e for e in (
    Entry("catalog-bm25", lambda t, e: BM25Retriever(t, fast=True, document=lambda r: r.search_text, name="catalog-bm25"),
          "lexical", "library", "2", "Chapter 2's catalog: BM25 over name, description and parameters",
          aliases=("catalog",)),
    Entry("bm25", lambda t, e, fast=False: BM25Retriever(t, fast=fast, name="bm25"), "lexical", "library", "6a",
          "rank_bm25's BM25Okapi over name and description (fast=True: the inverted index, the same rankings)",
          settings=("fast",)),
    Entry("bm25-inverted", lambda t, e: BM25Retriever(t, fast=True), "lexical", "library", "6b",
          "bm25's scores and rankings from an inverted index, touching only tools that share a term"),
    Entry("bm25-fielded", _fielded, "lexical", "tuned", "6a",
          "BM25 per field (name, verbs, description, parameters) with abbreviations and synonyms",
          settings=("name_weight", "verb_weight")),
    Entry("pizzapi-substring", lambda t, e: PizzaPiRetriever(t), "published system", "published", "6a",
          "PizzaPi's substring points over name, description and parameters"),
    Entry("stackone-bm25-tfidf", lambda t, e, **s: StackOneRetriever(t, **s), "published system", "published", "6a",
          "StackOne's blend of BM25 and TF-IDF (alpha: BM25's share)", settings=("alpha",)),
    Entry("dense-minilm", _dense, "dense", "library", "6a", "cosine similarity of all-MiniLM-L6-v2 embeddings",
          settings=("vectors",), needs_embeddings=True, aliases=("dense",)),
    Entry("hybrid-rrf", _hybrid, "hybrid", "tuned", "6a",
          "fielded BM25 and MiniLM fused by Reciprocal Rank Fusion (k = 60)",
          settings=("vectors", "lexical"), needs_embeddings=True, aliases=("hybrid",)),
    Entry("stacklok-split", lambda t, e, vectors=None: StacklokRetriever(t, dense=_dense(t, e, vectors)),
          "published system", "published", "6a", "Stacklok's optimizer: half the list from BM25, half from embeddings",
          settings=("vectors",), needs_embeddings=True),
    Entry("hybrid-task", lambda t, e, vectors=None, **s: TaskRetriever(t, dense=_dense(t, e, vectors), **s),
          "hybrid", "tuned", "6a", "hybrid search over a task's clauses, with a server prior",
          settings=("vectors", "alpha", "server_weight"), needs_embeddings=True),
    Entry("hierarchical", lambda t, e, **s: HierarchicalRetriever(t, encoder=e, **s), "zero-shot idea", "tuned", "8a",
          "servers first, then their tools, both by hybrid-rrf", settings=("servers", "tool_ranker"),
          needs_embeddings=True),
    Entry("hybrid-rrf+plan", _plan, "zero-shot idea", "tuned", "8a",
          "hybrid-rrf per step of the request, the lists fused", settings=("base", "splitter"), needs_embeddings=True),
    Entry("hybrid-rrf+expand", _expanded_hybrid, "zero-shot idea", "tuned", "8a",
          "hybrid-rrf over definitions expanded with the questions each tool answers", needs_embeddings=True),
    Entry(DOCUMENTED, _documented_hybrid, "zero-shot idea", "library", "8b",
          "hybrid-rrf over definitions with the real small model's committed documents appended (tools without one unchanged)",
          needs_embeddings=True),
    Entry("rerank-lr", lambda t, e, **s: RerankRetriever(t, encoder=e, **s), "zero-shot idea", "learned", "8a",
          "hybrid-rrf's top 30 re-ordered by a linear model trained on ToolLens development rows",
          settings=("model",), needs_embeddings=True),
    Entry("learned-querylog", lambda t, e, log, base=None, **s: QueryLogRetriever(log, base or _fielded(t, e), **s),
          "learned", "learned", "6c", "fielded BM25 fused with the tools of the most similar past queries",
          settings=("log", "base", "neighbours", "log_weight")),
    Entry("usage-prior", lambda t, e, log, base=None, **s: UsagePriorRetriever(log, base or _usage_base(t, e), **s),
          "learned", "learned", "6c", "a ranking's lower places re-ordered by how often past tasks used each tool",
          settings=("log", "base", "head", "weight")),
)}
#: Short names a user may type.
ALIASES: dict[str, str] = {a: e.name for e in REGISTRY.values() for a in e.aliases}


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
