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
