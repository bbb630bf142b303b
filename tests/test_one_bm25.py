"""One catalog BM25: Chapter 2's ToolCatalog, the ``catalog-bm25`` and ``bm25`` retrievers and the workbook's public
catalog ranker all rank with :class:`harness.selection.bm25_index.CatalogBM25`, the selection layer's one implementation."""
from __future__ import annotations

import ast
from pathlib import Path

from workbook.demo import demo_tools
from workbook.demo.labels import demo_queries
from workbook.evaluation.public_catalog import PublicCatalogRanker
from harness.retrieval.named import make_retriever
from harness.retrieval.records import CatalogTool
from harness.selection import bm25_index
from harness.selection.catalog import ToolCatalog

ROOT = Path(__file__).resolve().parent.parent
WRAPPERS = ["harness/selection/catalog.py", "harness/retrieval/bm25.py", "workbook/evaluation/public_catalog.py"]


def test_the_three_catalog_rankers_hold_the_one_catalog_bm25():
    tools = demo_tools()
    records = [CatalogTool.from_tool(t) for t in tools]
    rankers = [ToolCatalog(tools).bm25, make_retriever("catalog-bm25", records), make_retriever("bm25", records),
               PublicCatalogRanker(records).catalog.bm25]
    assert all(isinstance(r, bm25_index.CatalogBM25) for r in rankers)


def test_no_catalog_ranker_builds_or_reads_an_inverted_index_itself():
    for name in WRAPPERS:
        tree = ast.parse((ROOT / name).read_text(encoding="utf-8"))
        calls = {ast.unparse(n.func).split(".")[-1] for n in ast.walk(tree) if isinstance(n, ast.Call)}
        assert not calls & {"InvertedBM25", "lexical"}, name


def test_catalog_bm25_and_the_catalog_rank_the_demo_world_alike():
    tools = demo_tools()
    catalog, retriever = ToolCatalog(tools), make_retriever("catalog-bm25", tools)
    for q in demo_queries()[:40]:
        assert retriever.rank(q.query, 20) == catalog.rank(q.query, 20), q.qid
        assert (retriever.scores(q.query) == catalog.scores(q.query)).all(), q.qid
