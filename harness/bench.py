"""The retrieval benchmark: every retriever on every dataset, in one table (``make bench``).

Introduced in Chapter 6 (``notebooks/06_beyond_bm25.ipynb``), whose numbers it reproduces.

    harness bench [--out bench/results.json] [--quick] [--k 5]      (or python -m harness.bench)

Rows are retriever × dataset: the demo world; LiveMCPBench as whole tasks and as single steps
(steps carry their task's gold, so only Hit@k and MRR are shown for them — see
:func:`harness.retrieval.datasets.step_queries`); ToolLens train in 5 folds by query-id hash,
a fixed sample per held-out fold, with the learned retriever trained only on the other folds
(the usage prior is cross-validated the same way on LiveMCPBench's tasks);
and latency rows at 500, 2,797 (MCP-Zero) and ~28,000 tools (MCP-Zero copied under renamed
ids). Index build times are measured with a warm embedding cache (the first run embeds each
catalog once). Quality is measured with every query embedded up front in batches (same vectors,
far less time); the latency columns come from re-running the first 50 queries (10 with
``--quick``) with each query embedded on its own, as a live agent would. The same rows are written as JSON. Missing data or a missing embedding extra
skips what needs it, with one sentence each.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Sequence

from harness.eval import Report, evaluate
from harness.ranking import Ranker
from harness.retrieval.datasets import (dataset_dir, demo_dataset, load_queries, load_tools,
                                        missing_data_note, step_queries)
from harness.retrieval.dense import DenseRetriever, Encoder, dense_unavailable_reason
from harness.retrieval.fielded import FieldedBM25
from harness.retrieval.learned import QueryLogRetriever
from harness.retrieval.named import make_retriever
from harness.retrieval.records import CatalogTool, Query
from harness.retrieval.splits import folds
from harness.retrieval.task import TaskRetriever, clauses
from harness.retrieval.usage import UsagePriorRetriever
from harness.tokens import tool_tokens

Factory = Callable[[Sequence[CatalogTool], Encoder], Ranker]
QUALITY_COLUMNS = ("R@1", "R@5", "R@10", "Hit@5", "MRR", "nDCG@10")


@dataclass
class Row:
    dataset: str
    retriever: str
    n_queries: int = 0
    n_tools: int = 0
    metrics: dict[str, float | None] = field(default_factory=dict)
    build_s: float | None = None
    p50_ms: float | None = None
    p95_ms: float | None = None
    token_cut: float | None = None  # share of schema tokens saved by showing only the top k


#: The rows of the quality table, in order (built by :func:`harness.retrieval.named.make_retriever`).
TABLE = ("bm25", "bm25-fielded", "pizzapi-substring", "stackone-bm25-tfidf",
         "dense-minilm", "hybrid-rrf", "stacklok-split", "hybrid-task")
DENSE_ROWS = ("dense-minilm", "hybrid-rrf", "stacklok-split", "hybrid-task")


def by_name(name: str) -> Factory:
    """A factory for the retriever called ``name`` (see :func:`harness.retrieval.named.make_retriever`)."""
    return lambda t, e: make_retriever(name, t, encoder=e)


def retrievers(dense: bool) -> dict[str, Factory]:
    """Every retriever the table compares (the dense ones only when the extra is installed)."""
    return {name: by_name(name) for name in TABLE if dense or name not in DENSE_ROWS}


def token_cut(report: Report, tools: Sequence[CatalogTool], k: int) -> float:
    """1 − (tokens of the top-k definitions ÷ tokens of all definitions), averaged over queries."""
    tokens = {t.id: tool_tokens(t.definition()) for t in tools}
    total = sum(tokens.values())
    shown = [sum(tokens[i] for i in o.ranking[:k]) for o in report.outcomes]
    return 1 - sum(shown) / len(shown) / total


def quality_row(dataset: str, name: str, report: Report, tools: Sequence[CatalogTool], build_s: float,
                k: int, hit_only: bool = False) -> Row:
    m = report.metrics()
    metrics: dict[str, float | None] = {c: m[c] for c in QUALITY_COLUMNS}
    if hit_only:  # steps are not aligned to slots: recall and nDCG over the task's slots would mislead
        metrics.update({"R@1": None, "R@5": None, "R@10": None, "nDCG@10": None})
    return Row(dataset, name, len(report.outcomes), len(tools), metrics, build_s,
               m["p50_ms"], m["p95_ms"], token_cut(report, tools, k))


def timed_build(factory: Factory, tools: Sequence[CatalogTool], encoder: Encoder) -> tuple[Ranker, float]:
    start = time.perf_counter()
    r = factory(tools, encoder)
    return r, time.perf_counter() - start


def bench_encoder(texts: Sequence[str], dense: bool) -> Encoder:
    """An encoder that already holds every query's (and clause's) vector, embedded in batches."""
    encoder = Encoder(remember=1_000_000)
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
                  factories: dict[str, Factory], k: int, dense: bool, latency_n: int) -> list[Row]:
    """Each retriever built once on ``tools`` and evaluated on each named query set."""
    encoder = bench_encoder([q.query for queries in query_sets.values() for q in queries], dense)
    rows = []
    for name, factory in factories.items():
        r, build = timed_build(factory, tools, encoder)
        for label, queries in query_sets.items():
            row = quality_row(label, name, evaluate(r, queries, name=name), tools, build, k,
                              hit_only=label.endswith("-step"))
            timing = live_latency(r, queries, encoder, latency_n)
            row.p50_ms, row.p95_ms = timing.latency_ms(50), timing.latency_ms(95)
            rows.append(row)
    return rows


def cross_validated(tools: Sequence[CatalogTool], splits: Sequence[tuple[list[Query], list[Query]]],
                    learn: Callable[[list[Query]], Ranker], dataset: str, k: int) -> Row:
    """A learned retriever trained on each split's log and evaluated on its held-out queries only."""
    outcomes, build, name = [], 0.0, ""
    used = [split for split in splits if split[1]]  # a small set can leave a fold empty
    for train, test in used:
        start = time.perf_counter()
        learned = learn(train)
        build += time.perf_counter() - start
        name = learned.name
        outcomes += evaluate(learned, test).outcomes
    return quality_row(dataset, name, Report(name, (1, 5, 10), outcomes), tools, build / len(used), k)


def bench_toollens(tools: Sequence[CatalogTool], queries: list[Query], factories: dict[str, Factory],
                   per_fold: int, k: int, dense: bool, latency_n: int, seed: int = 0) -> list[Row]:
    """ToolLens in 5 folds by qid hash: a seeded sample of each held-out fold; the learned
    retriever is trained on the other four folds every time."""
    rng = random.Random(seed)
    splits = []
    for fold in range(5):
        train, test = folds(queries, fold)
        splits.append((train, rng.sample(test, min(per_fold, len(test)))))
    held_out = [q for _, test in splits for q in test]
    rows = bench_dataset(tools, {"toollens-heldout": held_out}, factories, k, dense, latency_n)
    base = FieldedBM25(tools)
    rows.append(cross_validated(tools, splits, lambda log: QueryLogRetriever(log, base), "toollens-heldout", k))
    return rows


def bench_usage(tools: Sequence[CatalogTool], queries: list[Query], dense: bool, k: int,
                latency_n: int = 10) -> Row:
    """LiveMCPBench tasks in 5 folds by qid hash: the usage prior learned from four, tested on the fifth
    (latency: the first ``latency_n`` tasks again, each embedded on its own)."""
    encoder = bench_encoder([q.query for q in queries], dense)
    base = TaskRetriever(tools, dense=DenseRetriever(tools, encoder=encoder)) if dense else FieldedBM25(tools)
    splits = [folds(queries, fold) for fold in range(5)]
    row = cross_validated(tools, splits, lambda log: UsagePriorRetriever(log, base), "livemcp-task", k)
    timing = live_latency(UsagePriorRetriever(queries, base), queries, encoder, latency_n)
    row.p50_ms, row.p95_ms = timing.latency_ms(50), timing.latency_ms(95)
    return row


def scaled(tools: Sequence[CatalogTool], copies: int) -> list[CatalogTool]:
    """The catalog ``copies`` times over, each copy under renamed ids (same definitions)."""
    return [replace(t, id=f"{t.id}~{c}") if c else t for c in range(copies) for t in tools]


def bench_latency(catalog: Sequence[CatalogTool], queries: Sequence[str], dense: bool, quick: bool) -> list[Row]:
    """p50/p95 query latency of rank_bm25 vs the inverted index vs hybrid, at growing catalog sizes
    (hybrid only in the full run: its first run embeds the whole catalog)."""
    names = ["bm25", "bm25-inverted"] + (["hybrid-rrf"] if dense and not quick else [])
    factories = {name: by_name(name) for name in names}
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
            rows.append(Row(label, name, len(query_set), len(tools), {}, build,
                            report.latency_ms(50), report.latency_ms(95)))
    return rows


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def table(rows: Sequence[Row], k: int) -> str:
    head = (f"{'dataset':<20} {'retriever':<20} {'n':>5} {'tools':>6} "
            + " ".join(f"{c:>7}" for c in QUALITY_COLUMNS)
            + f" {'build_s':>8} {'p50_ms':>7} {'p95_ms':>7} {f'cut@{k}':>7}")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r.dataset:<20} {r.retriever:<20} {r.n_queries:>5} {r.n_tools:>6} "
                     + " ".join(f"{_fmt(r.metrics.get(c)):>7}" for c in QUALITY_COLUMNS)
                     + f" {_fmt(r.build_s, 2):>8} {_fmt(r.p50_ms, 2):>7} {_fmt(r.p95_ms, 2):>7}"
                     + f" {_fmt(r.token_cut):>7}")
    return "\n".join(lines)


def run(quick: bool = False, k: int = 5, say: Callable[[str], None] = print) -> tuple[list[Row], list[str]]:
    """Every benchmark row, and the sentences saying what was skipped."""
    skipped: list[str] = []
    reason = dense_unavailable_reason()
    if reason:
        skipped.append(reason)
    else:
        Encoder().encode(["warm up"])  # load the model once, outside every timed build
    dense = reason is None
    factories = retrievers(dense)
    latency_n = 10 if quick else 50
    rows: list[Row] = []
    try:
        tools, queries = demo_dataset()
        say(f"demo world: {len(tools)} tools, {len(queries)} queries")
        rows += bench_dataset(tools, {"demo": queries}, factories, k, dense, latency_n)
    except ImportError as exc:
        skipped.append(f"The demo world is not importable ({exc}): skipping its rows.")
    step_texts: list[str] = []
    folder = dataset_dir("livemcpbench")
    if folder:
        tools, queries = load_tools(folder), load_queries(folder)
        steps = step_queries(queries)
        step_texts = [q.query for q in steps]
        say(f"livemcpbench: {len(tools)} tools, {len(queries)} tasks, {len(steps)} steps")
        rows += bench_dataset(tools, {"livemcp-task": queries, "livemcp-step": steps}, factories, k, dense, latency_n)
        rows.append(bench_usage(tools, queries, dense, k, latency_n))
    else:
        skipped.append(missing_data_note("livemcpbench"))
    folder = dataset_dir("toollens_train")
    if folder:
        tools, queries = load_tools(folder), load_queries(folder)
        say(f"toollens_train: {len(tools)} tools, {len(queries)} queries (5 folds by qid hash)")
        rows += bench_toollens(tools, queries, factories, per_fold=20 if quick else 200, k=k, dense=dense,
                               latency_n=latency_n)
    else:
        skipped.append(missing_data_note("toollens_train"))
    folder = dataset_dir("mcpzero_catalog")
    if folder:
        catalog = load_tools(folder)
        texts = step_texts or [t.description for t in catalog[::25]]
        texts = texts[:60] if quick else texts
        say(f"latency: {len(texts)} queries over 500 / {len(catalog)}" + ("" if quick else f" / {10 * len(catalog)}") + " tools")
        rows += bench_latency(catalog, texts, dense=reason is None, quick=quick)
    else:
        skipped.append(missing_data_note("mcpzero_catalog"))
    return rows, skipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="harness bench", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench/results.json", help="where to write the JSON (default bench/results.json)")
    parser.add_argument("--quick", action="store_true",
                        help="small samples, BM25-only latency, no 28,000-tool catalog (about a minute once embeddings are cached)")
    parser.add_argument("--k", type=int, default=5, help="tools shown per turn, for the schema-token cut (default 5)")
    args = parser.parse_args(argv)
    if args.k <= 0:
        print(f"error: --k must be a positive number of tools, got {args.k}.", file=sys.stderr)
        return 2
    start = time.perf_counter()
    rows, skipped = run(args.quick, args.k, say=lambda s: print(s, file=sys.stderr))
    print(table(rows, args.k))
    for sentence in skipped:
        print(f"skipped: {sentence}")
    meta = {"quick": args.quick, "k": args.k, "python": platform.python_version(), "cpus": os.cpu_count(),
            "seconds": round(time.perf_counter() - start, 1)}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"meta": meta, "rows": [r.__dict__ for r in rows], "skipped": skipped}, indent=1))
    print(f"wrote {out} ({meta['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
