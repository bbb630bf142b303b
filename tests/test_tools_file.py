"""Tools files as users have them (issue 43): MCP tools/list output, OpenAI function definitions, a JSON array,
JSON lines and the workbook's own format, through one loader; the parameters are never dropped."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.evaluation.datasets import load_tools

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = {"type": "object", "properties": {"repo_path": {"type": "string", "description": "Path of the git repository."}},
          "required": ["repo_path"]}
MCP_TOOL = {"name": "git_status", "description": "Show the working tree status.", "inputSchema": SCHEMA,
            "annotations": {"readOnlyHint": True}}
FORMATS = {
    "mcp.json": {"tools": [MCP_TOOL], "nextCursor": None},
    "jsonrpc.json": {"jsonrpc": "2.0", "id": 1, "result": {"tools": [MCP_TOOL]}},
    "openai.json": [{"type": "function", "function": {"name": "git_status", "description": "Show the working tree status.",
                                                      "parameters": SCHEMA, "strict": False}}],
    "responses.json": [{"type": "function", "name": "git_status", "description": "Show the working tree status.",
                        "parameters": SCHEMA}],
    "anthropic.json": [{"name": "git_status", "description": "Show the working tree status.", "input_schema": SCHEMA}],
    "one.json": MCP_TOOL,
}


@pytest.mark.parametrize("name", FORMATS)
def test_each_format_loads_with_its_parameters(tmp_path, name):
    path = tmp_path / name
    path.write_text(json.dumps(FORMATS[name], indent=2))
    (tool,) = load_tools(path)
    assert (tool.id, tool.name, tool.description) == ("git_status", "git_status", "Show the working tree status.")
    assert tool.input_schema == SCHEMA and tool.parameters == [("repo_path", "Path of the git repository.")]


def test_json_lines_take_any_shape_per_line_and_ids_carry_the_server(tmp_path):
    path = tmp_path / "tools.jsonl"
    lines = [{"id": "fs/read_file", "server": "fs", "name": "read_file", "description": "Read a file.", "input_schema": SCHEMA},
             {**MCP_TOOL, "server": "git"},
             {"type": "function", "function": {"name": "fetch", "description": "Fetch a URL.", "parameters": SCHEMA}}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    tools = load_tools(path)
    assert [t.id for t in tools] == ["fs/read_file", "git/git_status", "fetch"]
    assert all(t.input_schema == SCHEMA for t in tools) and tools[1].extra == {"annotations": {"readOnlyHint": True}}


@pytest.mark.parametrize("content, message", [
    ([{**MCP_TOOL, "input_schema": SCHEMA}], "entry 1: has both 'input_schema' and 'inputSchema'; keep the one that holds its parameters."),
    ({"tools": [MCP_TOOL, "git_log"]}, "tools[1]: expected a JSON object (a tool), got string."),
    ([MCP_TOOL, MCP_TOOL], "entry 2: duplicate tool id 'git_status' (first on entry 1)."),
    ([{"type": "function", "function": ["git_status"]}], "entry 1: field 'function' must be a JSON object, got list."),
    ([{"description": "no name"}], "entry 1: missing the required field 'id'."),
])
def test_each_mistake_is_one_sentence_naming_the_entry(tmp_path, content, message):
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(content))
    with pytest.raises(ValueError) as info:
        load_tools(path)
    assert str(info.value) == f"{path}, {message}"


def test_a_broken_json_document_is_named_by_line_and_column(tmp_path):
    path = tmp_path / "tools.json"
    path.write_text('[\n  {"name": "git_status",\n   "description": }\n]\n')
    with pytest.raises(ValueError) as info:
        load_tools(path)
    assert str(info.value) == f"{path}: not valid JSON (Expecting value at line 3 column 19)."


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_search_ranks_by_the_parameters_of_an_mcp_listing(tmp_path):
    """The words a user types may be only in a parameter's description: dropping inputSchema lost this tool."""
    path = tmp_path / "listing.json"
    other = {"name": "git_log", "description": "Show the commit log.", "inputSchema": {"type": "object", "properties": {}}}
    path.write_text(json.dumps({"tools": [other, MCP_TOOL]}))
    out = cli("search", "repository path", "--tools", str(path), "-k", "1")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].split()[2] == "git_status"


def readme_examples() -> dict[str, str]:
    """The README's tools-file examples: each fenced block under the tools-file heading, by its first comment."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### Tools files", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    return {m.group(1): m.group(2) for m in re.finditer(r"```\w*\n// (\S+)\n(.*?)```", section, re.S)}


def test_the_readme_shows_an_example_of_each_format_and_each_loads(tmp_path):
    examples = readme_examples()
    assert set(examples) == {"tools.jsonl", "tools.json", "mcp-tools-list.json", "openai.json", "openai-responses.json"}
    for name, body in examples.items():
        path = tmp_path / name
        path.write_text(body)
        tools = load_tools(path)
        assert tools and all(t.name and t.parameters for t in tools), name
