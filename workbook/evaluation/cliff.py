"""The tool cliff, measured: schema tokens and selection accuracy against the number of tools.

Introduced in Chapter 1 (``notebooks/01_tool_cliff.ipynb``); exercise 2 reruns the sweep.

Three problems hide in "too many tools", and the sweep keeps them apart: the context tax (the
tokens every schema costs on every turn), attention dilution (the wrong tool is picked when the
right one is among many), and name/parameter collision (the right tool, wrong arguments).
Each trial shows the model the gold tool plus N−1 distractors — the gold tool's confusable
partner always among them when N ≥ 2 — in a seeded random order, and records what it chose.

Two designs: :func:`selection_accuracy_sweep` draws a fresh list per request (the exercises use
it); :func:`fixed_list_sweep` asks every request once per N inside one of a few fixed lists of N
tools (:func:`fixed_lists`), so a real model's server can cache each list's prompt and a sweep of
hundreds of requests per N runs in minutes. Rates come with 95 % bootstrap intervals
(:func:`accuracy_with_interval`) and the chance level 1/N beside them.
"""
from __future__ import annotations

import inspect
import json
import math
import random
import statistics
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Awaitable, Callable, Iterable, Sequence, Union

from harness.core.rates import bootstrap_interval
from harness.core.tokens import tool_tokens
from harness.core.tools import Tool
from harness.core.messages import Transcript
from workbook.demo import CONFUSABLE_PAIRS, demo_tools, load_demo_queries
from workbook.demo.labels import LabelledQuery
from harness.core.json_types import JSON, JSONObject

if TYPE_CHECKING:
    from harness.providers.base import Provider

#: What a sweep asks the model: given a request and the tools shown, which tool (and arguments)?
Pick = tuple[Union[str, None], JSONObject]
Chooser = Callable[[str, Sequence[Tool]], Union[Pick, Awaitable[Pick]]]
#: ... or also the margin over the best rival, and that rival (a model that reports its log-probabilities)
MarginPick = tuple[Union[str, None], JSONObject, Union[float, None], Union[str, None]]
MarginChooser = Callable[[str, Sequence[Tool]], Union[Pick, MarginPick, Awaitable[Union[Pick, MarginPick]]]]

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
    args_expected: JSONObject | None
    args_given: JSONObject
    tokens: int
    confusable_shown: bool
    margin: float | None = None  # a real model's log-probability margin over the best rival tool
    rival: str | None = None  # that rival

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


def arguments_match(expected: JSONObject, given: JSONObject) -> bool:
    """Every expected argument present with the same value (strings compared loosely)."""
    def norm(v: JSON) -> JSON:
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
    queries: Sequence[LabelledQuery],
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


def provider_chooser(provider: Provider, system: str = "Pick the one tool that serves the request and call it.") -> Chooser:
    """A chooser that asks any provider (offline stand-in or Claude): one request, the tools shown, the first call."""
    async def choose(query: str, shown: Sequence[Tool]) -> Pick:
        transcript = Transcript()
        transcript.add_user(query)
        turn = await provider.complete(system=system, transcript=transcript, tools=shown, max_tokens=400)
        calls = turn.message.tool_calls
        return (calls[0].name, dict(calls[0].input)) if calls else (None, {})

    return choose



# --- fixed lists, bootstrap intervals -------------------------------------------------------------

@dataclass(frozen=True)
class ToolList:
    """N tools shown together, and the labelled requests whose gold tool is among them."""

    n: int
    tools: tuple[Tool, ...]
    queries: tuple[LabelledQuery, ...]


def _components(names: Sequence[str], partners: dict[str, list[str]]) -> list[list[str]]:
    """Groups of names linked by confusable pairs (a tool, its partners, their partners)."""
    seen: set[str] = set()
    groups = []
    for name in names:
        if name in seen:
            continue
        group, todo = [], [name]
        while todo:
            current = todo.pop()
            if current in seen or current not in names:
                continue
            seen.add(current)
            group.append(current)
            todo += partners.get(current, [])
        groups.append(sorted(group))
    return groups


def fixed_lists(pool: Sequence[Tool], queries: Sequence[LabelledQuery], n: int, *, seed: int = 0,
                confusable_pairs: Iterable[tuple[str, str]] = ()) -> list[ToolList]:
    """A few fixed lists of ``n`` tools that together hold every request's gold tool once.

    Gold tools are packed with their confusable partners (so a partner is always shown with its
    gold tool), groups in a seeded random order, first fit; each list is topped up with random
    distractors and shuffled. Distractors come from the head of ``pool`` up to its last gold or
    partner tool (the demo world), and from the rest (extra distractors such as public MCP tools)
    only when N needs more: lists of N ≤ the head's size are the same with or without the extras.
    Every request is then asked in the list that holds its gold tool: ``len(queries)`` trials per N.
    """
    n = min(n, len(pool))
    rng = random.Random(f"lists:{seed}:{n}")
    names = [t.name for t in pool]
    by_name = {t.name: t for t in pool}
    golds = {q.gold[0] for q in queries}
    missing = golds - set(names)
    if missing:
        raise ValueError(f"Gold tools missing from the pool: {sorted(missing)[:5]}.")
    partners = partner_map(confusable_pairs)
    wanted = [name for name in names if name in golds or any(p in golds for p in partners.get(name, []))]
    groups = _components(wanted, partners)
    rng.shuffle(groups)
    bins: list[list[str]] = []
    for group in groups:
        for start in range(0, len(group), n):  # a group larger than n is split
            part = group[start:start + n]
            home = next((b for b in bins if len(b) + len(part) <= n), None)
            if home is None:
                bins.append(list(part))
            else:
                home.extend(part)
    head = names[:max(n, 1 + max(names.index(w) for w in wanted))]
    lists = []
    for b in bins:
        others = [name for name in head if name not in b]
        chosen = b + rng.sample(others, n - len(b))
        rng.shuffle(chosen)
        held = set(b)
        lists.append(ToolList(n, tuple(by_name[x] for x in chosen), tuple(q for q in queries if q.gold[0] in held)))
    return lists


async def fixed_list_sweep(
    choose: MarginChooser,
    pool: Sequence[Tool],
    queries: Sequence[LabelledQuery],
    ns: Iterable[int],
    *,
    seed: int = 0,
    confusable_pairs: Iterable[tuple[str, str]] = (),
    progress: Callable[[Iterable], Iterable] | None = None,
    ask: Iterable[str] | None = None,
) -> list[Trial]:
    """Every request once per N, in its fixed list (:func:`fixed_lists`); trials of one list run together.

    ``choose`` may return ``(name, args)`` or ``(name, args, margin, rival)``. ``ask`` limits the
    trials to some request ids while the lists stay those of all ``queries`` (a subset re-run
    then shows each request the same tools as the full sweep did).
    """
    pairs = list(confusable_pairs)
    partners = partner_map(pairs)
    wanted = None if ask is None else set(ask)
    plan = [(tl, q) for n in sorted(set(ns)) for tl in fixed_lists(pool, queries, n, seed=seed, confusable_pairs=pairs)
            for q in tl.queries if wanted is None or q.qid in wanted]
    trials: list[Trial] = []
    for tl, q in (progress(plan) if progress else plan):
        picked = choose(q.query, tl.tools)
        answer = await picked if inspect.isawaitable(picked) else picked
        name, args = answer[0], answer[1]
        margin, rival = (answer[2], answer[3]) if len(answer) > 3 else (None, None)
        shown = {t.name for t in tl.tools}
        trials.append(Trial(
            q.qid, tl.n, seed, q.gold[0], name, getattr(q, "args", None), args or {},
            sum(tool_tokens(t) for t in tl.tools), any(p in shown for p in partners.get(q.gold[0], [])), margin, rival,
        ))
    return trials


@dataclass(frozen=True)
class RatePoint:
    """Tool-choice accuracy at N with its 95 % bootstrap interval, and the chance level 1/N."""

    n: int
    rate: float
    low: float
    high: float
    trials: int
    tokens: float  # mean schema tokens shown

    @property
    def chance(self) -> float:
        return 1 / self.n


def accuracy_with_interval(trials: Sequence[Trial], *, seed: int = 0) -> list[RatePoint]:
    """For each N: the share of trials whose chosen tool was the gold one, with its bootstrap interval."""
    points = []
    for n in sorted({t.n for t in trials}):
        hits = [t.correct_tool for t in trials if t.n == n]
        low, high = bootstrap_interval(hits, seed=seed)
        points.append(RatePoint(n, statistics.fmean(hits), low, high, len(hits),
                                statistics.fmean(t.tokens for t in trials if t.n == n)))
    return points


def trials_of_kind(trials: Sequence[Trial], queries: Sequence[LabelledQuery], kind: str,
                   confusable_pairs: Iterable[tuple[str, str]] = ()) -> list[Trial]:
    """The trials of one kind of request: 'literal', 'paraphrase', or 'confusable' (gold tool has a partner)."""
    if kind == "confusable":
        partnered = {name for pair in confusable_pairs for name in pair}
        return [t for t in trials if t.gold in partnered]
    kinds = {q.qid: q.kind for q in queries}
    return [t for t in trials if kinds.get(t.qid) == kind]


def n_at_tokens(points: Sequence[RatePoint], budget: float) -> float | None:
    """The N at which the schema tokens shown reach ``budget`` (log-interpolated between points), None if never."""
    for a, b in zip(points, points[1:]):
        if a.tokens <= budget <= b.tokens and b.tokens > a.tokens:
            share = (math.log(budget) - math.log(a.tokens)) / (math.log(b.tokens) - math.log(a.tokens))
            return math.exp(math.log(a.n) + share * (math.log(b.n) - math.log(a.n)))
    return None


def separated(a: RatePoint, b: RatePoint) -> bool:
    """True when the two points' 95 % intervals do not overlap: only then is a difference called."""
    return a.high < b.low or b.high < a.low


REQUEST_KINDS = ("all", "literal", "paraphrase", "confusable")


def curves_by_kind(trials: Sequence[Trial], queries: Sequence[LabelledQuery],
                   confusable_pairs: Iterable[tuple[str, str]] = ()) -> dict[str, list[RatePoint]]:
    """Accuracy with intervals for all requests and for each kind apart (see :func:`trials_of_kind`)."""
    pairs = list(confusable_pairs)
    return {kind: accuracy_with_interval(trials if kind == "all" else trials_of_kind(trials, queries, kind, pairs))
            for kind in REQUEST_KINDS}


def first_separated_drop(points: Sequence[RatePoint]) -> int | None:
    """The first N whose accuracy interval lies wholly below the smallest N's: where a fall is measured, not guessed."""
    return next((p.n for p in points[1:] if p.high < points[0].low), None)


# --- wrong arguments: extraction misses against schema blending -----------------------------------

ARGUMENT_OUTCOMES = ("right", "extraction miss", "schema blending")


def blended_keys(trial: Trial, schemas: dict[str, set[str]], partners: dict[str, list[str]]) -> list[str]:
    """Arguments the model gave that the gold tool's schema lacks but a confusable partner's has.

    That is schema blending in the sources' sense (``search_code``'s ``path`` sent to
    ``search_docs``): the call mixes two similar tools' parameters. Any other argument error — a
    labelled value missing, mangled or put under the wrong one of the gold tool's own keys — is an
    extraction miss.
    """
    gold = schemas.get(trial.gold, set())
    return [k for k in trial.args_given
            if k not in gold and any(k in schemas.get(p, set()) for p in partners.get(trial.gold, ()))]


def argument_outcome(trial: Trial, schemas: dict[str, set[str]], partners: dict[str, list[str]]) -> str | None:
    """'right', 'extraction miss' or 'schema blending' for a right-tool trial with labelled arguments; else None."""
    if not trial.correct_tool or trial.args_expected is None:
        return None
    if blended_keys(trial, schemas, partners):
        return "schema blending"
    return "right" if arguments_match(trial.args_expected, trial.args_given) else "extraction miss"


@dataclass(frozen=True)
class ArgumentSplit:
    """Right-tool trials with labelled arguments, by outcome, each share with its 95 % bootstrap interval."""

    n: int
    counts: dict[str, int]
    intervals: dict[str, tuple[float, float]]

    def share(self, outcome: str) -> float:
        return self.counts[outcome] / self.n if self.n else 0.0


def argument_split(trials: Sequence[Trial], tools: Sequence[Tool],
                   confusable_pairs: Iterable[tuple[str, str]]) -> ArgumentSplit:
    """Count extraction misses and schema blending among ``trials`` (see :func:`argument_outcome`)."""
    schemas = {t.name: {n for n, _ in t.parameters} for t in tools}
    partners = partner_map(confusable_pairs)
    outcomes = [o for o in (argument_outcome(t, schemas, partners) for t in trials) if o is not None]
    counts = {o: outcomes.count(o) for o in ARGUMENT_OUTCOMES}
    intervals = {o: bootstrap_interval([x == o for x in outcomes]) if outcomes else (0.0, 1.0) for o in ARGUMENT_OUTCOMES}
    return ArgumentSplit(len(outcomes), counts, intervals)


ARGUMENTS_FILE = "real_model_arguments.json"
ARGUMENTS_N = 10


async def argument_sweep(provider: Provider, n: int = ARGUMENTS_N) -> tuple[JSONObject, list[Trial]]:
    """The real model calls the tool *with arguments* for every labelled request whose gold tool has a
    confusable partner, in Chapter 1's fixed list of ``n`` demo tools (the partner always shown).

    ``provider.complete`` generates the arguments (llama.cpp constrains them to the chosen tool's
    JSON schema). Returns (what produced it, the trials) for :func:`save_argument_trials`.
    """
    queries = load_demo_queries()
    partnered = {name for pair in CONFUSABLE_PAIRS for name in pair}
    asked = [q.qid for q in queries if q.gold[0] in partnered and getattr(q, "args", None)]
    trials = await fixed_list_sweep(provider_chooser(provider), demo_tools(), queries, [n],
                                    confusable_pairs=CONFUSABLE_PAIRS, ask=asked)
    meta = {"model": getattr(provider, "model", provider.name), "n": n, "requests": len(asked),
            "command": "python -c 'import asyncio, workbook.evaluation.cliff as c; from workbook.providers.local_llama import "
                       "LocalLlamaProvider as L; m = L(may_answer=False); c.save_argument_trials(*asyncio.run(c.argument_sweep(m)), "
                       "\"experiments/data/real_model_arguments.json\"); m.close()'"}
    return meta, trials


_ARG_FIELDS = ("qid", "n", "seed", "gold", "chosen", "args_given", "tokens", "confusable_shown")


def write_trials(path: str | Path, meta: JSONObject, trials: Sequence[Trial], fields: Sequence[str]) -> None:
    """Save trials as ``{"meta", "fields", "trials": rows}`` (compact: one list per trial)."""
    rows = [[asdict(t)[k] for k in fields] for t in trials]
    Path(path).write_text(json.dumps({"meta": meta, "fields": list(fields), "trials": rows}, indent=1) + "\n",
                          encoding="utf-8")


def read_trials(path: str | Path | None, committed: str) -> tuple[JSONObject, list[Trial]]:
    """Trials saved by :func:`write_trials` (the package's ``committed`` file when ``path`` is None).

    Each trial gets its request's labelled arguments back from the demo queries (they are not saved
    twice); fields a file does not record keep the Trial's defaults (no arguments given, no margin).
    """
    text = (Path(path).read_text(encoding="utf-8") if path
            else (resources.files("experiments") / "data" / committed).read_text(encoding="utf-8"))
    data = json.loads(text)
    expected = {q.qid: q.args for q in load_demo_queries()}
    saved = [dict(zip(data["fields"], row)) for row in data["trials"]]
    trials = [Trial(**{"args_given": {}, **r, "args_expected": expected.get(r["qid"])}) for r in saved]
    return data["meta"], trials


def save_argument_trials(meta: JSONObject, trials: Sequence[Trial], path: str) -> None:
    write_trials(path, meta, trials, _ARG_FIELDS)


def load_argument_trials(path: str | None = None) -> tuple[JSONObject, list[Trial]]:
    """The committed argument sweep (or the file at ``path``), trials rebuilt with the labelled arguments."""
    return read_trials(path, ARGUMENTS_FILE)


def carried_over(trials: Sequence[Trial], confusable_pairs: Iterable[tuple[str, str]]) -> tuple[int, int]:
    """(partner calls that carry a labelled value of the request, partner calls): the other face of a collision.

    When the confusable partner is called instead of the gold tool, does the call still hold what
    the request asked for (``read_note(title='notes/todo.md')`` for "read notes/todo.md")? Only
    trials with labelled arguments count.
    """
    partners = partner_map(confusable_pairs)
    calls = [t for t in trials if t.args_expected and t.chosen in partners.get(t.gold, ())]

    def norm(v: JSON) -> JSON:
        return v.strip().strip("#@").lower() if isinstance(v, str) else v

    carried = [t for t in calls if {norm(v) for v in (t.args_expected or {}).values()} & {norm(v) for v in t.args_given.values()
                                                                                    if not isinstance(v, (dict, list))}]
    return len(carried), len(calls)
