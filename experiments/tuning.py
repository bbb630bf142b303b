"""Choosing a retriever's settings on development queries only, with one budget for every retriever.

Introduced in Chapter 6a (``notebooks/06a_public_benchmarks.ipynb``, §3), whose table reports test queries
that no choice here ever saw (:func:`harness.evaluation.splits.development_split`).

The procedure, the same for every component with knobs:

1. Each gets a grid of at most :data:`BUDGET` settings (:data:`GRIDS`), written down before any
   score was seen; the first is the setting the code had before (so a tie keeps it).
2. Every setting is scored by mean Recall@10 on each development set it applies to: LiveMCPBench's
   development tasks (a quarter of the 94, by a seeded hash of the id), the demo world's
   development queries (a quarter, likewise) and a seeded sample of ToolLens' development queries
   (a quarter of the *gold sets*, so no tool combination of the test is tuned on). Learned
   components (the query log, the usage prior) are cross-validated inside the development set.
3. The setting with the best mean over those sets wins (the earlier one on a tie), and the
   package's defaults are that setting: ``experiments/data/tuning.json`` records every trial's
   development scores (:func:`recorded`), a test checks the code's defaults against it
   (:func:`defaults_match_record`), and Chapter 6 re-runs the lexical ones live.

The named systems get the same budget where they have a number to tune (StackOne's α); PizzaPi's
points and Stacklok's 50/50 split are rules, not weights, and run as published. BM25's k1 and b
(rank_bm25's) and RRF's k = 60 (the RRF paper's) are library or published constants, tuned for
nobody. The tuned rows of ``make bench`` say "dev" in their ``tuned`` column.
"""
from __future__ import annotations

import argparse
import inspect
import json
import random
import statistics
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Callable, Mapping, Sequence

from experiments import DATA
from harness.evaluation.metrics import evaluate
from harness.selection.ranking import Ranker
from harness.retrieval.dense import Encoder
from harness.retrieval.fielded import DEFAULT_WEIGHTS, FieldedBM25
from workbook.research.learned import QueryLogRetriever
from harness.retrieval.named import make_retriever
from harness.retrieval.records import CatalogTool, Query
from harness.evaluation.splits import folds, development_split
from workbook.research.task import TaskRetriever
from workbook.research.usage import UsagePriorRetriever
from harness.evaluation.datasets import dataset_dir, load_queries, load_tools
from workbook.demo.labels import demo_dataset
from harness.core.json_types import JSON, JSONObject

#: The most settings any retriever may try.
BUDGET = 6

#: Settings tried per component (keyword arguments of its class), the previous default first.
GRIDS: dict[str, list[JSONObject]] = {
    "bm25-fielded": [
        {"name_weight": 2.0, "verb_weight": 0.3}, {"name_weight": 1.0, "verb_weight": 0.3},
        {"name_weight": 3.0, "verb_weight": 0.3}, {"name_weight": 2.0, "verb_weight": 1.0},
        {"name_weight": 1.0, "verb_weight": 1.0}, {"name_weight": 3.0, "verb_weight": 1.0},
    ],
    "hybrid-task": [
        {"alpha": 0.3, "server_weight": 0.3}, {"alpha": 0.2, "server_weight": 0.3},
        {"alpha": 0.5, "server_weight": 0.3}, {"alpha": 0.3, "server_weight": 0.0},
        {"alpha": 0.2, "server_weight": 0.0}, {"alpha": 0.5, "server_weight": 0.0},
    ],
    "stackone-bm25-tfidf": [{"alpha": a} for a in (0.2, 0.0, 0.4, 0.6, 0.8, 1.0)],
    "learned-querylog": [
        {"neighbours": 20, "log_weight": 2.0}, {"neighbours": 10, "log_weight": 2.0},
        {"neighbours": 50, "log_weight": 2.0}, {"neighbours": 20, "log_weight": 1.0},
        {"neighbours": 10, "log_weight": 1.0}, {"neighbours": 50, "log_weight": 1.0},
    ],
    "usage-prior": [
        {"head": 3, "weight": 1.0}, {"head": 1, "weight": 1.0}, {"head": 5, "weight": 1.0},
        {"head": 3, "weight": 0.5}, {"head": 1, "weight": 0.5}, {"head": 5, "weight": 0.5},
    ],
}
assert all(len(g) <= BUDGET for g in GRIDS.values())

#: Builds a ranker from a catalog and one setting (``log`` for the learned ones).
Build = Callable[[Sequence[CatalogTool], Mapping[str, JSON], Sequence[Query]], Ranker]


def builders(encoder: Encoder | None = None) -> dict[str, Build]:
    """How each component of :data:`GRIDS` is built from a setting, all by the registry
    (:func:`harness.retrieval.named.make_retriever`; the dense ones share ``encoder``)."""
    def build(name: str) -> Build:
        return lambda tools, s, log: make_retriever(name, tools, encoder=encoder, **s)

    def learned(name: str, base: str) -> Build:
        def make(tools: Sequence[CatalogTool], s: Mapping[str, JSON], log: Sequence[Query]) -> Ranker:
            return make_retriever(name, tools, log=log, base=make_retriever(base, tools, encoder=encoder), **s)
        return make

    return {"bm25-fielded": build("bm25-fielded"), "stackone-bm25-tfidf": build("stackone-bm25-tfidf"),
            "hybrid-task": build("hybrid-task"), "learned-querylog": learned("learned-querylog", "bm25-fielded"),
            "usage-prior": learned("usage-prior", "hybrid-task" if encoder else "bm25-fielded")}


@dataclass(frozen=True)
class Trial:
    setting: JSONObject
    scores: dict[str, float]  # development set -> mean R@10

    @property
    def mean(self) -> float:
        return statistics.fmean(self.scores.values())


def dev_recall(build: Build, tools: Sequence[CatalogTool], queries: Sequence[Query], setting: Mapping[str, JSON],
               learned: bool = False, n_folds: int = 5) -> float:
    """Mean R@10 of one setting on one development set (cross-validated by gold set when ``learned``)."""
    if not learned:
        return evaluate(build(tools, setting, ()), queries, ks=(10,)).recall(10)
    values: list[float] = []
    for fold in range(n_folds):
        train, test = folds(queries, fold, n_folds, by="gold")
        if train and test:
            values += evaluate(build(tools, setting, train), test, ks=(10,)).values("R@10")
    return statistics.fmean(values)


def tune_component(component: str, build: Build, dev_sets: Mapping[str, tuple[Sequence[CatalogTool], Sequence[Query]]],
         learned: bool = False) -> tuple[JSONObject, list[Trial]]:
    """The winning setting of ``component`` on ``dev_sets`` (best mean R@10, earliest on a tie) and every trial."""
    trials = [Trial(dict(s), {name: dev_recall(build, tools, queries, s, learned)
                              for name, (tools, queries) in dev_sets.items()}) for s in GRIDS[component]]
    best = max(trials, key=lambda t: t.mean)  # max() keeps the first of equal means
    return best.setting, trials


def development_sets(toollens_sample: int = 300, seed: int = 0
                     ) -> dict[str, tuple[list[CatalogTool], list[Query]]]:
    """The development sets present: LiveMCPBench's and the demo world's development quarter (by query
    id) and a seeded sample of ToolLens' (a quarter of its gold sets)."""
    tools, queries = demo_dataset()
    sets = {"demo-dev": (tools, development_split(queries, seed=seed).development)}
    folder = dataset_dir("livemcpbench")
    if folder:
        sets["livemcp-dev"] = (load_tools(folder), development_split(load_queries(folder), seed=seed).development)
    folder = dataset_dir("toollens_train")
    if folder:
        dev = development_split(load_queries(folder), by="gold", seed=seed).development
        sets["toollens-dev"] = (load_tools(folder), random.Random(seed).sample(dev, min(toollens_sample, len(dev))))
    return sets


#: Which development sets each component is tuned on, and whether it learns from a log.
PLAN: dict[str, tuple[tuple[str, ...], bool]] = {
    "bm25-fielded": (("livemcp-dev", "demo-dev", "toollens-dev"), False),
    "stackone-bm25-tfidf": (("livemcp-dev", "demo-dev", "toollens-dev"), False),
    "hybrid-task": (("livemcp-dev", "demo-dev", "toollens-dev"), False),
    "learned-querylog": (("toollens-dev",), True),  # the only set with a log big enough to learn from
    "usage-prior": (("livemcp-dev",), True),  # whole tasks: what the prior is for
}


def tune_all(components: Sequence[str] = tuple(PLAN), encoder: Encoder | None = None,
             say: Callable[[str], None] = lambda s: None) -> dict[str, JSONObject]:
    """Every component tuned by the procedure above: {component: {"chosen": setting, "trials": [...]}}."""
    sets = development_sets()
    build = builders(encoder)
    out: dict[str, JSONObject] = {}
    for component in components:
        names, learned = PLAN[component]
        chosen, trials = tune_component(component, build[component], {n: sets[n] for n in names if n in sets}, learned)
        out[component] = {"chosen": chosen, "trials": [{"setting": t.setting, "scores": t.scores, "mean": t.mean}
                                                        for t in trials]}
        say(f"{component}: {chosen}")
    return out


#: The record of the last full tuning run (package data, written by
#: ``python -m experiments.tuning --out experiments/data/tuning.json``).
RECORD = "tuning.json"


def recorded() -> dict[str, JSONObject]:
    """The recorded tuning run: {component: {"chosen": setting, "trials": [...]}}."""
    return json.loads(DATA.joinpath(RECORD).read_text(encoding="utf-8"))


def _default(cls: type, parameter: str) -> JSON:
    return inspect.signature(cls).parameters[parameter].default


def code_defaults() -> dict[str, JSONObject]:
    """The settings the code uses today, for every component :data:`GRIDS` tunes (StackOne: its published α)."""
    return {
        "bm25-fielded": {"name_weight": DEFAULT_WEIGHTS["name"], "verb_weight": _default(FieldedBM25, "verb_weight")},
        "hybrid-task": {"alpha": _default(TaskRetriever, "alpha"), "server_weight": _default(TaskRetriever, "server_weight")},
        "learned-querylog": {"neighbours": _default(QueryLogRetriever, "neighbours"),
                             "log_weight": _default(QueryLogRetriever, "log_weight")},
        "usage-prior": {"head": _default(UsagePriorRetriever, "head"), "weight": _default(UsagePriorRetriever, "weight")},
    }


def defaults_match_record() -> bool:
    """True when every tuned default in the code is the recorded development choice."""
    record = recorded()
    return all(record[c]["chosen"] == setting for c, setting in code_defaults().items())


def main(argv: list[str] | None = None) -> int:
    """``python -m experiments.tuning [--out OUT]``: tune every component on development data, write JSON."""
    parser = argparse.ArgumentParser(prog="python -m experiments.tuning", description=__doc__.splitlines()[0])
    parser.add_argument("--out", help=f"where to write the JSON (the committed one: experiments/data/{RECORD}); "
                                      "without it, the JSON is printed")
    args = parser.parse_args(argv)
    result = tune_all(encoder=Encoder(remember=1_000_000), say=print)
    text = json.dumps(result, indent=1)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
