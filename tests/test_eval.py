"""Metrics on hand-computed cases, the loaders' errors, step queries, download errors, the demo adapter."""
from __future__ import annotations

import json
import math
import time
import warnings

import pytest

from harness.evaluation.datasets import (data_dir, dataset_dir, download, load_queries, load_tools, missing_data_note,
                                         step_queries)
from workbook.demo.labels import demo_dataset
from harness.evaluation.metrics import complete_at_k, evaluate, hit_at_k, ndcg_at_k, recall_at_k, reciprocal_rank
from harness.retrieval.records import CatalogTool, Query

RANKING = ["a", "b", "c", "d"]
SLOTS = [("b",), ("x", "d")]  # two slots; the second can be filled by x or d


def test_slot_metrics_by_hand():
    assert recall_at_k(RANKING, SLOTS, 1) == 0.0
    assert recall_at_k(RANKING, SLOTS, 2) == 0.5
    assert recall_at_k(RANKING, SLOTS, 4) == 1.0
    assert (hit_at_k(RANKING, SLOTS, 1), hit_at_k(RANKING, SLOTS, 2)) == (0.0, 1.0)
    assert (complete_at_k(RANKING, SLOTS, 2), complete_at_k(RANKING, SLOTS, 4)) == (0.0, 1.0)
    assert reciprocal_rank(RANKING, SLOTS) == 0.5
    assert reciprocal_rank(["z"], SLOTS) == 0.0


def test_ndcg_counts_each_slot_once():
    # b at rank 2 gains 1/log2(3); d at rank 4 is outside k=3; ideal = two hits at ranks 1 and 2.
    assert ndcg_at_k(RANKING, SLOTS, 3) == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    # x and d fill the same slot: the second one gains nothing.
    assert ndcg_at_k(["x", "d", "b"], SLOTS, 3) == pytest.approx((1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3)))
    assert ndcg_at_k(["b", "d"], SLOTS, 10) == pytest.approx(1.0)


def test_recall_counts_slots_not_ids():
    # one slot offered by three servers: finding all three is still one slot of two
    slots = [("s1/write", "s2/write", "s3/write"), ("s1/read",)]
    assert recall_at_k(["s1/write", "s2/write", "s3/write"], slots, 3) == 0.5


class FixedRanker:
    name = "fixed"

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers

    def rank(self, query: str, k: int | None = None) -> list[str]:
        return self.answers[query][:k]


def test_evaluate_averages_and_lists_misses():
    queries = [Query("q1", "first", ("b", "d"), (("b",), ("x", "d"))), Query("q2", "second", ("a",))]
    report = evaluate(FixedRanker({"first": RANKING, "second": ["c", "a"]}), queries, ks=(1, 2))
    assert report.recall(2) == pytest.approx((0.5 + 1.0) / 2)
    assert report.hit(1) == 0.0
    assert report.mrr == pytest.approx((0.5 + 0.5) / 2)
    m = report.metrics()
    assert {"R@1", "Hit@2", "Complete@2", "MRR", "nDCG@10", "p50_ms", "p95_ms"} <= set(m)
    misses = report.failures(k=2)
    assert [(x.qid, x.slot, x.rank, x.above) for x in misses] == [("q1", ("x", "d"), 4, ("a", "b"))]
    assert "rank 4" in str(misses[0]) and "above it: a, b" in str(misses[0])


def test_evaluate_rejects_bad_ks_and_empty_queries():
    with pytest.raises(ValueError, match="positive whole numbers"):
        evaluate(FixedRanker({}), [], ks=(0,))
    with pytest.raises(ValueError, match="no queries"):
        evaluate(FixedRanker({}), [])


# --- loaders ----------------------------------------------------------------------------------

def write_jsonl(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture()
def folder(tmp_path):
    write_jsonl(tmp_path / "tools.jsonl", [
        {"id": "fs/read_file", "server": "fs", "name": "read_file", "description": "Read a file.",
         "input_schema": {"type": "object", "properties": {"path": {"type": "string", "description": "Where"}}},
         "server_description": "Files on disk."},
        {"id": "fs/write_file", "server": "fs", "name": "write_file", "description": "Write a file."},
    ])
    write_jsonl(tmp_path / "queries.jsonl", [
        {"qid": "1", "query": "open the notes", "gold": ["fs/read_file"]},
        {"qid": 2, "query": "copy a file", "gold": ["fs/read_file", "fs/write_file"],
         "gold_groups": [["fs/read_file"], ["fs/write_file"]], "steps": "1. Read it\n2. Write it"},
    ])
    return tmp_path


def test_loaders_read_folder_or_file(folder):
    tools = load_tools(folder)
    assert [t.id for t in tools] == ["fs/read_file", "fs/write_file"]
    assert tools[0].parameters == [("path", "Where")] and tools[0].server_description == "Files on disk."
    assert load_tools(folder / "tools.jsonl") == tools
    q1, q2 = load_queries(folder / "queries.jsonl")
    assert q1.slots == (("fs/read_file",),)  # no gold_groups: each gold id is a slot
    assert q2.qid == "2" and q2.steps == ("Read it", "Write it") and len(q2.slots) == 2


def test_missing_path_is_one_sentence(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"No tools.jsonl at .*nowhere"):
        load_tools(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="No queries.jsonl"):
        load_queries(tmp_path)


def test_malformed_line_is_named_by_number(folder):
    write_jsonl(folder / "tools.jsonl", [{"id": "a", "name": "a"}, "{not json", {"id": "b", "name": "b"}])
    with pytest.raises(ValueError, match=r"tools.jsonl, line 2: not valid JSON"):
        load_tools(folder)
    write_jsonl(folder / "tools.jsonl", [{"id": "a", "name": "a"}, {"id": "a", "name": "again"}])
    with pytest.raises(ValueError, match=r"line 2: duplicate tool id 'a' \(first on line 1\)"):
        load_tools(folder)
    write_jsonl(folder / "tools.jsonl", [{"id": "a"}])
    with pytest.raises(ValueError, match=r"line 1: missing the required field 'name'"):
        load_tools(folder)
    write_jsonl(folder / "tools.jsonl", [{"id": "a", "name": "a", "input_schema": "object"}])
    with pytest.raises(ValueError, match=r"line 1: field 'input_schema' must be a JSON object, got str"):
        load_tools(folder)


def test_unknown_gold_id_is_an_error_or_dropped_with_a_warning(folder):
    write_jsonl(folder / "queries.jsonl", [
        {"qid": "1", "query": "open", "gold": ["fs/read_file"]},
        {"qid": "2", "query": "delete", "gold": ["fs/delete_file"]},
    ])
    with pytest.raises(ValueError, match=r"line 2: gold id 'fs/delete_file' of query '2' is not in the catalog"):
        load_queries(folder)
    with pytest.warns(UserWarning, match=r"Dropped 1 of 2 queries"):
        kept = load_queries(folder, strict=False)
    assert [q.qid for q in kept] == ["1"]
    # with an explicit catalog the check uses it instead of the sibling file
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(load_queries(folder, tools=[CatalogTool("fs/read_file", "r"), CatalogTool("fs/delete_file", "d")])) == 2


def test_data_dir_follows_the_environment(tmp_path, monkeypatch):
    (tmp_path / "mini").mkdir()
    (tmp_path / "mini" / "tools.jsonl").write_text('{"id": "a", "name": "a"}\n')
    monkeypatch.setenv("HARNESS_DATA", str(tmp_path))
    assert data_dir() == tmp_path
    assert dataset_dir("mini") == tmp_path / "mini" and dataset_dir("absent") is None
    monkeypatch.setenv("HARNESS_DATA", str(tmp_path / "missing"))
    assert data_dir() is None and dataset_dir("mini") is None
    note = missing_data_note("mini")
    assert note.endswith("skipping what needs it.") and "HARNESS_DATA" in note and "\n" not in note


def test_data_dir_is_found_beside_a_checkout_not_anywhere_above(tmp_path, monkeypatch):
    """Issue 40: with the working folder (a temp folder) below a folder holding ``shared/data``, the installed
    library took that data as its own. Without HARNESS_DATA only the data beside the checkout the library is
    imported from counts, wherever the working folder is; an installed library (no checkout) has none."""
    import harness.evaluation.datasets as datasets

    (tmp_path / "shared" / "data" / "mini").mkdir(parents=True)
    (tmp_path / "shared" / "data" / "mini" / "tools.jsonl").write_text('{"id": "a", "name": "a"}\n')
    monkeypatch.delenv("HARNESS_DATA", raising=False)
    elsewhere = tmp_path / "tmp" / "somewhere-else"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    monkeypatch.setattr(datasets, "checkout_root", lambda: None)  # installed
    assert data_dir() is None and dataset_dir("mini") is None
    monkeypatch.setattr(datasets, "checkout_root", lambda: tmp_path / "checkout")  # imported from a checkout
    assert data_dir() == tmp_path / "shared" / "data" and dataset_dir("mini") == tmp_path / "shared" / "data" / "mini"


def test_step_queries_carry_the_whole_task_gold():
    task = Query("t", "copy", ("r", "w"), (("r",), ("w",)), steps=("Read it", "Write it", "Report"))
    steps = step_queries([task, Query("u", "no steps", ("r",))])
    assert [s.qid for s in steps] == ["t#step1", "t#step2", "t#step3"]
    assert all(s.slots == task.slots for s in steps) and steps[2].query == "Report"


# --- download -----------------------------------------------------------------------------------

def test_download_offline_fails_fast_with_one_sentence(tmp_path):
    start = time.perf_counter()
    with pytest.raises(ConnectionError, match=r"^Could not download http://127\.0\.0\.1:9/tools\.json \(.*\); without a network"):
        download("mcpzero_catalog", tmp_path, urls={"tools": "http://127.0.0.1:9/tools.json"}, timeout=2)
    assert time.perf_counter() - start < 5
    assert not (tmp_path / "mcpzero_catalog").exists()
    with pytest.raises(ValueError, match="Unknown dataset 'nope'"):
        download("nope", tmp_path)


def test_download_normalises_each_source_format(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "mcpzero.json").write_text(json.dumps([{"name": "Files", "summary": "Disk access.", "url": "u", "tools": [
        {"name": "read", "description": "Read a file.", "parameter": {"path": "(string) The path", "n": "(integer, optional) Lines"}},
        {"name": "read", "description": "Duplicate name.", "parameter": {}}]}]))
    (raw / "lmb_tools.json").write_text(json.dumps([{"name": "FS", "description": "Files.", "category": "File Access", "tools": {
        "filesystem": {"tools": [{"name": "write_file", "description": "Write.", "inputSchema": {"type": "object", "properties": {}}}]}}}]))
    (raw / "lmb_tasks.json").write_text(json.dumps([
        {"task_id": "t1", "Question": "Save notes", "category": "work",
         "Annotator Metadata": {"Steps": "1. write", "Tools": "1. write_file\n2. execute_command"}},
        {"task_id": "t2", "Question": "Unresolvable", "Annotator Metadata": {"Tools": "1. nothing_here"}}]))
    (raw / "corpus.jsonl").write_text(json.dumps({"_id": "0", "text": (
        'category_name:Food, tool_name:Recipes, api_name:Suggestions, api_description:Get Suggestions, '
        'required_params: [{"name": "q", "type": "STRING", "description": ""}], optional_params: [], '
        'return_schema: {"ok": "bool"}')}) + "\n")
    (raw / "queries.jsonl").write_text(json.dumps({"_id": "7", "text": "a meal with beef"}) + "\n")
    (raw / "train.tsv").write_text("query-id\tcorpus-id\tscore\n7\t0\t1\n")
    url = lambda name: (raw / name).as_uri()  # noqa: E731

    zero = load_tools(download("mcpzero_catalog", tmp_path, urls={"tools": url("mcpzero.json")}))
    assert [t.id for t in zero] == ["Files/read", "Files/read#2"]
    assert zero[0].input_schema["required"] == ["path"] and zero[0].input_schema["properties"]["n"]["type"] == "integer"
    assert zero[0].server_description == "Disk access."

    folder = download("livemcpbench", tmp_path, urls={"tools": url("lmb_tools.json"), "tasks": url("lmb_tasks.json")})
    (q,) = load_queries(folder)
    assert q.slots == (("filesystem/write_file",),) and q.steps == ("write",)

    folder = download("toollens_train", tmp_path, urls={k: url(f) for k, f in
                                                         (("corpus", "corpus.jsonl"), ("queries", "queries.jsonl"), ("qrels", "train.tsv"))})
    (tool,), (query,) = load_tools(folder), load_queries(folder)
    assert (tool.server, tool.name, tool.input_schema["properties"]) == ("Recipes", "Suggestions", {"q": {"type": "string"}})
    assert (query.query, query.gold) == ("a meal with beef", ("0",))


# --- the demo world and the public data -----------------------------------------------------------

def test_demo_world_as_catalog_records():
    try:
        tools, queries = demo_dataset()
    except ImportError as exc:
        pytest.skip(f"workbook.demo is not importable yet ({exc}).")
    ids = {t.id for t in tools}
    assert len(ids) == len(tools) and queries
    assert all(set(q.gold) <= ids for q in queries)


def test_public_data_loads_when_present():
    folder = dataset_dir("livemcpbench")
    if folder is None:
        pytest.skip(missing_data_note("livemcpbench"))
    tools, queries = load_tools(folder), load_queries(folder)
    assert (len(tools), len(queries)) == (527, 94)
    assert sum(len(q.slots) for q in queries) / len(queries) == pytest.approx(2.69, abs=0.01)
    assert len(step_queries(queries)) == sum(len(q.steps) for q in queries) > 94
