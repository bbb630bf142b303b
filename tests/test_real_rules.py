"""The committed rules applied to per-step rows (experiments.real_rules), on small synthetic rows.

Each test is built so that a misapplied rule (the best k instead of the knee, a point estimate
instead of a paired interval, a search counted where the tool was shown) gives another answer.
"""
import pytest

from harness.core.rates import cluster_bootstrap_interval
from experiments.real_rules import K_CONFIGS, discovery_rule, estimate, k_rule, measured, query_rule
from experiments.real_steps import StepRow

SCENARIOS = [f"s{i}" for i in range(40)]
EXPECTED = {(s, step) for s in SCENARIOS for step in range(2)}


def row(config, scenario, step, verdict, needed_shown=True):
    return StepRow(config, "g", "dev", scenario, "task", step, "t", [], needed_shown, None, verdict,
                   None, None, None, "", 10, 1.0)


def rows_at(config, hits, verdict_else="wrong", needed_shown=True):
    """``hits`` of the 80 steps right (filled scenario by scenario), the rest ``verdict_else``."""
    keys = sorted(EXPECTED)
    return [row(config, s, step, "right" if i < hits else verdict_else, needed_shown) for i, (s, step) in enumerate(keys)]


def test_k_rule_takes_the_knee_not_the_best_k():
    rows = []
    for config, hits in zip(K_CONFIGS.values(), (40, 64, 67, 68, 68)):  # 0.50, 0.80, 0.84, 0.85, 0.85
        rows += rows_at(config, hits)
    decision = k_rule(rows, current=10, expected=EXPECTED)
    assert decision.choice == "k=5" and "changes from k = 10" in decision.sentence
    assert decision.estimates["k=5"].rate == pytest.approx(0.80)
    assert decision.differences[0].a == "k=5" and decision.differences[0].b == "k=20"


def test_a_rule_with_a_configuration_missing_or_cut_short_is_undecided():
    rows = rows_at("k=10", 60) + rows_at("all 74", 58) + rows_at("k=5", 60)[:50]
    decision = k_rule(rows, current=10, expected=EXPECTED)
    assert not decision.decided
    assert decision.sentence == "undecided: configurations k=3, k=5, k=20 not yet measured"
    assert set(decision.estimates) == {"k=10", "all 74"} and len(decision.differences) == 1


def test_query_rule_keeps_the_default_when_the_best_is_not_separated():
    rows = rows_at("k=10", 40) + rows_at("latest message, k=10", 42) + rows_at("latest message + recent turns, k=10", 30)
    decision = query_rule(rows, 10, expected=EXPECTED)
    assert decision.choice == "transcript" and "not separated" in decision.sentence
    assert not decision.differences[0].separated and decision.differences[0].value > 0


def test_query_rule_changes_the_default_on_a_separated_gain():
    transcript = [row("k=10", s, step, "right" if step == 0 else "wrong") for s, step in sorted(EXPECTED)]
    latest = [row("latest message, k=10", s, step, "right") for s, step in sorted(EXPECTED)]
    rows = transcript + latest + rows_at("latest message + recent turns, k=10", 40)
    decision = query_rule(rows, 10, expected=EXPECTED)
    assert decision.choice == "latest message" and decision.differences[0].low > 0


def test_discovery_rule_counts_a_search_only_where_the_tool_was_not_shown():
    without = rows_at("k=10", 40)
    searched_blind = rows_at("discovery, k=10", 40, verdict_else="searched", needed_shown=False)
    assert discovery_rule(without + searched_blind, 10, expected=EXPECTED).choice == "discovery, k=10"
    searched_in_view = rows_at("discovery, k=10", 40, verdict_else="searched", needed_shown=True)
    decision = discovery_rule(without + searched_in_view, 10, expected=EXPECTED)
    assert decision.choice == "k=10" and decision.estimates["discovery, k=10"].rate == pytest.approx(0.5)


def test_estimate_is_the_share_of_steps_with_an_interval_over_scenarios():
    e = estimate(rows_at("k=10", 20), "k=10")
    assert e.rate == pytest.approx(0.25) and e.steps == 80 and e.low < 0.25 < e.high


def test_cluster_bootstrap_resamples_groups_not_values():
    # every value of a group is equal: 20 groups of 10 behave like 20 values, not 200
    groups = [[1.0] * 10 if i % 2 else [0.0] * 10 for i in range(20)]
    low, high = cluster_bootstrap_interval(groups)
    flat_low, flat_high = cluster_bootstrap_interval([[v] for g in groups for v in g])
    assert low < 0.5 < high and high - low > 2 * (flat_high - flat_low)
    with pytest.raises(ValueError, match="at least one value"):
        cluster_bootstrap_interval([])


def test_measured_needs_every_step():
    rows = rows_at("k=10", 10)
    assert measured(rows, "k=10", expected=EXPECTED)
    assert not measured(rows[:-1], "k=10", expected=EXPECTED)
    assert not measured(rows, "k=5", expected=EXPECTED)
