"""The package's face (``harness/__init__.py``): every exported name resolves, and importing it stays cheap.

Every ``python -m harness.x`` (an MCP server process, the CLI) imports ``harness/__init__.py`` first, so the face
loads its exports on first use (PEP 562) and pays for nothing at import time.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import harness

#: What the chapters and the README import from the face (plan of the library's API), one chapter after another.
CHAPTER_NAMES = [
    "Tool", "tool", "ToolRegistry", "DuplicateToolError", "Message", "TextBlock", "ToolCall", "ToolResult",
    "Transcript", "ContextAccountant", "count_text", "tool_tokens", "tools_tokens", "AnthropicProvider",
    "bootstrap_interval", "paired_difference_interval", "ToolCatalog", "Ranker", "Selector", "arun", "Deferral",
    "ToolSearch", "MCPHub", "make_retriever", "maker", "register", "evaluate", "ToolProxy", "best_retriever",
]
#: The chapters whose ideas the library holds (the others' apparatus is the workbook's).
LIBRARY_CHAPTERS = ("0", "2", "3", "4", "5", "6a", "7")


@pytest.mark.parametrize("name", sorted(harness.__all__))
def test_each_exported_name_resolves_to_the_object_its_module_defines(name):
    value = getattr(harness, name)
    module = sys.modules[harness._EXPORTS[name]]
    assert value is getattr(module, name)


def test_the_face_exports_what_the_chapters_use_and_names_every_chapter():
    assert set(CHAPTER_NAMES) <= set(harness.__all__)
    assert set(harness.__all__) <= set(dir(harness))
    for chapter in LIBRARY_CHAPTERS:
        assert f"Chapter {chapter}" in harness.__doc__, chapter


def test_an_unknown_name_is_one_attribute_error():
    with pytest.raises(AttributeError, match="^module 'harness' has no attribute 'nope'$"):
        harness.nope  # noqa: B018


def test_importing_the_face_loads_nothing_heavy():
    """Neither NumPy, tiktoken, asyncio nor any module of the package: an MCP server process must not pay for them."""
    code = ("import json, sys; import harness; "
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('numpy', 'tiktoken', 'asyncio', 'mcp', 'anthropic', 'harness'))))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                       text=True).stdout)
    assert loaded == ["harness"]


def test_the_library_loads_no_workbook_module():
    """Importing what a user of the library imports loads none of the workbook's apparatus: no demo world, stand-in,
    local model or research retriever — and counts what it does load, so the library stays small."""
    code = ("import json, sys; from harness import Tool, ToolSearch, arun, maker, MCPHub, ToolProxy, make_retriever; "
            "make_retriever('bm25', []) if False else None; "
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('harness', 'workbook', 'experiments'))))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                                       cwd="/").stdout)
    assert not [m for m in loaded if not m.startswith("harness")], loaded
    assert not [m for m in loaded if any(w in m for w in ("offline", "local_llama", "demo", "research", "landscape"))]
    # 45 at the reshape; +3 since, each a library concept of its own: the guard around a stdio upstream
    # (harness.mcp.guard), forwarded prompts and resources (harness.mcp.proxy.forward), the embedder table
    # (harness.retrieval.embedders)
    assert len(loaded) <= 48, f"{len(loaded)} modules of the library load for its five main names: {loaded}"
