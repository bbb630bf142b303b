"""Every retriever by name: the one function the CLI, the benchmark, the selector and Chapter 6 build them with.

Introduced in Chapter 6a (``notebooks/06a_public_benchmarks.ipynb``).

A name is what a user types (``harness search QUERY --retriever hybrid``) and what a table row
says. Each maker takes the catalog's records (:class:`~harness.retrieval.records.CatalogTool`);
harness :class:`~harness.core.tools.Tool` objects are converted here, once
(:meth:`CatalogTool.from_tool`: a tool's name is its id), so the same retriever can rank a
public catalog or choose the tools of an agent's turn. The dense ones need the embedding extra.
"""
from __future__ import annotations

import functools
from typing import Callable, Sequence, Union

from harness.selection.ranking import Ranker
from harness.retrieval.bm25 import BM25Retriever
from harness.retrieval.dense import DenseRetriever, Encoder, dense_unavailable_reason
from harness.retrieval.expansion import expanded
from harness.retrieval.fielded import FieldedBM25
from harness.retrieval.hierarchical import HierarchicalRetriever
from harness.retrieval.hybrid import HybridRetriever
from harness.retrieval.planning import PlannedRetriever
from harness.retrieval.records import CatalogTool
from harness.retrieval.rerank import RerankRetriever
from harness.retrieval.systems import PizzaPiRetriever, StacklokRetriever, StackOneRetriever
from harness.retrieval.task import TaskRetriever
from harness.core.tools import Tool

Maker = Callable[[Sequence[CatalogTool], Encoder], Ranker]


def _dense(tools: Sequence[CatalogTool], e: Encoder) -> DenseRetriever:
    return DenseRetriever(tools, encoder=e)


def _expanded_hybrid(tools: Sequence[CatalogTool], e: Encoder) -> HybridRetriever:
    r = HybridRetriever(tools, dense=_dense(tools, e))
    r.name = "hybrid-rrf+expand"
    return r


LEXICAL: dict[str, Maker] = {
    "catalog-bm25": lambda t, e: BM25Retriever(t, fast=True, document=lambda r: r.search_text, name="catalog-bm25"),
    "bm25": lambda t, e: BM25Retriever(t),
    "bm25-inverted": lambda t, e: BM25Retriever(t, fast=True),
    "bm25-fielded": lambda t, e: FieldedBM25(t),
    "pizzapi-substring": lambda t, e: PizzaPiRetriever(t),
    "stackone-bm25-tfidf": lambda t, e: StackOneRetriever(t),
}
DENSE: dict[str, Maker] = {
    "dense-minilm": _dense,
    "hybrid-rrf": lambda t, e: HybridRetriever(t, dense=_dense(t, e)),
    "stacklok-split": lambda t, e: StacklokRetriever(t, dense=_dense(t, e)),
    "hybrid-task": lambda t, e: TaskRetriever(t, dense=_dense(t, e)),
    # Chapter 8's zero-shot ideas, each over hybrid-rrf
    "hierarchical": lambda t, e: HierarchicalRetriever(t, encoder=e),
    "hybrid-rrf+plan": lambda t, e: PlannedRetriever(HybridRetriever(t, dense=_dense(t, e))),
    "hybrid-rrf+expand": lambda t, e: _expanded_hybrid(expanded(t), e),
    "rerank-lr": lambda t, e: RerankRetriever(t, encoder=e),
}
#: Short names a user may type for the dense ones.
ALIASES = {"dense": "dense-minilm", "hybrid": "hybrid-rrf", "catalog": "catalog-bm25"}


def retriever_names(dense: bool | None = None) -> list[str]:
    """Every name :func:`make_retriever` knows (the dense ones only when ``dense``; by default when installed)."""
    dense = dense_unavailable_reason() is None if dense is None else dense
    return [*LEXICAL, *(DENSE if dense else ())]


def check_name(name: str) -> str:
    """The registry's key for ``name``; a one-sentence ValueError when there is none, or its embeddings are missing."""
    key = ALIASES.get(name, name)
    if key in DENSE:
        reason = dense_unavailable_reason()
        if reason:
            raise ValueError(f"The {name!r} retriever needs embeddings: {reason}")
    elif key not in LEXICAL:
        known = ", ".join([*LEXICAL, *DENSE, *ALIASES])
        raise ValueError(f"No retriever named {name!r}; the names are: {known}.")
    return key


def make_retriever(name: str, tools: Sequence[Union[Tool, CatalogTool]], *, encoder: Encoder | None = None) -> Ranker:
    """The retriever called ``name`` (or one of :data:`ALIASES`), built over ``tools``."""
    key = check_name(name)
    records = [t if isinstance(t, CatalogTool) else CatalogTool.from_tool(t) for t in tools]
    return (LEXICAL.get(key) or DENSE[key])(records, encoder or Encoder())


def maker(name: str, *, encoder: Encoder | None = None) -> Callable[[Sequence[Union[Tool, CatalogTool]]], Ranker]:
    """A function that builds the retriever called ``name`` over any tools: what a search or a hub takes.

    The name is checked now (one-sentence ValueError), so a typo fails where it is written, not at the first search.
    """
    check_name(name)
    return functools.partial(make_retriever, name, encoder=encoder)
