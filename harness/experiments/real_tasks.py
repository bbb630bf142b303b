"""Whole tasks on the real model: every scenario run end to end and judged on the world's state.

Introduced in Chapter 5c (``notebooks/05c_real_model_loop.ipynb``), beside the stand-in's runs of the
same three ways of loading tools (Chapter 5 §4 compares them on the stand-in). The per-step rows
(:mod:`harness.experiments.real_steps`) ask one step at a time with the conversation done right; here the real small model
(:mod:`harness.providers.local_llama`) runs each of the 70 scenarios through the agent loop on its own:
it chooses, writes arguments, reads results, and must stop. Each run is judged by
:func:`harness.evaluation.scenarios.run_scenario` — the asked change made and nothing else damaged —
and its prompts are kept (:class:`harness.evaluation.prompt_cache.PromptRecorder`), so the real model's
requests can be priced under each placement of found tools (:meth:`TaskRow.use`,
:meth:`TaskRow.found_tools_at_end`) as Chapter 5 §5 prices the stand-in's, once its deferred runs are in.

Why a failure is classified (:func:`task_failure`): a 0.5B model's success is low, and the lesson is
where it fails — the tool not shown, a wrong tool, the right tool with wrong arguments (or a wrong
answer), stopping before the work was done, or never stopping.

Why ``MAX_TURNS`` = 6 and answers of at most ``MAX_TOKENS`` tokens: on two cores a turn costs several
seconds, and a run that never stops pays every turn; six turns fit every scenario's needed calls
(at most four) and one search besides, and a deferred run that searches before each call is cut short
by it — a stated handicap, counted in "never stopped".

Why a configuration may end in :data:`GUARDED`: the real model's runs made one call again and again to
the turn limit, so the loop guard (:func:`harness.selection.agent.arun`'s ``answer_on_repeat``) is measured
beside the plain loop on the same scenarios — a lever, not a default of the package.

Rebuild the committed rows (appends each scenario's row as it finishes and resumes by skipping rows
already there; with no ``--configs``, ``--splits``, ``--kinds`` or ``--limit`` it runs all 70 under the three ways)::

    make real-model && .venv/bin/python -m harness.experiments.real_tasks --out harness/data/real_model_tasks.jsonl \\
        --configs "per-turn top-10" "deferred search, keep loaded" "all tools" "per-turn top-10 + loop guard" \\
        --splits dev heldout --kinds task && .venv/bin/python -m harness.experiments.real_tasks \\
        --out harness/data/real_model_tasks.jsonl --configs "per-turn top-10" --splits heldout dev --kinds pivot conversation opener

Measured wall time: see :data:`WALL_TIME`.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from harness.core.rates import bootstrap_interval, paired_difference_interval
from harness.core.temp_folders import exit_cleanly_on_sigterm
from harness.demo import load_scenarios
from harness.demo.labels import KINDS as SCENARIO_KINDS, Scenario
from harness.evaluation.prompt_cache import Block, CacheRules, CacheUse, Prompt, found_tools_in_messages, run_cache_use, run_recorded
from harness.evaluation.scenarios import ScenarioRun, failure_kind, fresh_demo_catalog, in_order
from harness.experiments import run_file
from harness.experiments.real_steps import SPLITS
from harness.mcp.deferral import loading_strategies
from harness.providers.base import Provider
from harness.providers.local_llama import CALL_OPEN, CALL_TOKEN

if TYPE_CHECKING:
    from importlib.abc import Traversable

RESULTS_FILE = "real_model_tasks.jsonl"
COMMAND = ("make real-model && .venv/bin/python -m harness.experiments.real_tasks --out harness/data/real_model_tasks.jsonl "
           '--configs "per-turn top-10" "deferred search, keep loaded" "all tools" "per-turn top-10 + loop guard" '
           "--splits dev heldout --kinds task && .venv/bin/python -m harness.experiments.real_tasks --out "
           'harness/data/real_model_tasks.jsonl --configs "per-turn top-10" --splits heldout dev --kinds pivot conversation opener '
           "&& .venv/bin/python -m harness.experiments.real_tasks --out harness/data/real_model_tasks.jsonl "
           '--configs "deferred search, keep loaded" "all tools" --splits heldout dev --kinds pivot conversation opener')
MAX_TURNS = 6
MAX_TOKENS = 256
#: Measured on the 2-core machine that wrote the committed file, from the rows' own seconds.
WALL_TIME = ("the 39 single-request tasks (26 development, 13 held-out), six turns at most, on two threads: "
             "per-turn top-10 33 minutes (59 s a development run, at times beside another job; 35 s a held-out run); "
             "deferred search 20 minutes (35 and 22 s); all tools 26 minutes (44 and 33 s); per-turn top-10 with the "
             "loop guard 19 minutes (39 and 8 s). The held-out rows, 52 runs, took 21 minutes on a quiet machine. "
             "The 31 pivots, conversations and openers with per-turn top-10: 47 minutes (17 held out, 29 development; "
             "a pivot's earlier requests run to the turn limit too, up to 6 minutes a pivot). The 13 held-out ones with "
             "deferred search 28 minutes (up to 13 minutes a pivot) and with "
             "all tools 27 minutes; the 18 development ones with deferred search 35 minutes (up to 13 a pivot; "
             "its first pivot on one server thread, after a restart) and with all tools 25 minutes (up to 4)")
#: The three ways of loading tools Chapter 5 compares, in the order they are run (the default first).
_ALL, _TOP_K, _SEARCH = loading_strategies()
CONFIGS = (_TOP_K, _SEARCH, _ALL)
#: A configuration named with this suffix runs with the loop guard (:func:`harness.selection.agent.arun`'s
#: ``answer_on_repeat``): not a default of the package, a lever measured beside the plain loop.
GUARDED = " + loop guard"
TASK_FAILURES = ("tool not shown", "wrong tool", "argument content", "answer content", "stopped early", "never stopped")
_KINDS = {"t": "tool", "s": "system", "m": "message"}


def task_failure(run: ScenarioRun) -> str | None:
    """Why a failed run failed (None when it succeeded), at the first needed tool it did not call in order.

    :func:`harness.evaluation.scenarios.failure_kind`'s classes, read for a model that may stop: where
    the needed tools were shown and nothing wrong was called, the run either stopped early (answered)
    or never stopped (``max_turns``: most often the same call again and again); a run that made every
    needed call and went on to ``max_turns`` never stopped too, while a needed call that came back as an
    error is argument content however the run ended. A request needing no tool fails by calling one
    (that changed the world) or by its answer.
    """
    if run.success:
        return None
    never = run.result.stopped == "max_turns"
    if not run.scenario.tools:
        return "never stopped" if never else "wrong tool" if run.result.calls() else "answer content"
    kind = failure_kind(run)
    done_all = in_order(run.scenario.tools, run.result.succeeded())
    if never and (kind == "phrase its lexicon lacks" or (kind == "argument content" and done_all)):
        return "never stopped"
    return "stopped early" if kind == "phrase its lexicon lacks" else kind


@dataclass(frozen=True)
class TaskRow:
    """One committed line: a configuration's run of one scenario, its verdict, its cost and its prompts."""

    config: str
    split: str
    scenario: str
    kind: str
    max_turns: int
    success: bool
    tools_right: bool
    failure: str | None
    failures: list[str]
    stopped: str  # the judged request's: "end_turn", "max_turns", ...
    setup_stopped: list[str]
    turns: int
    calls: list[list[Any]]  # Any: [name, arguments, succeeded] as JSON keeps them
    answer: str
    seconds: float
    prompts: list[list[list[Any]]] = field(repr=False)  # Any: [kind initial, key, tokens] per block

    @property
    def key(self) -> tuple[str, str, str]:
        return self.config, self.split, self.scenario

    def prompt_list(self) -> list[Prompt]:
        """The requests the run sent, as the cache sees them."""
        return [Prompt(tuple(Block(_KINDS[k], key, n) for k, key, n in p)) for p in self.prompts]

    def use(self, rules: CacheRules = CacheRules()) -> CacheUse:
        """The run's cache reads, writes and uncached input tokens, replayed on a cold cache."""
        return run_cache_use(self.prompt_list(), rules)

    def found_tools_at_end(self) -> TaskRow:
        """The same run with each found tool's definition after the conversation (the third placement)."""
        return replace(self, prompts=_blocks(found_tools_in_messages(self.prompt_list())))


def _blocks(prompts: Sequence[Prompt]) -> list[list[list[Any]]]:  # Any: as TaskRow.prompts
    return [[[b.kind[0], b.key, b.tokens] for b in p.blocks] for p in prompts]


def row_of(config: str, split: str, run: ScenarioRun, prompts: Sequence[Prompt], seconds: float,
           max_turns: int = MAX_TURNS) -> TaskRow:
    """The committed line for one judged run."""
    return TaskRow(config, split, run.scenario.id, run.scenario.kind, max_turns, run.success, run.tools_right,
                   task_failure(run), list(run.failures), run.result.stopped, [r.stopped for r in run.setup_results],
                   run.turns, [[n, a, ok] for n, a, ok in run.result.calls()], run.result.final_text[:400],
                   round(seconds, 2), _blocks(prompts))


def loop_options(config: str) -> dict[str, Any]:  # Any: the agent loop's keyword options
    """The agent loop's options for ``config``: its way of loading tools, and the loop guard when its name ends
    in :data:`GUARDED`; a one-sentence ValueError for a name that is neither."""
    base = config.removesuffix(GUARDED)
    strategies = loading_strategies()
    if base not in strategies:
        raise ValueError(f"No way of loading tools is called {config!r}; choose from: {', '.join(strategies)} "
                         f"(each may end in {GUARDED.strip()!r}).")
    return {**strategies[base], **({"answer_on_repeat": True} if base != config else {})}


async def task_row(provider: Provider, config: str, split: str, scenario: Scenario, max_turns: int = MAX_TURNS) -> TaskRow:
    """Run one scenario under one configuration, on a fresh demo world and a cold cache, and judge it."""
    started = time.perf_counter()
    (priced,) = await run_recorded(provider, fresh_demo_catalog, [scenario], **loop_options(config), max_turns=max_turns)
    return row_of(config, split, priced.run, priced.prompts, time.perf_counter() - started, max_turns)


def read_rows(path: str | Path | Traversable) -> list[TaskRow]:
    """The rows saved so far (none when the file is absent); a last line cut off mid-write is dropped."""
    return run_file.read_rows(path, TaskRow)


def load(path: str | Path | None = None) -> list[TaskRow]:
    """The committed rows (or those of ``path``)."""
    return read_rows(path if path is not None else resources.files("harness.data").joinpath(RESULTS_FILE))


def chosen(split: str, kinds: Sequence[str] | None = None, limit: int | None = None) -> list[Scenario]:
    """The scenarios of ``split`` a run takes: of ``kinds`` only (every kind when None), the first ``limit``."""
    return [s for s in load_scenarios(split) if kinds is None or s.kind in kinds][:limit]


async def run_tasks(provider: Provider, out: str | Path, configs: Sequence[str] = CONFIGS, *,
                    splits: Sequence[str] = SPLITS, kinds: Sequence[str] | None = None, limit: int | None = None,
                    log: Callable[[str], None] = print) -> int:
    """Run every scenario of every configuration not yet in ``out``; append each row as it finishes. Returns rows added.

    Split by split, each configuration in turn: a run cut short holds every configuration's development
    scenarios before any held-out one, so the comparison it allows is paired.

    Each scenario runs as :func:`task_row` runs it; ``kinds`` keeps only scenarios of those kinds (``task``: one
    request each, the cheapest), and ``limit`` runs only the first scenarios of each split (a smoke test).
    """
    for config in configs:
        loop_options(config)  # an unknown name fails before any run
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    run_file.trim_partial_line(out)
    done = {r.key for r in read_rows(out)}
    added = 0
    for split, config in ((split, config) for split in splits for config in configs):
        todo = [s for s in chosen(split, kinds, limit) if (config, split, s.id) not in done]
        if todo:
            log(f"{config}, {split}: {len(todo)} scenarios to run")
        for i, scenario in enumerate(todo, 1):
            row = await task_row(provider, config, split, scenario)
            run_file.append_row(out, row)
            added += 1
            log(f"{config}, {split}: {i}/{len(todo)} {scenario.id} {'ok' if row.success else row.failure} "
                f"({row.turns} turns, {row.stopped}) {row.seconds:.0f} s")
    return added


# --- reading the results -------------------------------------------------------------------------

@dataclass(frozen=True)
class TaskSummary:
    """One configuration's runs on one split: success with its 95 % interval, failures by class, stopping."""

    config: str
    split: str
    n: int
    success: float
    low: float
    high: float
    failures: dict[str, int]
    stopped: float  # share of the judged requests that ended before the turn limit (an answer, the guard's, a cut reply)
    repeated: float  # share of runs that made one call twice in a row, arguments and all
    turns: float
    seconds: float


def repeated_call(row: TaskRow) -> bool:
    """Whether the run made the same call (name and arguments) twice in a row: a result read as no progress."""
    return any(a[:2] == b[:2] for a, b in zip(row.calls, row.calls[1:]))


def answer_call(row: TaskRow) -> str | None:
    """The tool named by a final answer that is a call written as text (the chat template's call format,
    ``{"name": "…"``), else None: what the real model wrote when the loop guard asked it to answer with no
    tools shown."""
    opening = CALL_OPEN.removeprefix(CALL_TOKEN).lstrip()
    text = row.answer.lstrip().removeprefix(CALL_TOKEN).lstrip()
    return text[len(opening):].split('"', 1)[0] or None if text.startswith(opening) else None


def rows_of(rows: Sequence[TaskRow], config: str, split: str) -> list[TaskRow]:
    """``config``'s rows on ``split``, in scenario order."""
    return sorted((r for r in rows if r.config == config and r.split == split), key=lambda r: r.scenario)


def summarize(rows: Sequence[TaskRow], config: str, split: str) -> TaskSummary:
    """The table row for ``config`` on ``split``."""
    mine = rows_of(rows, config, split)
    if not mine:
        raise ValueError(f"There are no rows of {config!r} on {split!r}.")
    low, high = bootstrap_interval([float(r.success) for r in mine])
    counts = Counter(r.failure for r in mine if r.failure)
    return TaskSummary(config, split, len(mine), statistics.fmean(r.success for r in mine), low, high,
                       {k: counts.get(k, 0) for k in TASK_FAILURES}, statistics.fmean(r.stopped != "max_turns" for r in mine),
                       statistics.fmean(repeated_call(r) for r in mine), statistics.fmean(r.turns for r in mine),
                       statistics.fmean(r.seconds for r in mine))


def paired_success(rows_a: Sequence[TaskRow], a: str, rows_b: Sequence[TaskRow], b: str,
                   split: str) -> tuple[float, float, float]:
    """Success of ``a`` (in ``rows_a``) minus ``b`` (in ``rows_b``) over the scenarios both ran, with its paired
    95 % interval: two configurations of one model, or one configuration on the real model and the stand-in."""
    left = {r.scenario: float(r.success) for r in rows_of(rows_a, a, split)}
    right = {r.scenario: float(r.success) for r in rows_of(rows_b, b, split)}
    both = sorted(set(left) & set(right))
    if not both:
        raise ValueError(f"{a!r} and {b!r} share no scenario on {split!r}.")
    x, y = [left[s] for s in both], [right[s] for s in both]
    low, high = paired_difference_interval(x, y)
    return statistics.fmean(x) - statistics.fmean(y), low, high


async def stand_in_rows(configs: Sequence[str] = CONFIGS, splits: Sequence[str] = SPLITS) -> list[TaskRow]:
    """The offline stand-in's rows for the same scenarios, run the same way (it takes seconds): what the
    chapter shows beside the real model's."""
    from harness.providers.offline import OfflineModel

    return [await task_row(OfflineModel(), config, split, s) for split in splits for config in configs
            for s in load_scenarios(split)]


def complete(rows: Sequence[TaskRow], config: str, split: str, kind: str | None = None) -> bool:
    """Whether ``config`` has a row for every scenario of ``split`` (of ``kind``, if given): a partial run is
    not a random sample, but every scenario of one kind is a set fixed before any was run."""
    have = {r.scenario for r in rows if r.config == config and r.split == split}
    return all(s.id in have for s in load_scenarios(split) if kind is None or s.kind == kind)


def report(rows: Sequence[TaskRow]) -> str:
    """The table of what ``rows`` hold: success, failures by class, stopping, turns and seconds."""
    lines = [f"{'config':<30} {'split':<8} {'n':>3} {'success [95 %]':<19} {'stopped':>7} {'repeat':>6} {'turns':>5} {'s/run':>5}  failures"]
    for config in dict.fromkeys(r.config for r in rows):
        for split in SPLITS:
            if rows_of(rows, config, split):
                s = summarize(rows, config, split)
                failed = ", ".join(f"{k} {v}" for k, v in s.failures.items() if v)
                lines.append(f"{config:<30} {split:<8} {s.n:>3} {s.success:.2f} [{s.low:.2f}, {s.high:.2f}]     "
                             f"{s.stopped:>7.2f} {s.repeated:>6.2f} {s.turns:>5.1f} {s.seconds:>5.0f}  {failed}")
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    """The command line of :func:`main` (each run in :data:`COMMAND` is one of its invocations)."""
    parser = run_file.run_parser("Whole tasks on the local real model, judged on effects (Chapter 5c).",
                                 configs=list(CONFIGS), configs_help=f"ways of loading tools (default: {', '.join(CONFIGS)}); "
                                                                     f"a name ending in {GUARDED.strip()!r} runs with the loop guard",
                                 limit_help="scenarios per split (a smoke test)")
    parser.add_argument("--kinds", nargs="+", choices=SCENARIO_KINDS, default=None,
                        help="only scenarios of these kinds (default: every kind)")
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    exit_cleanly_on_sigterm()  # a stopped run removes its demo worlds' temp folders
    from harness.providers.base import ProviderError
    from harness.providers.local_llama import LocalLlamaProvider

    options = parser().parse_args(argv)
    if options.report:
        print(report(read_rows(options.out)))
        return
    started = time.perf_counter()

    def say(line: str) -> None:  # flushed at once: a background run's log shows its progress
        print(line, flush=True)

    async def run_all() -> int:
        # The server is closed inside the event loop: on SIGTERM the loop cancels this task, the server
        # stops, and the thread waiting on its answer returns, so asyncio's shutdown need not wait for it.
        with LocalLlamaProvider(threads=options.threads, max_tokens=MAX_TOKENS) as provider:
            return await run_tasks(provider, options.out, options.configs, splits=options.splits, kinds=options.kinds,
                                   limit=options.limit, log=say)

    try:
        added = asyncio.run(run_all())
    except (ProviderError, ValueError) as e:
        raise SystemExit(str(e)) from None
    print(f"{added} rows added to {options.out} in {time.perf_counter() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
