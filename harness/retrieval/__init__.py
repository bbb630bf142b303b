"""Tool retrieval beyond plain BM25: one interface, many rankers, measured on public data.

Introduced in Chapter 6a (``notebooks/06a_public_benchmarks.ipynb``). Every retriever is built from a
catalog's tools (:class:`~harness.retrieval.records.CatalogTool`) and answers the one ranking
contract, :class:`harness.selection.ranking.Ranker` (``rank(query, k=None) -> list[str]``, tool ids, best
first), so :func:`harness.evaluation.metrics.evaluate` and ``harness bench`` compare them on equal terms and a
:class:`harness.selection.ranking.Selector` lets any of them choose an agent's tools.
:func:`harness.retrieval.named.make_retriever` builds one by name from the one registry,
:data:`harness.retrieval.named.REGISTRY`, which every consumer builds through (CLI, search, the proxy, and the
workbook's benchmark and measurements): the library holds BM25, fielded BM25, dense MiniLM and their hybrid;
**adding a retriever is** :func:`~harness.retrieval.named.register` of one entry — its maker and metadata — which
is how the workbook's research retrievers join (``import workbook.research``). Inside the library only this
package constructs retriever classes (a test scans for it). Modules are imported directly
(``from harness.retrieval.fielded import FieldedBM25``) so the dense ones load their model only when asked.
"""
