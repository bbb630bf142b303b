"""The research retrievers' entries in the library's registry: importing :mod:`workbook.research` registers them.

Introduced in Chapters 6a (published systems, the task-aware hybrid), 6c (learned ones), 8a (zero-shot ideas)
and 8b (the real model's tool documents). Each is an :class:`harness.retrieval.named.Entry` given to
:func:`harness.retrieval.named.register`, so ``make_retriever("hierarchical", tools)``, ``harness search
--retriever rerank-lr`` and the proxy build them as they build the library's own.
"""
from __future__ import annotations

from typing import Any, Sequence, cast

from harness.retrieval.dense import Encoder, dense_unavailable_reason
from harness.retrieval.hybrid import HybridRetriever
from harness.retrieval.named import Entry, _dense, _fielded, _hybrid, make_retriever, register
from harness.retrieval.records import CatalogTool
from harness.selection.ranking import Ranker, Scorer
from workbook.research.expansion import expanded
from workbook.research.hierarchical import HierarchicalRetriever
from workbook.research.learned import QueryLogRetriever
from workbook.research.model_documents import with_committed_documents
from workbook.research.planning import PlannedRetriever
from workbook.research.rerank import RerankRetriever
from workbook.research.systems import PizzaPiRetriever, StacklokRetriever, StackOneRetriever
from workbook.research.task import TaskRetriever
from workbook.research.usage import UsagePriorRetriever

#: The named retriever that searches the real model's committed tool documents (Chapter 8b).
DOCUMENTED = "hybrid-rrf+documents"


def _expanded_hybrid(tools: Sequence[CatalogTool], e: Encoder) -> HybridRetriever:
    more = expanded(tools)
    r = HybridRetriever(more, dense=_dense(more, e))
    r.name = "hybrid-rrf+expand"
    return r


def _documented_hybrid(tools: Sequence[CatalogTool], e: Encoder) -> HybridRetriever:
    more = with_committed_documents(tools)
    r = HybridRetriever(more, dense=_dense(more, e))
    r.name = DOCUMENTED
    return r


def _plan(tools: Sequence[CatalogTool], e: Encoder, base: Ranker | None = None,
          **options: Any) -> PlannedRetriever:  # Any: keyword settings forwarded unchanged to the retriever
    return PlannedRetriever(base or _hybrid(tools, e), **options)


def _usage_base(tools: Sequence[CatalogTool], e: Encoder) -> Scorer:
    """What the usage prior re-orders by default: hybrid-task with the embedding extra, fielded BM25 without."""
    name = "hybrid-task" if dense_unavailable_reason() is None else "bm25-fielded"
    return cast(Scorer, make_retriever(name, tools, encoder=e))


ENTRIES = [register(e) for e in (
    Entry("pizzapi-substring", lambda t, e: PizzaPiRetriever(t), "published system", "published", "6a",
          "PizzaPi's substring points over name, description and parameters"),
    Entry("stackone-bm25-tfidf", lambda t, e, **s: StackOneRetriever(t, **s), "published system", "published", "6a",
          "StackOne's blend of BM25 and TF-IDF (alpha: BM25's share)", settings=("alpha",)),
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
)]
