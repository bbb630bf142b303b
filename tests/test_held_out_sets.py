"""The sets Chapter 6's parts share: disjoint splits, test sets from the test side only, one report per pair."""
from __future__ import annotations

from workbook.evaluation.held_out_sets import chapter_catalogs, chapter_splits, chapter_test_sets, test_reports


def test_the_demo_world_is_always_there_and_split_apart():
    catalogs = chapter_catalogs()
    assert "demo" in catalogs
    splits = chapter_splits(catalogs)
    for s in splits.values():
        assert s.development and s.test
        assert not {q.qid for q in s.development} & {q.qid for q in s.test}
    sets = chapter_test_sets(catalogs, splits)
    assert sets["demo-test"][1] == splits["demo"].test
    if "toollens-test" in sets:
        assert {q.qid for q in sets["toollens-test"][1]} <= {q.qid for q in splits["toollens_train"].test}


def test_reports_score_every_retriever_on_every_set():
    catalogs = {"demo": chapter_catalogs()["demo"]}
    sets = chapter_test_sets(catalogs, chapter_splits(catalogs))
    reports = test_reports(sets, ["bm25", "bm25-fielded"])
    assert set(reports) == {("demo-test", "bm25"), ("demo-test", "bm25-fielded")}
    assert all(len(r.outcomes) == len(sets["demo-test"][1]) for r in reports.values())
