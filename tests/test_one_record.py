"""One definition of what a search reads of a tool, one parameter type, and the record conversions in one place.

A catalog record (:class:`~harness.retrieval.records.CatalogTool`: an id, a server, maybe no valid API name) and a
callable :class:`~harness.core.tools.Tool` stay two classes, but their searchable text and their parameters come
from the same functions of :mod:`harness.core.tools`, and a record becomes a tool (or a tool a record) only in
:mod:`harness.retrieval.records`.
"""
from __future__ import annotations

import ast
from pathlib import Path

from harness.core.tools import Tool
from workbook.demo import demo_tools
from harness.retrieval.records import CatalogTool

PACKAGE = Path(__file__).resolve().parent.parent / "harness"
ODD = CatalogTool(id="api//v1/nutrition", name="/v1/nutrition", description="", server="api",
                  input_schema={"type": "string"})


def test_a_tool_and_its_record_read_the_same_text_and_parameters():
    for t in demo_tools():
        r = CatalogTool.from_tool(t)
        assert r.search_text == t.search_text and r.parameters == t.parameters
        assert all(isinstance(n, str) and isinstance(d, str) for n, d in t.parameters)


def test_searchable_text_and_parameters_are_written_once():
    """Only core/tools.py builds them (functions with an f-string or a loop over the schema's properties)."""
    builders = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name in {"search_text", "parameters", "parameter_texts"}:
                if any(isinstance(n, (ast.JoinedStr, ast.comprehension)) for n in ast.walk(node)):
                    builders.append(f"{path.relative_to(PACKAGE)}:{node.name}")
    assert sorted(builders) == ["core/tools.py:parameter_texts", "core/tools.py:search_text"]


def test_a_record_becomes_a_tool_in_one_place():
    t = ODD.to_tool("api__nutrition")
    assert isinstance(t, Tool) and t.name == "api__nutrition" and t.domain == "api"
    assert t.input_schema == {"type": "object", "properties": {}} and t.description == ODD.name
    for name in ("workbook/evaluation/public_catalog.py", "harness/mcp/proxy/server.py"):
        source = (PACKAGE.parent / name).read_text(encoding="utf-8")
        assert 'get("type") == "object"' not in source, name  # the schema fallback is the records' own
