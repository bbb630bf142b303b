"""Running multi-step scenarios and scoring them: per-step recall and task success.

Introduced in Chapter 3 (``notebooks/03_transcript_queries.ipynb``); Chapter 4 and the
exercises on ``tools_per_turn``, pinning and query strategies reuse it.

Two measurements, kept apart on purpose:

* **per-step recall** isolates retrieval: replay the scenario as if every earlier step had gone
  right (an "oracle" transcript), derive the query, and ask whether the tool the next step needs
  is among those selected. No model is involved, so the number belongs to the query strategy.
* **task success** runs the whole loop with a model and checks the demo world afterwards: is it
  in the state the request asked for (:mod:`workbook.demo.effects`)? That mixes retrieval with the
  model's own choices. Beside it, ``tools_right`` keeps the old judgement — the needed tools called
  successfully, in order — so a chapter can show where "right tools" and "right effect" differ.

What an opener with no task (``hi``, ``what can you do?``) is judged on, decided here: it must
change nothing in the world and give an answer; a capability question's answer must offer at
least three of the world's domains (by a tool name or a plain word: files, git, chat, …, in a
clause that is not a refusal; a model's stock list of skills — "web development", "data analysis"
— names none). An opener that needs a look (the calendar, the inbox) is answered
only with what a tool of the run showed (:mod:`workbook.demo.effects` grounds answers). The old
rule — the answer names at least three tools — grew next to the stand-in, which lists tool names,
and survives only in ``tools_right``. Openers therefore say little about selection; chapters
report them apart from tasks.

Scenario sets (:func:`workbook.demo.load_scenarios`): ``"dev"`` is what choices are made on,
``"heldout"`` was written afterwards and is only reported.
"""
from __future__ import annotations

import contextlib
import json
import statistics
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from harness.selection.agent import RunResult, arun, as_selector

from harness.selection.discovery import Deferral
from harness.selection.catalog import ToolCatalog
from workbook.demo import DemoWorld, demo_tools, world_of
from workbook.demo.labels import Scenario
from workbook.demo.effects import Served, failed_checks
from harness.core.json_types import JSONObject
from harness.core.messages import Message, TextBlock, ToolCall, ToolResult, Transcript
from harness.selection.queries import QueryFn
from harness.selection.ranking import DEFAULT_K, Selector
from harness.core.rates import bootstrap_interval
from harness.core.tokens import count_text
from harness.providers.base import Provider

Tools = Selector | ToolCatalog  # what the loop selects from: a selector, or a catalog with Chapter 2's defaults


def oracle_steps(scenario: Scenario, catalog: Tools) -> list[tuple[Transcript, str]]:
    """For each step: the transcript just before it (earlier steps done right) and the tool it needs.

    Earlier calls carry their required argument *keys* (values are placeholders): that is all a
    transcript query reads of a call. A conversation's earlier turns are steps too when their
    tools are labelled (``setup_tools``); other setup requests are replayed as answered ("Done.").
    """
    out: list[tuple[Transcript, str]] = []
    t = Transcript()
    labelled = getattr(scenario, "setup_tools", ()) or [None] * len(getattr(scenario, "setup", ()))
    turns = [*zip(getattr(scenario, "setup", ()), labelled), (scenario.request, scenario.tools)]
    n = 0
    for i, (request, tools) in enumerate(turns):
        t.add_user(request)
        if tools is None:
            t.append(Message("assistant", [TextBlock("Done.")]))
            continue
        for name in tools:
            out.append((Transcript(list(t.messages)), name))
            args = {p: "…" for p in catalog.get(name).required}
            t.append(Message("assistant", [ToolCall(f"oracle_{n}", name, args)]))
            t.append(Message("user", [ToolResult(f"oracle_{n}", "ok")]))
            n += 1
        if i < len(turns) - 1:
            t.append(Message("assistant", [TextBlock("Done.")]))
    return out


def per_step_hits(catalog: Tools, scenarios: Iterable[Scenario], query_fn: QueryFn, k: int = DEFAULT_K) -> list[bool]:
    """For every step of every scenario: is its needed tool among the ``k`` selected for that step's query?"""
    selector = as_selector(catalog)
    return [needed in {t.name for t in selector.select(query_fn(t), k)}
            for s in scenarios for t, needed in oracle_steps(s, catalog)]


def per_step_recall(catalog: Tools, scenarios: Iterable[Scenario], query_fn: QueryFn, k: int = DEFAULT_K) -> float:
    """Share of steps whose needed tool is among the ``k`` tools selected for that step's query."""
    hits = per_step_hits(catalog, scenarios, query_fn, k)
    if not hits:
        raise ValueError("No scenario steps to measure: every scenario given has an empty tool list.")
    return statistics.fmean(hits)


#: How close to the best success the knee must be: Chapter 3's rule, and the real model's k rule.
KNEE_TOLERANCE = 0.05


def knee(success: Mapping[int, float], tolerance: float = KNEE_TOLERANCE) -> int:
    """The smallest ``k`` whose success is within ``tolerance`` of the best success measured.

    Chapter 3's rule for the default number of tools per turn, applied to the development
    scenarios only: beyond it, more tools cost schema tokens on every turn and buy (almost) nothing.
    """
    if not success:
        raise ValueError("There are no measured settings to choose from.")
    best = max(success.values())
    return min(k for k, rate in success.items() if rate >= best - tolerance - 1e-12)


@dataclass
class ScenarioRun:
    """One scenario's run, judged two ways.

    ``success``: the world is in the right state afterwards (the scenario's ``checks``; ``failures``
    says which did not hold). ``tools_right``: the old judgement, the needed tools called
    successfully in order — kept so chapters can show where the two differ.
    """

    scenario: Scenario
    result: RunResult
    success: bool
    tools_right: bool = False
    failures: tuple[str, ...] = ()
    setup_results: tuple[RunResult, ...] = ()

    @property
    def turns(self) -> int:
        return len(self.result.turns)

    @property
    def schema_tokens(self) -> int:
        """Tool-schema tokens sent over the whole run (every turn pays again)."""
        return sum(ev.snapshot.tool_tokens for ev in self.result.turns)

    @property
    def failed_calls(self) -> int:
        """Tool calls that came back as errors (a wrong tool, bad arguments, a tool not loaded)."""
        return sum(1 for _, _, ok in self.result.calls() if not ok)

    @property
    def discovery_tokens(self) -> int:
        """Tokens of what discovery tools returned (a listing is paid for in the transcript)."""
        total = 0
        for ev in self.result.turns:
            found = {t.name for t in ev.tools if "discovery" in t.tags}
            total += sum(count_text(r.content) for c, r in zip(ev.response.tool_calls, ev.results) if c.name in found)
        return total


def in_order(needed: Sequence[str], called: Sequence[str]) -> bool:
    """True when ``needed`` appears in ``called`` as a subsequence (other calls may come between)."""
    it = iter(called)
    return all(any(c == n for c in it) for n in needed)


def tools_right(scenario: Scenario, result: RunResult, catalog: Tools) -> bool:
    """The old judgement, on names: the needed tools called successfully, in order.

    An opener with no tools: the answer names at least three real tools. That rule grew next to
    the stand-in (which lists tool names when it has nothing to do); it is kept only as the
    "right tools" column beside effects-judged success, never as success itself.
    """
    if scenario.tools:
        return in_order(scenario.tools, result.succeeded())
    named = [t.name for t in as_selector(catalog).tools if t.name in result.final_text]
    return len(named) >= 3


def served(results: Iterable[RunResult]) -> list[Served]:
    """Every tool call of ``results`` in order, as (tool, arguments, result, worked) texts: what the run was
    shown, and what it gave to tools itself (the judge grounds an answer's values in the first, never the second)."""
    out: list[Served] = []
    for r in results:
        for ev in r.turns:
            done = {x.tool_use_id: x for x in ev.results}
            for c in ev.response.tool_calls:
                result = done.get(c.id)
                out.append((c.name, json.dumps(c.input, ensure_ascii=False), result.content if result else "",
                            result is not None and not result.is_error))
    return out


def labelled_calls(scenario: Scenario) -> list[tuple[str, JSONObject]]:
    """The calls that do the scenario's (last) request, as labelled: its ``tools`` with their ``args``."""
    return list(zip(scenario.tools, scenario.args))


def sources(scenario: Scenario) -> set[str]:
    """The tools whose results may ground what the user is told: the request's labelled tools and those of
    a conversation's earlier turns."""
    return {*scenario.tools, *(t for turn in getattr(scenario, "setup_tools", ()) for t in turn)}


def judge(scenario: Scenario, result: RunResult, catalog: Tools, *, world: DemoWorld | None = None,
          start: DemoWorld | None = None, answer: str | None = None, shown: Sequence[Served] | None = None) -> bool:
    """Did the run do what the scenario asked, and nothing else? Judged on the world's state afterwards.

    ``world`` is the demo world the tools act on (found from ``catalog``'s tools when None);
    ``start`` a copy of it as the judged request found it (a fresh world when None); ``answer`` what
    the user was told (the run's final text when None); ``shown`` the run's calls (``result``'s when
    None). A scenario without ``checks`` (a hand-made one over tools that are not the demo world's)
    falls back to :func:`tools_right`.
    """
    return not judgement(scenario, result, catalog, world=world, start=start, answer=answer, shown=shown)[1]


def judgement(scenario: Scenario, result: RunResult, catalog: Tools, *, world: DemoWorld | None = None,
              start: DemoWorld | None = None, answer: str | None = None,
              shown: Sequence[Served] | None = None) -> tuple[bool, tuple[str, ...]]:
    """``(tools_right, failures)``: the names-in-order judgement and why the effects fall short
    (:func:`workbook.demo.effects.failed_checks`: the world against the labelled calls' world, and the checks)."""
    names = tools_right(scenario, result, catalog)
    checks = getattr(scenario, "checks", ())
    if not checks:
        return names, () if names else ("no checks on the world: judged on names, and the names are wrong",)
    world = world if world is not None else world_of(as_selector(catalog).tools)
    if world is None:
        raise ValueError(f"Scenario {scenario.id!r} is judged on the demo world's state, but none of its tools "
                         "acts on a DemoWorld; build the catalog from workbook.demo.demo_tools(world).")
    said = result.final_text if answer is None else answer
    calls = served([result]) if shown is None else shown
    with (DemoWorld() if start is None else contextlib.nullcontext(start)) as first:
        return names, tuple(failed_checks(checks, world, first, labelled_calls(scenario), said, calls, sources(scenario)))


async def run_scenario(provider: Provider, selector: Tools, scenario: Scenario, *, world: DemoWorld | None = None,
                       **loop: Any) -> ScenarioRun:  # Any: keyword options forwarded unchanged to the agent loop
    """Run a scenario's setup requests, then its request, through :func:`harness.selection.agent.arun`.

    ``loop`` is passed to ``arun`` (``deferral``, ``query_fn``, ``max_turns`` …). Names are
    judged on the last request's run; effects on the world (``world``: the demo world the tools
    act on, found from ``selector``'s tools when None) — the user was told, and shown, every
    run's output. A conversation's earlier turns are part of its task (their tools are labelled),
    so its world is judged from before the first; a pivot's earlier requests are its past
    (unlabelled), so its world is judged from where they left it.
    """
    world = world if world is not None else world_of(as_selector(selector).tools)
    part_of_task = bool(getattr(scenario, "setup_tools", ()))
    start = world.clone() if world is not None and part_of_task else None
    try:
        transcript = Transcript()
        setup = []
        for earlier in getattr(scenario, "setup", ()):
            setup.append(await arun(provider, selector, earlier, transcript=transcript, **loop))
        if world is not None and not part_of_task:
            start = world.clone()
        result = await arun(provider, selector, scenario.request, transcript=transcript, **loop)
        answer = "\n".join(r.final_text for r in (*setup, result))
        names, failures = judgement(scenario, result, selector, world=world, start=start, answer=answer,
                                    shown=served([*setup, result]))
    finally:
        if start is not None:
            start.close()
    success = names if not getattr(scenario, "checks", ()) else not failures
    return ScenarioRun(scenario, result, success, names, failures, tuple(setup))


def fresh_demo_catalog() -> ToolCatalog:
    """A catalog over a new demo world: what each scenario runs against, so no run sees another's writes."""
    return ToolCatalog(demo_tools())


async def run_scenarios(
    provider: Provider,
    make_catalog: Callable[[], ToolCatalog],
    scenarios: Iterable[Scenario],
    *,
    selector: Callable[[ToolCatalog], Selector] | None = None,
    deferral: Callable[[ToolCatalog], Deferral] | None = None,
    **loop: Any,  # Any: keyword options forwarded unchanged to the agent loop
) -> list[ScenarioRun]:
    """Run each scenario on a fresh catalog (a fresh world: one scenario's writes never leak into the next).

    ``selector`` builds the selector over that catalog (a ranker, pins such as a discovery tool
    over it, ``k``; Chapter 2's BM25 and :data:`harness.selection.ranking.DEFAULT_K` tools when omitted);
    ``deferral`` builds the tools loaded during a run (a search's ``extra_tools`` and ``on_finish``).
    Each run is judged on the catalog's world.
    """
    runs = []
    for s in scenarios:
        catalog = make_catalog()
        extra = {"deferral": deferral(catalog)} if deferral else {}
        runs.append(await run_scenario(provider, selector(catalog) if selector else catalog, s,
                                       world=world_of(catalog.tools), **extra, **loop))
    return runs


def success_rate(runs: Sequence[ScenarioRun]) -> float:
    """Share of runs whose effects hold."""
    return statistics.fmean(r.success for r in runs) if runs else 0.0


def tools_right_rate(runs: Sequence[ScenarioRun]) -> float:
    """Share of runs that called the right tools in order (the old judgement)."""
    return statistics.fmean(r.tools_right for r in runs) if runs else 0.0


@dataclass(frozen=True)
class RunsSummary:
    """Task success (effects) and right tools (names), each with a 95 % bootstrap interval over
    scenarios, and the cost of getting there."""

    n: int
    success: float
    low: float
    high: float
    turns: float  # mean turns of the judged request
    schema_tokens: float  # mean tool-schema tokens sent per scenario
    failed_calls: float  # mean tool calls per scenario that came back as errors
    tools_right: float = 0.0  # share with the needed tools called in order
    tools_low: float = 0.0
    tools_high: float = 0.0

    def row(self) -> str:
        """One table row: n, success [interval], right tools [interval], turns, schema tokens."""
        return (f"{self.n:>3} {self.success:>5.2f} [{self.low:.2f}, {self.high:.2f}] "
                f"{self.tools_right:>5.2f} [{self.tools_low:.2f}, {self.tools_high:.2f}] "
                f"{self.turns:>5.1f} {self.schema_tokens:>8,.0f}")


def summarize(runs: Sequence[ScenarioRun]) -> RunsSummary:
    """The numbers a table of end-to-end runs shows, one row per configuration."""
    if not runs:
        raise ValueError("There are no runs to summarize.")
    low, high = bootstrap_interval([float(r.success) for r in runs])
    t_low, t_high = bootstrap_interval([float(r.tools_right) for r in runs])
    return RunsSummary(len(runs), success_rate(runs), low, high, statistics.fmean(r.turns for r in runs),
                       statistics.fmean(r.schema_tokens for r in runs), statistics.fmean(r.failed_calls for r in runs),
                       tools_right_rate(runs), t_low, t_high)


def narrated_steps(task: str, steps: Sequence[str]) -> list[Transcript]:
    """The transcript before each step of a task whose assistant narrates its plan as it works.

    Used where steps are known but the tool each step used is not (LiveMCPBench's annotations):
    after step *j* the assistant says "Done: <step j>. Next: <step j+1>", so before step *i* the
    latest assistant text announces step *i* — a stated assumption about the model's habits.
    The assistant's messages follow each other with no user turn between (no tool results are
    known): these transcripts feed query strategies, never an API.
    """
    out = []
    t = Transcript()
    t.add_user(task)
    for i, step in enumerate(steps):
        out.append(Transcript(list(t.messages)))
        following = f" Next: {steps[i + 1]}" if i + 1 < len(steps) else ""
        t.append(Message("assistant", [TextBlock(f"Done: {step}.{following}")]))
    return out


FAILURE_KINDS = ("tool not shown", "wrong tool", "phrase its lexicon lacks", "argument content")


def failure_kind(run: ScenarioRun) -> str:
    """Why a failed run failed, at the first needed tool it did not call successfully in order (Chapter 3).

    ``tool not shown``: that tool was on no turn's list. ``wrong tool``: the model called a tool the
    scenario does not need instead. ``argument content``: it called the right tools (or the needed one,
    which came back as an error), but the world or the answer is wrong. ``phrase its lexicon lacks``:
    the tool was shown and nothing wrong was called — the model did not see that the request asks for
    the step (for the stand-in, its lexicon has no words for the phrase), or answered a tool-less
    request without what it needed.
    """
    if run.success:
        raise ValueError(f"Scenario {run.scenario.id!r} succeeded: there is no failure to classify.")
    needed = list(run.scenario.tools)
    if not needed:  # a request needing no tool, answered without what it asked for
        return "phrase its lexicon lacks"
    calls = run.result.calls()
    done, missing = 0, None
    for name in needed:  # the needed tools called successfully in order, as far as they go
        position = next((i for i in range(done, len(calls)) if calls[i][0] == name and calls[i][2]), None)
        if position is None:
            missing = name
            break
        done = position + 1
    if missing is None:
        return "argument content"
    if missing not in {n for ev in run.result.turns for n in ev.tool_names}:
        return "tool not shown"
    if any(name not in needed for name, _, _ in calls[done:]):
        return "wrong tool"
    if any(name == missing for name, _, _ in calls[done:]):
        return "argument content"
    return "phrase its lexicon lacks"
