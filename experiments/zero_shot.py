"""Chapter 8's measurement: each zero-shot idea against hybrid search, tuned on development rows only.

Introduced in Chapter 8a (``notebooks/08a_zero_shot_ideas.ipynb``).

    python -m experiments.zero_shot [--out experiments/data/zero_shot_results.json]

rebuilds the committed artefact (about 15 minutes of CPU on two cores with a cold embedding cache)
that the chapter reads. The procedure, fixed before any test row was scored:

1. Rows: :func:`harness.evaluation.splits.development_split` — a quarter of LiveMCPBench's tasks and
   of the demo world's queries by query id, a quarter of ToolLens' gold sets — is development; the
   rest is test. Every number the chapter reports is a test number.
2. Tuning: two knobs, each with a short grid whose first entry is the setting written before any
   score was seen — the number of servers of :class:`~workbook.research.hierarchical.HierarchicalRetriever`
   (3, 2, 5) and the splitter of :class:`~workbook.research.planning.PlannedRetriever`
   (the step splitter, or Chapter 6's finer clauses) — chosen by the mean over the development sets.
3. Training: the re-ranker shipped as ``rerank-lr`` is fitted on ToolLens development queries only
   (another catalog, another kind of query), so on LiveMCPBench and the demo world it is zero-shot;
   the *reverse* model is fitted on LiveMCPBench's and the demo world's development rows and scored
   on ToolLens' test rows.
4. Report: per test query, LiveMCPBench whole-task R@10, step-level Hit@5 (steps of test tasks),
   ToolLens R@10 and the demo world's R@5; means with 95 % bootstrap intervals, and each idea's
   paired difference from hybrid-rrf (a difference is called only when its interval excludes 0).
5. Latency: p50 per query at 2,797 tools (MCP-Zero), each query embedded on its own.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from experiments import DATA
from harness.evaluation.metrics import evaluate
from harness.selection.ranking import Ranker
from harness.core.rates import bootstrap_interval, paired_difference_interval
from harness.evaluation.datasets import dataset_dir, load_queries, load_tools, step_queries
from workbook.demo.labels import demo_dataset
from harness.retrieval.dense import EmbeddingCache, Encoder
from harness.retrieval.named import make_retriever
from harness.retrieval.records import CatalogTool, Query
from workbook.research.rerank import FeatureExtractor, LinearModel, fit, training_rows
from harness.evaluation.splits import development_split
from workbook.research.task import clauses
from workbook.steps import split_steps
from harness.core.json_types import JSON, JSONObject

ARTEFACT = "zero_shot_results.json"
BASELINE = "hybrid-rrf"
#: What each dataset is scored by (per query), and the short names the chapter uses.
METRIC = {"livemcp-task": "R@10", "livemcp-step": "Hit@5", "toollens": "R@10", "demo": "R@5"}
SPLITTERS: dict[str, Callable[[str], Sequence[str]]] = {"steps": split_steps, "clauses": clauses}
GRID: dict[str, list[JSON]] = {"servers": [3, 2, 5], "splitter": ["steps", "clauses"]}
#: Which idea each knob belongs to, and every knob's setting written before any score was seen.
TUNES = {"servers": "hierarchical", "splitter": "hybrid-rrf+plan"}
UNTUNED = {knob: grid[0] for knob, grid in GRID.items()}
TOOLLENS_SAMPLE = {"development": 300, "test": 400}
REBUILD = "python -m experiments.zero_shot --out experiments/data/zero_shot_results.json"


@dataclass
class Catalog:
    """One catalog with its development and test query sets (by the dataset names of :data:`METRIC`)."""

    tools: list[CatalogTool]
    development: dict[str, list[Query]]
    test: dict[str, list[Query]]


def catalogs(seed: int = 0) -> dict[str, Catalog]:
    """The catalogs present here (missing public data is simply absent from the result)."""
    out: dict[str, Catalog] = {}
    folder = dataset_dir("livemcpbench")
    if folder:
        split = development_split(load_queries(folder), seed=seed)
        out["livemcpbench"] = Catalog(load_tools(folder),
                                      {"livemcp-task": split.development, "livemcp-step": step_queries(split.development)},
                                      {"livemcp-task": split.test, "livemcp-step": step_queries(split.test)})
    folder = dataset_dir("toollens_train")
    if folder:
        split = development_split(load_queries(folder), by="gold", seed=seed)
        rng = random.Random(seed)
        out["toollens"] = Catalog(load_tools(folder),
                                  {"toollens": rng.sample(split.development, TOOLLENS_SAMPLE["development"])},
                                  {"toollens": rng.sample(split.test, TOOLLENS_SAMPLE["test"])})
    tools, queries = demo_dataset()
    split = development_split(queries, seed=seed)
    out["demo"] = Catalog(tools, {"demo": split.development}, {"demo": split.test})
    return out


def per_query(r: Ranker, queries: Sequence[Query], dataset: str) -> list[float]:
    """The dataset's metric for each query, in order."""
    return evaluate(r, queries).values(METRIC[dataset])


def variants(tools: Sequence[CatalogTool], encoder: Encoder | None, servers: int, splitter: str,
             only: Sequence[str] | None = None) -> dict[str, Ranker]:
    """The baseline and each idea (or ``only`` those named), built over one catalog (the re-ranker is
    added by the caller)."""
    encoder = encoder or Encoder()
    hybrid = make_retriever(BASELINE, tools, encoder=encoder)  # one index, shared by the ideas built on it
    settings: dict[str, JSONObject] = {BASELINE: {}, "hybrid-task": {}, "bm25-fielded": {}, "hybrid-rrf+expand": {},
                                           "hierarchical": {"servers": servers, "tool_ranker": hybrid},
                                           "hybrid-rrf+plan": {"base": hybrid, "splitter": SPLITTERS[splitter]}}
    order = ("bm25-fielded", BASELINE, "hybrid-task", "hierarchical", "hybrid-rrf+plan", "hybrid-rrf+expand")
    return {name: hybrid if name == BASELINE else make_retriever(name, tools, encoder=encoder, **settings[name])
            for name in order if only is None or name in only}


def tune_ideas(cats: dict[str, Catalog], encoder: Encoder) -> JSONObject:
    """Each knob's grid scored on the development sets only; the best mean wins (the first on a tie)."""
    chosen: JSONObject = {}
    scores: dict[str, dict[str, float]] = {}
    for knob, grid in GRID.items():
        scores[knob] = {}
        for value in grid:
            means = []
            for cat in cats.values():
                r = variants(cat.tools, encoder, **{**UNTUNED, knob: value}, only=[TUNES[knob]])[TUNES[knob]]
                means += [statistics.fmean(per_query(r, qs, name)) for name, qs in cat.development.items()]
            scores[knob][str(value)] = statistics.fmean(means)
        best = max(grid, key=lambda v: (scores[knob][str(v)], -grid.index(v)))
        chosen[knob] = best
    return {"chosen": chosen, "development_means": scores}


def train_rerankers(cats: dict[str, Catalog], encoder: Encoder) -> dict[str, LinearModel]:
    """The shipped model (ToolLens development) and the reverse one (LiveMCPBench + demo development)."""
    sources = {"toollens": ["toollens"], "livemcp+demo": ["livemcpbench", "demo"]}
    models = {}
    for label, names in sources.items():
        parts = [training_rows(FeatureExtractor(cats[n].tools, encoder=encoder), qs)
                 for n in names if n in cats for qs in cats[n].development.values()]
        if parts:
            x, y = np.vstack([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
            models[label] = fit(x, y, trained_on=f"{label} development rows ({len(x)} candidates)")
    return models


def latency(encoder_free: Encoder, names: Sequence[str], settings: JSONObject, model: LinearModel,
            n: int = 20) -> dict[str, float]:
    """p50 ms per query at the MCP-Zero catalog's size (2,797 tools), each query embedded on its own
    (document expansion is left out: it changes the index, not the query's path, which is hybrid-rrf's)."""
    folder, steps_from = dataset_dir("mcpzero_catalog"), dataset_dir("livemcpbench")
    if not folder or not steps_from:
        return {}
    tools = load_tools(folder)
    queries = step_queries(load_queries(steps_from))[:n]
    built = variants(tools, encoder_free, settings["servers"], settings["splitter"], only=names)
    if "rerank-lr" in names:
        built["rerank-lr"] = make_retriever("rerank-lr", tools, model=model, encoder=encoder_free)
    out = {}
    for name in names:
        r = built[name]
        r.rank("warm up")
        out[name] = evaluate(r, queries).latency_ms(50)
    return out


def warm(encoder: Encoder, queries: Sequence[Query]) -> None:
    """Embed every query, its steps and its clauses in batches up front (one at a time is far slower)."""
    texts = [t for q in queries for t in (q.query, *split_steps(q.query), *clauses(q.query))]
    encoder.encode(list(dict.fromkeys(texts)))


def build(seed: int = 0, say: Callable[[str], None] = print) -> JSONObject:
    """Everything the chapter reports: tuning, training, per-query test values, latency."""
    start = time.perf_counter()
    encoder = Encoder(remember=100_000, disk=EmbeddingCache())  # queries embedded once across runs
    cats = catalogs(seed)
    warm(encoder, [q for cat in cats.values() for part in (cat.development, cat.test) for qs in part.values() for q in qs])
    tuned = tune_ideas(cats, encoder)
    say(f"tuned on development rows: {tuned}")
    models = train_rerankers(cats, encoder)
    say("trained: " + ", ".join(m.trained_on for m in models.values()))
    values: dict[str, dict[str, list[float]]] = {}
    qids: dict[str, list[str]] = {}
    for cat_name, cat in cats.items():
        rankers = variants(cat.tools, encoder, tuned["chosen"]["servers"], tuned["chosen"]["splitter"])
        model = models["livemcp+demo" if cat_name == "toollens" else "toollens"]
        rankers["rerank-lr"] = make_retriever("rerank-lr", cat.tools, model=model, encoder=encoder)
        for dataset, queries in cat.test.items():
            qids[dataset] = [q.qid for q in queries]
            values[dataset] = {name: per_query(r, queries, dataset) for name, r in rankers.items()}
            say(f"{dataset}: " + ", ".join(f"{n} {statistics.fmean(v):.3f}" for n, v in values[dataset].items()))
    ceiling = {"livemcp-task": annotator_ceiling(cats["livemcpbench"], encoder)} if "livemcpbench" in cats else {}
    lat = latency(Encoder(remember=0), ["hybrid-rrf", "hybrid-task", "hierarchical", "hybrid-rrf+plan", "rerank-lr"],
                  tuned["chosen"], models["toollens"])
    say(f"p50 ms at 2,797 tools: {lat}")
    return {"command": REBUILD, "seed": seed, "metric": METRIC, "tuning": tuned,
            "rerankers": {k: m.to_json() for k, m in models.items()}, "qids": qids, "values": values,
            "ceiling": ceiling,
            "latency_p50_ms_2797": lat, "seconds": round(time.perf_counter() - start)}


def annotator_ceiling(cat: Catalog, encoder: Encoder) -> list[float]:
    """Whole-task R@10 per LiveMCPBench test task when the plan is the annotators' own steps: not
    zero-shot (a harness has no annotator) — the ceiling query planning could reach."""
    plans = {q.query: list(q.steps) for q in cat.test["livemcp-task"]}
    planned = make_retriever("hybrid-rrf+plan", cat.tools, encoder=encoder, splitter=lambda text: plans.get(text, []))
    return per_query(planned, cat.test["livemcp-task"], "livemcp-task")


def load_results() -> JSONObject:
    """The committed artefact (package data)."""
    return json.loads(DATA.joinpath(ARTEFACT).read_text("utf-8"))


@dataclass(frozen=True)
class Line:
    """One retriever on one dataset's test rows, against the baseline."""

    dataset: str
    retriever: str
    n: int
    mean: float
    low: float
    high: float
    diff_low: float
    diff_high: float

    @property
    def verdict(self) -> str:
        if self.retriever == BASELINE:
            return "baseline"
        return "better" if self.diff_low > 0 else "worse" if self.diff_high < 0 else "no call"


def summary(values: dict[str, dict[str, list[float]]]) -> list[Line]:
    """Mean, 95 % interval and paired difference from hybrid-rrf for every retriever on every dataset."""
    lines = []
    for dataset, by_name in values.items():
        base = by_name[BASELINE]
        for name, v in by_name.items():
            low, high = bootstrap_interval(v)
            d_low, d_high = paired_difference_interval(v, base)
            lines.append(Line(dataset, name, len(v), statistics.fmean(v), low, high, d_low, d_high))
    return lines


def default_choice(lines: Sequence[Line]) -> str:
    """The retriever ``search_tools`` and ``harness serve`` should default to, by the rule fixed in advance:
    an idea replaces hybrid-rrf only if it is called *better* on LiveMCPBench's whole tasks (the
    multi-tool MCP case those tools serve) and *worse* on no dataset; among several, the larger gain."""
    by_name: dict[str, list[Line]] = {}
    for line in lines:
        by_name.setdefault(line.retriever, []).append(line)
    winners = [(next(l.mean for l in ls if l.dataset == "livemcp-task"), name) for name, ls in by_name.items()
               if name != BASELINE and any(l.dataset == "livemcp-task" and l.verdict == "better" for l in ls)
               and not any(l.verdict == "worse" for l in ls)]
    return max(winners)[1] if winners else BASELINE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.zero_shot", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=ARTEFACT, help=f"where to write the JSON (the committed one: experiments/data/{ARTEFACT})")
    args = parser.parse_args(argv)
    results = build(say=lambda s: print(s, file=sys.stderr, flush=True))
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    for line in summary(results["values"]):
        print(f"{line.dataset:<14} {line.retriever:<18} {line.mean:.3f} [{line.low:.3f}, {line.high:.3f}] "
              f"Δ [{line.diff_low:+.3f}, {line.diff_high:+.3f}] {line.verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

