"""The verdict table: each claim the workbook started from, with the number that tests it.

The README's "Verdict" section (between :data:`START` and :data:`END`) is written by
``python -m experiments.verdict --write README.md`` and nowhere else; ``tests/test_verdict.py`` builds
the table again and fails when the README says something else, so it cannot drift from the code.

Every row is computed by the package functions the chapter it cites calls, with that chapter's arguments,
so it prints the numbers the chapter prints — Chapter 1's :func:`~workbook.evaluation.cliff.curves_by_kind`
over the committed real-model sweep and its token counts, Chapter 3's
:func:`~workbook.evaluation.scenarios.per_step_hits` and its ``k`` sweep, Chapter 4's runs with
:func:`~harness.selection.discovery.discovery_tool` pinned and its per-step rule
(:func:`~experiments.real_rules.discovery_rule`), Chapter 6b's
:func:`~workbook.evaluation.scale_curve.scale_curve` with its two draws. ``tests/test_verdict.py`` also finds
each number of a row in the committed outputs of the chapter it cites; a number no chapter prints is not
in a row (the one row no chapter computes says so). Each row names the model behind its numbers
(:data:`MODELS`): the real small model, the offline stand-in (a property of the stand-in), or no model
at all (retrieval, or a count). Rates carry 95 % intervals (:mod:`harness.core.rates`) where the chapter
prints them; a difference is called only where its interval allows.

Rows that need the public data (``HARNESS_DATA``) or the embedding extra cannot be computed on a
machine without them: :func:`rows` marks them (``VerdictRow.needs``), ``--write`` keeps the README's
text for them, and the test compares them only where they can be computed. Nothing is cached:
every number is measured afresh each time, in about 15 s of CPU (the dense retriever's embeddings are
looked up by the hash of each tool's definition, which cannot go stale).

Thresholds the claims leave vague are fixed here, before measuring: "rarely" means at most
:data:`RARELY` of the steps; a cut "about 75 %" means within :data:`ABOUT`; a fall is "measurable"
when its paired interval excludes zero.
"""
from __future__ import annotations

import argparse
import ast
import asyncio
import functools
import inspect
import io
import re
import statistics
import sys
import tokenize
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Callable, Sequence

from workbook.evaluation.cliff import curves_by_kind, first_separated_drop, separated, tokens_per_tool, schema_token_curve
from workbook.demo import CONFUSABLE_PAIRS, load_demo_queries, demo_tools, load_scenarios
from experiments import real_steps
from experiments.real_cliff import load
from experiments.real_rules import difference, discovery_rule, right_or_searched
from harness.evaluation.datasets import dataset_dir, load_tools
from harness.evaluation.splits import development_split
from harness.core.rates import bootstrap_interval, paired_difference_interval
from harness.selection.catalog import ToolCatalog
from harness.selection.ranking import DEFAULT_K, Selector
from harness.selection.queries import DEFAULT_QUERY, QUERY_STRATEGIES
from workbook.evaluation.scenarios import RunsSummary, per_step_hits, run_scenarios, success_rate, summarize
from harness.selection.discovery import discovery_tool
from workbook.providers.offline import OfflineModel
from harness.retrieval.dense import dense_unavailable_reason
from workbook.evaluation.scale_curve import public_pool, scale_curve, breaks_at

START = "<!-- verdict:start (written by: python -m experiments.verdict --write README.md) -->"
END = "<!-- verdict:end -->"
#: "Rarely": at most this share of steps.
RARELY = 0.10
#: "About 75 %": the measured cut lies within this of it.
ABOUT = 0.10
#: The models a row's numbers can come from, as the table's "model" column names them.
REAL = "real model (Qwen2.5-Coder-0.5B, llama.cpp)"
STANDIN = "offline stand-in"
RETRIEVAL = "no model (retrieval only)"
COUNTED = "no model (counted)"
MODELS = (REAL, STANDIN, RETRIEVAL, COUNTED)
#: What the "computed by" cell of a row says when no chapter prints its numbers.
NO_CHAPTER = "no chapter prints these numbers"
HEADER = ("claim", "model", "measured (95 % intervals)", "computed by", "verdict")


@dataclass(frozen=True)
class VerdictRow:
    """One claim: the models behind it, what was measured, where the workbook computes it, and the verdict."""

    claim: str
    models: tuple[str, ...]
    measured: str
    where: str
    verdict: str
    needs: str | None = None  # what is missing on this machine (then ``measured``/``verdict`` say so)

    def cells(self) -> tuple[str, str, str, str, str]:
        return (self.claim, "; ".join(self.models), self.measured, self.where, self.verdict)


def _absent(claim: str, models: tuple[str, ...], where: str, needs: str) -> VerdictRow:
    return VerdictRow(claim, models, f"not measured here: needs {needs}", where, "—", needs)


def _interval(low: float, high: float) -> str:
    return f"[{low:.2f}, {high:.2f}]"


def _gap(value: float, low: float, high: float) -> str:
    """A paired difference as the chapters print it: ``+0.02 [-0.05, +0.09]``."""
    return f"{value:+.2f} [{low:+.2f}, {high:+.2f}]"


# --- Chapter 1: the real model's committed sweep --------------------------------------------------------

@cache
def _real_curves():
    sweep = load()
    if not sweep.meta["model"].startswith("Qwen2.5-Coder-0.5B"):
        raise ValueError(f"The committed sweep is {sweep.meta['model']!r}, not the model the table names: {REAL}.")
    return curves_by_kind(sweep.trials, load_demo_queries(), CONFUSABLE_PAIRS)


CH1 = "Chapter 1 §2 (`experiments.real_cliff.load()`, `workbook.evaluation.cliff.curves_by_kind`)"


def cliff_row() -> VerdictRow:
    """10 tools fine, 20 degrade, 30–50 cliff: the real model's literal requests, N by N, with the schema tokens shown."""
    lit = _real_curves()["literal"]
    falls = [(a.n, b.n) for a, b in zip(lit, lit[1:]) if separated(a, b) and b.rate < a.rate]
    tokens = {p.n: p.tokens for p in _real_curves()["all"]}
    measured = ("literal requests: " + "; ".join(f"N={p.n} {p.rate:.2f} {_interval(p.low, p.high)}" for p in lit)
                + f"; schema tokens shown (cl100k, mean of the lists): {tokens[lit[0].n]:,.0f} at N={lit[0].n} to "
                + f"{tokens[lit[-1].n]:,.0f} at N={lit[-1].n}"
                + f"; neighbouring N whose intervals separate: {', '.join(f'{a}→{b}' for a, b in falls) or 'none'}")
    if falls:
        verdict = (f"holds for this model: a measurable fall between N={falls[0][0]} and N={falls[0][1]} "
                   f"({tokens[falls[0][0]]:,.0f} → {tokens[falls[0][1]]:,.0f} schema tokens)")
    else:
        below = first_separated_drop(lit)
        slide = (f"a slide from {lit[0].rate:.2f} to {lit[-1].rate:.2f}, measurably below N={lit[0].n} from N={below} on"
                 if below else f"{lit[0].rate:.2f} to {lit[-1].rate:.2f}, no N measurably below N={lit[0].n}")
        verdict = (f"refuted for this model from N={lit[0].n} to N={lit[-1].n} (up to {tokens[lit[-1].n]:,.0f} schema "
                   f"tokens): no cliff, no neighbouring N apart; {slide} (the stand-in's cliff sits at its reading "
                   "budget, a parameter)")
    return VerdictRow("10 tools fine, 20 degrade, 30–50 fall off a cliff", (REAL,), measured, CH1, verdict)


def _ns(ns: Sequence[int], measured: Sequence[int]) -> str:
    """Some of the measured N as a short phrase: a run of neighbouring measured N as 'a–b', else a list."""
    i = measured.index(ns[0])
    run = len(ns) > 2 and list(measured[i:i + len(ns)]) == list(ns)
    return f"{ns[0]}–{ns[-1]}" if run else ", ".join(map(str, ns))


def selection_row() -> VerdictRow:
    """Selection is mostly right: the real model's accuracy by kind of request, at the smallest and largest N."""
    curves = _real_curves()
    parts = []
    for kind in ("literal", "paraphrase", "all"):
        first, last = curves[kind][0], curves[kind][-1]
        parts.append(f"{kind} {first.rate:.2f} {_interval(first.low, first.high)} at N={first.n}, "
                     f"{last.rate:.2f} {_interval(last.low, last.high)} at N={last.n}")
    # "Mostly right" is a rate above one half, called per N only where the interval is wholly on one side.
    above = {kind: [p.n for p in curves[kind] if p.low > 0.5] for kind in ("literal", "paraphrase")}
    below = {kind: [p.n for p in curves[kind] if p.high < 0.5] for kind in ("literal", "paraphrase")}
    ns = [p.n for p in curves["literal"]]

    def said(kind: str) -> str:
        if above[kind] == ns:
            return f"holds for {kind} requests at every N"
        if below[kind] == ns:
            return f"refuted for {kind} requests at every N"
        parts = [f"holds at N={_ns(above[kind], ns)}" if above[kind] else "",
                 f"refuted at N={_ns(below[kind], ns)}" if below[kind] else "",
                 f"not decided at N={_ns([n for n in ns if n not in above[kind] + below[kind]], ns)}"
                 if len(above[kind]) + len(below[kind]) < len(ns) else ""]
        return f"for {kind} requests " + ", ".join(x for x in parts if x)
    verdict = (f"{'depends on the wording: ' if above['literal'] != above['paraphrase'] else ''}"
               f"{said('literal')}; {said('paraphrase')} (called where the 95 % interval is wholly above or below one half)")
    return VerdictRow("Tool selection is mostly right", (REAL,), "; ".join(parts), CH1, verdict)


# --- Chapter 1: tokens, no model ------------------------------------------------------------------------

CH1_TOKENS = "Chapter 1 §1 (`workbook.evaluation.cliff.tokens_per_tool`, `schema_token_curve`; cl100k)"


def _public_tools(name: str):
    folder = dataset_dir(name)
    return None if folder is None else load_tools(folder)


@cache
def _real_sizes() -> tuple[int, ...] | None:
    records = _public_tools("livemcpbench")
    return None if records is None else tuple(tokens_per_tool([r.definition() for r in records]))


def _in_range(sizes: Sequence[int]) -> float:
    return sum(100 <= s <= 500 for s in sizes) / len(sizes)


def schema_size_row() -> VerdictRow:
    """100–500 tokens per schema: the distribution over LiveMCPBench's 527 real MCP tools and the demo world."""
    claim = "Each tool schema costs 100–500 tokens"
    sizes = _real_sizes()
    if sizes is None:
        return _absent(claim, (COUNTED,), CH1_TOKENS, "the public data (LiveMCPBench)")
    demo = tokens_per_tool(demo_tools())
    deciles, inside = statistics.quantiles(sizes, n=10), _in_range(sizes)
    measured = (f"{len(sizes)} real MCP tools (LiveMCPBench): median {statistics.median(sizes):,.0f}, "
                f"p10 {deciles[0]:,.0f}, p90 {deciles[-1]:,.0f}, max {max(sizes):,}, {inside:.0%} in 100–500; "
                f"the {len(demo)} demo tools: median {statistics.median(demo):,.0f}, {_in_range(demo):.0%} in 100–500")
    verdict = (f"depends on the server: {'about half' if 0.35 <= inside <= 0.65 else f'{inside:.0%}'} of real "
               f"definitions fall in the range; a tenth cost {deciles[0]:,.0f} tokens or fewer, the longest {max(sizes):,}")
    return VerdictRow(claim, (COUNTED,), measured, CH1_TOKENS, verdict)


def fifty_tools_row() -> VerdictRow:
    """50 tools = 10K–25K tokens: the 50 median-sized and the 50 largest real MCP tools, and the demo world's 50."""
    claim = "50 tools cost 10K–25K tokens per turn"
    sizes = _real_sizes()
    if sizes is None:
        return _absent(claim, (COUNTED,), CH1_TOKENS, "the public data (LiveMCPBench)")
    ordered, middle = sorted(sizes), len(sizes) // 2
    median50, largest50 = sum(ordered[middle - 25: middle + 25]), sum(ordered[-50:])  # as Chapter 1 prints them
    demo50 = next(p.tokens for p in schema_token_curve(demo_tools(), [50]))
    measured = (f"50 median-sized real MCP tools (LiveMCPBench) {median50:,} tokens; the 50 largest {largest50:,}; "
                f"50 demo tools {demo50:,}")

    def side(tokens: int) -> str:
        return "below it" if tokens < 10_000 else "above it" if tokens > 25_000 else "inside it"

    verdict = ("holds" if side(median50) == "inside it" else
               f"refuted for a typical mix: 50 median-sized real tools cost {median50:,}, {side(median50)}; "
               f"the 50 largest cost {largest50:,}, {side(largest50)}")
    return VerdictRow(claim, (COUNTED,), measured, CH1_TOKENS, verdict)


# --- Chapters 3 and 4: the per-turn loop on the demo scenarios ------------------------------------------

SPLITS = ("dev", "heldout")
#: Chapter 3 §3's groups of scenarios (the openers, which need no tool, are left out).
GROUPS = {"single-request tasks": ("task",), "several user turns": ("conversation", "pivot")}


def _query_name() -> str:
    return next(name for name, fn in QUERY_STRATEGIES.items() if fn is DEFAULT_QUERY)


def _fresh() -> ToolCatalog:
    return ToolCatalog(demo_tools())


async def _k_sweep(ks: Sequence[int]) -> dict[int, RunsSummary]:
    """Chapter 3 §5's runs: the stand-in on the development scenarios, ``k`` tools a turn."""
    return {k: summarize(await run_scenarios(OfflineModel(), _fresh, load_scenarios("dev"),
                                             selector=functools.partial(Selector.over, k=k)))
            for k in ks}


def cut_row() -> VerdictRow:
    """30 → 7 tools ≈ 75 % fewer schema tokens: Chapter 3 §5's schema tokens per run at k = 7, DEFAULT_K and 30."""
    runs = asyncio.run(_k_sweep(list(dict.fromkeys((7, DEFAULT_K, 30)))))
    measured = (f"the stand-in's runs of the {runs[7].n} development scenarios, schema tokens per run (every turn's tools): "
                + "; ".join(f"k={k} {s.schema_tokens:,.0f} ({s.turns:.1f} turns)"
                            + (" — the workbook's DEFAULT_K" if k == DEFAULT_K else "") for k, s in runs.items()))
    cut = 1 - runs[7].schema_tokens / runs[30].schema_tokens
    fewer = f"{runs[7].schema_tokens:,.0f} against {runs[30].schema_tokens:,.0f} per run"
    verdict = (f"holds: 7 tools a turn send about three quarters fewer schema tokens than 30 ({fewer})"
               if abs(cut - 0.75) <= ABOUT else
               f"refuted: 7 tools a turn send {'more' if cut > 0.75 else 'less'} than three quarters fewer ({fewer})")
    return VerdictRow("Going from 30 to 7 tools cuts schema tokens by about 75 %", (STANDIN,), measured,
               "Chapter 3 §5 (`run_scenarios` with `Selector.over(c, k=k)`, `summarize`)", verdict)


def missing_tools_row() -> VerdictRow:
    """The model rarely needs a tool that was not selected: per-step recall of the default query, by kind of scenario."""
    parts: list[str] = []
    shown: dict[str, list[tuple[float, float]]] = {}
    for split in SPLITS:
        scenarios = load_scenarios(split)
        for group, kinds in GROUPS.items():
            hits = [float(h) for h in per_step_hits(_fresh(), [s for s in scenarios if s.kind in kinds], DEFAULT_QUERY, DEFAULT_K)]
            low, high = bootstrap_interval(hits)
            shown.setdefault(group, []).append((low, high))
            parts.append(f"{split} {group} {statistics.fmean(hits):.2f} {_interval(low, high)} of {len(hits)} steps")
    measured = f"{_query_name()} query (the default), needed tool among the {DEFAULT_K} shown: " + "; ".join(parts)
    found = []
    for group, intervals in shown.items():
        if all(high < 1 - RARELY for _, high in intervals):
            found.append(f"refuted for {group}: the tool is shown on at most {max(h for _, h in intervals):.2f} of steps")
        elif all(low >= 1 - RARELY for low, _ in intervals):
            found.append(f"holds for {group}")
        else:
            found.append(f"not decided for {group}: the intervals straddle {RARELY:.0%} missing")
    return VerdictRow("The model rarely hits missing tools", (RETRIEVAL,), measured,
               f"Chapter 3 §3 (`workbook.evaluation.scenarios.per_step_hits`, k = DEFAULT_K = {DEFAULT_K})", "; ".join(found))


async def _discovery_runs(split: str):
    """Chapter 4 §3's runs: the default query, with and without the discovery tool pinned (DEFAULT_K tools a turn)."""
    def pinned(c: ToolCatalog) -> Selector:
        return Selector.over(c, pinned=[discovery_tool(c)])

    scenarios = load_scenarios(split)
    return [await run_scenarios(OfflineModel(), _fresh, scenarios, selector=selector, query_fn=DEFAULT_QUERY)
            for selector in (Selector.over, pinned)]


def pivots_row() -> VerdictRow:
    """The discovery tool recovers pivots: whole runs with and without it (stand-in), and the per-step rule (both models)."""
    parts, separated_on, pivots = [], [], 0
    for split in SPLITS:
        without, with_tool = asyncio.run(_discovery_runs(split))
        solved = [[r.success for r in runs if r.scenario.kind == "pivot"] for runs in (without, with_tool)]
        low, high = paired_difference_interval([float(r.success) for r in with_tool], [float(r.success) for r in without])
        parts.append(f"{split}: pivots solved {sum(solved[0])}/{len(solved[0])} without → {sum(solved[1])}/{len(solved[1])} "
                     f"pinned; all {len(without)} scenarios, pinned − without "
                     f"{_gap(success_rate(with_tool) - success_rate(without), low, high)}")
        if low > 0:
            separated_on.append(split)
        pivots += len(solved[0])
    steps = []
    for who, rows_ in ((REAL, real_steps.load()), (STANDIN, real_steps.stand_in_rows([f"k={DEFAULT_K}", f"discovery, k={DEFAULT_K}"]))):
        decision = discovery_rule(rows_, DEFAULT_K)
        numbers = [f"{e.config} {e.rate:.2f} {_interval(e.low, e.high)}" for e in decision.estimates.values()]
        numbers += [f"{d.a} − {d.b} {_gap(d.value, d.low, d.high)}" for d in decision.differences]
        if who == REAL and decision.decided:  # the rule reads development steps; held out beside it, as Chapter 4 §5 prints
            held = difference(rows_, f"discovery, k={DEFAULT_K}", f"k={DEFAULT_K}", right_or_searched, split="heldout")
            numbers.append(f"held out {_gap(held.value, held.low, held.high)}")
        steps.append(f"{who}, per development step: {decision.sentence}" + (f" ({'; '.join(numbers)})" if numbers else ""))
    measured = f"{STANDIN}, whole runs judged on effects, {_query_name()} query: " + "; ".join(parts) + ". " + ". ".join(steps)
    if len(separated_on) == len(SPLITS):
        verdict = "holds on the stand-in: pinned is above without by a paired interval on both sets"
    elif separated_on:
        verdict = f"shown on the stand-in only on the {separated_on[0]} scenarios: pinned is above without by a paired interval there"
    else:
        verdict = (f"not shown on the stand-in: pinned − without is not separated on either set ({pivots} pivots in all "
                   "are too few to call); the per-step rule's decisions are in the measured column")
    return VerdictRow("The discovery tool recovers pivots", (STANDIN, REAL), measured,
               "Chapter 4 §3 (`discovery_tool` pinned via `Selector`, `run_scenarios`) and §5 "
               "(`real_rules.discovery_rule` over the committed per-step rows and the stand-in's)", verdict)


# --- Chapter 6b: the scale curve -------------------------------------------------------------------------

CURVE_QUERIES = "livemcpbench"
#: Chapter 6b's draws of distractors per catalog size.
CURVE_DRAWS = 2
CH6 = (f"Chapter 6b §3, the scale curve (`workbook.evaluation.scale_curve.scale_curve`, `breaks_at`; "
       f"LiveMCPBench test split, {CURVE_DRAWS} draws)")


@cache
def _curve():
    """The scale curve on LiveMCPBench's test tasks for BM25 and hybrid, as Chapter 6b draws it: the points, or what is missing."""
    pool, query_sets = public_pool()
    if CURVE_QUERIES not in query_sets:
        return None, "the public data (LiveMCPBench, MCP-Zero)"
    if dense_unavailable_reason() is not None:
        return None, "the embedding extra (all-MiniLM-L6-v2)"
    queries = {CURVE_QUERIES: development_split(query_sets[CURVE_QUERIES]).test}
    return scale_curve(queries, pool, retrievers=("bm25", "hybrid-rrf"), draws=CURVE_DRAWS), None


def _line(points, retriever: str):
    return sorted((p for p in points if p.retriever == retriever), key=lambda p: p.size)


def _recall(p) -> str:
    return f"{p.metrics['R@10']:.3f} {_interval(*p.intervals['R@10'])}"


def bm25_breaks_row() -> VerdictRow:
    """BM25 breaks at 200+ tools: the first catalog size where its R@10 is measurably below the 50-tool value."""
    claim = "BM25 breaks at 200+ tools"
    points, missing = _curve()
    if points is None:
        return _absent(claim, (RETRIEVAL,), CH6, missing)
    line = _line(points, "bm25")
    at = breaks_at(points, CURVE_QUERIES, "bm25")
    measured = "BM25 R@10: " + "; ".join(f"{p.size:,} tools {_recall(p)}" for p in line)
    if at is None:
        verdict = f"refuted: no measurable fall up to {line[-1].size:,} tools"
    elif at >= 200:
        verdict = f"holds: the first measurable fall from {line[0].size} tools is at {at:,}"
    else:
        verdict = f"refuted in its number: BM25 already falls measurably at {at:,} tools"
    return VerdictRow(claim, (RETRIEVAL,), measured, CH6, verdict)


def hybrid_row() -> VerdictRow:
    """Hybrid fixes it: hybrid against BM25 at every size (paired), and whether hybrid falls too."""
    claim = "Hybrid search (BM25 + embeddings) fixes it"
    points, missing = _curve()
    if points is None:
        return _absent(claim, (RETRIEVAL,), CH6, missing)
    hybrid, bm25 = _line(points, "hybrid-rrf"), _line(points, "bm25")
    ahead = [h.size for h, b in zip(hybrid, bm25) if paired_difference_interval(h.values["R@10"], b.values["R@10"])[0] > 0]
    drops = {name: line[0].metrics["R@10"] - line[-1].metrics["R@10"] for name, line in (("hybrid", hybrid), ("bm25", bm25))}
    at = breaks_at(points, CURVE_QUERIES, "hybrid-rrf")
    where_ahead = "every size" if len(ahead) == len(hybrid) else f"{ahead or 'no'} sizes"
    measured = (f"R@10 at {hybrid[-1].size:,} tools: hybrid-rrf {_recall(hybrid[-1])}, BM25 {_recall(bm25[-1])}; hybrid "
                f"above BM25 by a paired interval at {where_ahead} from {hybrid[0].size} to {hybrid[-1].size:,} tools; "
                f"R@10 falls {drops['bm25']:.3f} for BM25 and {drops['hybrid']:.3f} for hybrid-rrf over that range; "
                f"hybrid's first measurable fall: {f'{at:,} tools' if at else 'none'}")
    if ahead and at is None:
        verdict = "holds: better than BM25, and no measurable fall"
    elif ahead:
        verdict = f"helps, does not fix: better than BM25 at {where_ahead}, but it falls too (from {at:,} tools)"
    else:
        verdict = "refuted: no measurable gain over BM25"
    return VerdictRow(claim, (RETRIEVAL,), measured, CH6, verdict)


# --- the swap ---------------------------------------------------------------------------------------------

def code_lines(source: str) -> int:
    """Lines holding code: not blank, not only a comment, not part of a docstring."""
    tree = ast.parse(source)
    doc_lines: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            doc_lines.update(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
    code: set[int] = set()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in skip:
            code.update(range(tok.start[0], tok.end[0] + 1))
    return len(code - doc_lines)


def swap_row() -> VerdictRow:
    """The upgrade to embeddings is a twenty-line swap: what switching takes, and the code it stands on."""
    from harness.retrieval import dense, hybrid, numpy_minilm

    modules = {"dense": dense, "hybrid": hybrid, "numpy_minilm": numpy_minilm}
    lines = {name: code_lines(inspect.getsource(m)) for name, m in modules.items()}
    measured = (f"in the harness the swap is one name: `make_retriever('bm25-fielded', tools)` → "
                f"`make_retriever('hybrid-rrf', tools)`; the code behind it: {sum(lines.values())} lines "
                f"({', '.join(f'{n} {c}' for n, c in lines.items())}), plus the all-MiniLM-L6-v2 weights and "
                "embedding every tool once")
    verdict = ("depends on what you count: one name once a library holds the retriever; "
               f"about {round(sum(lines.values()), -1)} lines and a model download to build it")
    return VerdictRow("The upgrade to embeddings is a twenty-line swap", (COUNTED,), measured,
               f"the package's source (`harness.retrieval.named.make_retriever`), lines counted by "
               f"`experiments.verdict.code_lines`; {NO_CHAPTER}", verdict)


ROWS: tuple[Callable[[], VerdictRow], ...] = (cliff_row, schema_size_row, fifty_tools_row, cut_row, selection_row,
                                       missing_tools_row, pivots_row, bm25_breaks_row, hybrid_row, swap_row)
#: The rows that need the public data (and, for the scale curve, the embedding extra).
NEED_DATA: tuple[Callable[[], VerdictRow], ...] = (schema_size_row, fifty_tools_row, bm25_breaks_row, hybrid_row)


def rows() -> list[VerdictRow]:
    """Every row, measured now (rows this machine cannot measure say what they need)."""
    return [make() for make in ROWS]


# --- the README section ------------------------------------------------------------------------------------

def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def verdict_table(rows_: Sequence[VerdictRow]) -> str:
    """The Markdown table."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(_cell(c) for c in r.cells()) + " |" for r in rows_]
    return "\n".join(lines)


def section(rows_: Sequence[VerdictRow]) -> str:
    """The README's section between the markers (markers included)."""
    return f"{START}\n{verdict_table(rows_)}\n{END}"


def readme_rows(text: str) -> dict[str, str]:
    """The verdict section's table rows in a README, by claim as written in a :class:`VerdictRow` (the row's whole line)."""
    if START not in text or END not in text:
        raise ValueError("The README has no verdict section: add the two marker lines "
                         f"{START!r} and {END!r} where it belongs.")
    body = text[text.index(START) + len(START):text.index(END)]
    out = {}
    for line in body.strip().splitlines()[2:]:
        claim = re.split(r"(?<!\\)\|", line)[1].strip().replace("\\|", "|")
        out[claim] = line
    return out


def rewrite(text: str, rows_: Sequence[VerdictRow]) -> str:
    """``text`` with its verdict section rebuilt from ``rows_``; a row this machine cannot measure keeps the README's line."""
    old = readme_rows(text)
    new_lines = verdict_table(rows_).splitlines()
    for i, r in enumerate(rows_, start=2):
        if r.needs is not None and r.claim in old:
            new_lines[i] = old[r.claim]
    start, end = text.index(START), text.index(END) + len(END)
    return text[:start] + START + "\n" + "\n".join(new_lines) + "\n" + END + text[end:]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.verdict", description=__doc__.splitlines()[0])
    parser.add_argument("--write", metavar="README", help="rewrite the verdict section of this file (else print the table)")
    args = parser.parse_args(argv)
    measured = rows()
    for r in measured:
        if r.needs:
            print(f"not measured here ({r.needs}): {r.claim}", file=sys.stderr)
    if not args.write:
        print(verdict_table(measured))
        return 0
    path = Path(args.write)
    try:
        text = path.read_text(encoding="utf-8")
        path.write_text(rewrite(text, measured), encoding="utf-8")
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote the verdict section of {path} ({len(measured)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
