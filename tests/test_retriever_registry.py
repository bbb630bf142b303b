"""One registry of retrievers: every consumer builds through it, and every entry's metadata is true."""
from __future__ import annotations

import ast
import contextlib
import inspect
import io
import random
from pathlib import Path

import numpy as np
import pytest

from conftest import SMALL_TOOLS
from harness.evaluation.datasets import DATASETS, load_public, missing_data_note
from workbook.demo.labels import demo_dataset
from harness.retrieval import named
from workbook.research import registry
from harness.retrieval.dense import Encoder, dense_unavailable_reason
from harness.retrieval.records import CatalogTool, Query

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "harness"
DENSE_SKIP = dense_unavailable_reason()
needs_dense = pytest.mark.skipif(DENSE_SKIP is not None, reason=str(DENSE_SKIP))
LOG = [Query("1", "read the file notes.txt", (SMALL_TOOLS[0].name,)), Query("2", "post to the channel", (SMALL_TOOLS[1].name,))]


def retriever_classes() -> set[str]:
    """Every class under harness/retrieval/ with a ``rank`` method: the things the registry builds."""
    found = set()
    for path in (HARNESS / "retrieval").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(isinstance(f, ast.FunctionDef) and f.name == "rank" for f in node.body):
                found.add(node.name)
    return found


def constructions(source: str, classes: set[str]) -> list[tuple[int, str]]:
    """(line, class) of every call of a retriever class, bare, through a module, or its ``from_vectors``."""
    hits = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "from_vectors":
            f = f.value
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        if name in classes:
            hits.append((node.lineno, name))
    return hits


def test_no_module_outside_retrieval_builds_a_retriever_class_directly():
    classes = retriever_classes()
    assert {"FieldedBM25", "DenseRetriever", "HybridRetriever"} <= classes
    found = [f"{path.relative_to(ROOT)}:{line} {name}" for path in sorted(HARNESS.rglob("*.py"))
             if path.parent != HARNESS / "retrieval"  # the registry, the classes' own modules, their compositions
             for line, name in constructions(path.read_text(encoding="utf-8"), classes)]
    assert found == [], "build retrievers with harness.retrieval.named.make_retriever"


def test_the_scan_finds_every_form_of_a_direct_construction():
    source = "x = FieldedBM25(tools)\ny = fielded.FieldedBM25(tools)\nz = DenseRetriever.from_vectors(i, m, e)\nw = make(FieldedBM25)"
    assert constructions(source, retriever_classes()) == [(1, "FieldedBM25"), (2, "FieldedBM25"), (3, "DenseRetriever")]


class Refusing(Encoder):
    """An encoder that fails if anything is embedded: a retriever that ranks with it needs no embeddings."""

    def encode(self, texts, **options):  # options such as cache= are refused too
        raise AssertionError("embedded")


def built(name: str, encoder: Encoder | None = None):
    return named.make_retriever(name, SMALL_TOOLS, encoder=encoder, **({"log": LOG} if "log" in named.REGISTRY[name].settings else {}))


@pytest.mark.parametrize("name", [n for n, e in named.REGISTRY.items() if not e.needs_embeddings])
def test_entries_without_embeddings_rank_without_embedding_anything(name, monkeypatch):
    monkeypatch.setattr(named, "dense_unavailable_reason", lambda: "The embedding extra is not installed.")
    monkeypatch.setattr(registry, "dense_unavailable_reason", lambda: "The embedding extra is not installed.")
    r = built(name, Refusing())
    assert isinstance(r.rank("read the file"), list)


@pytest.mark.parametrize("name", [n for n, e in named.REGISTRY.items() if e.needs_embeddings])
def test_entries_needing_embeddings_say_so_in_one_sentence_without_the_extra(name, monkeypatch):
    monkeypatch.setattr(named, "dense_unavailable_reason", lambda: "The embedding extra is not installed (missing x).")
    with pytest.raises(ValueError) as raised:
        built(name)
    message = str(raised.value)
    assert message == f"The {name!r} retriever needs embeddings: The embedding extra is not installed (missing x)."
    assert "\n" not in message


@needs_dense
@pytest.mark.parametrize("name", [n for n, e in named.REGISTRY.items() if e.needs_embeddings])
def test_entries_needing_embeddings_do_embed(name):
    with pytest.raises(AssertionError, match="embedded"):
        built(name, Refusing()).rank("read the file")


@pytest.mark.parametrize("name", [n for n, e in named.REGISTRY.items() if e.kind == "learned"])
def test_learned_entries_need_a_log(name):
    assert named.REGISTRY[name].constants == "learned"
    with pytest.raises(ValueError, match=f"^The '{name}' retriever learns from a query log: pass log="):
        named.make_retriever(name, SMALL_TOOLS)
    assert name not in named.retriever_names(dense=True) and name in named.retriever_names(dense=True, learned=True)


@pytest.mark.parametrize("name", list(named.REGISTRY))
def test_each_entry_lists_the_settings_its_maker_takes(name):
    entry = named.REGISTRY[name]
    params = list(inspect.signature(entry.make).parameters.values())[2:]  # after (tools, encoder)
    named_params = {p.name for p in params if p.kind is not p.VAR_KEYWORD}
    assert named_params <= set(entry.settings), f"{name}: every keyword of its maker is listed"
    if not any(p.kind is p.VAR_KEYWORD for p in params):
        assert set(entry.settings) == named_params, f"{name}: every listed setting is one its maker takes"


def test_an_unknown_setting_is_one_sentence():
    with pytest.raises(ValueError, match=r"^The 'bm25-fielded' retriever has no setting 'alpha'; it takes name_weight, verb_weight\.$"):
        named.make_retriever("bm25-fielded", SMALL_TOOLS, alpha=0.3)
    with pytest.raises(ValueError, match="it takes none"):
        named.make_retriever("pizzapi-substring", SMALL_TOOLS, alpha=0.3)


@pytest.mark.parametrize("name", list(named.REGISTRY))
def test_each_entry_names_its_chapter_and_its_aliases_resolve(name):
    entry = named.REGISTRY[name]
    notebooks = list((ROOT / "notebooks").glob(f"{entry.chapter.zfill(2 + entry.chapter[-1].isalpha())}_*.ipynb"))
    assert len(notebooks) == 1, f"{name}: Chapter {entry.chapter} is one notebook"
    text = notebooks[0].read_text(encoding="utf-8")
    assert name in text or name.replace("-", " ") in text.lower(), f"{name} is named in the chapter that introduces it"
    assert all(named.entry(a) is entry for a in entry.aliases)


def test_tuned_entries_default_to_their_recorded_development_choices():
    """The "tuned" metadata is true: each tuned knob's default is the one chosen on development rows."""
    from experiments import tuning, zero_shot

    record = tuning.recorded()
    tuned = [n for n, e in named.REGISTRY.items() if e.constants == "tuned"]
    assert {"bm25-fielded", "hybrid-task", "hierarchical", "hybrid-rrf+plan"} <= set(tuned)
    assert tuning.defaults_match_record() and {"bm25-fielded", "hybrid-task"} <= set(record)
    chosen = zero_shot.load_results()["tuning"]["chosen"]
    hierarchical = inspect.signature(registry.HierarchicalRetriever).parameters["servers"].default
    plan = inspect.signature(registry.PlannedRetriever).parameters["splitter"].default
    assert hierarchical == chosen["servers"] and plan is zero_shot.SPLITTERS[chosen["splitter"]]
    assert named.REGISTRY["stackone-bm25-tfidf"].constants == "published", "StackOne runs its published alpha, not the dev choice"
    assert inspect.signature(registry.StackOneRetriever).parameters["alpha"].default != record["stackone-bm25-tfidf"]["chosen"]["alpha"]


def test_search_help_lists_every_name_with_its_metadata():
    from harness.__main__ import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
        main(["search", "--help"])
    assert done.value.code == 0
    text = " ".join(out.getvalue().split())  # argparse wraps lines
    for entry in named.REGISTRY.values():
        assert " ".join(entry.line().split()) in text, entry.name


def test_tuning_help_prints_help_and_writes_nothing(tmp_path, monkeypatch):
    from experiments import tuning

    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
        tuning.main(["--help"])
    assert done.value.code == 0 and "usage:" in out.getvalue() and not list(tmp_path.iterdir())


# --- one "bm25": rank_bm25 and the inverted index rank alike, ties included -----------------------

def fixture_catalogs() -> dict[str, tuple[list[CatalogTool], list[str]]]:
    tools, queries = demo_dataset()
    out = {"demo": (tools, [q.query for q in queries])}
    for name in DATASETS:
        public = load_public(name)
        if public:
            tools, qs = public
            texts = [q.query for q in qs] or [t.description for t in tools[::25]]
            out[name] = (tools, random.Random(0).sample(texts, min(60, len(texts))))
    return out


@pytest.mark.parametrize("catalog", ["demo", *DATASETS])
def test_bm25_rankings_are_the_same_from_rank_bm25_and_the_librarys_inverted_index(catalog):
    """The reference (rank_bm25) lives beside the tests and the chapters, not in the library: the library's one BM25
    must rank every tool, ties included, exactly where rank_bm25 puts it."""
    from workbook.research.rank_bm25_reference import RankBM25

    catalogs = fixture_catalogs()
    if catalog not in catalogs:
        pytest.skip(missing_data_note(catalog))
    tools, texts = catalogs[catalog]
    reference, ours = RankBM25(tools), named.make_retriever("bm25", tools)
    assert ours.name == "bm25"
    for text in [*texts, "file", "the a of"]:
        assert ours.rank(text) == reference.rank(text), text  # the whole ranking: every tied tool in its place


# --- committed artefacts reproduce through the registry ---------------------------------------------

def test_tuning_record_reproduces_on_the_demo_world():
    """experiments/data/tuning.json: every lexical setting's demo-dev score, rebuilt through tuning's builders."""
    from experiments import tuning

    sets = {"demo-dev": tuning.development_sets()["demo-dev"]}
    build = tuning.builders()
    for component in ("bm25-fielded", "stackone-bm25-tfidf"):
        for trial in tuning.recorded()[component]["trials"]:
            score = tuning.dev_recall(build[component], *sets["demo-dev"], trial["setting"])
            assert score == trial["scores"]["demo-dev"], (component, trial["setting"])


@needs_dense
def test_zero_shot_results_reproduce_on_the_demo_world():
    """experiments/data/zero_shot_results.json: every idea's per-query test values on the demo world."""
    from experiments import zero_shot
    from workbook.research.rerank import LinearModel

    results = zero_shot.load_results()
    cat = zero_shot.catalogs()["demo"]
    encoder = Encoder(remember=10_000)
    chosen = results["tuning"]["chosen"]
    rankers = zero_shot.variants(cat.tools, encoder, chosen["servers"], chosen["splitter"])
    rankers["rerank-lr"] = named.make_retriever("rerank-lr", cat.tools, encoder=encoder,
                                                model=LinearModel.from_json(results["rerankers"]["toollens"]))
    queries = cat.test["demo"]
    assert [q.qid for q in queries] == results["qids"]["demo"]
    for name, r in rankers.items():
        values = zero_shot.per_query(r, queries, "demo")
        assert np.allclose(values, results["values"]["demo"][name]), name
