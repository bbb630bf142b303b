"""Where a hybrid query's time goes: the stages timed are the path ``rank`` runs, and the bench prints them."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from workbook.demo.labels import demo_dataset
from harness.retrieval.dense import DenseRetriever, Encoder, dense_available, dense_unavailable_reason, query_model
from harness.retrieval.fielded import FieldedBM25
from harness.retrieval.hybrid import HybridRetriever
from workbook.evaluation.query_time import breakdown, load_average, stage_table

pytestmark = pytest.mark.skipif(not dense_available(), reason=dense_unavailable_reason() or "")

QUERIES = ["what is the weather in Paris tomorrow", "send an email to my manager", "open the calendar"]


@pytest.fixture(scope="module")
def hybrid() -> HybridRetriever:
    tools, _ = demo_dataset()
    return HybridRetriever(tools, dense=DenseRetriever(tools, encoder=Encoder()))


@pytest.mark.parametrize("runtime", ["numpy", "onnx"])
def test_every_stage_is_timed_once_per_query_and_adds_up_to_no_more_than_the_total(hybrid, runtime, monkeypatch):
    model = query_model()
    if runtime == "numpy":
        monkeypatch.setattr(model, "_session", None)  # as without ONNX Runtime
    elif model.query_session() is None:
        pytest.skip("ONNX Runtime is not installed")
    times = breakdown(hybrid, QUERIES)  # raises if the staged ranking is not hybrid.rank's
    stages = [s for s in times.wall if s != "total"]
    assert stages[0] == "tokenize" and stages[-4:] == ["catalog matmul", "dense top-100", "bm25 top-100", "fusion"]
    layers = [s for s in stages if s.startswith("layer")]
    assert layers == ([f"layer {i}" for i in range(1, 7)] if runtime == "numpy" else [])
    assert ("embedding (onnx)" in stages) == (runtime == "onnx")
    for clock in (times.wall, times.cpu):
        assert all(len(v) == len(QUERIES) and min(v) >= 0 for v in clock.values())
    for q in range(len(QUERIES)):
        assert sum(times.wall[s][q] for s in stages) <= times.wall["total"][q]
    assert times.percentile("total", 50) <= times.percentile("total", 95)
    printed = stage_table(times)
    assert printed.splitlines()[0].split()[:3] == ["stage", "wall", "p50"] and "fusion" in printed


def test_a_hybrid_without_a_dense_retriever_is_refused():
    tools, _ = demo_dataset()
    with pytest.raises(ValueError, match="DenseRetriever"):
        breakdown(HybridRetriever(tools, dense=FieldedBM25(tools)), QUERIES)


def test_the_bench_prints_each_stage_with_the_load_average(hybrid):
    from experiments.bench import bench_table, stage_rows

    rows = stage_rows(hybrid, QUERIES[:2], "stages-74", len(hybrid.dense.ids))
    assert rows[-1].retriever == "hybrid-rrf: total" and all(r.p50_ms <= r.p95_ms for r in rows)
    assert all(r.n_queries == 2 and r.n_tools == len(hybrid.dense.ids) and r.load is not None for r in rows)
    printed = bench_table(rows, k=5)
    assert "hybrid-rrf: tokenize" in printed and printed.splitlines()[3].split()[-1] == "load"
    assert load_average().startswith("load average ")


@pytest.mark.skipif(importlib.util.find_spec("threadpoolctl") is None, reason="threadpoolctl is not installed")
def test_a_querys_catalog_product_runs_on_one_blas_thread_too(hybrid):
    """Outside the embedding the product with the catalog woke the second BLAS thread, which then
    spun: hybrid-rrf cost 32 ms of CPU per query where the embedding alone cost 11 ms."""
    from threadpoolctl import ThreadpoolController

    controller = ThreadpoolController()
    seen: list[int] = []

    class Spy(np.ndarray):
        def __matmul__(self, other):
            seen.append(controller.select(user_api="blas").info()[0]["num_threads"])
            return np.asarray(self) @ other

    dense = hybrid.dense
    spy = DenseRetriever.from_vectors(dense.ids, dense.matrix.view(Spy), dense.encoder)
    assert spy.rank("send an email", 3) == dense.rank("send an email", 3)
    assert seen == [1]


def test_percentiles_are_nearest_rank_as_the_reports():
    from workbook.evaluation.query_time import nearest_rank

    values = [float(v) for v in range(10, 0, -1)]
    assert (nearest_rank(values, 50), nearest_rank(values, 95), nearest_rank(values, 0)) == (5.0, 10.0, 1.0)
