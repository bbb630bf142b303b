"""Splits: folds by query id and by gold set, and the seeded development/test split."""
from __future__ import annotations

import random

import pytest

from harness.evaluation.datasets import dataset_dir, load_queries, missing_data_note
from harness.retrieval.records import Query
from harness.evaluation.splits import development_split, fold_of, folds, gold_key


def _templated(n: int = 300, sets: int = 12) -> list[Query]:
    """Templated queries in the ToolLens manner: many wordings per gold tool set."""
    rng = random.Random(1)
    combos = [tuple(sorted(rng.sample([f"t{i}" for i in range(30)], rng.randint(1, 3)))) for _ in range(sets)]
    return [Query(f"q{i}", f"job {i % sets} worded {i}", combos[i % sets]) for i in range(n)]


def test_gold_key_ignores_order():
    assert gold_key(Query("a", "x", ("b", "a"))) == gold_key(Query("b", "y", ("a", "b")))
    assert gold_key(Query("a", "x", ("a",), gold_groups=(("s2", "s1"), ("t",)))) == \
        gold_key(Query("b", "y", ("a",), gold_groups=(("t",), ("s1", "s2"))))
    assert gold_key(Query("a", "x", ("a", "b"))) != gold_key(Query("a", "x", ("a",)))


def test_query_folds_partition_and_are_stable():
    queries = _templated()
    tests = [folds(queries, f)[1] for f in range(5)]
    assert sorted(q.qid for t in tests for q in t) == sorted(q.qid for q in queries)  # every query in one fold
    train, test = folds(queries, 2)
    assert not {q.qid for q in train} & {q.qid for q in test}
    assert folds(list(reversed(queries)), 2)[1] == list(reversed(test)), "the order of the queries does not matter"
    assert fold_of("abc") == fold_of("abc") and 0 <= fold_of("abc") < 5
    with pytest.raises(ValueError, match="fold number from 0 to 4"):
        folds(queries, 5)
    with pytest.raises(ValueError, match="'query' or by 'gold'"):
        folds(queries, 0, by="tool")  # type: ignore[arg-type]


def test_query_folds_leak_gold_sets_and_gold_folds_do_not():
    queries = _templated()
    leaked = 0
    for f in range(5):
        train, test = folds(queries, f, by="query")
        leaked += len({gold_key(q) for q in train} & {gold_key(q) for q in test})
        train, test = folds(queries, f, by="gold")
        assert not {gold_key(q) for q in train} & {gold_key(q) for q in test}, "no gold set on both sides"
        assert len(train) + len(test) == len(queries)
    assert leaked > 0, "with templated queries, folds by query id put the same job on both sides"


def test_development_split_is_seeded_disjoint_and_sized():
    queries = _templated(200, sets=40)
    split = development_split(queries, 0.25)
    assert not {q.qid for q in split.development} & {q.qid for q in split.test}
    assert len(split.development) + len(split.test) == 200 and len(split.development) == 50
    assert development_split(list(reversed(queries)), 0.25).development == list(reversed(split.development))
    assert development_split(queries, 0.25, seed=1).development != split.development
    by_gold = development_split(queries, 0.25, by="gold")
    assert not {gold_key(q) for q in by_gold.development} & {gold_key(q) for q in by_gold.test}
    distinct = len({gold_key(q) for q in queries})
    assert len({gold_key(q) for q in by_gold.development}) == round(0.25 * distinct)  # a quarter of the gold sets
    with pytest.raises(ValueError, match="between 0 and 1"):
        development_split(queries, 1.0)
    with pytest.raises(ValueError, match="two distinct units"):
        development_split(queries[:1], 0.5)


def test_toollens_gold_split_has_no_shared_set():
    folder = dataset_dir("toollens_train")
    if not folder:
        pytest.skip(missing_data_note("toollens_train"))
    queries = load_queries(folder)
    split = development_split(queries, by="gold")
    assert not {gold_key(q) for q in split.development} & {gold_key(q) for q in split.test}
    train, test = folds(split.test, 0, by="query")
    shared = {gold_key(q) for q in train} & {gold_key(q) for q in test}
    assert len(shared) / len({gold_key(q) for q in test}) > 0.9, "by query id, nearly every held-out job was seen"
