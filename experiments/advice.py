"""The numbers behind "What to do in your agent": each computed from a committed measurement.

Introduced in Chapter 7 (``notebooks/07_use_it_in_your_agent.ipynb``), whose closing cell is the page
``workbook/data/what_to_do.md``; the README carries the same text. The page is prose a person wrote,
so nothing stops it from drifting from the evidence except a check: :func:`figures` recomputes
every number the page quotes from the files the chapters committed (the real model's per-step rows,
its Chapter 1 sweep, Chapter 8's per-query retrieval values, the detector's fresh rewordings) or from
the function a chapter uses (Chapter 3's per-step recall), and ``tests/test_advice.py`` finds each
on the page.
"""
from __future__ import annotations

from importlib import resources

import json
import statistics
from typing import Sequence

from experiments import DATA
from harness.selection.queries import DEFAULT_QUERY
from harness.core.rates import bootstrap_interval, paired_difference_interval
from harness.retrieval.named import entry

PAGE = resources.files("workbook").joinpath("data").joinpath("what_to_do.md")
ZERO_SHOT_FILE = DATA.joinpath("zero_shot_results.json")


def page() -> str:
    """The page's markdown, as the README and Chapter 7 show it."""
    return PAGE.read_text(encoding="utf-8")


def rate(values: Sequence[float]) -> str:
    """``0.44 [0.34, 0.54]``: a mean and its 95 % bootstrap interval."""
    low, high = bootstrap_interval(values)
    return f"{statistics.fmean(values):.2f} [{low:.2f}, {high:.2f}]"


def difference(a: Sequence[float], b: Sequence[float]) -> str:
    """``+0.02 [-0.08, +0.12]``: mean(a) − mean(b) on the same units, with its paired 95 % interval."""
    low, high = paired_difference_interval(a, b)
    return f"{statistics.fmean(a) - statistics.fmean(b):+.2f} [{low:+.2f}, {high:+.2f}]"


def _real_model_steps() -> dict[str, str]:
    """Tools per turn, on the real small model: 10 shown against all 74, development steps (paired by step)."""
    from harness.selection.ranking import DEFAULT_K
    from experiments import real_rules, real_steps

    rows = real_steps.load()
    shown = ("k=10", "all 74")
    steps = [r for r in rows if r.split == "dev" and r.needed is not None]
    by_step = {c: {(r.scenario, r.step): r for r in steps if r.config == c} for c in shown}
    both = sorted(set(by_step["k=10"]) & set(by_step["all 74"]))
    tokens = {c: round(statistics.fmean(by_step[c][s].prompt_tokens for s in both)) for c in shown}
    query = real_rules.difference(rows, "latest message, k=10", "k=10")  # the committed query rule's comparison
    fewer = real_rules.difference(rows, "k=10", "all 74")
    return {"real steps": f"{len(both)}",
            "real latest - transcript": f"{query.value:+.2f} [{query.low:+.2f}, {query.high:+.2f}]",
            **{f"real {c}": f"{e.rate:.2f} [{e.low:.2f}, {e.high:.2f}]"  # scenario-resampled, as the rules and Chapter 3
               for c, e in ((c, real_rules.estimate(rows, c)) for c in shown)},
            "real k=10 - all 74": f"{fewer.value:+.2f} [{fewer.low:+.2f}, {fewer.high:+.2f}]",
            "prompt tokens k=10": f"{tokens['k=10']:,}", "prompt tokens all 74": f"{tokens['all 74']:,}"}


def _queries() -> dict[str, str]:
    """Which query: Chapter 3's per-step recall at DEFAULT_K on scenarios with several user turns (no model)."""
    from harness.selection.catalog import ToolCatalog
    from workbook.demo import demo_tools, load_scenarios
    from harness.selection.queries import query_from_transcript, query_from_user_message
    from harness.selection.ranking import DEFAULT_K
    from workbook.evaluation.scenarios import per_step_hits

    out = {}
    for split in ("dev", "heldout"):
        multi = [s for s in load_scenarios(split) if s.kind in ("conversation", "pivot")]
        hits = {name: [float(h) for h in per_step_hits(ToolCatalog(demo_tools()), multi, fn, DEFAULT_K)]
                for name, fn in (("latest", query_from_user_message), ("transcript", query_from_transcript))}
        out[f"{split} latest"] = rate(hits["latest"])
        out[f"{split} transcript"] = rate(hits["transcript"])
        out[f"{split} latest - transcript"] = difference(hits["latest"], hits["transcript"])
    return out


def _cliff() -> dict[str, str]:
    """When to defer: the real model's Chapter 1 accuracy at the fewest and the most tools it was shown."""
    from experiments import real_cliff
    from workbook.evaluation.cliff import accuracy_with_interval

    points = accuracy_with_interval(real_cliff.load().trials)
    out = {}
    for end, p in (("fewest", points[0]), ("most", points[-1])):
        out[f"cliff {end} tools"] = str(p.n)
        out[f"cliff n={p.n}"] = f"{p.rate:.2f} [{p.low:.2f}, {p.high:.2f}]"
        out[f"cliff tokens n={p.n}"] = f"{round(p.tokens):,}"
    return out


def _retrievers() -> dict[str, str]:
    """Which retriever: hybrid-rrf against fielded BM25 per query (Chapter 8's committed test-row values),
    by their registry names (``hybrid`` is what a user types)."""
    values = json.loads(ZERO_SHOT_FILE.read_text(encoding="utf-8"))["values"]
    hybrid, fielded = entry("hybrid").name, entry("bm25-fielded").name
    return {f"hybrid - bm25 {name}": difference(values[name][hybrid], values[name][fielded])
            for name in ("demo", "livemcp-task")}


def _documents() -> dict[str, str]:
    """Tool documents written by the real model: expanded − original on LiveMCPBench's test tasks and ToolLens's
    test rows (Chapter 8b's committed rows)."""
    from experiments.tool_documents import load_measured

    out: dict[str, str] = {}
    for dataset, test_set, names, label in (("livemcpbench", "livemcp-task", ("bm25", "hybrid-rrf"), ""),
                                            ("toollens", "toollens", ("bm25",), " toollens")):
        measured = load_measured(dataset)
        if measured is None:
            raise RuntimeError(f"experiments/data/tool_documents/measured.json has no {dataset} measurement.")
        rows = {r.retriever: r for r in measured.rows if r.test_set == test_set}
        out |= {f"documents {name}{label}": "{:+.2f} [{:+.2f}, {:+.2f}]".format(*rows[name].difference) for name in names}
    return out


def _pinning() -> dict[str, str]:
    """What to pin: Chapter 4's discovery tool on top of the transcript query, the stand-in on the development scenarios."""
    import asyncio

    from harness.selection.catalog import ToolCatalog
    from workbook.demo import demo_tools, load_scenarios
    from harness.selection.discovery import discovery_tool
    from workbook.providers.offline import OfflineModel
    from harness.selection.ranking import Selector
    from workbook.evaluation.scenarios import run_scenarios

    def run(pin: bool) -> list:
        def selector(c: ToolCatalog) -> Selector:
            return Selector.over(c, pinned=[discovery_tool(c)] if pin else [])
        return asyncio.run(run_scenarios(OfflineModel(), lambda: ToolCatalog(demo_tools()), load_scenarios("dev"),
                                         selector=selector, query_fn=DEFAULT_QUERY))

    plain, pinned = run(False), run(True)
    extra = statistics.fmean(r.schema_tokens for r in pinned) / statistics.fmean(r.schema_tokens for r in plain) - 1
    tokens = [float(r.schema_tokens) for r in pinned], [float(r.schema_tokens) for r in plain]
    low, high = paired_difference_interval(*tokens)
    return {"pinned - plain": difference([float(r.success) for r in pinned], [float(r.success) for r in plain]),
            "pinned extra schema tokens %": f"{extra * 100:.0f}",
            "pinned extra schema tokens": f"{statistics.fmean(tokens[0]) - statistics.fmean(tokens[1]):+,.0f} "
                                          f"[{low:+,.0f}, {high:+,.0f}]"}


def _loop_guard() -> dict[str, str]:
    """Bounding the loop: the real model's single-request development tasks with per-turn top-10, plain and with the loop guard (Chapter 5c)."""
    from experiments import real_tasks

    rows, top_k = [r for r in real_tasks.load() if r.kind == "task"], real_tasks.CONFIGS[0]  # the guard ran on single-request tasks
    plain, guarded = (real_tasks.summarize(rows, c, "dev") for c in (top_k, top_k + real_tasks.GUARDED))
    return {"real tasks": f"{plain.n}", "real tasks success": f"{plain.success:.2f} [{plain.low:.2f}, {plain.high:.2f}]",
            "real tasks repeating a call": f"{round(plain.repeated * plain.n)}",
            "guarded turns": f"{guarded.turns:.1f}", "plain turns": f"{plain.turns:.1f}",
            "guarded success": f"{guarded.success:.2f} [{guarded.low:.2f}, {guarded.high:.2f}]", **_stronger_model(rows)}


def _stronger_model(smaller: list) -> dict[str, str]:
    """The same loop on Qwen2.5-Coder-1.5B under the four ways of loading tools, paired over the same development
    tasks, and what the rules committed before those rows were in decide (Chapter 5c). The page follows the rules:
    where they stop keeping per-turn top-10 or start recommending the pinned search, this says so."""
    from experiments import real_tasks, task_rules

    top_k, every, beside, deferred = real_tasks.CONFIGS
    rows = [r for r in real_tasks.load(model="1.5b") if r.kind == "task"]
    run, shown_all, deferring = (real_tasks.summarize(rows, c, "dev") for c in (top_k, every, deferred))

    def gap(a: str, b: str) -> str:
        value, low, high = real_tasks.paired_success(rows, a, rows, b, "dev")
        return f"{value:+.2f} [{low:+.2f}, {high:+.2f}]"

    decisions = [task_rules.ways_rule(rows).choice, task_rules.discovery_rule(rows).choice]
    if decisions != [top_k, top_k]:
        raise RuntimeError(f"the committed whole-task rules now decide {decisions}: items 1, 3 and 6 must follow them")
    return {"1.5b tasks finished": f"{round(run.success * run.n)}",
            "1.5b tasks success": f"{run.success:.2f} [{run.low:.2f}, {run.high:.2f}]",
            "1.5b all tools": ("none" if shown_all.success == 0 else f"{shown_all.success:.2f}") + " with all 74",
            "1.5b top-10 - all tools": gap(top_k, every),
            "1.5b never stopped": f"{run.failures['never stopped']}",
            "1.5b deferred": ("none" if deferring.success == 0 else f"{deferring.success:.2f}") + f" of the {deferring.n} tasks",
            "1.5b deferred - top-10": gap(deferred, top_k), "1.5b tool not loaded": f"{deferring.failures['tool not shown']}",
            "1.5b search_tools - top-10": gap(beside, top_k)}


def _detector() -> dict[str, str]:
    """What to check in descriptions: the detector's recall on poisoned rewordings written after its rules."""
    from workbook.evaluation.poisoning import measure_detector

    fresh = measure_detector().fresh_recall
    low, high = fresh.interval
    return {"detector fresh recall": f"{fresh.value:.2f} [{low:.2f}, {high:.2f}]", "fresh poisoned": f"{fresh.n}"}


def figures() -> dict[str, str]:
    """Every number the page quotes, by name, formatted as the page prints it."""
    from workbook.demo import demo_tools
    from harness.selection.discovery import DEFAULT_LIMIT
    from harness.mcp.proxy.server import proxy_policy
    from harness.selection.ranking import DEFAULT_K

    threshold = proxy_policy().threshold_tokens
    return {"DEFAULT_K": str(DEFAULT_K), "DEFAULT_LIMIT": str(DEFAULT_LIMIT), "demo tools": str(len(demo_tools())),
            "harness serve threshold": str(threshold), **_real_model_steps(), **_queries(),
            **_cliff(), **_retrievers(), **_documents(), **_pinning(), **_loop_guard(), **_detector()}
