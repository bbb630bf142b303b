"""Chapter 8's zero-shot retrievers: hierarchy, planning, expansion, the re-ranker and the comparison.

Fast: a bag-of-words stand-in encoder replaces MiniLM (the retrievers only need unit vectors), and
the embedding cache lives in a temporary folder.
"""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from harness.retrieval.dense import CACHE_ENV, DenseRetriever, Encoder
from workbook.research.expansion import QuestionCache, expanded, name_words, rule_questions
from harness.core.text import first_sentence
from workbook.research.hierarchical import HierarchicalRetriever, server_records
from harness.retrieval.hybrid import HybridRetriever
from harness.retrieval.named import retriever_names
from workbook.research.planning import PlannedRetriever
from harness.retrieval.records import CatalogTool, Query
from workbook.research.rerank import FEATURES, FeatureExtractor, LinearModel, RerankRetriever, fit, load_model, training_rows
from experiments.zero_shot import BASELINE, METRIC, load_results, summary
from harness.core.text import tokenize


class BagEncoder(Encoder):
    """Hashed bag of words, unit length: similar texts get similar vectors, with no model."""

    model_name = "bag-of-words-test"

    def _model_encode(self, texts):
        self.texts_encoded += len(texts)
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, text in enumerate(texts):
            for w in tokenize(text):
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % 64] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1)


def tool(server, name, description, required=(), about=""):
    props = {p: {"type": "string", "description": f"the {p}"} for p in required}
    return CatalogTool(id=f"{server}/{name}", name=name, description=description, server=server,
                       input_schema={"type": "object", "properties": props, "required": list(required)},
                       extra={"server_description": about})


CATALOG = [
    tool("weather", "get_forecast", "Weather forecast for a city.", ["city"], "Weather data and forecasts."),
    tool("weather", "get_alerts", "Severe weather alerts for a region.", ["region"], "Weather data and forecasts."),
    tool("files", "write_file", "Write text to a file on disk.", ["path", "content"], "Local file system."),
    tool("files", "read_file", "Read a file from disk.", ["path"], "Local file system."),
    tool("chart", "generate_bar_chart", "Draw a bar chart from numbers.", ["data"], "Charts and plots."),
    tool("chart", "generate_word_cloud", "Draw a word cloud from text.", ["text"], "Charts and plots."),
    tool("mail", "send_email", "Send an email message.", ["to", "body"], "Electronic mail."),
]


@pytest.fixture
def encoder(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "embeddings"))
    return BagEncoder()


# --- hierarchical -------------------------------------------------------------------------------

def test_server_records_group_tools_and_keep_the_servers_description():
    records = server_records(CATALOG)
    assert [r.id for r in records] == ["weather", "files", "chart", "mail"]
    files = records[1]
    assert files.server_description == "Local file system."
    assert "write file" in files.description and "read file" in files.description
    assert first_sentence("Write text. Then more.") == "Write text."


def test_hierarchical_puts_the_top_servers_tools_first_and_loses_none(encoder):
    r = HierarchicalRetriever(CATALOG, servers=1, encoder=encoder)
    assert r.top_servers("weather forecast and alerts for my city") == ["weather"]
    ranked = r.rank("weather forecast and alerts for my city")
    assert set(ranked[:2]) == {"weather/get_forecast", "weather/get_alerts"}
    assert sorted(ranked) == sorted(t.id for t in CATALOG)  # every tool, once


# --- planning -----------------------------------------------------------------------------------

def test_planning_leaves_a_query_that_does_not_split_unchanged(encoder):
    base = HybridRetriever(CATALOG, dense=DenseRetriever(CATALOG, encoder=encoder))
    planned = PlannedRetriever(base)
    q = "draw a bar chart of these numbers"
    assert planned.steps(q) == []
    assert planned.rank(q) == base.rank(q, 100)
    assert planned.name == "hybrid-rrf+plan"


def test_planning_lets_each_step_bring_its_tool(encoder):
    base = HybridRetriever(CATALOG, dense=DenseRetriever(CATALOG, encoder=encoder))
    planned = PlannedRetriever(base)
    q = "Get the weather forecast for Paris, then draw a bar chart of it, then send an email to Ann"
    assert len(planned.steps(q)) == 3
    top = planned.rank(q, 3)
    assert {"weather/get_forecast", "chart/generate_bar_chart", "mail/send_email"} == set(top)


# --- expansion ----------------------------------------------------------------------------------

def test_rule_questions_come_from_name_verbs_and_required_parameters():
    qs = rule_questions(CATALOG[2])  # write_file(path, content)
    assert qs[0] == "How do I write file?"
    assert any("save" in q for q in qs)  # users say "save" for write
    assert any(q.endswith("by path and content.") for q in qs)
    assert name_words(CatalogTool(id="x", name="mcp_howtocook_whatToEat", server="howtocook-mcp")) == ["what", "to", "eat"]
    assert name_words(CatalogTool(id="y", name="fetch_json", server="npx_fetch")) == ["fetch", "json"]


def test_expansion_keeps_ids_and_writes_each_definition_once(tmp_path):
    cache = QuestionCache(tmp_path / "questions.json")
    out = expanded(CATALOG, cache=cache)
    assert [t.id for t in out] == [t.id for t in CATALOG]
    assert all(t.description.startswith(o.description) and "Questions it answers:" in t.description
               for t, o in zip(out, CATALOG))
    assert cache.written == len(CATALOG)
    again = QuestionCache(tmp_path / "questions.json")  # from the file: nothing written again
    expanded(CATALOG, cache=again)
    assert again.written == 0
    changed = [CatalogTool(id=CATALOG[0].id, name="get_forecast", description="A changed description.", server="weather")]
    expanded(changed, cache=again)
    assert again.written == 1  # a changed definition is written for anew
    (tmp_path / "questions.json").write_text("{not json", encoding="utf-8")
    assert QuestionCache(tmp_path / "questions.json").written == 0  # a damaged file is rebuilt, not fatal


# --- re-ranker ----------------------------------------------------------------------------------

def test_fit_learns_which_feature_separates_the_classes():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, len(FEATURES)))
    y = (x[:, 6] + 0.1 * rng.normal(size=400) > 0).astype(float)
    m = fit(x, y)
    assert int(np.argmax(m.coef)) == 6
    assert ((m.score(x) > 0) == (y > 0)).mean() > 0.9
    with pytest.raises(ValueError, match="one class"):
        fit(x, np.zeros(400))


def test_linear_model_round_trips_and_refuses_other_features():
    m = LinearModel(tuple(float(i) for i in range(len(FEATURES))), 0.5, (0.0,) * len(FEATURES), (1.0,) * len(FEATURES), "x")
    assert LinearModel.from_json(json.loads(json.dumps(m.to_json()))) == m
    bad = {**m.to_json(), "features": ["cosine"]}
    with pytest.raises(ValueError, match="rebuild"):
        LinearModel.from_json(bad)


def test_features_are_relative_to_the_candidates_and_the_model_orders_them(encoder):
    fx = FeatureExtractor(CATALOG, encoder=encoder, depth=5)
    cands = fx.candidates("send an email")
    rows = fx.features("send an email", cands)
    assert rows.shape == (len(cands), len(FEATURES))
    assert rows[:, FEATURES.index("bm25_fielded")].max() == pytest.approx(1.0)
    assert np.all(rows[:, FEATURES.index("cosine_gap")] <= 1e-6)
    x, y = training_rows(fx, [Query("q", "send an email", ("mail/send_email",))])
    assert y.sum() == 1 and x.shape[0] == len(y)
    # a model that trusts only the name field ranks the tool whose name holds "chart" first
    coef = tuple(1.0 if f == "bm25_name" else 0.0 for f in FEATURES)
    model = LinearModel(coef, 0.0, (0.0,) * len(FEATURES), (1.0,) * len(FEATURES))
    r = RerankRetriever(CATALOG, model=model, encoder=encoder, depth=7)
    assert r.rank("a chart please", 1)[0].startswith("chart/")
    assert sorted(r.rank("a chart please")) == sorted(t.id for t in CATALOG)


def test_the_shipped_rerankers_were_trained_off_the_data_they_are_scored_on():
    results = load_results()
    assert "toollens" in load_model().trained_on
    assert set(results["rerankers"]) == {"toollens", "livemcp+demo"}
    assert "livemcp" not in results["rerankers"]["toollens"]["trained_on"]


# --- cache and comparison -----------------------------------------------------------------------

def test_summary_calls_a_difference_only_when_the_paired_interval_excludes_zero():
    base = [0.0, 1.0] * 50
    values = {"d": {BASELINE: base, "same": list(base), "up": [1.0] * 100, "down": [0.0] * 100}}
    verdicts = {line.retriever: line.verdict for line in summary(values)}
    assert verdicts == {BASELINE: "baseline", "same": "no call", "up": "better", "down": "worse"}


def test_the_committed_results_cover_every_dataset_and_idea():
    results = load_results()
    assert set(results["values"]) <= set(METRIC)
    for dataset, by_name in results["values"].items():
        assert BASELINE in by_name and "rerank-lr" in by_name and "hierarchical" in by_name
        assert all(len(v) == len(results["qids"][dataset]) for v in by_name.values())
    assert results["command"].startswith("python -m experiments.zero_shot")


def test_the_new_retrievers_have_names():
    assert {"hierarchical", "hybrid-rrf+plan", "hybrid-rrf+expand", "rerank-lr"} <= set(retriever_names(dense=True))
