"""Where one hybrid query's time goes: tokenizer, the embedding (layer by layer in NumPy), the catalog, BM25, fusion.

Introduced in Chapter 8b (``notebooks/08b_embedder_and_query_time.ipynb``), which reports hybrid-rrf's
latency at 2,797 tools.

    python -m workbook.evaluation.query_time [--n 100]

runs :class:`~harness.retrieval.hybrid.HybridRetriever`'s query path over the MCP-Zero catalog
stage by stage, for LiveMCPBench's step queries, each embedded on its own (as a proxy's
``search_tools`` call is), and prints each stage's p50 and p95. Every stage is timed twice: by the
wall clock (what a user waits) and by the process's CPU time (what the work costs; on a machine
shared with other jobs the wall clock also counts the time this process waited for a core, which
the load average shows, so both are printed with it). :func:`breakdown` checks that the stages
rank exactly as ``rank`` does, so the parts measured are the path that runs.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence, TypeVar


from harness.selection.ranking import top_ids
from harness.retrieval.dense import DenseRetriever, query_model
from harness.retrieval.hybrid import HybridRetriever, rrf
from harness.retrieval.named import make_retriever
from harness.retrieval.numpy_minilm import one_blas_thread

T = TypeVar("T")


@dataclass
class StageTimes:
    """Milliseconds per query for each stage, by the wall clock and by CPU time."""

    wall: dict[str, list[float]] = field(default_factory=dict)
    cpu: dict[str, list[float]] = field(default_factory=dict)

    def timed(self, stage: str, work: Callable[[], T]) -> T:
        """Run ``work`` once and record its time under ``stage``."""
        wall, cpu = time.perf_counter(), time.process_time()
        out = work()
        self.cpu.setdefault(stage, []).append(1000 * (time.process_time() - cpu))
        self.wall.setdefault(stage, []).append(1000 * (time.perf_counter() - wall))
        return out

    def percentile(self, stage: str, p: float, clock: str = "wall") -> float:
        """Nearest-rank percentile of one stage's times (as :meth:`harness.evaluation.metrics.Report.latency_ms`)."""
        return nearest_rank(getattr(self, clock)[stage], p)

    def medians(self, clock: str = "cpu") -> dict[str, float]:
        """Each stage's median in the order the stages ran, the whole query's ("total") left out: what
        :func:`workbook.views.diagrams.query_time_stages` draws beside ``percentile("total", 50, clock)``."""
        return {stage: self.percentile(stage, 50, clock) for stage in getattr(self, clock) if stage != "total"}


def nearest_rank(values: Sequence[float], p: float) -> float:
    """The nearest-rank ``p``-th percentile (as :meth:`harness.evaluation.metrics.Report.latency_ms` takes it)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]


def breakdown(hybrid: HybridRetriever, queries: Sequence[str]) -> StageTimes:
    """Each query ranked by ``hybrid``'s own parts, one stage at a time (its embedding never cached).

    Raises AssertionError if the staged ranking differs from ``hybrid.rank``: then the stages timed
    would not be the path that runs.
    """
    dense = hybrid.dense
    if not isinstance(dense, DenseRetriever):
        raise ValueError("The breakdown times a hybrid whose dense part is a DenseRetriever.")
    model, depth = query_model(), hybrid.depth
    session = model.query_session()  # ONNX Runtime's one stage, or NumPy's layers one by one
    times = StageTimes()
    with one_blas_thread():  # as DenseRetriever.scores runs a query
        for query in queries:
            start = time.perf_counter(), time.process_time()
            ids, mask = times.timed("tokenize", lambda: model.batch_ids([query]))
            if session is not None:
                vector = times.timed("embedding (onnx)", lambda: session.embed_ids(ids[0]))
            else:
                b, n = ids.shape
                x = times.timed("token embeddings", lambda: model.embed_positions(ids))
                for i in range(len(model.layers)):
                    x = times.timed(f"layer {i + 1}", lambda: model.layer(x, i, b, n, None))
                vector = times.timed("pooling", lambda: model.pool(x, mask))[0]
            scores = times.timed("catalog matmul", lambda: dense.matrix @ vector)
            dense_ids = times.timed(f"dense top-{depth}", lambda: top_ids(dense.ids, scores, depth, positive_only=False))
            lexical_ids = times.timed(f"bm25 top-{depth}", lambda: hybrid.lexical.rank(query, depth))
            ranking = times.timed("fusion", lambda: rrf([lexical_ids, dense_ids], hybrid.k))
            times.wall.setdefault("total", []).append(1000 * (time.perf_counter() - start[0]))
            times.cpu.setdefault("total", []).append(1000 * (time.process_time() - start[1]))
            assert ranking == hybrid.rank(query), f"the staged ranking of {query!r} is not hybrid.rank's"
    return times


def stage_table(times: StageTimes) -> str:
    """One line per stage: p50 and p95 by the wall clock and by CPU time."""
    head = f"{'stage':<18} {'wall p50':>9} {'wall p95':>9} {'cpu p50':>8} {'cpu p95':>8}"
    lines = [head, "-" * len(head)]
    for stage in times.wall:
        lines.append(f"{stage:<18} " + " ".join(f"{times.percentile(stage, p, clock):>{w}.3f}"
                                               for clock, w in (("wall", 9), ("cpu", 8)) for p in (50, 95)))
    return "\n".join(lines)


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages and the number of cores, printed beside every timing."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f} on {os.cpu_count()} cores"


def main(argv: list[str] | None = None) -> int:
    from harness.evaluation.datasets import dataset_dir, load_queries, load_tools, step_queries

    parser = argparse.ArgumentParser(prog="python -m workbook.evaluation.query_time", description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100, help="how many step queries to time (default 100)")
    args = parser.parse_args(argv)
    catalog, steps_from = dataset_dir("mcpzero_catalog"), dataset_dir("livemcpbench")
    if not catalog or not steps_from:
        print("The MCP-Zero catalog and LiveMCPBench are needed (see harness/evaluation/datasets.py).", file=sys.stderr)
        return 2
    tools = load_tools(catalog)
    queries = [q.query for q in step_queries(load_queries(steps_from))][:args.n]
    hybrid = make_retriever("hybrid-rrf", tools)
    assert isinstance(hybrid, HybridRetriever)
    hybrid.rank("warm up")
    print(f"{len(queries)} step queries over {len(tools)} tools; before: {load_average()}")
    print(stage_table(breakdown(hybrid, queries)))
    print(f"after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
