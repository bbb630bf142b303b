"""Tuning on development data: one budget, earliest setting on a tie, and the code's defaults are the record's."""
from __future__ import annotations

from harness.retrieval.records import CatalogTool, Query
from experiments import tuning


class _Fixed:
    """A ranker that returns the same ids for every query."""

    def __init__(self, ids: list[str]) -> None:
        self.ids, self.name = ids, "fixed"

    def rank(self, query: str, k: int | None = None) -> list[str]:
        return self.ids[:k]


def test_every_grid_keeps_the_budget():
    assert all(1 <= len(grid) <= tuning.BUDGET for grid in tuning.GRIDS.values())
    assert set(tuning.PLAN) == set(tuning.GRIDS)


def test_tune_picks_the_best_mean_and_the_earliest_on_a_tie(monkeypatch):
    tools = [CatalogTool("a", "a"), CatalogTool("b", "b")]
    queries = [Query("1", "x", ("a",)), Query("2", "y", ("a",))]
    monkeypatch.setitem(tuning.GRIDS, "toy", [{"first": "b"}, {"first": "a"}, {"first": "a", "again": 1}])
    chosen, trials = tuning.tune_component("toy", lambda t, s, log: _Fixed([s["first"], "z"] if s["first"] == "a" else ["b"]),
                                 {"dev": (tools, queries)})
    assert [t.mean for t in trials] == [0.0, 1.0, 1.0]
    assert chosen == {"first": "a"}, "the earlier of two equal settings wins"


def test_the_code_defaults_are_the_recorded_development_choices():
    record = tuning.recorded()
    assert set(record) == set(tuning.GRIDS)
    for component, entry in record.items():
        assert entry["chosen"] in tuning.GRIDS[component], f"{component}: the choice is one of its grid's settings"
        assert entry["trials"] and max(entry["trials"], key=lambda t: t["mean"])["setting"] == entry["chosen"]
    assert tuning.defaults_match_record()
