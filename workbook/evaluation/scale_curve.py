"""The scale curve: how a retriever's recall falls as the catalog grows around the same gold tools.

Introduced in Chapter 6b (``notebooks/06b_scale_and_speed.ipynb``, §3), which tests the claim the workbook
started from — "BM25 is fine for tens of tools, breaks at hundreds, and hybrid search fixes it" — and
used by the verdict table (:func:`scale_curve` is a plain function; it needs no notebook).

Method. Every catalog holds a query's gold tools; the rest are *distractors* drawn (seeded, several
draws) from a pool of real public tools — LiveMCPBench, MCP-Zero, ToolLens and the demo world, with
ids prefixed by their source so none collide. A distractor with the same bare name as one of the
gold tools (``read_file`` on another server) is left out: it may do the same job, and counting it
as wrong would measure labelling, not retrieval. The largest honest catalog is the whole pool
(about 3,800 tools with every source present); nothing is copied or invented to reach more.

For speed, queries are grouped: a group's catalog holds all its members' gold tools (at most a
quarter of the catalog) plus distractors, so one index serves several queries; another query's gold
tool is just one more real tool to a query. Within a draw, distractors are taken in one seeded
order, so a larger catalog holds a smaller one's distractors (apart from each group's exclusions)
and a curve shows growth rather than resampling noise. Each query's
value at a size is its mean over draws, and the interval is the 95 % bootstrap over queries
(:func:`harness.core.rates.bootstrap_interval`); a fall is *called* only where the paired interval of
(value at the smallest size − value at this size) excludes zero (:func:`breaks_at`).
Embeddings are cached on disk by each tool's definition hash (:mod:`harness.retrieval.dense`), so
only the first run embeds the pool. Any retriever of the registry (:data:`harness.retrieval.named.REGISTRY`)
that needs no log can be drawn, by its name; :data:`RETRIEVERS` are the ones the chapter and ``make bench`` draw.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping, Sequence

import numpy as np

from harness.evaluation.metrics import evaluate
from harness.selection.ranking import Ranker
from harness.core.rates import bootstrap_interval, paired_difference_interval
from harness.retrieval.dense import EmbeddingCache, Encoder, dense_unavailable_reason, embed_tools
from harness.retrieval.named import entry, make_retriever, needs_embeddings, retriever_names
from harness.retrieval.records import CatalogTool, Query
from harness.evaluation.datasets import DATASETS, load_public
from workbook.demo.labels import demo_dataset

#: Catalog sizes; ``None`` stands for the whole pool (the largest honest size).
SIZES: tuple[int | None, ...] = (50, 100, 200, 500, 1000, 2797, None)
#: The retrievers it compares, by their names in :data:`harness.retrieval.named.REGISTRY`.
RETRIEVERS = ("bm25", "bm25-fielded", "dense-minilm", "hybrid-rrf")
METRICS = ("R@5", "R@10", "MRR")
#: The most of a catalog one group's gold tools may take.
GOLD_SHARE = 0.25


@dataclass
class CurvePoint:
    """One retriever at one catalog size on one query set: means over queries with 95 % intervals."""

    queries: str
    retriever: str
    size: int  # tools in each catalog (the mean, for the whole pool minus a group's exclusions)
    n_queries: int
    draws: int
    metrics: dict[str, float]
    intervals: dict[str, tuple[float, float]]
    values: dict[str, list[float]] = field(repr=False)  # per query (mean over draws), in query order

    def as_dict(self) -> dict[str, object]:
        """The point without its per-query values (for JSON)."""
        return {k: v for k, v in self.__dict__.items() if k != "values"}


def prefixed(source: str, tools: Sequence[CatalogTool], queries: Sequence[Query] = ()
             ) -> tuple[list[CatalogTool], list[Query]]:
    """Tools and queries with every id prefixed ``source:``, so several catalogs can share one pool."""
    def ids(xs: Sequence[str]) -> tuple[str, ...]:
        return tuple(f"{source}:{i}" for i in xs)

    return ([replace(t, id=f"{source}:{t.id}") for t in tools],
            [replace(q, gold=ids(q.gold), gold_groups=tuple(ids(s) for s in q.slots)) for q in queries])


def _groups(queries: Sequence[Query], cap: int, rng: random.Random) -> list[list[int]]:
    """Query indices in groups whose gold ids together number at most ``cap`` (a query alone may exceed it)."""
    order = list(range(len(queries)))
    rng.shuffle(order)
    groups: list[list[int]] = []
    gold: list[set[str]] = []
    for i in order:
        mine = set(queries[i].gold) | {t for s in queries[i].slots for t in s}
        for g, held in zip(groups, gold):
            if len(held | mine) <= cap:
                g.append(i)
                held |= mine
                break
        else:
            groups.append([i])
            gold.append(set(mine))
    return groups


def _catalogs(queries: Sequence[Query], pool: Sequence[CatalogTool], sizes: Sequence[int | None],
              seed: int) -> list[tuple[int | None, list[int], list[CatalogTool]]]:
    """(size, query indices, catalog) for every group at every size of one draw."""
    by_id = {t.id: t for t in pool}
    out = []
    for size in sizes:
        rng = random.Random(f"{seed}:{size}")
        cap = len(pool) if size is None else max(1, int(GOLD_SHARE * size))
        for members in _groups(queries, cap, rng):
            gold_ids = sorted({t for i in members for s in queries[i].slots for t in s} | {t for i in members for t in queries[i].gold})
            gold = [by_id[t] for t in gold_ids]
            names, taken = {t.name.lower() for t in gold}, set(gold_ids)
            candidates = [t for t in pool if t.id not in taken and t.name.lower() not in names]
            random.Random(seed).shuffle(candidates)  # one order per draw: smaller catalogs nest in larger ones
            n = len(candidates) if size is None else max(0, size - len(gold))
            catalog = gold + candidates[:n]
            rng.shuffle(catalog)  # BM25 breaks ties in catalog order: the gold must not come first
            out.append((size, members, catalog))
    return out


def _retrievers(catalog: Sequence[CatalogTool], names: Sequence[str], vectors: Mapping[str, np.ndarray] | None,
                encoder: Encoder | None) -> dict[str, Ranker]:
    """The named retrievers over one catalog, from the registry: the dense ones from the pool's ``vectors``
    (nothing is embedded again), bm25 from the inverted index (rank_bm25's rankings, faster), and hybrid-rrf
    on fielded BM25's index."""
    fielded = make_retriever("bm25-fielded", catalog) if {"bm25-fielded", "hybrid-rrf"} & set(names) else None
    made: dict[str, Ranker] = {}
    for name in names:
        if name == "bm25-fielded" and fielded is not None:
            made[name] = fielded
            continue
        presets: dict[str, dict[str, object]] = {"hybrid-rrf": {"lexical": fielded}}
        settings = dict(presets.get(name, {}))
        if vectors is not None and "vectors" in entry(name).settings:
            settings["vectors"] = vectors
        made[name] = make_retriever(name, catalog, encoder=encoder, **settings)
    return made


def usable(names: Sequence[str] = RETRIEVERS) -> tuple[str, ...]:
    """``names`` less the ones that need the embedding extra when it is absent (what the curve can draw here)."""
    return tuple(names) if dense_unavailable_reason() is None else tuple(n for n in names if not needs_embeddings(n))


def scale_curve(query_sets: Mapping[str, Sequence[Query]], pool: Sequence[CatalogTool], *,
                sizes: Sequence[int | None] = SIZES, retrievers: Sequence[str] = RETRIEVERS, draws: int = 3,
                seed: int = 0, encoder: Encoder | None = None, cache: EmbeddingCache | None = None,
                say: Callable[[str], None] = lambda s: None) -> list[CurvePoint]:
    """Recall@5, Recall@10 and MRR of each retriever at each catalog size, per query set.

    ``pool`` holds every tool (gold and distractor), with ids unique across sources
    (:func:`prefixed`); each query's gold ids must be in it. Sizes larger than the pool are dropped.
    The dense retrievers embed the pool once (cached on disk) and every query once.
    """
    unknown = [n for n in retrievers if n not in retriever_names(dense=True)]
    if unknown:
        raise ValueError(f"The scale curve knows every registered retriever that needs no log; got {unknown[0]!r}.")
    if draws < 1:
        raise ValueError(f"At least one draw is needed, got {draws}.")
    ids = {t.id for t in pool}
    for label, queries in query_sets.items():
        missing = [g for q in queries for s in q.slots for g in s if g not in ids]
        if missing:
            raise ValueError(f"Query set {label!r}: gold id {missing[0]!r} is not in the pool; prefix ids with prefixed().")
    sizes = [s for s in sizes if s is None or s <= len(pool)]
    vectors, encoder_used = None, None
    if any(needs_embeddings(n) for n in retrievers):
        encoder_used = encoder or Encoder(remember=1_000_000, disk=cache or EmbeddingCache())
        vectors = dict(zip([t.id for t in pool], embed_tools(pool, encoder_used, cache or EmbeddingCache())))
        encoder_used.encode([q.query for qs in query_sets.values() for q in qs])  # every query once, in batches
    points = []
    for label, queries in query_sets.items():
        # per (retriever, size, metric): one list per draw of per-query values
        sums: dict[tuple[str, int | None, str], np.ndarray] = {}
        sized: dict[int | None, list[int]] = {}
        for draw in range(draws):
            say(f"{label}: draw {draw + 1} of {draws}")
            for size, members, catalog in _catalogs(queries, pool, sizes, seed + draw):
                sized.setdefault(size, []).append(len(catalog))
                for name, r in _retrievers(catalog, retrievers, vectors, encoder_used).items():
                    report = evaluate(r, [queries[i] for i in members], ks=(5, 10), name=name)
                    for metric in METRICS:
                        acc = sums.setdefault((name, size, metric), np.zeros(len(queries)))
                        acc[members] += report.values(metric)
        for name in retrievers:
            for size in sizes:
                values = {m: (sums[name, size, m] / draws).tolist() for m in METRICS}
                points.append(CurvePoint(label, name, round(float(np.mean(sized[size]))), len(queries), draws,
                                         {m: float(np.mean(v)) for m, v in values.items()},
                                         {m: bootstrap_interval(v) for m, v in values.items()}, values))
    return points


def breaks_at(points: Sequence[CurvePoint], queries: str, retriever: str, metric: str = "R@10") -> int | None:
    """The smallest size at which ``metric`` is lower than at the smallest size by a paired interval that
    excludes zero (None if it never is): where the retriever measurably breaks."""
    line = sorted((p for p in points if p.queries == queries and p.retriever == retriever), key=lambda p: p.size)
    if not line:
        raise ValueError(f"No points for {retriever!r} on {queries!r}.")
    first = line[0]
    for p in line[1:]:
        if paired_difference_interval(first.values[metric], p.values[metric])[0] > 0:
            return p.size
    return None


def public_pool() -> tuple[list[CatalogTool], dict[str, list[Query]]]:
    """Every public catalog present plus the demo world, prefixed, and their labelled queries."""
    pool, query_sets = [], {}
    tools, queries = demo_dataset()
    tools, query_sets["demo"] = prefixed("demo", tools, queries)
    pool += tools
    for name in DATASETS:
        public = load_public(name)
        if public:
            tools, queries = prefixed(name, *public)
            pool += tools
            if queries:
                query_sets[name] = queries
    return pool, query_sets
