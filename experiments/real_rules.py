"""The committed rules that re-choose the loop's defaults from the real model's per-step choices.

Chapter 3 shows what the k rule and the query rule decide, Chapter 4 the discovery rule. The rules
(``experiments/data/real_model_rules.json``) were written before the per-step results were read; this
module only applies them to the committed rows (:mod:`experiments.real_steps`), so a chapter cannot
quietly bend a rule to the numbers. A rule whose configurations are not all measured on every
development step says so and decides nothing: a partial run is a sample ordered by the tools
shown, not a random one.

Rates are shares of development steps, with 95 % intervals that resample scenarios
(:func:`harness.core.rates.cluster_bootstrap_interval`); a change of default needs a paired interval
that excludes zero, except the k rule, whose knee is read on the rates themselves.
"""
from __future__ import annotations

from importlib import resources

import json
from dataclasses import dataclass, field
from typing import Collection, Sequence

from experiments import DATA
from experiments.real_steps import (PairedRight, Score, StepRow, is_right, paired_right, scenario_interval,
                                            step_scores)
from workbook.evaluation.scenarios import knee

RULES = json.loads(DATA.joinpath("real_model_rules.json").read_text(encoding="utf-8"))
ALL_TOOLS = 74  # the demo catalog's size: "all 74" in the k sweep
K_CONFIGS = {3: "k=3", 5: "k=5", 10: "k=10", 20: "k=20", ALL_TOOLS: "all 74"}
#: The loop's default query is the transcript; at k = 10 its rows are the k sweep's "k=10".
QUERY_CONFIGS = {"transcript": "k={k}", "latest message": "latest message, k={k}",
                 "latest message + recent turns": "latest message + recent turns, k={k}"}
DEFAULT_QUERY = "transcript"
Key = tuple[str, int]  # (scenario, step)


def right_or_searched(row: StepRow) -> float:
    """The discovery rule's score: right, or the discovery tool called where the needed tool was not shown."""
    return float(row.verdict == "right" or (row.verdict == "searched" and not row.needed_shown))


@dataclass(frozen=True)
class Estimate:
    """A configuration's rate over development steps, with its 95 % scenario-bootstrap interval."""

    config: str
    rate: float
    low: float
    high: float
    steps: int


@dataclass(frozen=True)
class Decision:
    """What one rule decides: the choice (None while undecided), the sentence saying so, and its numbers."""

    rule: str
    choice: str | None
    sentence: str
    estimates: dict[str, Estimate] = field(default_factory=dict)
    differences: list[PairedRight] = field(default_factory=list)

    @property
    def decided(self) -> bool:
        return self.choice is not None


def dev_steps(rows: Sequence[StepRow], config: str, split: str = "dev") -> dict[Key, StepRow]:
    """The rule's rows of ``config``: steps of ``split`` whose needed tool exists (not the rows after the last step)."""
    return {(r.scenario, r.step): r for r in rows if r.config == config and r.split == split and r.needed is not None}


def expected_steps(split: str = "dev") -> set[Key]:
    """Every (scenario, step) of ``split`` that a complete configuration has a row for."""
    from harness.selection.catalog import ToolCatalog
    from workbook.demo import demo_tools
    from experiments.real_steps import cases

    return {(c.scenario, c.step) for c in cases(ToolCatalog(demo_tools()), (split,)) if c.needed is not None}


def estimate(rows: Sequence[StepRow], config: str, score: Score = is_right, split: str = "dev") -> Estimate:
    """``config``'s rate on ``split`` under ``score``, with its interval over scenarios."""
    values = step_scores(rows, config, split, score)
    if not values:
        raise ValueError(f"No step rows for {config!r} on {split} yet.")
    low, high = scenario_interval(values)
    return Estimate(config, sum(values.values()) / len(values), low, high, len(values))


def difference(rows: Sequence[StepRow], a: str, b: str, score: Score = is_right, split: str = "dev") -> PairedRight:
    """``a`` − ``b`` on the steps both were asked, paired by step, resampled by scenario."""
    paired = paired_right(rows, a, b, split, score)
    if paired is None:
        raise ValueError(f"{a!r} and {b!r} share no step rows on {split}.")
    return paired


def measured(rows: Sequence[StepRow], config: str, split: str = "dev", expected: Collection[Key] | None = None) -> bool:
    """Whether ``config`` has a row for every step of ``split`` (a partial run is not a random sample)."""
    expected = expected_steps(split) if expected is None else expected
    return set(expected) <= dev_steps(rows, config, split).keys()


def _missing(rows: Sequence[StepRow], configs: Sequence[str], expected: Collection[Key]) -> list[str]:
    return [c for c in configs if not measured(rows, c, expected=expected)]


def _undecided(rule: str, rows: Sequence[StepRow], configs: Sequence[str], missing: Sequence[str],
               score: Score) -> Decision:
    """What is measured so far, and why nothing is decided yet."""
    measured = [c for c in configs if c not in missing]
    estimates = {c: estimate(rows, c, score) for c in measured}
    pairs = [difference(rows, a, b, score) for i, a in enumerate(measured) for b in measured[i + 1:]]
    return Decision(rule, None, f"undecided: configurations {', '.join(missing)} not yet measured", estimates, pairs)


def k_rule(rows: Sequence[StepRow], current: int, expected: Collection[Key] | None = None) -> Decision:
    """The smallest k whose development rate is within 0.05 of the best k's (the knee); a change only if it differs."""
    expected = expected_steps() if expected is None else expected
    configs = list(K_CONFIGS.values())
    missing = _missing(rows, configs, expected)
    if missing:
        return _undecided("k", rows, configs, missing, is_right)
    estimates = {c: estimate(rows, c) for c in configs}
    chosen = knee({k: estimates[c].rate for k, c in K_CONFIGS.items()})
    best = max(K_CONFIGS, key=lambda k: (estimates[K_CONFIGS[k]].rate, -k))
    pair = [difference(rows, K_CONFIGS[chosen], K_CONFIGS[best])] if chosen != best else []
    name = "every tool" if chosen == ALL_TOOLS else f"k = {chosen}"
    sentence = (f"the knee is {name}, the current default: it stays" if chosen == current
                else f"the knee is {name}: the default changes from k = {current}")
    return Decision("k", K_CONFIGS[chosen], sentence, estimates, pair)


def query_rule(rows: Sequence[StepRow], k: int, expected: Collection[Key] | None = None) -> Decision:
    """The best query replaces the transcript query only if its paired difference excludes zero."""
    expected = expected_steps() if expected is None else expected
    configs = {name: pattern.format(k=k) for name, pattern in QUERY_CONFIGS.items()}
    missing = _missing(rows, list(configs.values()), expected)
    if missing:
        return _undecided("query", rows, list(configs.values()), missing, is_right)
    estimates = {c: estimate(rows, c) for c in configs.values()}
    best = max(configs, key=lambda n: (estimates[configs[n]].rate, n == DEFAULT_QUERY))
    if best == DEFAULT_QUERY:
        return Decision("query", DEFAULT_QUERY, f"the {DEFAULT_QUERY} query has the highest rate: the default stays",
                        estimates)
    diff = difference(rows, configs[best], configs[DEFAULT_QUERY])
    if diff.separated and diff.value > 0:
        return Decision("query", best, f"the {best} query is above the {DEFAULT_QUERY} query by a paired interval "
                        "that excludes zero: it becomes the default", estimates, [diff])
    return Decision("query", DEFAULT_QUERY, f"the {best} query has the highest rate but is not separated from the "
                    f"{DEFAULT_QUERY} query: the default stays", estimates, [diff])


def discovery_rule(rows: Sequence[StepRow], k: int, expected: Collection[Key] | None = None) -> Decision:
    """Pin the discovery tool only if, counting a search where the tool was not shown as right, it is separated above."""
    expected = expected_steps() if expected is None else expected
    with_it, without = f"discovery, k={k}", f"k={k}"
    missing = _missing(rows, [with_it, without], expected)
    if missing:
        return _undecided("discovery", rows, [with_it, without], missing, right_or_searched)
    estimates = {c: estimate(rows, c, right_or_searched) for c in (with_it, without)}
    diff = difference(rows, with_it, without, right_or_searched)
    if diff.separated and diff.value > 0:
        return Decision("discovery", with_it, "the pinned discovery tool is above by a paired interval that "
                        "excludes zero: recommended", estimates, [diff])
    return Decision("discovery", without, "the pinned discovery tool is not separated above: not recommended",
                    estimates, [diff])
