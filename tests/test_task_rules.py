"""The committed whole-task rules (experiments.task_rules) on synthetic rows of the 26 development tasks.

Each test is built so that a misapplied rule (the best point estimate instead of a separated one, the wrong
arm counted, a missing rerun filled in, the held-out set chosen on) gives another answer.
"""
from __future__ import annotations

import pytest

from experiments import task_rules
from experiments.real_tasks import TaskRow
from experiments.task_rules import ALL, REMINDER, SEARCH, TOP_K, TOP_K_SEARCH, task_ids

TASKS = task_ids("dev")


def row(config, scenario, success, *, calls=(), split="dev"):
    return TaskRow(config, split, scenario, "task", 6, success, success, None if success else "wrong tool", [],
                   "end_turn", [], 2, [list(c) for c in calls], "", 1.0, [])


def rows_at(config, hits, split="dev"):
    """The first ``hits`` tasks succeed, the rest fail."""
    return [row(config, t, i < hits, split=split) for i, t in enumerate(task_ids(split))]


def test_there_are_26_development_tasks():
    assert len(TASKS) == 26 and len(task_ids("heldout")) == 13


def test_the_ways_rule_keeps_the_default_when_the_best_is_not_separated():
    rows = rows_at(TOP_K, 10) + rows_at(ALL, 12) + rows_at(TOP_K_SEARCH, 9) + rows_at(SEARCH, 4)
    decision = task_rules.ways_rule(rows)
    assert decision.choice == TOP_K and "not separated" in decision.sentence and ALL in decision.sentence
    assert len(decision.comparisons) == 6
    first = decision.comparisons[0]
    assert (first.a, first.b, first.n) == (TOP_K, ALL, 26) and first.value == pytest.approx(-2 / 26)


def test_the_ways_rule_changes_the_way_only_when_separated():
    rows = rows_at(TOP_K, 4) + rows_at(ALL, 20) + rows_at(TOP_K_SEARCH, 4) + rows_at(SEARCH, 4)
    decision = task_rules.ways_rule(rows)
    assert decision.choice == ALL and "becomes the page's way" in decision.sentence


def test_held_out_rows_never_decide():
    rows = rows_at(TOP_K, 4) + rows_at(ALL, 4) + rows_at(TOP_K_SEARCH, 4) + rows_at(SEARCH, 4)
    rows += rows_at(ALL, 13, split="heldout")
    assert task_rules.ways_rule(rows).choice == TOP_K


def test_a_way_not_run_on_every_task_leaves_the_rule_undecided():
    rows = rows_at(TOP_K, 10) + rows_at(ALL, 12) + rows_at(TOP_K_SEARCH, 9) + rows_at(SEARCH, 4)[:-1]
    decision = task_rules.ways_rule(rows)
    assert not decision.decided and decision.sentence == f"undecided: {SEARCH} not yet run on every development task"


def test_the_discovery_rule_needs_a_separated_gain():
    assert task_rules.discovery_rule(rows_at(TOP_K, 8) + rows_at(TOP_K_SEARCH, 10)).choice == TOP_K
    assert task_rules.discovery_rule(rows_at(TOP_K, 2) + rows_at(TOP_K_SEARCH, 16)).choice == TOP_K_SEARCH


def test_the_reminder_takes_its_reruns_and_the_plain_runs_that_never_repeated():
    repeat = [("read_file", {"path": "a"}, True)] * 2
    plain = [row(TOP_K, t, False, calls=repeat if i < 12 else ()) for i, t in enumerate(TASKS)]
    reruns = [row(REMINDER, t, True) for t in TASKS[:11]]
    assert task_rules.reminder_successes(plain + reruns) is None, "task 12's rerun is missing"
    assert not task_rules.reminder_rule(plain + reruns).decided
    reruns.append(row(REMINDER, TASKS[11], True))
    reminded = task_rules.reminder_successes(plain + reruns)
    assert sum(reminded.values()) == 12 and len(reminded) == 26
    decision = task_rules.reminder_rule(plain + reruns)
    assert decision.choice == "remind" and decision.comparisons[0].value == pytest.approx(12 / 26)


def test_the_text_calls_rule_compares_each_run_with_its_cut():
    rows = rows_at(TOP_K, 6) + rows_at(ALL, 6) + rows_at(TOP_K_SEARCH, 6) + rows_at(SEARCH, 6)

    def cut_two_successes_per_way(rows):  # without text calls, two of each way's six successes fail
        return [row(r.config, r.scenario, r.success and TASKS.index(r.scenario) >= 2) for r in rows]

    decision = task_rules.text_calls_rule(rows, cut=cut_two_successes_per_way)
    (diff,) = decision.comparisons
    assert diff.n == 104 and diff.value == pytest.approx(8 / 104)
    assert decision.choice == "off", "two tasks carry the whole gain: resampled by task it is not separated"

    def cut_every_success(rows):
        return [row(r.config, r.scenario, False) for r in rows]

    assert task_rules.text_calls_rule(rows, cut=cut_every_success).choice == "on"
