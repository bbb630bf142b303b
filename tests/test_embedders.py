"""The embedder comparison: the committed artefact's structure, a live re-check of a sample, and the adoption rule."""
from __future__ import annotations


import numpy as np
import pytest

from experiments import embedders
from harness.retrieval import embedders as library
from harness.retrieval.dense import Encoder, dense_available, dense_unavailable_reason, query_model
from experiments.zero_shot import catalogs

RESULTS = embedders.load_results()
needs_dense = pytest.mark.skipif(not dense_available(), reason=dense_unavailable_reason() or "")


def test_the_artefact_holds_the_rule_the_candidates_and_one_value_per_test_query():
    assert RESULTS["command"] == embedders.REBUILD and RESULTS["rule"] == embedders.ADOPTION_RULE
    assert RESULTS["candidates"] == [c.__dict__ for c in embedders.CANDIDATES]
    assert all(len(c["wheel_sha256"]) == 64 and c["why"] for c in RESULTS["candidates"])
    assert RESULTS["measured"] == list(RESULTS["values"]) == list(embedders.EMBEDDERS) == list(RESULTS["development"])
    for name, by_dataset in RESULTS["values"].items():
        assert set(by_dataset) == set(RESULTS["qids"]) == set(RESULTS["development"][name]) <= set(embedders.METRIC)
        for dataset, by_retriever in by_dataset.items():
            assert set(by_retriever) == {"dense", "hybrid-rrf"} == set(RESULTS["development"][name][dataset])
            for values in by_retriever.values():
                assert len(values) == len(RESULTS["qids"][dataset]) and all(0 <= v <= 1 for v in values)
    assert {d: len(v) for d, v in RESULTS["stacklok"].items()} == {d: len(q) for d, q in RESULTS["qids"].items()}
    knob = RESULTS["query_tokens"]
    assert knob["chosen"] == min(knob["allowed"]) and str(embedders.MAX_TOKENS) in knob["development_means"]


def test_the_knobs_are_the_development_rows_choices_by_the_rule():
    dev = RESULTS["development"]
    widths = embedders.narrowest({str(w): dev[embedders.width_name(w)] for w in embedders.NOMIC_WIDTHS},
                                 [str(w) for w in embedders.NOMIC_WIDTHS])
    assert RESULTS["nomic_width"] == widths and widths["chosen"] == min(widths["allowed"])
    tokens = RESULTS["query_tokens"]
    assert {k: v for k, v in tokens.items() if k != "development_means"} == embedders.narrowest(
        tokens["development_means"], [str(t) for t in embedders.QUERY_TOKENS])


def test_the_cost_of_every_embedder_is_measured_at_2797_tools():
    for name in embedders.EMBEDDERS:
        cost = RESULTS["cost"][name]
        assert cost["weights"] > 20_000_000 and cost["file_bytes"] > 80_000_000
        assert cost["catalog_tools"] == 2797 and cost["queries"] == 100
        assert ("catalog_embed_s" in cost) == ("@" not in name)  # a narrower nomic runs the same model
        for part in ("query_embedding", "hybrid_rrf"):
            for clock in ("wall", "cpu"):
                assert 0 < cost[part][clock]["p50_ms"] <= cost[part][clock]["p95_ms"]
        assert all(cost[w].endswith("on 2 cores") for w in ("load_before", "load_after"))
    assert RESULTS["cost"][embedders.BASELINE]["weights"] < RESULTS["cost"][library.NOMIC]["weights"]


def test_the_adopted_embedder_is_the_rules_and_the_librarys_default():
    adopted = embedders.adopt(RESULTS["values"], embedders.search_cpu_ms(RESULTS), embedders.entering(RESULTS))
    assert RESULTS["adopted"] == adopted == embedders.default_embedder() == library.DEFAULT


@needs_dense
def test_a_sample_of_the_committed_test_values_is_what_the_code_measures_now():
    cat = catalogs()["demo"]
    sample = cat.test["demo"][:12]
    assert [q.qid for q in sample] == RESULTS["qids"]["demo"][:12]
    live = embedders.scored(cat, {"demo": sample}, Encoder(remember=0, model=embedders.BASELINE))["demo"]
    for retriever, values in live.items():
        assert values == RESULTS["values"][embedders.BASELINE]["demo"][retriever][:12]


@pytest.mark.parametrize("name", [library.MPNET, f"{library.NOMIC}@256"])
def test_a_sample_of_a_candidates_committed_test_values_is_what_the_code_measures_now(name):
    reason = library.unavailable_reason(name)
    if reason:
        pytest.skip(reason)
    cat = catalogs()["demo"]
    sample = cat.test["demo"][:8]
    live = embedders.scored(cat, {"demo": sample}, embedders.encoder_for(name), name)["demo"]
    for retriever, values in live.items():
        assert values == RESULTS["values"][name]["demo"][retriever][:8]


def _values(*hybrid_by_dataset: list[float]) -> dict[str, dict[str, list[float]]]:
    return {f"d{i}": {"hybrid-rrf": v, "dense": v} for i, v in enumerate(hybrid_by_dataset)}


def test_the_rule_adopts_only_an_embedder_better_somewhere_worse_nowhere_entering_and_fast_enough():
    base = [0.0] * 30 + [1.0] * 30
    better, same = [1.0] * 60, list(base)
    worse = [0.0] * 60
    values = {embedders.BASELINE: _values(base, base),
              "better-and-same": _values(better, same),
              "better-and-worse": _values(better, worse)}
    fast = {"better-and-same": 50.0, "better-and-worse": 5.0}
    everyone = list(values)
    assert embedders.adopt(values, fast, everyone) == "better-and-same"
    assert embedders.adopt(values, {**fast, "better-and-same": embedders.LATENCY_BOUND_MS + 1}, everyone) == embedders.BASELINE
    assert embedders.adopt(values, fast, [embedders.BASELINE, "better-and-worse"]) == embedders.BASELINE  # not entering
    del values["better-and-same"]
    assert embedders.adopt(values, fast, list(values)) == embedders.BASELINE


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


def test_a_narrowed_nomic_encoder_is_the_library_recipe_on_the_full_vectors():
    reason = library.unavailable_reason(library.NOMIC)
    if reason:
        pytest.skip(reason)
    narrowed = embedders.encoder_for(f"{library.NOMIC}@256")
    assert narrowed.model_name == f"{library.NOMIC}@256" and narrowed.dimensions == 256
    live = Encoder(remember=0, model=f"{library.NOMIC}@256").encode(["send an email"])
    assert np.abs(narrowed.encode(["send an email"]) - live).max() < 1e-6
