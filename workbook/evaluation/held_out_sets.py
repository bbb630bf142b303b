"""The catalogs, development/test splits and test sets that Chapter 6's three parts share.

Introduced in Chapter 6a (``notebooks/06a_public_benchmarks.ipynb``); Chapters 6b and 6c build
the same sets with it, so each part runs on its own and all three report the same test queries.
Every catalog whose public data is absent is left out (the demo world is always there).
"""
from __future__ import annotations

import random
from typing import Sequence

from harness.evaluation.metrics import Report, evaluate
from harness.evaluation.datasets import dataset_dir, load_queries, load_tools
from workbook.demo.labels import demo_dataset
from harness.retrieval.dense import Encoder
from harness.retrieval.named import make_retriever
from harness.retrieval.records import CatalogTool, Query
from harness.evaluation.splits import Split, development_split

Catalogs = dict[str, tuple[list[CatalogTool], list[Query]]]
TestSets = dict[str, tuple[list[CatalogTool], list[Query]]]
#: ToolLens' test part is large and templated: the chapter scores a seeded sample of it.
TOOLLENS_SAMPLE = 200


def chapter_catalogs() -> Catalogs:
    """The demo world always; LiveMCPBench and ToolLens when their public data is present."""
    catalogs: Catalogs = {"demo": demo_dataset()}
    for name in ("livemcpbench", "toollens_train"):
        folder = dataset_dir(name)
        if folder:
            catalogs[name] = (load_tools(folder), load_queries(folder))
    return catalogs


def chapter_splits(catalogs: Catalogs) -> dict[str, Split]:
    """One seeded split per catalog; ToolLens by gold set, since its queries are templated."""
    return {name: development_split(queries, by="gold" if name == "toollens_train" else "query")
            for name, (_, queries) in catalogs.items()}


def chapter_test_sets(catalogs: Catalogs, splits: dict[str, Split]) -> TestSets:
    """The test queries every table reports: all of the demo world's and LiveMCPBench's, a ToolLens sample."""
    sets: TestSets = {"demo-test": (catalogs["demo"][0], splits["demo"].test)}
    if "livemcpbench" in catalogs:
        sets["livemcp-test"] = (catalogs["livemcpbench"][0], splits["livemcpbench"].test)
    if "toollens_train" in catalogs:
        sample = random.Random(0).sample(splits["toollens_train"].test, TOOLLENS_SAMPLE)
        sets["toollens-test"] = (catalogs["toollens_train"][0], sample)
    return sets


def test_reports(test_sets: TestSets, names: Sequence[str], encoder: Encoder | None = None
                 ) -> dict[tuple[str, str], Report]:
    """Every named retriever scored on every test set, keyed by (test set, retriever)."""
    return {(dataset, name): evaluate(make_retriever(name, tools, encoder=encoder), queries, name=name)
            for dataset, (tools, queries) in test_sets.items() for name in names}


setattr(test_reports, "__test__", False)  # a library function, not a pytest test
