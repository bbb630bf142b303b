"""The committed whole-task rules applied to the 1.5B's rows: which way of loading tools the page recommends,
whether a pinned search helps, and whether two kinds of help the harness gives a small model are kept.

Chapters 4, 5 and 5c and the what-to-do page show what these decide. The rules are the ``"1.5b"`` entry of
``experiments/data/real_model_rules.json``, committed before the rows they decide on were complete; this
module only applies them, to the development single-request tasks (26 scenarios, one request each), so a
chapter cannot bend a rule to the numbers. Held-out tasks are reported beside, never chosen on.

Every comparison is paired by scenario (the same task under both arms) with a 95 % bootstrap interval
(:func:`harness.core.rates.cluster_bootstrap_interval`, which resamples scenarios); a change needs that
interval to exclude zero. A rule whose rows are not all in says so and decides nothing: a partial run is
a sample ordered by the runner, not a random one.

Two rules compare the harness with and without a kind of help, and neither needs a second run of
everything, because decoding is greedy (the same prompt gives the same turn):

* *reading a call written as text*: the run without it is the same run cut at the first turn whose call
  was read from text (:func:`experiments.real_tasks.without_text_calls`);
* *the repeat reminder*: a run that never repeated a call back to back is the same run with the reminder,
  so only the runs that did are run again (``per-turn top-10 + repeat reminder``).
"""
from __future__ import annotations

import asyncio
import statistics
from dataclasses import dataclass, field
from typing import Callable, Sequence

from experiments.real_tasks import CONFIGS, REMINDED, TaskRow, repeated_call, without_text_calls
from harness.core.rates import cluster_bootstrap_interval
from workbook.demo import load_scenarios

#: The page's way of loading tools before the 1.5B's rows (the loop's default): a change needs a separated gain over it.
CURRENT_WAY = CONFIGS[0]
TOP_K, ALL, TOP_K_SEARCH, SEARCH = CONFIGS
REMINDER = TOP_K + REMINDED


@dataclass(frozen=True)
class Paired:
    """Success of ``a`` minus ``b`` over the same ``n`` tasks (or task-and-way pairs), with its 95 % interval."""

    a: str
    b: str
    n: int
    rate_a: float
    rate_b: float
    low: float
    high: float

    @property
    def value(self) -> float:
        return self.rate_a - self.rate_b

    @property
    def separated(self) -> bool:
        return self.low > 0 or self.high < 0

    def __str__(self) -> str:
        return f"{self.a} − {self.b}: {self.value:+.2f} [{self.low:+.2f}, {self.high:+.2f}] over {self.n}"


@dataclass(frozen=True)
class TaskDecision:
    """What one rule decides: the choice (None while undecided), the sentence saying so, and its comparisons."""

    rule: str
    choice: str | None
    sentence: str
    comparisons: list[Paired] = field(default_factory=list)

    @property
    def decided(self) -> bool:
        return self.choice is not None


def task_ids(split: str = "dev") -> list[str]:
    """The single-request tasks of ``split``: the set every rule here decides on (dev) or reports (heldout)."""
    return [s.id for s in load_scenarios(split) if s.kind == "task"]


def successes(rows: Sequence[TaskRow], config: str, split: str = "dev") -> dict[str, bool]:
    """``config``'s verdict on each single-request task of ``split`` that has a row."""
    wanted = set(task_ids(split))
    return {r.scenario: r.success for r in rows if r.config == config and r.split == split and r.scenario in wanted}


def paired(a: str, wins_a: dict[str, bool], b: str, wins_b: dict[str, bool]) -> Paired:
    """``a`` − ``b`` over the tasks both have, resampled by task."""
    both = sorted(wins_a.keys() & wins_b.keys())
    if not both:
        raise ValueError(f"{a!r} and {b!r} share no task.")
    low, high = cluster_bootstrap_interval([[float(wins_a[t]) - float(wins_b[t])] for t in both])
    return Paired(a, b, len(both), statistics.fmean(wins_a[t] for t in both), statistics.fmean(wins_b[t] for t in both),
                  low, high)


def _missing(rows: Sequence[TaskRow], configs: Sequence[str], split: str = "dev") -> list[str]:
    everything = set(task_ids(split))
    return [c for c in configs if set(successes(rows, c, split)) != everything]


def _undecided(rule: str, missing: Sequence[str]) -> TaskDecision:
    return TaskDecision(rule, None, f"undecided: {', '.join(missing)} not yet run on every development task")


def ways_rule(rows: Sequence[TaskRow]) -> TaskDecision:
    """The page's way of loading tools: the best way replaces :data:`CURRENT_WAY` only if it is above it by a paired
    interval that excludes zero; every pair of ways is compared and returned."""
    missing = _missing(rows, CONFIGS)
    if missing:
        return _undecided("ways", missing)
    wins = {c: successes(rows, c) for c in CONFIGS}
    pairs = [paired(a, wins[a], b, wins[b]) for i, a in enumerate(CONFIGS) for b in CONFIGS[i + 1:]]
    best = max(CONFIGS, key=lambda c: (statistics.fmean(wins[c].values()), c == CURRENT_WAY))
    if best == CURRENT_WAY:
        return TaskDecision("ways", CURRENT_WAY, f"{CURRENT_WAY} has the highest success: it stays the page's way", pairs)
    against = paired(best, wins[best], CURRENT_WAY, wins[CURRENT_WAY])
    if against.separated and against.value > 0:
        return TaskDecision("ways", best, f"{best} is above {CURRENT_WAY} by a paired interval that excludes zero: "
                            "it becomes the page's way", pairs)
    return TaskDecision("ways", CURRENT_WAY, f"{best} has the highest success but is not separated from {CURRENT_WAY}: "
                        f"{CURRENT_WAY} stays the page's way", pairs)


def discovery_rule(rows: Sequence[TaskRow]) -> TaskDecision:
    """The pinned search (``search_tools`` beside the per-turn top 10) is recommended only if it is separated above."""
    missing = _missing(rows, (TOP_K_SEARCH, TOP_K))
    if missing:
        return _undecided("discovery", missing)
    diff = paired(TOP_K_SEARCH, successes(rows, TOP_K_SEARCH), TOP_K, successes(rows, TOP_K))
    if diff.separated and diff.value > 0:
        return TaskDecision("discovery", TOP_K_SEARCH, "search_tools beside the top 10 is above the top 10 alone by a "
                            "paired interval that excludes zero: recommended", [diff])
    return TaskDecision("discovery", TOP_K, "search_tools beside the top 10 is not separated above the top 10 alone: "
                        "not recommended", [diff])


def without_text(rows: Sequence[TaskRow]) -> list[TaskRow]:
    """Each row as it would have ended had the provider not read calls written as text (cut and judged again)."""
    async def all_cut() -> list[TaskRow]:
        return [await without_text_calls(r) for r in rows]

    return asyncio.run(all_cut())


def text_calls_rule(rows: Sequence[TaskRow], cut: Callable[[Sequence[TaskRow]], list[TaskRow]] = without_text) -> TaskDecision:
    """Reading calls written as text stays on only if, over the four ways' development tasks pooled, success with it
    is above success without it by a paired interval (resampled by task) that excludes zero."""
    missing = _missing(rows, CONFIGS)
    if missing:
        return _undecided("text calls", missing)
    wanted = set(task_ids())
    mine = [r for r in rows if r.config in CONFIGS and r.split == "dev" and r.scenario in wanted]
    without = cut(mine)
    by_task: dict[str, list[float]] = {}
    for with_it, no in zip(mine, without):
        by_task.setdefault(with_it.scenario, []).append(float(with_it.success) - float(no.success))
    low, high = cluster_bootstrap_interval(list(by_task.values()))
    diff = Paired("reading text calls", "not reading them", len(mine), statistics.fmean(r.success for r in mine),
                  statistics.fmean(r.success for r in without), low, high)
    if diff.separated and diff.value > 0:
        return TaskDecision("text calls", "on", "reading calls written as text is above not reading them by a paired "
                            "interval that excludes zero: it stays on", [diff])
    return TaskDecision("text calls", "off", "reading calls written as text is not separated above not reading them: "
                        "the provider's default is off", [diff])


def reminder_successes(rows: Sequence[TaskRow]) -> dict[str, bool] | None:
    """The reminder's verdict on each development task: its rerun where the plain run repeated a call, else the plain
    run's (the same run under greedy decoding); None while a rerun is missing."""
    plain = {r.scenario: r for r in rows if r.config == TOP_K and r.split == "dev" and r.scenario in set(task_ids())}
    reran = successes(rows, REMINDER)
    out = {}
    for task, row in plain.items():
        if repeated_call(row) and task not in reran:
            return None
        out[task] = reran[task] if repeated_call(row) else row.success
    return out


def reminder_rule(rows: Sequence[TaskRow]) -> TaskDecision:
    """The repeat reminder is kept only if, on per-turn top-10's development tasks, it is separated above the plain loop."""
    missing = _missing(rows, (TOP_K,))
    reminded = reminder_successes(rows) if not missing else None
    if reminded is None:
        return _undecided("reminder", missing or [REMINDER])
    diff = paired(REMINDER, reminded, TOP_K, successes(rows, TOP_K))
    if diff.separated and diff.value > 0:
        return TaskDecision("reminder", "remind", "the repeat reminder is above the plain loop by a paired interval "
                            "that excludes zero: kept", [diff])
    return TaskDecision("reminder", "run", "the repeat reminder is not separated above the plain loop: the plain "
                        "loop stays", [diff])
