"""The selection contract end to end: rankers rank, the Selector alone puts exact names first,
``evaluate`` measures through a Selector, and a query is scored once."""
from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

from harness.core.tools import Tool
from harness.evaluation import datasets, metrics
from harness.evaluation.metrics import evaluate
from harness.retrieval.records import Query
from harness.selection.ranking import Ranked, Selector

HARNESS = Path(metrics.__file__).resolve().parents[1]
TOOLS = [Tool(name=n, description=d, input_schema={"type": "object", "properties": {}})
         for n, d in [("read_file", "Read a file."), ("search_code", "Search the code."),
                      ("create_event", "Create a calendar event."), ("post_message", "Post a chat message.")]]


class Counting:
    """A ranker with no exact-name logic that counts how often it is asked to score."""

    name = "counting"

    def __init__(self) -> None:
        self.ids = [t.name for t in TOOLS]
        self.calls = 0

    def scores(self, query: str) -> np.ndarray:
        self.calls += 1
        return np.array([4.0, 3.0, 0.0, 1.0])

    def rank_with_scores(self, query: str, k: int | None = None) -> tuple[list[str], np.ndarray]:
        self.calls += 1
        return ["read_file", "search_code", "post_message"][:k], np.array([4.0, 3.0, 0.0, 1.0])

    def rank(self, query: str, k: int | None = None) -> list[str]:
        return self.rank_with_scores(query, k)[0]


def test_a_ranker_without_exact_logic_gets_exact_names_first_through_the_selector():
    ranker = Counting()
    query = "read the file, then call create_event"
    assert "create_event" not in ranker.rank(query)
    chosen = Selector(ranker, TOOLS, k=2, exact_first=True).rank(query)
    assert chosen == ["create_event", "read_file"]


def test_the_selector_scores_each_query_once():
    ranker = Counting()
    selector = Selector(ranker, TOOLS, k=2, floor=0.5)
    for query in ("read a file", "search the code", "post it"):
        selector.ranked(query)
    assert ranker.calls == 3
    assert [r.score for r in selector.ranked("read a file")] == [4.0, 3.0]


def test_rank_gives_ids_everywhere_and_ranked_gives_records():
    selector = Selector(Counting(), TOOLS, pinned=["post_message"], k=1)
    assert selector.rank("read a file") == ["post_message", "read_file"]
    records = selector.ranked("read a file")
    assert all(isinstance(r, Ranked) for r in records) and [r.tool.name for r in records] == selector.rank("read a file")


def test_evaluate_ranks_through_a_selector(monkeypatch):
    asked = []
    rank = Selector.rank

    def counted(self, query, k=None):
        asked.append(query)
        return rank(self, query, k)

    monkeypatch.setattr(Selector, "rank", counted)
    queries = [Query("q1", "call create_event now", ("create_event",)), Query("q2", "read a file", ("read_file",))]
    plain = evaluate(Counting(), queries, ks=(1,))
    assert asked == ["call create_event now", "read a file"]
    assert plain.outcomes[0].ranking[0] == "read_file"  # the ranker alone does not know names
    named = evaluate(Selector(Counting(), TOOLS, k=None, exact_first=True), queries, ks=(1,))
    assert named.outcomes[0].ranking[0] == "create_event" and named.recall(1) == 1.0


def _names_used(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return ({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
            | {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
            | {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names})


def test_no_retriever_puts_exact_names_first_itself():
    offenders = sorted(p.name for p in (HARNESS / "retrieval").glob("*.py")
                       if _names_used(p) & {"exact_first", "exact_matches"})
    assert not offenders, f"exact names first is the Selector's job, yet these retrievers do it: {offenders}"


def test_the_selector_keeps_no_state_behind_a_frozen_dataclass():
    assert "__setattr__" not in _names_used(HARNESS / "selection" / "ranking.py")


def test_metrics_re_exports_nothing_of_datasets():
    public = {n for n in vars(datasets) if not n.startswith("_") and getattr(getattr(datasets, n), "__module__", "") == datasets.__name__}
    public |= {"DATASETS"}
    assert not public & set(vars(metrics)), f"import these from harness.evaluation.datasets: {sorted(public & set(vars(metrics)))}"


def test_a_ranker_with_only_rank_is_measured_under_its_class_name():
    """Exercise 8's learners write a class with a ``rank`` method and nothing else; evaluate must take it."""
    from harness.evaluation.metrics import evaluate
    from harness.retrieval.records import Query

    class OnlyRank:
        def rank(self, query: str, k: int | None = None) -> list[str]:
            return ["a", "b"][:k]

    report = evaluate(OnlyRank(), [Query(qid="1", query="x", gold=("b",))], ks=(1, 2))  # type: ignore[arg-type]
    assert report.name == "OnlyRank" and report.recall(2) == 1.0
