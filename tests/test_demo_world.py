"""The demo world: its tools, its labels, its sandbox. Every tool call goes through ToolRegistry.dispatch."""
from __future__ import annotations

import gc
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import jsonschema
import pytest

from workbook.demo import (CONFUSABLE_PAIRS, DOMAINS, DemoWorld, demo_tools, load_demo_queries,
                          load_demo_scenarios)
from workbook.demo.testrunner import run as simulated_run
from harness.core.registry import ToolRegistry
from harness.core.text import content_words

TOOLS = demo_tools()
BY_NAME = {t.name: t for t in TOOLS}
QUERIES = load_demo_queries()
SCENARIOS = load_demo_scenarios()
DEMO_TAGS = {"read", "write", "destructive", "network"}


def fresh_registry() -> tuple[DemoWorld, ToolRegistry]:
    world = DemoWorld()
    return world, ToolRegistry(demo_tools(world))


def vocabulary(name: str) -> set[str]:
    t = BY_NAME[name]
    return content_words(" ".join([t.name, t.description, *(n for n, _ in t.parameters)]))


# --- counts ------------------------------------------------------------------------------------

def test_counts():
    assert len(TOOLS) >= 64 and len(BY_NAME) == len(TOOLS), "tool names must be unique"
    assert len(DOMAINS) >= 9 and {t.domain for t in TOOLS} == set(DOMAINS)
    assert min(Counter(t.domain for t in TOOLS).values()) >= 4
    assert len(QUERIES) >= 210
    assert sum(q.kind == "paraphrase" for q in QUERIES) * 3 >= len(QUERIES)
    assert sum(q.args is not None for q in QUERIES) >= 40
    per_tool = Counter(g for q in QUERIES for g in q.gold)
    assert not [n for n in BY_NAME if per_tool[n] < 2], "every tool needs at least two labelled queries"
    kinds = Counter(s.kind for s in SCENARIOS)
    assert kinds["task"] >= 24 and kinds["pivot"] >= 6 and kinds["opener"] >= 6


def test_tool_order_is_stable_and_worlds_are_separate():
    w1, w2 = DemoWorld(), DemoWorld()
    assert [t.name for t in demo_tools(w1)] == [t.name for t in demo_tools(w2)] == list(BY_NAME)
    ToolRegistry(demo_tools(w1)).dispatch("delete_file", {"path": "README.md"})
    assert not (w1.root / "README.md").exists() and (w2.root / "README.md").exists()


# --- schemas and descriptions ------------------------------------------------------------------

@pytest.mark.parametrize("name", list(BY_NAME))
def test_schema_and_description(name):
    t = BY_NAME[name]
    jsonschema.Draft202012Validator.check_schema(t.input_schema)
    assert t.tags and t.tags <= DEMO_TAGS, f"{name}: side-effect tags {set(t.tags)}"
    assert t.domain in DOMAINS
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z])", t.description.replace("\n", " ").strip())
    assert 1 <= len(sentences) <= 3, f"{name}: {len(sentences)} sentences"
    assert t.summary.endswith((".", ")")) and len(t.summary) > 20, f"{name}: summary {t.summary!r} is cut"
    assert len(t.required) <= 3
    for pname, prop in t.input_schema["properties"].items():
        assert prop.get("description"), f"{name}.{pname} has no description"


def test_descriptions_are_distinct():
    assert len({t.description for t in TOOLS}) == len(TOOLS)


def test_confusable_pairs_are_distinct_but_overlapping():
    assert len(CONFUSABLE_PAIRS) >= 8
    for a, b in CONFUSABLE_PAIRS:
        da, db = content_words(BY_NAME[a].description), content_words(BY_NAME[b].description)
        assert da != db
        assert len(da & db) >= 2, f"{a} / {b} share only {da & db}"
        assert len(da & db) / len(da | db) < 0.5, f"{a} / {b} are nearly the same description"


# --- every tool works ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(BY_NAME))
def test_tool_runs_on_a_fresh_world_with_labelled_args(name):
    calls = [q.args for q in QUERIES if q.gold == (name,) and q.args is not None]
    if not calls:
        assert not BY_NAME[name].required, f"{name} has required parameters but no labelled query states them"
        calls = [{}]
    for args in calls:
        _, registry = fresh_registry()
        result = registry.dispatch(name, args)
        assert not result.is_error, f"{name}({args}): {result.content}"
        assert result.content.strip()


def test_labelled_queries_name_real_tools_and_state_their_args():
    for q in QUERIES:
        assert set(q.gold) <= set(BY_NAME), f"{q.qid}: unknown gold {q.gold}"
        assert q.domain == BY_NAME[q.gold[0]].domain, q.qid
        for key, value in (q.args or {}).items():
            assert key in dict(BY_NAME[q.gold[0]].parameters), f"{q.qid}: {key} is not a parameter"
            for v in value if isinstance(value, list) else [value]:
                if not isinstance(v, bool):
                    assert str(v).lower() in q.query.lower(), f"{q.qid}: {key}={v!r} is not stated in the query"


def test_paraphrases_share_no_content_word_with_their_tool():
    for q in QUERIES:
        if q.kind == "paraphrase":
            shared = content_words(q.query) & set().union(*(vocabulary(g) for g in q.gold))
            assert not shared, f"{q.qid} {q.query!r} shares {shared} with {q.gold}"


def test_the_paraphrase_check_can_fail():
    assert content_words("Show me the file notes/todo.md") & vocabulary("read_file")


# --- scenarios -------------------------------------------------------------------------------------

def test_scenarios_are_well_formed():
    for s in SCENARIOS:
        assert set(s.tools) <= set(BY_NAME), f"{s.id}: unknown tools {set(s.tools) - set(BY_NAME)}"
        if s.kind == "task":
            assert 2 <= len(s.tools) <= 4, s.id
            assert len(s.steps) == len(s.tools), f"{s.id}: {len(s.steps)} steps for {len(s.tools)} tools"
        elif s.kind in ("pivot", "conversation"):
            assert s.setup and s.tools, s.id
            assert not s.setup_tools or len(s.setup_tools) == len(s.setup), s.id
        else:
            assert len(s.tools) <= 1 and len(s.request.split()) <= 8, s.id


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s.args], ids=lambda s: s.id)
def test_scenario_steps_run_in_order_on_a_fresh_world(scenario):
    _, registry = fresh_registry()
    for step, (name, args) in enumerate(zip(scenario.tools, scenario.args), 1):
        result = registry.dispatch(name, args, call_id=f"step{step}")
        assert not result.is_error, f"{scenario.id} step {step} {name}({args}): {result.content}"


# --- the sandbox -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name,args", [
    ("read_file", {"path": "../outside.txt"}),
    ("read_file", {"path": "/etc/hostname"}),
    ("write_file", {"path": "../outside.txt", "content": "x"}),
    ("delete_file", {"path": "../outside.txt"}),
    ("move_file", {"path": "README.md", "destination": "../outside.txt"}),
    ("list_directory", {"path": ".."}),
    ("read_file", {"path": "link/secret.txt"}),
])
def test_paths_outside_the_sandbox_are_refused(tmp_path, name, args):
    world = DemoWorld(tmp_path / "world")
    secret = tmp_path / "outside.txt"
    secret.write_text("keep me")
    (tmp_path / "secret.txt").write_text("hidden")
    (world.root / "link").symlink_to(tmp_path)
    result = ToolRegistry(demo_tools(world)).dispatch(name, args)
    assert result.is_error and "outside the sandbox" in result.content
    assert secret.read_text() == "keep me" and (world.root / "README.md").exists()


def test_bad_input_gets_one_clear_error_and_loses_nothing():
    world, registry = fresh_registry()
    before = (world.root / "README.md").read_text()
    result = registry.dispatch("write_file", {"path": "README.md", "content": "x", "overwrite": False})
    assert result.is_error and "already exists" in result.content
    result = registry.dispatch("move_file", {"path": "notes/todo.md", "destination": "README.md"})
    assert result.is_error and (world.root / "notes/todo.md").exists()
    assert (world.root / "README.md").read_text() == before
    result = registry.dispatch("create_event", {"title": "x", "date": "10/03/2025", "time": "9am"})
    assert result.is_error and "YYYY-MM-DD" in result.content and len(world.events) == 5
    result = registry.dispatch("calculate", {"expression": "__import__('os').getcwd()"})
    assert result.is_error and "Only numbers" in result.content


def test_root_must_be_new_or_empty_and_temp_roots_are_removed(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(ValueError, match="new or empty folder"):
        DemoWorld(tmp_path)
    assert (tmp_path / "keep.txt").read_text() == "mine"
    world = DemoWorld()
    root = world.root
    del world
    gc.collect()
    assert not root.exists()


# --- git and tests follow the files ----------------------------------------------------------------

def test_git_sees_file_edits_and_protects_uncommitted_work():
    world, registry = fresh_registry()
    call = lambda name, args=None: registry.dispatch(name, args or {})  # noqa: E731
    status = json.loads(call("git_status").content)
    assert status == {"branch": "main", "staged": ["README.md"], "modified": ["src/app.py"],
                      "deleted": [], "untracked": ["data/returns.csv"]}
    call("write_file", {"path": "src/parser.py", "content": "# rewritten\n"})
    assert "src/parser.py" in json.loads(call("git_status").content)["modified"]
    assert "+# rewritten" in call("git_diff", {"path": "src/parser.py"}).content
    call("git_stage", {"path": "."})
    assert not call("git_commit", {"message": "Rewrite parser"}).is_error
    assert json.loads(call("git_log", {"limit": 1}).content)[0].endswith("Rewrite parser")
    call("write_file", {"path": "src/export.py", "content": "local work\n"})
    refused = call("git_checkout", {"branch": "feature/csv-export"})
    assert refused.is_error and "src/export.py" in refused.content
    assert (world.root / "src/export.py").read_text() == "local work\n"


def test_simulated_test_runner_follows_the_files():
    world, registry = fresh_registry()
    first = json.loads(registry.dispatch("run_tests", {}).content)
    assert (first["passed"], first["failed"], first["skipped"]) == (7, 1, 1)
    registry.dispatch("append_to_file", {"path": "tests/test_report.py",
                                         "content": "\ndef test_new():\n    assert False, 'not yet'\n"})
    second = json.loads(registry.dispatch("run_tests", {"pattern": "new"}).content)
    assert (second["passed"], second["failed"]) == (0, 1)
    assert second["problems"][0]["message"] == "AssertionError: not yet"


def test_simulated_test_runner_agrees_with_real_pytest():
    world = DemoWorld()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    out = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-c", os.devnull,
                          "--rootdir", str(world.root), "tests"],
                         cwd=world.root, capture_output=True, text=True, env=env, timeout=120).stdout
    real = dict(re.findall(r"^(tests/\S+::\w+) (PASSED|FAILED|SKIPPED|ERROR)", out, flags=re.M))
    simulated = {o.test_id: o.outcome.upper() for o in simulated_run(world.worktree())}
    assert real and real == simulated, out[-2000:]


# --- loading labels ----------------------------------------------------------------------------------

def test_bad_label_files_name_the_line(tmp_path):
    good = json.dumps({"qid": "a", "query": "q", "gold": ["read_file"], "kind": "literal", "domain": "files"})
    bad = json.dumps({"qid": "b", "query": "q", "gold": ["read_file"], "kind": "vague", "domain": "files"})
    path = tmp_path / "q.jsonl"
    path.write_text(f"{good}\n{bad}\n")
    with pytest.raises(ValueError, match=r"q\.jsonl line 2: kind must be"):
        load_demo_queries(path)
    scen = tmp_path / "s.json"
    scen.write_text(json.dumps([{"id": "x", "request": "r", "tools": ["a", "b"], "kind": "task", "args": [{}]}]))
    with pytest.raises(ValueError, match="one object per tool"):
        load_demo_scenarios(scen)


def test_label_files_are_the_workbooks_data():
    """The labels moved with the demo world into ``workbook/data`` (the library's wheel holds none: test_install)."""
    from workbook.demo.labels import QUERIES_FILE, SCENARIOS_FILE

    data = Path(__import__("workbook").__file__).parent / "data"
    assert Path(str(QUERIES_FILE)) == data / "demo_queries.jsonl" and Path(str(SCENARIOS_FILE)) == data / "demo_scenarios.json"
    assert QUERIES_FILE.is_file() and SCENARIOS_FILE.is_file()
