"""The embedder comparison: the committed artefact's structure, a live re-check of a sample, and the adoption rule."""
from __future__ import annotations


import numpy as np
import pytest

from experiments import embedders
from harness.retrieval.dense import Encoder, dense_available, dense_unavailable_reason, query_model
from experiments.zero_shot import catalogs

RESULTS = embedders.load_results()
needs_dense = pytest.mark.skipif(not dense_available(), reason=dense_unavailable_reason() or "")


def test_the_artefact_holds_the_rule_the_candidates_and_one_value_per_test_query():
    assert RESULTS["command"] == embedders.REBUILD and RESULTS["rule"] == embedders.ADOPTION_RULE
    assert RESULTS["candidates"] == [c.__dict__ for c in embedders.CANDIDATES]
    assert all(len(c["wheel_sha256"]) == 64 and c["why"] for c in RESULTS["candidates"])
    assert RESULTS["measured"] == list(RESULTS["values"]) and embedders.BASELINE in RESULTS["values"]
    for name, by_dataset in RESULTS["values"].items():
        assert set(by_dataset) == set(RESULTS["qids"]) <= set(embedders.METRIC)
        for dataset, by_retriever in by_dataset.items():
            assert set(by_retriever) == {"dense", "hybrid-rrf"}
            for values in by_retriever.values():
                assert len(values) == len(RESULTS["qids"][dataset]) and all(0 <= v <= 1 for v in values)
    assert RESULTS["adopted"] == embedders.adopt(RESULTS["values"]) == embedders.default_embedder()
    knob = RESULTS["query_tokens"]
    assert knob["chosen"] == min(knob["allowed"]) and str(embedders.MAX_TOKENS) in knob["development_means"]
    cost = RESULTS["cost"][embedders.BASELINE]
    assert cost["weights"] > 20_000_000 and cost["safetensors_bytes"] > 80_000_000
    assert cost["catalog_tools"] == 2797 and cost["catalog_embed_s"]["wall"] > 0
    for part in ("query_embedding", "hybrid_rrf"):
        assert 0 < cost[part]["wall"]["p50_ms"] <= cost[part]["wall"]["p95_ms"]


@needs_dense
def test_a_sample_of_the_committed_test_values_is_what_the_code_measures_now():
    cat = catalogs()["demo"]
    sample = cat.test["demo"][:12]
    assert [q.qid for q in sample] == RESULTS["qids"]["demo"][:12]
    live = embedders.scored(cat, {"demo": sample}, Encoder(remember=0))["demo"]
    for retriever, values in live.items():
        assert values == RESULTS["values"][embedders.BASELINE]["demo"][retriever][:12]


def _values(*hybrid_by_dataset: list[float]) -> dict[str, dict[str, list[float]]]:
    return {f"d{i}": {"hybrid-rrf": v, "dense": v} for i, v in enumerate(hybrid_by_dataset)}


def test_the_rule_adopts_only_an_embedder_better_somewhere_and_worse_nowhere():
    base = [0.0] * 30 + [1.0] * 30
    better, same = [1.0] * 60, list(base)
    worse = [0.0] * 60
    values = {embedders.BASELINE: _values(base, base),
              "better-and-same": _values(better, same),
              "better-and-worse": _values(better, worse)}
    assert embedders.adopt(values) == "better-and-same"
    del values["better-and-same"]
    assert embedders.adopt(values) == embedders.BASELINE


@needs_dense
def test_a_capped_query_reads_its_first_tokens_then_sep():
    model = query_model()
    text = " ".join(["weather"] * 40)
    ids = model.tokenizer.encode(text).ids
    capped = embedders.CappedEncoder(16, remember=0).encode([text])[0]
    assert np.abs(capped - model.embed_many_ids([ids[:15] + ids[-1:]])[0]).max() < 1e-6
    assert np.abs(capped - Encoder(remember=0).encode([text])[0]).max() > 1e-4  # the cap changed something
    short = "weather in Paris"
    assert np.abs(embedders.CappedEncoder(16, remember=0).encode([short]) - Encoder(remember=0).encode([short])).max() < 1e-6
