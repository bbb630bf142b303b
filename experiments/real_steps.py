"""Per-step tool choice on the real model: the cheap, primary evidence behind Chapters 3, 4 and 5.

Chapters 3 (tools per turn, transcript queries), 4 (the pinned discovery tool) and 5 (all tools,
per-turn top-k and deferred search on the MCP landscape) compare configurations end to end on the
offline stand-in. Here each comparison is asked of the real small model
(:mod:`workbook.providers.local_llama`) one step at a time: for every step of every development and
held-out scenario, the model gets the conversation so far done right
(:func:`workbook.evaluation.scenarios.oracle_steps`) and the tools the configuration would show at that step,
and may answer or call one shown tool (:meth:`~workbook.providers.local_llama.LocalLlamaProvider.next_step`).
After a scenario's last step it should answer: that row measures whether it stops. A step is one
short call, so the whole set is affordable where whole tasks are not, and the verdicts say where a
configuration fails (the tool was not shown, or the model chose wrong) rather than only that it did.

Verdicts (:func:`verdict`): ``right`` (the needed tool, shown and chosen), ``not shown``, ``wrong``
(another shown tool), ``answered`` (no call where one was needed), ``searched`` (the discovery or
search tool: the right move when the needed tool is not shown), and on the row after the last step
``stopped`` or ``kept calling``.

Why the shown tools are listed in catalog order, not rank order: consecutive prompts then share the
longest prefix, which llama.cpp's prompt cache (``cache_prompt``) does not read again; the set shown
is the configuration's. "Transcript, k = 10" is the k sweep's "k=10" row (the transcript query is the
loop's default) and "without discovery" is that row too, so neither is asked twice. Every tool of the
202-tool landscape does not fit: its schemas are about 45,000 tokens, more than the model's 32,768-token
context, so the landscape compares per-turn top-10 with deferred search only.

Rebuild (appends each row as it finishes, one JSON line, and resumes by skipping rows already there)::

    make real-model && .venv/bin/python -m experiments.real_steps --out experiments/data/real_model_steps.jsonl

Measured wall time: see :data:`WALL_TIME`.
"""
from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Sequence

from experiments import DATA
from harness.core.temp_folders import exit_cleanly_on_sigterm, owned_temp_dir
from experiments import run_file
from harness.selection.agent import DEFAULT_SYSTEM
from harness.selection.catalog import ToolCatalog
from workbook.demo import DemoWorld, demo_tools, load_scenarios
from workbook.demo.labels import Scenario
from harness.selection.discovery import SEARCH_TOOL_NAME, ToolSearch, discovery_tool
from harness.core.messages import Message, TextBlock, ToolCall, ToolResult, Transcript
from harness.selection.queries import DEFAULT_QUERY, QueryFn, query_from_recent, query_from_user_message
from harness.selection.ranking import Selector
from harness.core.rates import cluster_bootstrap_interval
from workbook.evaluation.scenarios import oracle_steps
from harness.core.tools import Tool

if TYPE_CHECKING:
    from importlib.abc import Traversable  # importlib.resources.abc from Python 3.11 on

    from workbook.providers.local_llama import LocalLlamaProvider, StepChoice

RESULTS_FILE = "real_model_steps.jsonl"
#: The committed rows of each model, by its key in :data:`workbook.providers.local_llama.MODELS` (every row names its model).
RESULTS_FILES = {"0.5b": RESULTS_FILE, "1.5b": "real_model_steps_1.5b.jsonl"}
COMMAND = "make real-model && .venv/bin/python -m experiments.real_steps --out experiments/data/real_model_steps.jsonl"
#: Measured on the shared 2-core machine the committed file was made on, beside five other sessions.
WALL_TIME = ("k=10: 223 rows in about an hour of wall time (17 s a row on average, median 12 s: the prompt is read "
             "at 40-80 tokens/s, and only the part after the longest prefix shared with the previous prompt); "
             "k=3 and k=5: 223 rows each in about 31 and 38 minutes (8 and 10 s a row, one llama.cpp thread beside eight "
             "other jobs); k=20: 223 rows in 82 minutes of the rows' own seconds (22 s a row on average, median 19 s: twenty "
             "tools' schemas are read wherever the list changes), its last 141 in 37 minutes of wall time on two threads; "
             "discovery, k=10: 153 rows in 20 minutes of wall time on two threads (8 s a row: ten tools and the short "
             "discovery tool, the list shared across a scenario's steps); the 2,103 rows of every configuration are a run of many hours at that pace, resumed where it stopped")
SPLITS = ("dev", "heldout")
DISCOVERY_NAMES = frozenset({"list_available_tools", SEARCH_TOOL_NAME})
#: What a configuration shows for the conversation so far, built over one catalog.
ShowFn = Callable[[Transcript], list[Tool]]


@dataclass(frozen=True)
class Config:
    """One way of choosing the tools shown: its name, the comparison it belongs to, and its catalog."""

    name: str
    group: str
    make: Callable[[ToolCatalog], ShowFn]
    landscape: bool = False
    finals: bool = True  # also ask, after each scenario's last step, whether the model stops


def in_catalog_order(catalog: ToolCatalog, chosen: Iterable[Tool]) -> list[Tool]:
    """The chosen tools in the catalog's order (a stable prompt prefix for the cache)."""
    names = {t.name for t in chosen}
    return [t for t in catalog.tools if t.name in names]


def top_k(k: int | None, query_fn: QueryFn = DEFAULT_QUERY, discovery: bool = False) -> Callable[[ToolCatalog], ShowFn]:
    """BM25's top ``k`` for the query (every tool when None), after the pinned discovery tool if asked."""
    def make(catalog: ToolCatalog) -> ShowFn:
        pinned = [discovery_tool(catalog)] if discovery else []
        selector = Selector.over(catalog, k=k)
        if k is None:
            return lambda transcript: pinned + list(catalog.tools)
        return lambda transcript: pinned + in_catalog_order(catalog, selector.select(query_fn(transcript)))
    return make


def deferred_search(catalog: ToolCatalog) -> ShowFn:
    """Every tool deferred behind ``search_tools``; the tools earlier steps called are loaded (found, kept)."""
    search = ToolSearch([], catalog.tools)

    def show(transcript: Transcript) -> list[Tool]:
        called = dict.fromkeys(c.name for c in transcript.tool_calls())
        return [catalog.get(n) for n in called if n in catalog] + [search.tool]
    return show


CONFIGS: tuple[Config, ...] = (
    Config("k=10", "k sweep", top_k(10)),
    Config("all 74", "k sweep", top_k(None)),
    Config("k=3", "k sweep", top_k(3)),
    Config("k=5", "k sweep", top_k(5)),
    Config("k=20", "k sweep", top_k(20)),
    Config("latest message, k=10", "queries", top_k(10, query_from_user_message), finals=False),
    Config("latest message + recent turns, k=10", "queries", top_k(10, query_from_recent), finals=False),
    Config("discovery, k=10", "discovery", top_k(10, discovery=True), finals=False),
    Config("discovery + latest message, k=10", "discovery", top_k(10, query_from_user_message, discovery=True), finals=False),
    Config("landscape: per-turn top-10", "landscape", top_k(10), landscape=True, finals=False),
    Config("landscape: deferred search", "landscape", deferred_search, landscape=True),
)
"""In the order they are run: the most important comparisons finish first (the k sweep's default and
its two ends before the middle; every tool shown is also cheap, its tools block being read once).
Whether the model stops is asked in the k sweep (as the tools shown grow) and under deferred search;
the other configurations change only which tools are shown at a step, and a step costs half a minute
on this machine's two busy cores."""


@dataclass(frozen=True)
class Case:
    """One question for the model: a scenario's conversation before a step (``needed`` None: after the last)."""

    split: str
    scenario: str
    kind: str
    step: int
    needed: str | None
    transcript: Transcript


def final_transcript(scenario: Scenario, steps: Sequence[tuple[Transcript, str]], catalog: ToolCatalog) -> Transcript:
    """The conversation after the scenario's last step, done right: where the model should answer."""
    if not steps:  # no tool needed (a greeting): the setup turns answered, then the request
        t = Transcript()
        for request in getattr(scenario, "setup", ()):
            t.add_user(request)
            t.append(Message("assistant", [TextBlock("Done.")]))
        t.add_user(scenario.request)
        return t
    before, name = steps[-1]
    call_id = f"oracle_{len(steps) - 1}"  # the id oracle_steps gives the next call
    t = Transcript(list(before.messages))
    t.append(Message("assistant", [ToolCall(call_id, name, {p: "…" for p in catalog.get(name).required})]))
    t.append(Message("user", [ToolResult(call_id, "ok")]))
    return t


def cases(catalog: ToolCatalog, splits: Sequence[str] = SPLITS) -> list[Case]:
    """Every step of every scenario of ``splits``, then the row after its last step, scenario by scenario."""
    out = []
    for split in splits:
        for s in load_scenarios(split):
            steps = oracle_steps(s, catalog)
            out += [Case(split, s.id, s.kind, i, needed, t) for i, (t, needed) in enumerate(steps)]
            out.append(Case(split, s.id, s.kind, len(steps), None, final_transcript(s, steps, catalog)))
    return out


def verdict(needed: str | None, shown: Sequence[str], choice: str | None) -> str:
    """What the model's choice at a step means (see the module docstring)."""
    if needed is None:
        return "stopped" if choice is None else "kept calling"
    if choice is None:
        return "answered"
    if choice in DISCOVERY_NAMES:
        return "searched"
    if needed not in shown:
        return "not shown"
    return "right" if choice == needed else "wrong"


@dataclass(frozen=True)
class StepRow:
    """One committed line: the configuration, the step, what was shown, what the model did, and its cost."""

    config: str
    group: str
    split: str
    scenario: str
    kind: str
    step: int
    needed: str | None
    shown: list[str]
    needed_shown: bool | None
    choice: str | None
    verdict: str
    margin: float | None  # log-probability gap over the best rival shown tool, where they part
    rival: str | None
    call_margin: float | None  # log P(best first token opening a call) − log P(best other first token)
    start: str  # what the model wrote freely before the call-or-answer decision
    prompt_tokens: int
    seconds: float
    model: str = ""  # the model's label; "" on rows written before rows named it (the 0.5B's)
    model_sha256: str = ""

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.config, self.scenario, self.step)


def ask(provider: "LocalLlamaProvider | StandInSteps", config: Config, case: Case, tools: Sequence[Tool], system: str = DEFAULT_SYSTEM) -> StepRow:
    """Ask the model one case with ``tools`` shown and record what it did."""
    shown = [t.name for t in tools]
    started = time.perf_counter()
    step = provider.next_step(system, case.transcript, tools)
    seconds = round(time.perf_counter() - started, 2)
    choice = step.choice
    margin = None if choice is None or choice.margin is None else round(choice.margin, 3)
    call_margin = None if step.call_margin is None else round(step.call_margin, 3)
    return StepRow(config.name, config.group, case.split, case.scenario, case.kind, case.step, case.needed, shown,
                   None if case.needed is None else case.needed in shown, step.tool, verdict(case.needed, shown, step.tool),
                   margin, choice.rival if choice else None, call_margin, step.start, step.prompt_tokens, seconds,
                   getattr(provider, "model", ""), getattr(provider, "sha256", ""))


def read_rows(path: str | Path | Traversable) -> list[StepRow]:
    """The rows saved so far (none when the file is absent); a last line cut off mid-write is dropped."""
    return run_file.read_rows(path, StepRow)


def prompt_order(catalog: ToolCatalog, case: Case, tools: Sequence[Tool]) -> tuple:
    """Sort key asking cases whose prompts share the longest prefix one after another.

    The tools come before the conversation in the model's prompt, so cases are sorted by the shown
    tools' catalog positions (a trie's order: neighbours share their leading tools), then by scenario
    and step (neighbours share the conversation too). llama.cpp then reads again only what differs.
    Steps come before the rows after a scenario's last step, so a configuration cut short has its steps.
    """
    position = {t.name: i for i, t in enumerate(catalog.tools)}
    return (case.needed is None, tuple(position.get(t.name, -1) for t in tools), case.split, case.scenario, case.step)


def run_steps(provider: "LocalLlamaProvider | StandInSteps", out: str | Path, configs: Sequence[Config] = CONFIGS, *,
              catalog_for: Callable[[Config], ToolCatalog], splits: Sequence[str] = SPLITS,
              limit: int | None = None, log: Callable[[str], None] = print) -> int:
    """Ask every case of every configuration not yet in ``out``; append each row as it finishes. Returns rows added.

    Configurations run in the order given; within one, cases run in :func:`prompt_order` (so a
    configuration cut short holds a sample ordered by tools shown, not by scenario).
    ``catalog_for`` gives a configuration's catalog (the demo tools, or Chapter 5's landscape);
    ``limit`` asks only the first cases of each configuration (a smoke test).
    """
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    run_file.trim_partial_line(out)
    done = {r.key for r in read_rows(out)}
    added = 0
    for config in configs:
        catalog = catalog_for(config)
        show = config.make(catalog)
        todo = [(c, show(c.transcript)) for c in cases(catalog, splits)[:limit]
                if (config.name, c.scenario, c.step) not in done and (config.finals or c.needed is not None)]
        todo.sort(key=lambda item: prompt_order(catalog, *item))
        if todo:
            log(f"{config.name}: {len(todo)} cases to ask")
        started = time.perf_counter()
        for i, (case, tools) in enumerate(todo, 1):
            row = ask(provider, config, case, tools)
            run_file.append_row(out, row)
            added += 1
            if i % 25 == 0 or i == len(todo):
                log(f"{config.name}: {i}/{len(todo)} in {time.perf_counter() - started:.0f} s")
    return added


# --- reading the results -------------------------------------------------------------------------

STEP_VERDICTS = ("right", "not shown", "wrong", "answered", "searched")


Score = Callable[["StepRow"], float]
StepKey = tuple[str, str, int]  # (split, scenario, step)


def is_right(row: StepRow) -> float:
    """The needed tool was shown and called: the per-step score every rate here counts."""
    return float(row.verdict == "right")


def scenario_interval(values: dict[StepKey, float]) -> tuple[float, float]:
    """The 95 % interval of the mean of per-step values, resampling scenarios (one interval for one rate, everywhere).

    A scenario's steps share one conversation, so they are not independent draws: the scenarios are.
    """
    groups: dict[tuple[str, str], list[float]] = {}
    for (split, scenario, _), v in sorted(values.items()):
        groups.setdefault((split, scenario), []).append(v)
    return cluster_bootstrap_interval(list(groups.values()))


def step_scores(rows: Sequence[StepRow], config: str, split: str | None = None,
                score: Score = is_right) -> dict[StepKey, float]:
    """``config``'s score per step of ``split`` (both splits when None), for steps whose needed tool exists."""
    return {(r.split, r.scenario, r.step): score(r) for r in rows
            if r.config == config and r.needed is not None and (split is None or r.split == split)}


@dataclass(frozen=True)
class ConfigSummary:
    """One configuration's per-step numbers: right-tool rate with a 95 % interval that resamples scenarios."""

    config: str
    steps: int
    right: float
    low: float
    high: float
    verdicts: dict[str, int]
    stops: int  # rows after a scenario's last step where the model, shown tools, answered
    finals: int  # such rows asked with at least one tool shown (with none, there is nothing to call)
    seconds: float  # mean seconds per row


def summarize(rows: Sequence[StepRow], config: str, split: str | None = None) -> ConfigSummary:
    """The right-tool rate over ``config``'s step rows (of ``split`` when given), its verdicts and stops."""
    mine = [r for r in rows if r.config == config and (split is None or r.split == split)]
    steps = [r for r in mine if r.needed is not None]
    finals = [r for r in mine if r.needed is None and r.shown]
    if not steps:
        raise ValueError(f"No step rows for {config!r}{' on ' + split if split else ''} yet.")
    right = step_scores(rows, config, split)
    low, high = scenario_interval(right)
    counts = {v: sum(r.verdict == v for r in steps) for v in STEP_VERDICTS}
    return ConfigSummary(config, len(steps), statistics.fmean(right.values()), low, high, counts,
                         sum(r.verdict == "stopped" for r in finals), len(finals),
                         statistics.fmean(r.seconds for r in mine))


@dataclass(frozen=True)
class PairedRight:
    """Score of configuration a minus b over the steps both were asked, with a paired 95 % interval over scenarios."""

    a: str
    b: str
    steps: int
    value: float
    low: float
    high: float

    @property
    def separated(self) -> bool:
        return self.low > 0 or self.high < 0


def paired_right(rows: Sequence[StepRow], a: str, b: str, split: str | None = None,
                 score: Score = is_right) -> PairedRight | None:
    """a − b on the same steps (scenario, step): the comparison a chapter may call; None when no step pairs.

    Pairing is what tells two configurations apart on a few hundred steps: each step's difficulty cancels.
    """
    ra, rb = step_scores(rows, a, split, score), step_scores(rows, b, split, score)
    diffs = {k: ra[k] - rb[k] for k in sorted(ra.keys() & rb.keys())}
    if not diffs:
        return None
    low, high = scenario_interval(diffs)
    return PairedRight(a, b, len(diffs), statistics.fmean(diffs.values()), low, high)


def report(rows: Sequence[StepRow]) -> str:
    """A table: per configuration and split, steps asked, right-tool rate [95 %], verdicts, stops, seconds per row."""
    lines = [f"{'configuration':<36} {'split':<8} {'steps':>5} {'right [95 %]':>19}  "
             f"{'not shown':>9} {'wrong':>5} {'answered':>8} {'searched':>8}  {'stopped':>8} {'s/row':>6}"]
    for config in dict.fromkeys(r.config for r in rows):
        for split in (*SPLITS, None):
            try:
                s = summarize(rows, config, split)
            except ValueError:
                continue
            v = s.verdicts
            lines.append(f"{config:<36} {split or 'both':<8} {s.steps:>5} {s.right:>5.2f} [{s.low:.2f}, {s.high:.2f}]  "
                         f"{v['not shown']:>9} {v['wrong']:>5} {v['answered']:>8} {v['searched']:>8}  "
                         f"{s.stops:>3}/{s.finals:<4} {s.seconds:>6.1f}")
    return "\n".join(lines)


@dataclass(frozen=True)
class StepHabits:
    """A configuration's first steps against its later ones, the conversation so far done right (Chapter 5c)."""

    first_right: int
    first: int
    later_right: int
    later_repeated: int  # called the previous step's tool again
    later: int


def step_habits(rows: Sequence[StepRow], config: str, split: str, kind: str = "task") -> StepHabits:
    """How often the model is right at a scenario's first step, and at later steps right or back on the
    previous step's tool: whole runs that repeat one call start here."""
    mine = {(r.scenario, r.step): r for r in rows
            if r.config == config and r.split == split and r.kind == kind and r.needed is not None}
    first = [r for (_, step), r in mine.items() if step == 0]
    later = [(r, mine.get((scenario, step - 1))) for (scenario, step), r in mine.items() if step > 0]
    return StepHabits(sum(r.verdict == "right" for r in first), len(first), sum(r.verdict == "right" for r, _ in later),
                      sum(before is not None and r.choice == before.needed for r, before in later), len(later))


def load(path: str | Path | None = None, model: str = "0.5b") -> list[StepRow]:
    """The committed rows of ``model`` (or those of ``path``)."""
    return read_rows(path or DATA.joinpath(RESULTS_FILES[model]))


class StandInSteps:
    """The offline stand-in asked one step at a time, as the real model is: its first call, or None when it answers.

    Chapter 3 puts its per-step rates beside the real model's; it has no margins (it does not score tokens).
    Its rows name it (``model``, a label as the real model's) with no file, so no sha256.
    """

    def __init__(self) -> None:
        from workbook.providers.offline import OfflineModel
        self.stand_in = OfflineModel()
        self.model = self.stand_in.name

    def next_step(self, system: str, transcript: Transcript, tools: Sequence[Tool]) -> "StepChoice":
        from workbook.providers.local_llama import StepChoice
        calls = self.stand_in.respond(transcript, tools).tool_calls
        return StepChoice(calls[0].name if calls else None, None, "", None, 0)


def stand_in_rows(names: Sequence[str], splits: Sequence[str] = SPLITS) -> list[StepRow]:
    """The stand-in's rows for the configurations ``names`` over the demo tools (seconds, not hours)."""
    chosen = [c for c in CONFIGS if c.name in names and not c.landscape]
    with catalogs(lambda line: None) as catalog_for, owned_temp_dir("stand-in-steps-") as scratch:
        out = Path(scratch) / RESULTS_FILE
        run_steps(StandInSteps(), out, chosen, catalog_for=catalog_for, splits=splits, log=lambda line: None)
        return read_rows(out)


# --- the catalogs --------------------------------------------------------------------------------

def landscape_tools(folder: Path) -> tuple[list[Tool], list[str]]:
    """Chapter 5's third-party MCP tools (every landscape server but the workbook's own), and what was skipped.

    The servers run only while their tools are listed; the definitions are all a step needs.
    """
    from harness.mcp import MCPHub
    from workbook.landscape import landscape_config
    from workbook.servers import WORKBOOK_SERVERS

    land = landscape_config(folder / "landscape")

    async def listed() -> list[Tool]:
        async with MCPHub(land.config, log_dir=folder / "logs") as hub:
            return [t for t in hub.tools.values() if t.server not in WORKBOOK_SERVERS]
    return asyncio.run(listed()), land.skipped


@contextlib.contextmanager
def catalogs(log: Callable[[str], None] = print) -> Iterator[Callable[[Config], ToolCatalog]]:
    """A function giving each configuration its catalog, over one demo world; the landscape is listed once, when first asked."""
    with DemoWorld() as world, owned_temp_dir("real-steps-") as scratch:
        demo = ToolCatalog(demo_tools(world))
        landscape: list[ToolCatalog] = []

        def catalog_for(config: Config) -> ToolCatalog:
            if not config.landscape:
                return demo
            if not landscape:
                third_party, skipped = landscape_tools(Path(scratch))
                for sentence in skipped:
                    log(sentence)
                landscape.append(ToolCatalog(list(demo.tools) + third_party))
                log(f"landscape: {len(demo.tools)} demo tools + {len(third_party)} third-party MCP tools")
            return landscape[0]
        yield catalog_for


def main(argv: Sequence[str] | None = None) -> None:
    exit_cleanly_on_sigterm()  # a stopped run removes its temp folders
    from harness.providers.base import ProviderError
    from workbook.providers.local_llama import LocalLlamaProvider

    from workbook.providers.local_llama import DEFAULT_MODEL, MODELS

    parser = run_file.run_parser("Per-step tool choice on the local real model (Chapters 3-5).", configs=None,
                                 configs_help="configuration names or groups (default: all, in order)",
                                 limit_help="cases per configuration (a smoke test)")
    parser.add_argument("--model", choices=list(MODELS), default=DEFAULT_MODEL, help="which installed model answers")
    options = parser.parse_args(argv)
    if options.report:
        print(report(read_rows(options.out)))
        return
    wanted = options.configs
    configs = [c for c in CONFIGS if wanted is None or c.name in wanted or c.group in wanted]
    if not configs:
        raise SystemExit(f"No configuration is called {' or '.join(wanted)}; choose from: {', '.join(c.name for c in CONFIGS)}.")
    started = time.perf_counter()

    def say(line: str) -> None:  # flushed at once: a background run's log shows its progress
        print(line, flush=True)

    try:
        with LocalLlamaProvider(model=options.model, threads=options.threads) as provider, catalogs(say) as catalog_for:
            added = run_steps(provider, options.out, configs, catalog_for=catalog_for, splits=options.splits,
                              limit=options.limit, log=say)
    except ProviderError as e:
        raise SystemExit(str(e)) from None
    print(f"{added} rows added to {options.out} in {time.perf_counter() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
