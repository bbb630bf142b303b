"""The verdict table: each claim the workbook started from, with the number that tests it.

The README's "Verdict" section (between :data:`START` and :data:`END`) is written by
``python -m harness.experiments.verdict --write README.md`` and nowhere else; ``tests/test_verdict.py`` builds
the table again and fails when the README says something else, so it cannot drift from the code.

Every row is computed by the package functions the chapters call — Chapter 1's
:func:`~harness.evaluation.cliff.curves_by_kind` over the committed real-model sweep
(``harness/data/real_model_sweep.json``), Chapter 3's :func:`~harness.evaluation.scenarios.per_step_hits`,
Chapter 4's :func:`~harness.selection.discovery.discovery_tool` inside :func:`~harness.evaluation.scenarios.run_scenarios`,
Chapter 6's :func:`~harness.evaluation.scale_curve.scale_curve` — and each says which model measured what:
the real small model (Qwen2.5-Coder-0.5B, from its committed sweep), the offline stand-in (a
property of the stand-in, labelled so), or no model at all (tokens, retrieval). Rates carry 95 %
intervals (:mod:`harness.core.rates`); a difference is called only where its interval allows.

Rows that need the public data (``HARNESS_DATA``) or the embedding extra cannot be computed on a
machine without them: :func:`rows` marks them (``VerdictRow.needs``), ``--write`` keeps the README's
text for them, and the test compares them only where they can be computed. Nothing is cached:
every number is measured afresh each time (the dense retriever's embeddings are looked up by the
hash of each tool's definition, which cannot go stale).

Thresholds the claims leave vague are fixed here, before measuring: "rarely" means at most
:data:`RARELY` of the steps; a cut "about 75 %" means within :data:`ABOUT`; a fall is "measurable"
when its paired interval excludes zero.
"""
from __future__ import annotations

import argparse
import ast
import inspect
import io
import random
import re
import statistics
import sys
import tokenize
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Callable, Sequence

from harness.evaluation.cliff import curves_by_kind, separated, tokens_per_tool, schema_token_curve
from harness.demo import CONFUSABLE_PAIRS, load_demo_queries, demo_tools, load_scenarios
from harness.experiments.real_cliff import load
from harness.evaluation.datasets import dataset_dir, load_tools
from harness.core.rates import wilson_interval, bootstrap_interval, paired_difference_interval
from harness.selection.catalog import ToolCatalog
from harness.core.tokens import tools_tokens
from harness.selection.ranking import DEFAULT_K, Selector
from harness.selection.queries import query_from_transcript
from harness.evaluation.scenarios import per_step_hits, run_scenarios, summarize
from harness.selection.discovery import discovery_tool
from harness.providers.offline import OfflineModel
from harness.experiments.bench import curve_queries
from harness.retrieval.dense import dense_unavailable_reason
from harness.evaluation.scale_curve import public_pool, scale_curve, breaks_at

START = "<!-- verdict:start (written by: python -m harness.experiments.verdict --write README.md) -->"
END = "<!-- verdict:end -->"
#: "Rarely": at most this share of steps.
RARELY = 0.10
#: "About 75 %": the measured cut lies within this of it.
ABOUT = 0.10
STANDIN = "offline stand-in (a property of the stand-in, not of an LLM)"
HEADER = ("claim", "measured (95 % intervals)", "computed by", "verdict")


@dataclass(frozen=True)
class VerdictRow:
    """One claim: what was measured, where the workbook computes it, and the verdict."""

    claim: str
    measured: str
    where: str
    verdict: str
    needs: str | None = None  # what is missing on this machine (then ``measured``/``verdict`` say so)

    def cells(self) -> tuple[str, str, str, str]:
        return (self.claim, self.measured, self.where, self.verdict)


def _absent(claim: str, where: str, needs: str) -> VerdictRow:
    return VerdictRow(claim, f"not measured here: needs {needs}", where, "—", needs)


def _interval(low: float, high: float) -> str:
    return f"[{low:.2f}, {high:.2f}]"


# --- Chapter 1: the real model's committed sweep --------------------------------------------------------

@cache
def _real_curves():
    sweep = load()
    return sweep.meta["model"], curves_by_kind(sweep.trials, load_demo_queries(), CONFUSABLE_PAIRS)


CH1 = "Chapter 1 §2 (`harness.experiments.real_cliff.load()`, `harness.evaluation.cliff.curves_by_kind`)"


def cliff_row() -> VerdictRow:
    """10 tools fine, 20 degrade, 30–50 cliff: the real model's literal requests, N by N."""
    model, curves = _real_curves()
    lit = curves["literal"]
    falls = [(a.n, b.n) for a, b in zip(lit, lit[1:]) if separated(a, b) and b.rate < a.rate]
    measured = (f"{model} (real, committed sweep), literal requests: "
                + "; ".join(f"N={p.n} {p.rate:.2f} {_interval(p.low, p.high)}" for p in lit)
                + f"; neighbouring N whose intervals separate: {', '.join(f'{a}→{b}' for a, b in falls) or 'none'}")
    if falls:
        verdict = f"holds for this model: a measurable fall between N={falls[0][0]} and N={falls[0][1]}"
    else:
        verdict = (f"refuted for this model up to N={lit[-1].n}: a slide of {lit[0].rate - lit[-1].rate:.2f}, no cliff; "
                   f"beyond N={lit[-1].n} not measured (the stand-in's cliff sits at its reading budget, a parameter)")
    return VerdictRow("10 tools fine, 20 degrade, 30–50 fall off a cliff", measured, CH1, verdict)


def selection_row() -> VerdictRow:
    """Selection is mostly right: the real model's accuracy by kind of request, at the smallest and largest N."""
    model, curves = _real_curves()
    parts = []
    for kind in ("literal", "paraphrase", "all"):
        first, last = curves[kind][0], curves[kind][-1]
        parts.append(f"{kind} {first.rate:.2f} {_interval(first.low, first.high)} at N={first.n}, "
                     f"{last.rate:.2f} {_interval(last.low, last.high)} at N={last.n}")
    literal = min(p.rate for p in curves["literal"])
    paraphrase = max(p.rate for p in curves["paraphrase"])
    if literal > 0.5 and paraphrase < 0.5:
        verdict = (f"depends on the wording: holds for literal requests (≥ {literal:.2f} at every N), "
                   f"refuted for paraphrases (≤ {paraphrase:.2f} at every N)")
    elif literal > 0.5:
        verdict = "holds for literal requests and paraphrases"
    else:
        verdict = "refuted: literal requests are not mostly right"
    return VerdictRow("Tool selection is mostly right", f"{model} (real, committed sweep): " + "; ".join(parts), CH1, verdict)


# --- tokens: no model ---------------------------------------------------------------------------------

def _public_tools(name: str):
    folder = dataset_dir(name)
    return None if folder is None else load_tools(folder)


@cache
def _real_sizes() -> tuple[int, ...] | None:
    records = _public_tools("livemcpbench")
    return None if records is None else tuple(tokens_per_tool([r.definition() for r in records]))


def schema_size_row() -> VerdictRow:
    """100–500 tokens per schema: the distribution over LiveMCPBench's 527 real MCP tools and the demo world."""
    claim, where = "Each tool schema costs 100–500 tokens", "Chapter 1 §1 (`harness.evaluation.cliff.tokens_per_tool`, cl100k)"
    sizes = _real_sizes()
    if sizes is None:
        return _absent(claim, where, "the public data (LiveMCPBench)")
    demo = tokens_per_tool(demo_tools())
    inside = sum(100 <= s <= 500 for s in sizes)
    low, high = _wilson(inside, len(sizes))
    below, above = sum(s < 100 for s in sizes) / len(sizes), sum(s > 500 for s in sizes) / len(sizes)
    measured = (f"{len(sizes)} real MCP tools (LiveMCPBench): median {statistics.median(sizes):.0f}, "
                f"{inside / len(sizes):.2f} {_interval(low, high)} in 100–500 ({below:.2f} below, {above:.2f} above, "
                f"max {max(sizes):,}); the {len(demo)} demo tools: median {statistics.median(demo):.0f}")
    verdict = (f"depends on the server: {'about half' if 0.35 <= inside / len(sizes) <= 0.65 else f'{inside / len(sizes):.0%}'} "
               "of real definitions fall in the range; terse ones cost less, a long tail far more")
    return VerdictRow(claim, measured, where, verdict)


def _wilson(hits: int, n: int) -> tuple[float, float]:
    return wilson_interval(hits, n)


def fifty_tools_row(draws: int = 1000) -> VerdictRow:
    """50 tools = 10K–25K tokens: seeded random sets of 50 real MCP tools, and the demo world's 50."""
    claim, where = "50 tools cost 10K–25K tokens per turn", "Chapter 1 §1 (`harness.evaluation.cliff.schema_token_curve`); here also 1,000 seeded draws"
    sizes = _real_sizes()
    if sizes is None:
        return _absent(claim, where, "the public data (LiveMCPBench)")
    rng = random.Random(0)
    sums = sorted(sum(rng.sample(sizes, 50)) for _ in range(draws))
    lo, hi = sums[int(0.025 * draws)], sums[int(0.975 * draws) - 1]
    inside = sum(10_000 <= s <= 25_000 for s in sums) / draws
    demo50 = next(p.tokens for p in schema_token_curve(demo_tools(), [50]))
    middle = len(sizes) // 2
    median50 = sum(sorted(sizes)[middle - 25: middle + 25])  # as Chapter 1 prints it
    measured = (f"50 random real MCP tools (LiveMCPBench, {draws:,} draws): median {statistics.median(sums):,.0f} tokens, "
                f"95 % of draws {lo:,}–{hi:,}; {inside:.0%} of draws in 10K–25K; the 50 median-sized (Chapter 1) {median50:,} — "
                f"a random 50 costs more because a few long schemas weigh in; the 50 largest {sum(sorted(sizes)[-50:]):,}; "
                f"50 demo tools {demo50:,}")
    verdict = ("holds" if inside >= 0.5 else
               f"refuted for a typical mix: 50 real tools cost about {statistics.median(sums) / 1000:.0f}K; "
               "only schema-heavy servers reach the range")
    return VerdictRow(claim, measured, where, verdict)


def cut_row() -> VerdictRow:
    """30 → 7 tools ≈ 75 % fewer schema tokens: Chapter 3 §5's measurement on the demo world."""
    catalog = ToolCatalog(demo_tools())
    queries = load_demo_queries()
    rng = random.Random(0)  # Chapter 3's draws: five sets of 30 random tools per query
    thirty = [statistics.fmean(tools_tokens(rng.sample(catalog.tools, 30)) for _ in range(5)) for _ in queries]
    cuts = {}
    for k in dict.fromkeys((7, DEFAULT_K)):
        selected = [tools_tokens(catalog.select(q.query, k)) for q in queries]
        cuts[k] = (1 - statistics.fmean(selected) / statistics.fmean(thirty),
                   bootstrap_interval([1 - s / t for s, t in zip(selected, thirty)]), statistics.fmean(selected))
    measured = (f"demo world, {len(queries)} labelled queries, 30 random tools {statistics.fmean(thirty):,.0f} tokens; "
                + "; ".join(f"{k} BM25-selected tools {tokens:,.0f}: cut {cut:.0%} (per-query mean {_interval(*ci)})"
                            + (" — the workbook's DEFAULT_K" if k == DEFAULT_K else "")
                            for k, (cut, ci, tokens) in cuts.items()))
    cut = cuts[7][0]
    verdict = (f"holds: {cut:.0%}" if abs(cut - 0.75) <= ABOUT else
               f"refuted: {cut:.0%}, {'more' if cut > 0.75 else 'less'} than claimed")
    return VerdictRow("Going from 30 to 7 tools cuts schema tokens by about 75 %", measured,
               "Chapter 3 §5 (`ToolCatalog.select`, `harness.core.tokens.tools_tokens`; Chapter 3 uses DEFAULT_K)", verdict)


# --- Chapters 3 and 4: the per-turn loop on the demo scenarios ------------------------------------------

SPLITS = ("dev", "heldout")


def missing_tools_row() -> VerdictRow:
    """The model rarely needs a tool that was not selected: per-step recall of the loop's default query."""
    parts, misses = [], {}
    for split in SPLITS:
        hits = per_step_hits(ToolCatalog(demo_tools()), load_scenarios(split), query_from_transcript, k=DEFAULT_K)
        missed = [not h for h in hits]
        low, high = bootstrap_interval(missed)
        misses[split] = (statistics.fmean(missed), low, high)
        parts.append(f"{split} scenarios: the needed tool is missing from the {DEFAULT_K} shown at "
                     f"{statistics.fmean(missed):.2f} {_interval(low, high)} of {len(hits)} steps")
    if all(low > RARELY for _, low, _ in misses.values()):
        verdict = f"refuted: the needed tool is missing at more than {RARELY:.0%} of steps on both sets"
    elif all(high <= RARELY for _, _, high in misses.values()):
        verdict = "holds"
    else:
        verdict = f"depends on the conversation: the sets disagree about {RARELY:.0%}"
    return VerdictRow("The model rarely hits missing tools", "no model (retrieval alone): " + "; ".join(parts),
               f"Chapter 3 §3 (`harness.evaluation.scenarios.per_step_hits`, transcript query, k = DEFAULT_K = {DEFAULT_K})", verdict)


async def _pivot_runs(split: str, pinned: bool):
    pivots = [s for s in load_scenarios(split) if s.kind == "pivot"]
    return summarize(await run_scenarios(
        OfflineModel(), lambda: ToolCatalog(demo_tools()), pivots,
        selector=lambda c: Selector.over(c, k=DEFAULT_K, pinned=[discovery_tool(c)] if pinned else [])))


def pivots_row() -> VerdictRow:
    """The discovery tool recovers pivots: pivot scenarios with and without it pinned, judged on effects."""
    import asyncio

    parts, called, gains, n = [], [], [], 0
    for split in SPLITS:
        without, with_tool = (asyncio.run(_pivot_runs(split, pinned)) for pinned in (False, True))
        parts.append(f"{split} ({with_tool.n} pivots): {without.success:.2f} {_interval(without.low, without.high)} without → "
                     f"{with_tool.success:.2f} {_interval(with_tool.low, with_tool.high)} pinned "
                     f"(right tools in order {without.tools_right:.2f} → {with_tool.tools_right:.2f})")
        called.append(with_tool.low > without.high)
        gains.append(f"{split} {with_tool.success - without.success:+.2f}")
        n += with_tool.n
    if all(called):
        verdict = "holds on the stand-in: the intervals separate on both sets"
    else:
        verdict = (f"not shown on the stand-in: pinned minus without, {', '.join(gains)}; the intervals overlap "
                   f"({n} pivots in all are too few to call)")
    return VerdictRow("The discovery tool recovers pivots", f"{STANDIN}, success judged on effects: " + "; ".join(parts),
               "Chapter 4 §3 (`discovery_tool` pinned via `Selector`, `run_scenarios`, `summarize`)", verdict)


# --- Chapter 6: the scale curve --------------------------------------------------------------------------

CURVE_QUERIES = "livemcpbench"
CH6 = "Chapter 6b §3, the scale curve (`harness.evaluation.scale_curve.scale_curve`, `breaks_at`; LiveMCPBench test split, 1 draw)"


@cache
def _curve():
    """The scale curve on LiveMCPBench's test tasks for BM25 and hybrid: the points, or what is missing."""
    pool, query_sets = public_pool()
    if CURVE_QUERIES not in query_sets:
        return None, "the public data (LiveMCPBench, MCP-Zero)"
    if dense_unavailable_reason() is not None:
        return None, "the embedding extra (all-MiniLM-L6-v2)"
    queries = {CURVE_QUERIES: curve_queries(query_sets, 50)[CURVE_QUERIES]}
    return scale_curve(queries, pool, retrievers=("bm25", "hybrid-rrf"), draws=1), None


def _line(points, retriever: str):
    return sorted((p for p in points if p.retriever == retriever), key=lambda p: p.size)


def bm25_breaks_row() -> VerdictRow:
    """BM25 breaks at 200+ tools: the first catalog size where its R@10 is measurably below the 50-tool value."""
    claim = "BM25 breaks at 200+ tools"
    points, missing = _curve()
    if points is None:
        return _absent(claim, CH6, missing)
    line = _line(points, "bm25")
    at = breaks_at(points, CURVE_QUERIES, "bm25")
    measured = "no model, BM25 R@10: " + "; ".join(
        f"{p.size:,} tools {p.metrics['R@10']:.2f} {_interval(*p.intervals['R@10'])}" for p in line)
    if at is None:
        verdict = f"refuted: no measurable fall up to {line[-1].size:,} tools"
    elif at >= 200:
        verdict = f"holds: the first measurable fall from 50 tools is at {at:,}"
    else:
        verdict = f"refuted in its number: BM25 already falls measurably at {at:,} tools"
    return VerdictRow(claim, measured, CH6, verdict)


def hybrid_row() -> VerdictRow:
    """Hybrid fixes it: hybrid against BM25 at the largest catalog (paired), and whether hybrid falls too."""
    claim = "Hybrid search (BM25 + embeddings) fixes it"
    points, missing = _curve()
    if points is None:
        return _absent(claim, CH6, missing)
    hybrid, bm25 = _line(points, "hybrid-rrf")[-1], _line(points, "bm25")[-1]
    low, high = paired_difference_interval(hybrid.values["R@10"], bm25.values["R@10"])
    at = breaks_at(points, CURVE_QUERIES, "hybrid-rrf")
    measured = (f"no model, at {hybrid.size:,} tools: hybrid-rrf R@10 {hybrid.metrics['R@10']:.2f} "
                f"{_interval(*hybrid.intervals['R@10'])} vs BM25 {bm25.metrics['R@10']:.2f}; difference "
                f"{hybrid.metrics['R@10'] - bm25.metrics['R@10']:+.2f} {_interval(low, high)}; "
                f"hybrid's first measurable fall: {f'{at:,} tools' if at else 'none'}")
    if low > 0 and at is None:
        verdict = "holds: better than BM25 at the largest size, and no measurable fall"
    elif low > 0:
        verdict = f"helps, does not fix: better than BM25, but it falls too (from {at:,} tools)"
    else:
        verdict = "refuted: no measurable gain over BM25 at the largest size"
    return VerdictRow(claim, measured, CH6, verdict)


# --- the swap ---------------------------------------------------------------------------------------------

def code_lines(source: str) -> int:
    """Lines holding code: not blank, not only a comment, not part of a docstring."""
    tree = ast.parse(source)
    doc_lines: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            doc_lines.update(range(body[0].lineno, body[0].end_lineno + 1))
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
    return VerdictRow("The upgrade to embeddings is a twenty-line swap", measured,
               "Chapter 6a §2 (`harness.retrieval.named.make_retriever`); lines counted by `harness.experiments.verdict.code_lines`", verdict)


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
    parser = argparse.ArgumentParser(prog="python -m harness.experiments.verdict", description=__doc__.splitlines()[0])
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
