"""The scale curve on a small synthetic pool (lexical retrievers only: seconds)."""
from __future__ import annotations

import random

import pytest

from harness.retrieval.records import CatalogTool, Query
from workbook.evaluation.scale_curve import _catalogs, breaks_at, prefixed, scale_curve

WORDS = [f"w{i}" for i in range(80)]


def _pool(n: int = 400, seed: int = 0) -> list[CatalogTool]:
    rng = random.Random(seed)
    return [CatalogTool(f"t{i}", f"tool_{i}", " ".join(rng.sample(WORDS, 8)), server=f"s{i % 20}") for i in range(n)]


def _queries(pool: list[CatalogTool], n: int = 30) -> list[Query]:
    # each query is one word of its gold tool's description: findable, but shared with distractors
    return [Query(f"q{i}", pool[i].description.split()[0], (pool[i].id,)) for i in range(n)]


def test_prefixed_ids_stay_consistent():
    tools, queries = prefixed("src", _pool(3), [Query("a", "x", ("t1",), gold_groups=(("t1", "t2"),))])
    assert [t.id for t in tools] == ["src:t0", "src:t1", "src:t2"] and tools[0].name == "tool_0"
    assert queries[0].gold == ("src:t1",) and queries[0].slots == (("src:t1", "src:t2"),)


def test_every_catalog_holds_its_gold_and_no_namesake():
    pool = _pool()
    twin = CatalogTool("other:t0", "TOOL_0", "same job on another server")
    queries = _queries(pool)
    for size, members, catalog in _catalogs(queries, pool + [twin], [50, 200, None], seed=1):
        ids = {t.id for t in catalog}
        assert all(g in ids for i in members for g in queries[i].gold), "gold tools are always present"
        assert len(ids) == len(catalog) and (size is None or len(catalog) == size)
        gold_total = len({g for i in members for g in queries[i].gold})
        assert size is None or gold_total <= max(1, size // 4)
        if any("t0" in queries[i].gold for i in members):
            assert "other:t0" not in ids, "a distractor named like a gold tool is left out"
    again = _catalogs(queries, pool, [50], seed=1)
    assert [[t.id for t in c] for _, _, c in again] == [[t.id for t in c] for _, _, c in _catalogs(queries, pool, [50], seed=1)]


def test_recall_falls_as_the_catalog_grows():
    pool = _pool()
    points = scale_curve({"synthetic": _queries(pool)}, pool, sizes=(50, 400), retrievers=("bm25", "bm25-fielded"), draws=2)
    assert [(p.retriever, p.size) for p in points] == [("bm25", 50), ("bm25", 400), ("bm25-fielded", 50), ("bm25-fielded", 400)]
    for p in points:
        assert set(p.metrics) == {"R@5", "R@10", "MRR"} and p.n_queries == 30 and p.draws == 2
        for m, (low, high) in p.intervals.items():
            assert low <= p.metrics[m] <= high
    small, large = points[0], points[1]
    assert small.metrics["R@10"] > large.metrics["R@10"], "more distractors sharing words, lower recall"
    assert breaks_at(points, "synthetic", "bm25") == 400
    assert "values" not in points[0].as_dict()


def test_scale_curve_refuses_bad_input():
    pool = _pool(60)
    with pytest.raises(ValueError, match="not in the pool"):
        scale_curve({"x": [Query("a", "w1", ("missing",))]}, pool, retrievers=("bm25",))
    with pytest.raises(ValueError, match="knows"):
        scale_curve({"x": _queries(pool, 2)}, pool, retrievers=("bm25", "magic"))
    with pytest.raises(ValueError, match="No points"):
        breaks_at([], "x", "bm25")
