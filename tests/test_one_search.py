"""One ``search_tools``: Chapter 4's :class:`ToolSearch`, configured (not subclassed) by the MCP hub and the proxy.

The proxy's answer is the search's own formatting (its matches and its "nothing found" fallback), and a hub
that only feeds a proxy builds no search index of its own.
"""
from __future__ import annotations

import ast
import json
from pathlib import Path

from conftest import run
from harness.mcp.client import MCPHub
from harness.mcp.proxy.server import ToolProxy, proxy_name, proxy_policy
from workbook.servers import workbook_servers_config
from harness.selection import discovery
from harness.selection.discovery import ToolSearch

PACKAGE = Path(__file__).resolve().parent.parent / "harness"


def test_one_search_class_and_no_subclass_of_it():
    defined, subclasses = [], []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                if node.name == "ToolSearch" or node.name.endswith("Search"):
                    defined.append(f"{path.relative_to(PACKAGE)}:{node.name}")
                bases = [ast.unparse(b) for b in node.bases]
                if any(b.split(".")[-1].lstrip("_") == "ToolSearch" for b in bases):
                    subclasses.append(f"{path.relative_to(PACKAGE)}:{node.name}")
    assert defined == ["selection/discovery.py:ToolSearch"] and subclasses == []


def test_the_proxys_answer_is_the_searchs_formatting_and_its_nothing_found_is_the_same_text(tmp_path):
    async def session_run():
        async with MCPHub(workbook_servers_config(("notes",)), log_dir=tmp_path / "logs", policy=proxy_policy()) as hub:
            proxy = ToolProxy(hub, retriever="bm25-fielded")
            try:
                found = proxy.search.find("read a note", 2)
                assert found and proxy.search_tools("read a note", 2) == proxy.search.answer("read a note", found)
                answer = json.loads(proxy.search_tools("read a note", 2))
                assert [m["name"] for m in answer["matches"]] == [proxy_name(t.name) for t in found]
                plain = json.loads(ToolSearch([], proxy.search.deferred).search("zebra quantum"))
                nothing = json.loads(proxy.search_tools("zebra quantum"))
                assert nothing["note"] == plain["note"] and nothing["matches"] == plain["matches"] == []
                assert nothing["available"] == [proxy_name(n) for n in plain["available"]]
            finally:
                await proxy.aclose()

    run(session_run())


def test_a_hub_in_proxy_mode_builds_no_search_index(tmp_path, monkeypatch):
    built = []
    real = discovery.build_ranker
    monkeypatch.setattr(discovery, "build_ranker", lambda spec, tools: built.append(len(tools)) or real(spec, tools))

    async def session_run():
        async with MCPHub(workbook_servers_config(("notes",)), log_dir=tmp_path / "logs", policy=proxy_policy()) as hub:
            proxy = ToolProxy(hub, retriever="bm25-fielded")
            try:
                assert built == [len(proxy.search.deferred)]  # the proxy's own index, once; none for the hub
                assert json.loads(proxy.search_tools("read a note"))["matches"] and proxy.status()["deferred"]
                assert len(built) == 1
                hub.search.find("read a note")  # a hub used on its own still builds its search, when asked
                assert len(built) == 2
            finally:
                await proxy.aclose()

    run(session_run())
