"""The tool cliff, measured: schema tokens and selection accuracy against the number of tools.

Introduced in Chapter 1 (``notebooks/01_tool_cliff.ipynb``); exercise 2 reruns the sweep.

Three problems hide in "too many tools", and the sweep keeps them apart: the context tax (the
tokens every schema costs on every turn), attention dilution (the wrong tool is picked when the
right one is among many), and name/parameter collision (the right tool, wrong arguments).
Each trial shows the model the gold tool plus N−1 distractors — the gold tool's confusable
partner always among them when N ≥ 2 — in a seeded random order, and records what it chose.
"""
from __future__ import annotations

import inspect
import random
import statistics
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Iterable, Sequence, Union

from harness.tokens import tool_tokens
from harness.tools import Tool

#: What a sweep asks the model: given a request and the tools shown, which tool (and arguments)?
Pick = tuple[Union[str, None], dict[str, Any]]
Chooser = Callable[[str, Sequence[Tool]], Union[Pick, Awaitable[Pick]]]

DEFAULT_NS = (5, 10, 20, 30, 50, 75, 100)


@dataclass(frozen=True)
class TokenPoint:
    n: int
    tokens: int
    window_share: float  # of a 200k-token window


def schema_token_curve(tools: Sequence[Tool], ns: Iterable[int], *, seed: int = 0, window: int = 200_000) -> list[TokenPoint]:
    """Schema tokens of the first n tools in a seeded random order, for each n (capped at all)."""
    order = list(tools)
    random.Random(seed).shuffle(order)
    sizes = [tool_tokens(t) for t in order]
    points = []
    for n in sorted({min(n, len(order)) for n in ns}):
        total = sum(sizes[:n])
        points.append(TokenPoint(n, total, total / window))
    return points


def tokens_per_tool(tools: Sequence[Tool]) -> list[int]:
    """The token cost of each tool definition (for the distribution plot)."""
    return [tool_tokens(t) for t in tools]


@dataclass(frozen=True)
class Trial:
    qid: str
    n: int
    seed: int
    gold: str
    chosen: str | None
    args_expected: dict[str, Any] | None
    args_given: dict[str, Any]
    tokens: int
    confusable_shown: bool

    @property
    def correct_tool(self) -> bool:
        return self.chosen == self.gold

    @property
    def outcome(self) -> str:
        """'right' / 'wrong tool' / 'no tool' / 'wrong arguments' (right tool, arguments off)."""
        if self.chosen is None:
            return "no tool"
        if not self.correct_tool:
            return "wrong tool"
        if self.args_expected is not None and not arguments_match(self.args_expected, self.args_given):
            return "wrong arguments"
        return "right"


def arguments_match(expected: dict[str, Any], given: dict[str, Any]) -> bool:
    """Every expected argument present with the same value (strings compared loosely)."""
    def norm(v: Any) -> Any:
        return v.strip().strip("#@").lower() if isinstance(v, str) else v
    return all(k in given and norm(given[k]) == norm(v) for k, v in expected.items())


def tools_for_trial(gold: Tool, pool: Sequence[Tool], n: int, rng: random.Random, partners: dict[str, list[str]]) -> list[Tool]:
    """The gold tool, its confusable partners, and random distractors: n tools in random order."""
    by_name = {t.name: t for t in pool}
    chosen = [gold] + [by_name[p] for p in partners.get(gold.name, []) if p in by_name][: max(0, n - 1)]
    others = [t for t in pool if t.name not in {c.name for c in chosen}]
    chosen += rng.sample(others, min(len(others), n - len(chosen)))
    rng.shuffle(chosen)
    return chosen


def partner_map(pairs: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for a, b in pairs:
        out.setdefault(a, []).append(b)
        out.setdefault(b, []).append(a)
    return out


async def selection_accuracy_sweep(
    choose: Chooser,
    tools: Sequence[Tool],
    queries: Sequence[Any],
    ns: Iterable[int] = DEFAULT_NS,
    seeds: Iterable[int] = (0, 1, 2),
    confusable_pairs: Iterable[tuple[str, str]] = (),
    progress: Callable[[Iterable], Iterable] | None = None,
) -> list[Trial]:
    """One trial per (query, n, seed). ``queries`` need ``qid``, ``query``, ``gold`` and optional ``args``.

    ``progress`` wraps the trial iterator (tqdm in a notebook); ``choose`` may be sync or async.
    """
    by_name = {t.name: t for t in tools}
    partners = partner_map(confusable_pairs)
    plan = [(q, min(n, len(tools)), s) for n in sorted(set(ns)) for s in seeds for q in queries]
    trials: list[Trial] = []
    for q, n, seed in (progress(plan) if progress else plan):
        gold = by_name[q.gold[0]]
        rng = random.Random(f"{seed}:{n}:{q.qid}")
        shown = tools_for_trial(gold, tools, n, rng, partners)
        picked = choose(q.query, shown)
        name, args = await picked if inspect.isawaitable(picked) else picked
        shown_names = {t.name for t in shown}
        trials.append(Trial(
            q.qid, n, seed, gold.name, name, getattr(q, "args", None), args or {},
            sum(tool_tokens(t) for t in shown), any(p in shown_names for p in partners.get(gold.name, [])),
        ))
    return trials


@dataclass(frozen=True)
class AccuracyPoint:
    n: int
    mean: float
    stdev: float  # across seeds
    per_seed: tuple[float, ...]
    tokens: float  # mean schema tokens shown


def accuracy_by_n(trials: Sequence[Trial]) -> list[AccuracyPoint]:
    """Tool-choice accuracy at each n: the mean over seeds and its spread."""
    points = []
    for n in sorted({t.n for t in trials}):
        at_n = [t for t in trials if t.n == n]
        seeds = sorted({t.seed for t in at_n})
        per_seed = tuple(statistics.fmean(t.correct_tool for t in at_n if t.seed == s) for s in seeds)
        points.append(AccuracyPoint(
            n, statistics.fmean(per_seed), statistics.pstdev(per_seed) if len(per_seed) > 1 else 0.0,
            per_seed, statistics.fmean(t.tokens for t in at_n),
        ))
    return points


def steepest_drop(points: Sequence[AccuracyPoint]) -> tuple[int, int, float]:
    """(n_from, n_to, accuracy lost per added tool) for the steepest segment of the curve."""
    segments = [(a.n, b.n, (a.mean - b.mean) / (b.n - a.n)) for a, b in zip(points, points[1:]) if b.n > a.n]
    return max(segments, key=lambda s: s[2])


def failure_kinds(trials: Sequence[Trial]) -> dict[int, dict[str, int]]:
    """For each n, how many trials ended right / wrong tool / no tool / wrong arguments."""
    out: dict[int, dict[str, int]] = {}
    for t in trials:
        row = out.setdefault(t.n, {"right": 0, "wrong tool": 0, "no tool": 0, "wrong arguments": 0})
        row[t.outcome] += 1
    return out


def provider_chooser(provider: Any, system: str = "Pick the one tool that serves the request and call it.") -> Chooser:
    """A chooser that asks any provider (offline stand-in or Claude): one request, the tools shown, the first call."""
    from harness.messages import Transcript

    async def choose(query: str, shown: Sequence[Tool]) -> Pick:
        transcript = Transcript()
        transcript.add_user(query)
        turn = await provider.complete(system=system, transcript=transcript, tools=shown, max_tokens=400)
        calls = turn.message.tool_calls
        return (calls[0].name, dict(calls[0].input)) if calls else (None, {})

    return choose

