"""python -m harness doctor / search, run as a user would."""
import json
import subprocess
import sys

import pytest


def cli(*args):
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, timeout=120)


def test_doctor_reports_offline_tokens_and_model():
    out = cli("doctor")
    assert out.returncode == 0, out.stderr
    assert "Token counting: real tiktoken cl100k_base, offline" in out.stdout
    assert "Model: offline stand-in" in out.stdout
    assert "MCP servers (PyPI): mcp-server-git" in out.stdout


def test_search_over_the_demo_world():
    out = cli("search", "post a message to the team channel", "-k", "3")
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert len(lines) == 3 and "post_channel_message" in lines[0]


def test_search_over_a_tools_file(tmp_path):
    path = tmp_path / "tools.jsonl"
    rows = [{"id": "fs/read_file", "server": "fs", "name": "read_file", "description": "Read a file.", "input_schema": {"type": "object"}},
            {"id": "web/fetch", "server": "web", "name": "fetch", "description": "Fetch a URL.", "input_schema": {"type": "object"}},
            {"id": "db/query", "server": "db", "name": "query", "description": "Run SQL.", "input_schema": {"type": "object"}}]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    out = cli("search", "fetch a url", "--tools", str(path))
    assert out.returncode == 0 and out.stdout.splitlines()[0].split()[2] == "web/fetch"


@pytest.mark.parametrize("args, message", [
    (["search", "x", "--tools", "/nonexistent/tools.jsonl"], "error: "),
    (["search", "read", "-k", "0"], "k must be a positive number of tools, got 0"),
])
def test_bad_input_is_one_line_on_stderr(args, message):
    out = cli(*args)
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr


def test_nothing_matches():
    out = cli("search", "hi")
    assert out.returncode == 0 and out.stdout.startswith("No tool shares a term with 'hi'")


def _dataset(folder):
    tools = [{"id": "fs/read_file", "server": "fs", "name": "read_file", "description": "Read a file.", "input_schema": {"type": "object"}},
             {"id": "web/fetch", "server": "web", "name": "fetch", "description": "Fetch a URL.", "input_schema": {"type": "object"}},
             {"id": "db/query", "server": "db", "name": "query", "description": "Run SQL on the database.", "input_schema": {"type": "object"}}]
    queries = [{"qid": "1", "query": "fetch a url", "gold": ["web/fetch"]},
               {"qid": "2", "query": "run sql on the database", "gold": ["db/query"]}]
    (folder / "tools.jsonl").write_text("\n".join(json.dumps(r) for r in tools))
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(r) for r in queries))
    return folder


@pytest.mark.parametrize("retriever", ["bm25", "bm25-fielded", "catalog"])
def test_search_with_a_named_retriever(retriever, tmp_path):
    out = cli("search", "fetch a url", "--retriever", retriever, "--tools", str(_dataset(tmp_path)), "-k", "2")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].split()[2] == "web/fetch"


def test_search_finds_the_tool_of_a_one_tool_catalog(tmp_path):
    """BM25 scores ≤ 0 in a one-tool catalog; the CLI must not claim no tool shares a term."""
    path = tmp_path / "tools.jsonl"
    path.write_text(json.dumps({"id": "fs/read_file", "server": "fs", "name": "read_file", "description": "Read a file.",
                                "input_schema": {"type": "object"}}))
    out = cli("search", "read a file", "--tools", str(path))
    assert out.returncode == 0 and "fs/read_file" in out.stdout.splitlines()[0] and "No tool" not in out.stdout


def test_eval_prints_every_metric(tmp_path):
    out = cli("eval", str(_dataset(tmp_path)), "--retriever", "bm25")
    assert out.returncode == 0, out.stderr
    header, metrics = out.stdout.splitlines()
    assert header.startswith("bm25 on ") and "3 tools, 2 queries" in header
    assert metrics == "R@1 1.000  R@5 1.000  R@10 1.000  Complete@10 1.000  MRR 1.000  nDCG@10 1.000"


@pytest.mark.parametrize("args, message", [
    (["search", "x", "--retriever", "nope"], "No retriever named 'nope'; the names are:"),
    (["eval", "/nonexistent/folder", "--retriever", "bm25"], "error: "),
])
def test_bad_retriever_or_folder_is_one_line(args, message):
    out = cli(*args)
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr


def test_bench_runs_through_the_cli(monkeypatch):
    from harness import __main__ as cli_module
    from experiments import bench

    seen = {}
    monkeypatch.setattr(bench, "main", lambda argv: seen.setdefault("argv", argv) and 0)
    assert cli_module.main(["bench", "--quick", "--k", "3"]) == 0
    assert seen["argv"] == ["--quick", "--k", "3"]
    help_text = cli("bench", "--help")
    assert help_text.returncode == 0 and "usage: harness bench" in help_text.stdout
