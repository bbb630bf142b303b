import random
from dataclasses import dataclass

from conftest import run
from harness.cliff import (Trial, accuracy_by_n, arguments_match, failure_kinds, partner_map,
                           provider_chooser, schema_token_curve, selection_accuracy_sweep, steepest_drop, tools_for_trial)
from harness.providers.offline import OfflineModel
from harness.tokens import tool_tokens


@dataclass(frozen=True)
class Q:
    qid: str
    query: str
    gold: list
    args: dict | None = None


def test_token_curve_is_cumulative_and_capped(small_tools):
    pts = schema_token_curve(small_tools, [2, 4, 100])
    assert [p.n for p in pts] == [2, 4, 6]
    assert pts[-1].tokens == sum(tool_tokens(t) for t in small_tools)
    assert pts[0].tokens < pts[1].tokens < pts[2].tokens
    assert pts[-1].window_share == pts[-1].tokens / 200_000


def test_trials_always_include_gold_and_its_confusable_partner(small_tools):
    partners = partner_map([("search_code", "search_docs")])
    gold = small_tools[3]
    for seed in range(5):
        shown = tools_for_trial(gold, small_tools, 3, random.Random(seed), partners)
        names = [t.name for t in shown]
        assert len(shown) == 3 and "search_code" in names and "search_docs" in names


def test_sweep_with_the_offline_model(small_tools):
    queries = [Q("q1", "Read the file 'a.txt'", ["read_file"], {"path": "a.txt"}),
               Q("q2", "look through the source for 'TODO'", ["search_code"], {"query": "TODO"}),
               Q("q3", "Post 'hi' to #dev", ["post_message"], {"channel": "dev", "text": "hi"})]
    chooser = provider_chooser(OfflineModel())
    trials = run(selection_accuracy_sweep(chooser, small_tools, queries, ns=[2, 6], seeds=[0, 1],
                                          confusable_pairs=[("search_code", "search_docs")]))
    assert len(trials) == 3 * 2 * 2
    pts = accuracy_by_n(trials)
    assert [p.n for p in pts] == [2, 6] and all(0 <= p.mean <= 1 for p in pts)
    assert pts[0].mean == 1.0  # two tools: the stand-in gets all three right
    assert all(t.confusable_shown for t in trials if t.gold == "search_code")
    kinds = failure_kinds(trials)
    assert sum(kinds[2].values()) == 6 and kinds[2]["right"] == 6


def test_summaries_on_hand_made_trials():
    def trial(n, seed, chosen, args=None):
        return Trial("q", n, seed, "a", chosen, {"x": 1}, args or {"x": 1}, 10 * n, False)
    trials = [trial(5, 0, "a"), trial(5, 1, "a"), trial(10, 0, "a"), trial(10, 1, "b"), trial(20, 0, None), trial(20, 1, "a", {"x": 2})]
    pts = accuracy_by_n(trials)
    assert [(p.n, p.mean) for p in pts] == [(5, 1.0), (10, 0.5), (20, 0.5)]
    assert pts[1].stdev == 0.5
    assert steepest_drop(pts) == (5, 10, 0.1)
    assert failure_kinds(trials)[20] == {"right": 0, "wrong tool": 0, "no tool": 1, "wrong arguments": 1}
    assert arguments_match({"channel": "#dev"}, {"channel": "dev", "extra": 1})
    assert not arguments_match({"path": "a"}, {})
