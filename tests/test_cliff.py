import random
from dataclasses import dataclass

from conftest import run
from workbook.evaluation.cliff import (Trial, accuracy_by_n, arguments_match, failure_kinds, partner_map,
                           provider_chooser, schema_token_curve, selection_accuracy_sweep, steepest_drop, tools_for_trial)
from workbook.providers.offline import OfflineModel
from harness.core.tokens import tool_tokens


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


def test_fixed_lists_ask_every_request_once_with_its_partner():
    from workbook.evaluation.cliff import fixed_lists
    from workbook.demo import CONFUSABLE_PAIRS, demo_tools, load_demo_queries

    pool, queries = demo_tools(), load_demo_queries()
    partners = partner_map(CONFUSABLE_PAIRS)
    for n in (5, 20, 74):
        lists = fixed_lists(pool, queries, n, seed=0, confusable_pairs=CONFUSABLE_PAIRS)
        asked = [q.qid for tl in lists for q in tl.queries]
        assert sorted(asked) == sorted(q.qid for q in queries)
        for tl in lists:
            names = [t.name for t in tl.tools]
            assert len(names) == n == len(set(names))
            for q in tl.queries:
                assert q.gold[0] in names
                assert all(p in names for p in partners.get(q.gold[0], []))
    assert [t.name for t in fixed_lists(pool, queries, 10, seed=1)[0].tools] == \
        [t.name for t in fixed_lists(pool, queries, 10, seed=1)[0].tools]


def test_bootstrap_interval_brackets_the_rate_and_narrows_with_more_trials():
    from harness.core.rates import bootstrap_interval

    few = bootstrap_interval([True] * 6 + [False] * 4)
    many = bootstrap_interval([True] * 600 + [False] * 400)
    assert few[0] < 0.6 < few[1] and many[0] < 0.6 < many[1]
    assert many[1] - many[0] < (few[1] - few[0]) / 5
    assert bootstrap_interval([True, False] * 20) == bootstrap_interval([True, False] * 20)  # fixed seed
    assert bootstrap_interval([True] * 10) == (1.0, 1.0)


def test_accuracy_with_interval_gives_chance_and_counts():
    from workbook.evaluation.cliff import accuracy_with_interval

    trials = [Trial(f"q{i}", 10, 0, "a", "a" if i % 2 else "b", None, {}, 100, False) for i in range(40)]
    (point,) = accuracy_with_interval(trials)
    assert (point.n, point.rate, point.trials, point.chance) == (10, 0.5, 40, 0.1)
    assert point.low < 0.5 < point.high


def test_a_subset_is_asked_in_the_same_lists_as_the_full_sweep():
    from workbook.evaluation.cliff import fixed_list_sweep
    from workbook.demo import CONFUSABLE_PAIRS, demo_tools, load_demo_queries

    pool, queries = demo_tools(), load_demo_queries()
    seen = {}

    def choose(query, shown):
        seen.setdefault(query, []).append(tuple(t.name for t in shown))
        return shown[0].name, {}

    run(fixed_list_sweep(choose, pool, queries, [5], confusable_pairs=CONFUSABLE_PAIRS))
    full = dict(seen)
    seen.clear()
    subset = [q.qid for q in queries[::20]]
    trials = run(fixed_list_sweep(choose, pool, queries, [5], confusable_pairs=CONFUSABLE_PAIRS, ask=subset))
    assert sorted(t.qid for t in trials) == sorted(subset)
    assert all(seen[q] == full[q] for q in seen)


def test_wrong_arguments_split_into_extraction_misses_and_schema_blending():
    from workbook.evaluation.cliff import argument_outcome, argument_split
    from harness.core.tools import Tool

    docs = Tool("search_docs", "Search the docs.", {"type": "object", "properties": {"query": {"type": "string"}}})
    code = Tool("search_code", "Search the code.", {"type": "object", "properties": {
        "query": {"type": "string"}, "path": {"type": "string"}}})
    pairs = [("search_docs", "search_code")]

    def trial(chosen, given, expected={"query": "retry"}):
        return Trial("q", 2, 0, "search_docs", chosen, expected, given, 10, True)

    right = trial("search_docs", {"query": "Retry"})
    miss = trial("search_docs", {"query": "retries policy"})
    empty = trial("search_docs", {})
    blend = trial("search_docs", {"query": "retry", "path": "src"})  # right value, and the partner's parameter
    wrong_tool = trial("search_code", {"query": "retry"})
    unlabelled = trial("search_docs", {"x": 1}, expected=None)
    schemas = {t.name: {n for n, _ in t.parameters} for t in (docs, code)}
    partners = partner_map(pairs)
    assert [argument_outcome(t, schemas, partners) for t in (right, miss, empty, blend, wrong_tool, unlabelled)] == [
        "right", "extraction miss", "extraction miss", "schema blending", None, None]
    split = argument_split([right, miss, empty, blend, wrong_tool, unlabelled], [docs, code], pairs)
    assert split.n == 4 and split.counts == {"right": 1, "extraction miss": 2, "schema blending": 1}
    assert split.share("extraction miss") == 0.5
    low, high = split.intervals["schema blending"]
    assert 0 <= low <= 0.25 <= high <= 1


def test_partner_calls_that_carry_the_requests_value_are_counted():
    from workbook.evaluation.cliff import carried_over

    def trial(chosen, given):
        return Trial("q", 2, 0, "read_file", chosen, {"path": "notes/todo.md"}, given, 10, True)

    pairs = [("read_file", "read_note")]
    trials = [trial("read_note", {"title": "notes/todo.md"}), trial("read_note", {"title": "ideas"}),
              trial("read_file", {"path": "notes/todo.md"}), trial("git_log", {"path": "notes/todo.md"})]
    assert carried_over(trials, pairs) == (1, 2)  # only partner calls count; one keeps the value


def test_the_committed_argument_sweep_loads_with_the_labelled_arguments():
    from workbook.evaluation.cliff import ARGUMENTS_N, load_argument_trials
    from workbook.demo import CONFUSABLE_PAIRS

    meta, trials = load_argument_trials()
    partnered = {name for pair in CONFUSABLE_PAIRS for name in pair}
    assert len(trials) == meta["requests"] and meta["n"] == ARGUMENTS_N
    assert all(t.gold in partnered and t.args_expected and t.n == ARGUMENTS_N and t.confusable_shown for t in trials)
    assert any(t.args_given for t in trials), "the real model's arguments are recorded"
