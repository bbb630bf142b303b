"""The retrieval benchmark: every retriever on every dataset's *test* queries, in one table (``make bench``).

Introduced in Chapter 6a (``notebooks/06a_public_benchmarks.ipynb``), whose table it reproduces; its latency rows are Chapter 6b's.

    harness bench [--out bench/results.json [--overwrite]] [--quick] [--k 10]      (or python -m experiments.bench)

Every quality number comes with its 95 % bootstrap interval over queries. Development and test are
kept apart (:mod:`harness.evaluation.splits`): a quarter of each dataset is development — the only
queries any default was tuned on (:mod:`experiments.tuning`) — and no row reports it. The
``tuned`` column says which rows carry settings chosen on development ("dev"), which run a named
system's published constants ("published") and which have nothing to tune ("-").

Rows are retriever × dataset: the demo world's test queries; LiveMCPBench's test tasks, whole and
as single steps (steps carry their task's gold, so only Hit@k and MRR are shown for them — see
:func:`harness.evaluation.datasets.step_queries`); a seeded sample of ToolLens' test queries (the
development quarter is cut by *gold set*, so no tool combination of the test was tuned on). The
learned components are cross-validated inside the test part two ways, labelled in ``held_out``:
folds by query id (*memorisation*: the same jobs recur, as users repeat them) and folds by gold
set (*generalisation*: no combination on both sides). Latency rows at 500, 2,797 (MCP-Zero) and
~28,000 tools (MCP-Zero copied under renamed ids), with one more row per stage of hybrid-rrf's
query path at 2,797 tools (:mod:`workbook.evaluation.query_time`) and, on every latency row, the
1-minute load average (a busy machine is slower); the scale curve (:mod:`workbook.evaluation.scale_curve`)
gives recall against catalog size on real tools only. Index build times are measured with a warm
embedding cache. Quality is measured with every query embedded up front in batches (same vectors,
far less time); the latency columns come from re-running the first 50 queries (10 with
``--quick``) with each query embedded on its own, as a live agent would. The same rows are
written as JSON. Missing data or a missing embedding extra skips what needs it, with one
sentence each.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Sequence

import workbook.research  # noqa: F401  (the research retrievers, registered by name)
from workbook.research.rank_bm25_reference import RankBM25
from harness.evaluation.metrics import Report, evaluate
from harness.selection.ranking import DEFAULT_K, Ranker
from harness.evaluation.datasets import DATASETS, load_public, missing_data_note, step_queries
from workbook.demo.labels import demo_dataset
from harness.retrieval.dense import EmbeddingCache, Encoder, dense_unavailable_reason
from harness.retrieval.hybrid import HybridRetriever
from harness.retrieval.named import BENCH_TUNED, REGISTRY, make_retriever
from workbook.evaluation.query_time import breakdown
from harness.retrieval.records import CatalogTool, Query
from harness.evaluation.splits import By, development_split, folds
from workbook.research.task import clauses
from workbook.evaluation.scale_curve import METRICS, CurvePoint, public_pool, scale_curve, usable
from harness.core.safe_text import printable
from harness.core.tokens import tool_tokens

Factory = Callable[[Sequence[CatalogTool], Encoder], Ranker]
QUALITY_COLUMNS = ("R@1", "R@5", "R@10", "Hit@5", "MRR", "nDCG@10")
#: The columns the printed table shows (the JSON has every one of QUALITY_COLUMNS, each with its interval).
SHOWN = ("R@5", "R@10", "MRR")
Interval = tuple[float, float]


@dataclass
class BenchRow:
    dataset: str
    retriever: str
    n_queries: int = 0
    n_tools: int = 0
    metrics: dict[str, float | None] = field(default_factory=dict)
    intervals: dict[str, Interval | None] = field(default_factory=dict)  # 95 % bootstrap over queries
    tuned: str = "-"  # "dev": settings chosen on development queries; "published": a named system's constants
    held_out: str = "test"  # how the reported queries were kept from tuning and training
    build_s: float | None = None
    p50_ms: float | None = None
    p95_ms: float | None = None
    token_cut: float | None = None  # share of schema tokens saved by showing only the top k
    load: float | None = None  # 1-minute load average when the latency was measured (a busy machine is slower)


#: Chapter 8's zero-shot ideas (hierarchy, planning, expansion, a re-ranker trained on ToolLens development rows).
ZERO_SHOT = tuple(n for n, e in REGISTRY.items() if e.kind == "zero-shot idea")
#: The rows of the quality table, in the registry's order (:data:`harness.retrieval.named.REGISTRY`):
#: every entry but Chapter 2's catalog and the learned ones (cross-validated rows).
TABLE = tuple(n for n, e in REGISTRY.items() if e.kind != "learned" and n != "catalog-bm25")
#: The latency table's reference row: rank_bm25 itself, which the library's BM25 equals and outpaces.
REFERENCE = "bm25 (rank_bm25)"
DENSE_ROWS = tuple(n for n in TABLE if REGISTRY[n].needs_embeddings)
#: What each row's settings are: chosen on development queries ("dev"), a named system's published rule
#: ("published"), or nothing to tune ("-") — the registry's ``constants``.
TUNED = {n: BENCH_TUNED[e.constants] for n, e in REGISTRY.items()}


def by_name(name: str) -> Factory:
    """A factory for the retriever called ``name`` (see :func:`harness.retrieval.named.make_retriever`)."""
    return lambda t, e: make_retriever(name, t, encoder=e)


def retrievers(dense: bool, *, zero_shot: bool = True) -> dict[str, Factory]:
    """Every retriever the table compares (the dense ones only when the extra is installed).

    ``zero_shot=False`` leaves out Chapter 8's rows, for Chapter 6, which comes before them.
    """
    return {name: by_name(name) for name in TABLE
            if (dense or name not in DENSE_ROWS) and (zero_shot or name not in ZERO_SHOT)}


def token_cut(report: Report, tools: Sequence[CatalogTool], k: int) -> float:
    """1 − (tokens of the top-k definitions ÷ tokens of all definitions), averaged over queries."""
    tokens = {t.id: tool_tokens(t.definition()) for t in tools}
    total = sum(tokens.values())
    shown = [sum(tokens[i] for i in o.ranking[:k]) for o in report.outcomes]
    return 1 - sum(shown) / len(shown) / total


def quality_row(dataset: str, name: str, report: Report, tools: Sequence[CatalogTool], build_s: float,
                k: int, hit_only: bool = False, held_out: str = "test", registered: str | None = None) -> BenchRow:
    """One table row: every quality column with its 95 % interval over the report's queries (``registered``:
    the registry's name for a row named otherwise, such as the usage prior's ``hybrid-task+usage``)."""
    m = report.metrics()
    shown = [c for c in QUALITY_COLUMNS if not (hit_only and c.startswith(("R@", "nDCG")))]
    # steps are not aligned to slots: recall and nDCG over the task's slots would mislead, so they stay empty
    metrics: dict[str, float | None] = {c: m[c] if c in shown else None for c in QUALITY_COLUMNS}
    intervals: dict[str, Interval | None] = {c: report.interval(c) if c in shown else None for c in QUALITY_COLUMNS}
    tuned = TUNED[registered or name]
    return BenchRow(dataset, name, len(report.outcomes), len(tools), metrics, intervals, tuned, held_out, build_s,
               m["p50_ms"], m["p95_ms"], token_cut(report, tools, k))


def timed_build(factory: Factory, tools: Sequence[CatalogTool], encoder: Encoder) -> tuple[Ranker, float]:
    start = time.perf_counter()
    r = factory(tools, encoder)
    return r, time.perf_counter() - start


def bench_encoder(texts: Sequence[str], dense: bool) -> Encoder:
    """An encoder that already holds every query's (and clause's) vector, embedded in batches."""
    encoder = Encoder(remember=1_000_000, disk=EmbeddingCache())
    if dense:
        encoder.encode(list(dict.fromkeys(t for text in texts for t in (text, *clauses(text)))))
    return encoder


def live_latency(r: Ranker, queries: Sequence[Query], encoder: Encoder, n: int) -> Report:
    """The first ``n`` queries again, each embedded on its own as a live agent would."""
    remembered, encoder.remember = encoder.remember, 0
    try:
        return evaluate(r, queries[:n])
    finally:
        encoder.remember = remembered


def bench_dataset(tools: Sequence[CatalogTool], query_sets: dict[str, list[Query]],
                  factories: dict[str, Factory], k: int, dense: bool, latency_n: int) -> list[BenchRow]:
    """Each retriever built once on ``tools`` and evaluated on each named query set."""
    encoder = bench_encoder([q.query for queries in query_sets.values() for q in queries], dense)
    rows = []
    for name, factory in factories.items():
        r, build = timed_build(factory, tools, encoder)
        for label, queries in query_sets.items():
            row = quality_row(label, name, evaluate(r, queries, name=name), tools, build, k,
                              hit_only=label.endswith("-step"))
            timing = live_latency(r, queries, encoder, latency_n)
            row.p50_ms, row.p95_ms, row.load = timing.latency_ms(50), timing.latency_ms(95), os.getloadavg()[0]
            rows.append(row)
    return rows


#: The two held-out questions a learned component answers (:mod:`harness.evaluation.splits`).
HELD_OUT: dict[By, str] = {"query": "cv by query id (memorisation)", "gold": "cv by gold set (generalisation)"}


def cross_validated(tools: Sequence[CatalogTool], log: Sequence[Query], scored: Sequence[Query],
                    learn: Callable[[list[Query]], Ranker], dataset: str, k: int, by: By,
                    n_folds: int = 5, registered: str = "learned-querylog") -> tuple[BenchRow, Report]:
    """A learned retriever trained on ``log`` outside each fold and evaluated on the ``scored`` queries inside it.

    ``scored`` is a subset of ``log`` (all of it, or a sample); folds are cut ``by`` query id or gold set;
    ``registered`` is the learner's name in the registry.
    """
    outcomes: list = []
    build, name, used = 0.0, "", 0
    scored_ids = {q.qid for q in scored}
    for fold in range(n_folds):
        train, test = folds(log, fold, n_folds, by=by)
        test = [q for q in test if q.qid in scored_ids]
        if not test or not train:  # a small set can leave a fold empty
            continue
        start = time.perf_counter()
        learned = learn(train)
        build += time.perf_counter() - start
        name, used = learned.name, used + 1
        outcomes += evaluate(learned, test).outcomes
    order = {q.qid: i for i, q in enumerate(scored)}
    report = Report(name, (1, 5, 10), sorted(outcomes, key=lambda o: order[o.query.qid]))  # paired with other rows
    return quality_row(dataset, name, report, tools, build / used, k, held_out=HELD_OUT[by], registered=registered), report


def toollens_split(queries: Sequence[Query], sample: int, seed: int = 0) -> tuple[list[Query], list[Query]]:
    """(test part, a seeded sample of it): development is a quarter of ToolLens' gold sets, never reported."""
    test = development_split(queries, by="gold", seed=seed).test
    return test, random.Random(seed).sample(test, min(sample, len(test)))


def bench_toollens(tools: Sequence[CatalogTool], queries: list[Query], factories: dict[str, Factory],
                   sample: int, k: int, dense: bool, latency_n: int, seed: int = 0) -> list[BenchRow]:
    """ToolLens' test part: every retriever on a seeded sample; the query-log retriever trained on the
    test part outside each fold, with folds by query id and by gold set (two rows)."""
    test, scored = toollens_split(queries, sample, seed)
    rows = bench_dataset(tools, {"toollens-test": scored}, factories, k, dense, latency_n)
    base = make_retriever("bm25-fielded", tools)

    def learned(log: list[Query]) -> Ranker:
        return make_retriever("learned-querylog", tools, log=log, base=base)

    rows += [cross_validated(tools, test, scored, learned, "toollens-test", k, by)[0] for by in ("query", "gold")]
    return rows


def bench_usage(tools: Sequence[CatalogTool], queries: list[Query], dense: bool, k: int,
                latency_n: int = 10) -> list[BenchRow]:
    """The usage prior on LiveMCPBench's test tasks, learned from the other folds' tasks: folds by query id
    and by gold set (latency: the first ``latency_n`` tasks again, each embedded on its own)."""
    encoder = bench_encoder([q.query for q in queries], dense)
    base = make_retriever("hybrid-task" if dense else "bm25-fielded", tools, encoder=encoder)

    def usage(log: list[Query]) -> Ranker:
        return make_retriever("usage-prior", tools, log=log, base=base)

    rows = [cross_validated(tools, queries, queries, usage, "livemcp-test", k, by, registered="usage-prior")[0]
            for by in ("query", "gold")]
    timing = live_latency(usage(queries), queries, encoder, latency_n)
    for row in rows:
        row.p50_ms, row.p95_ms, row.load = timing.latency_ms(50), timing.latency_ms(95), os.getloadavg()[0]
    return rows


def scaled(tools: Sequence[CatalogTool], copies: int) -> list[CatalogTool]:
    """The catalog ``copies`` times over, each copy under renamed ids (same definitions)."""
    return [replace(t, id=f"{t.id}~{c}") if c else t for c in range(copies) for t in tools]


def bench_latency(catalog: Sequence[CatalogTool], queries: Sequence[str], dense: bool, quick: bool) -> list[BenchRow]:
    """p50/p95 query latency of rank_bm25 vs the library's BM25 (an inverted index) vs hybrid, at growing catalog sizes
    (hybrid only in the full run: its first run embeds the whole catalog), and where hybrid-rrf's
    time goes at the catalog's own size (:mod:`workbook.evaluation.query_time`)."""
    names = ["bm25"] + (["hybrid-rrf", "hierarchical", "hybrid-rrf+plan", "rerank-lr"] if dense and not quick else [])
    factories: dict[str, Factory] = {REFERENCE: lambda t, e: RankBM25(t), **{name: by_name(name) for name in names}}
    sizes = [("scale-500", list(catalog[:500])), (f"scale-{len(catalog)}", list(catalog))]
    if not quick:
        big = scaled(catalog, 10)
        sizes.append((f"scale-{len(big)}", big))
    query_set = [Query(qid=str(i), query=q, gold=("-",)) for i, q in enumerate(queries)]
    rows = []
    encoder = Encoder(remember=0)  # every query embedded on its own: this is the latency table
    for label, tools in sizes:
        for name, factory in factories.items():
            r, build = timed_build(factory, tools, encoder)
            report = evaluate(r, query_set, name=name)
            rows.append(BenchRow(label, name, len(query_set), len(tools), build_s=build,
                            p50_ms=report.latency_ms(50), p95_ms=report.latency_ms(95), load=os.getloadavg()[0]))
            if name == "hybrid-rrf" and isinstance(r, HybridRetriever) and len(tools) == len(catalog):
                rows += stage_rows(r, queries, f"stages-{len(tools)}", len(tools))
    return rows


def stage_rows(hybrid: HybridRetriever, queries: Sequence[str], label: str, tools: int) -> list[BenchRow]:
    """One latency row per stage of a hybrid query (tokenizer, embedding layers, catalog, BM25, fusion)."""
    times = breakdown(hybrid, queries)
    return [BenchRow(label, f"hybrid-rrf: {stage}", len(queries), tools, p50_ms=times.percentile(stage, 50),
                p95_ms=times.percentile(stage, 95), load=os.getloadavg()[0]) for stage in times.wall]


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def with_interval(value: float | None, interval: Interval | None) -> str:
    """``0.407 [0.35–0.46]``: a number with its 95 % interval (``-`` where there is none)."""
    return "-" if value is None or interval is None else f"{value:.3f} [{interval[0]:.2f}–{interval[1]:.2f}]"


def bench_table(rows: Sequence[BenchRow], k: int) -> str:
    """The quality rows with intervals, then the latency rows (rows without quality numbers)."""
    quality = [r for r in rows if r.metrics]
    head = (f"{'dataset':<18} {'retriever':<24} {'tuned':<9} {'held out':<31} {'n':>5} {'tools':>5} "
            + " ".join(f"{c + ' [95 % CI]':>19}" for c in SHOWN) + f" {f'cut@{k}':>6}")
    lines = [head, "-" * len(head)]
    for r in quality:
        lines.append(f"{r.dataset:<18} {r.retriever:<24} {r.tuned:<9} {r.held_out:<31} {r.n_queries:>5} {r.n_tools:>5} "
                     + " ".join(f"{with_interval(r.metrics.get(c), r.intervals.get(c)):>19}" for c in SHOWN)
                     + f" {_fmt(r.token_cut, 2):>6}")
    timing = [r for r in rows if r.p50_ms is not None]
    head = (f"{'dataset':<18} {'retriever':<30} {'held out':<31} {'n':>5} {'tools':>6} {'build_s':>8} {'p50_ms':>7} "
            f"{'p95_ms':>7} {'load':>5}")
    lines += ["", head, "-" * len(head)]
    for r in timing:
        lines.append(f"{r.dataset:<18} {r.retriever:<30} {r.held_out:<31} {r.n_queries:>5} {r.n_tools:>6} "
                     f"{_fmt(r.build_s, 2):>8} {_fmt(r.p50_ms, 2):>7} {_fmt(r.p95_ms, 2):>7} {_fmt(r.load, 1):>5}")
    return "\n".join(lines)


def curve_table(points: Sequence[CurvePoint]) -> str:
    """The scale curve: each metric with its 95 % interval, per query set, retriever and catalog size."""
    head = f"{'queries':<14} {'retriever':<14} {'tools':>6} {'n':>4} " + " ".join(f"{c + ' [95 % CI]':>19}" for c in METRICS)
    lines = [head, "-" * len(head)]
    for p in points:
        lines.append(f"{p.queries:<14} {p.retriever:<14} {p.size:>6} {p.n_queries:>4} "
                     + " ".join(f"{with_interval(p.metrics[c], p.intervals[c]):>19}" for c in METRICS))
    return "\n".join(lines)


def curve_queries(query_sets: dict[str, list[Query]], sample: int, seed: int = 0) -> dict[str, list[Query]]:
    """The scale curve's queries: each set's test part (ToolLens: a seeded sample of it)."""
    out = {}
    for name, queries in query_sets.items():
        if name == "toollens_train":
            out[name] = toollens_split(queries, sample, seed)[1]
        else:
            out[name] = development_split(queries, seed=seed).test
    return out


def run(quick: bool = False, k: int = 5, say: Callable[[str], None] = print
        ) -> tuple[list[BenchRow], list[CurvePoint], list[str]]:
    """Every benchmark row, the scale curve, and the sentences saying what was skipped.

    The public files are read and checked first, so a malformed line stops the run before minutes of work.
    """
    public = {name: load_public(name) for name in DATASETS}
    skipped: list[str] = []
    reason = dense_unavailable_reason()
    if reason:
        skipped.append(reason)
    else:
        Encoder().encode(["warm up"])  # load the model once, outside every timed build
    dense = reason is None
    factories = retrievers(dense)
    latency_n = 10 if quick else 50
    rows: list[BenchRow] = []
    try:
        tools, queries = demo_dataset()
        test = development_split(queries).test
        say(f"demo world: {len(tools)} tools, {len(test)} test queries of {len(queries)}")
        rows += bench_dataset(tools, {"demo-test": test}, factories, k, dense, latency_n)
    except ImportError as exc:
        skipped.append(f"The demo world is not importable ({exc}): skipping its rows.")
    step_texts: list[str] = []
    if public["livemcpbench"]:
        tools, queries = public["livemcpbench"]
        test = development_split(queries).test
        steps = step_queries(test)
        step_texts = [q.query for q in steps]
        say(f"livemcpbench: {len(tools)} tools, {len(test)} test tasks of {len(queries)}, {len(steps)} steps")
        rows += bench_dataset(tools, {"livemcp-test": test, "livemcp-test-step": steps}, factories, k, dense, latency_n)
        rows += bench_usage(tools, test, dense, k, latency_n)
    else:
        skipped.append(missing_data_note("livemcpbench"))
    if public["toollens_train"]:
        tools, queries = public["toollens_train"]
        say(f"toollens_train: {len(tools)} tools, {len(queries)} queries (a quarter of the gold sets for development)")
        rows += bench_toollens(tools, queries, factories, sample=100 if quick else 1000, k=k, dense=dense,
                               latency_n=latency_n)
    else:
        skipped.append(missing_data_note("toollens_train"))
    if public["mcpzero_catalog"]:
        catalog = public["mcpzero_catalog"][0]
        texts = step_texts or [t.description for t in catalog[::25]]
        texts = texts[:60] if quick else texts
        say(f"latency: {len(texts)} queries over 500 / {len(catalog)}" + ("" if quick else f" / {10 * len(catalog)}") + " tools")
        rows += bench_latency(catalog, texts, dense=reason is None, quick=quick)
    else:
        skipped.append(missing_data_note("mcpzero_catalog"))
    pool, query_sets = public_pool()
    say(f"scale curve: a pool of {len(pool)} real tools")
    curve = scale_curve(curve_queries(query_sets, 50 if quick else 100), pool,
                        retrievers=usable(), draws=1 if quick else 3, say=say)
    return rows, curve, skipped


def out_problem(out: Path, overwrite: bool = False) -> str | None:
    """Why the results file cannot be written there (checked before the run, not after it), or None.

    An existing file is replaced only when asked; the folder must take a new file, since the results are
    written beside it first and then moved over it (tried, not read from permission bits: root passes those)."""
    if out.is_dir():
        return f"--out {out} is a folder: name the JSON file to write, e.g. {out / 'results.json'}."
    folder = next((p for p in out.parents if p.exists()), Path("."))
    if not folder.is_dir():
        return f"--out {out} cannot be written: {folder} is a file, not a folder."
    if out.exists() and not overwrite:
        return f"--out {out} already exists: pass --overwrite to replace it, or name another file."
    if out.exists() and not out.is_file():
        return f"--out {out} cannot be written: it is not a regular file."
    try:
        tempfile.TemporaryFile(dir=folder).close()
    except OSError as exc:
        return f"--out {out} cannot be written: {folder} does not take new files ({exc.strerror or exc})."
    return None


def write_results(out: Path, text: str) -> Path:
    """Write the results to ``out`` whole (beside it, then moved over it), or, when that fails, to a new file in the
    temp folder; return where they are. The run's results are never lost to a path that went bad meanwhile."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=out.parent, prefix=f".{out.name}.", suffix=".tmp", delete=False) as f:
            f.write(text)
        os.replace(f.name, out)
        return out
    except OSError:
        fd, kept = tempfile.mkstemp(prefix="bench-results-", suffix=".json")
        with os.fdopen(fd, "w") as spare:
            spare.write(text)
        return Path(kept)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="harness bench", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench/results.json", help="where to write the JSON (default bench/results.json)")
    parser.add_argument("--overwrite", action="store_true", help="replace --out if it exists (else the run refuses to start)")
    parser.add_argument("--quick", action="store_true",
                        help="small samples, BM25-only latency, no 28,000-tool catalog, one draw of the scale curve (minutes once embeddings are cached)")
    parser.add_argument("--k", type=int, default=DEFAULT_K, help=f"tools shown per turn, for the schema-token cut (default {DEFAULT_K})")
    args = parser.parse_args(argv)
    if args.k <= 0:
        print(f"error: --k must be a positive number of tools, got {args.k}.", file=sys.stderr)
        return 2
    out = Path(args.out)
    problem = out_problem(out, args.overwrite)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    try:
        rows, curve, skipped = run(args.quick, args.k, say=lambda s: print(s, file=sys.stderr))
    except (ValueError, FileNotFoundError) as exc:  # a malformed data file: one sentence, found before the work
        print(printable(f"error: {exc}", keep_newlines=False), file=sys.stderr)
        return 2
    print(bench_table(rows, args.k))
    print()
    print(curve_table(curve))
    for sentence in skipped:
        print(f"skipped: {sentence}")
    meta = {"quick": args.quick, "k": args.k, "python": platform.python_version(), "cpus": os.cpu_count(),
            "seconds": round(time.perf_counter() - start, 1)}
    wrote = write_results(out, json.dumps({"meta": meta, "rows": [r.__dict__ for r in rows],
                                           "scale_curve": [p.as_dict() for p in curve], "skipped": skipped}, indent=1))
    if wrote != out:
        print(f"error: could not write --out {out}; the results are in {wrote}.", file=sys.stderr)
        return 1
    print(f"wrote {out} ({meta['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
