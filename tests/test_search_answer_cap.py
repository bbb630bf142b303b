"""One ``search_tools`` answer has a size cap, and says what it cut (issue 40: a tool with a 400 KB schema
made one answer 78,542 tokens)."""
from __future__ import annotations

import json

import pytest

from conftest import run
from harness.core.tokens import count_text
from harness.core.tools import Tool
from harness.mcp.client import MCPHub
from harness.mcp.proxy.server import ToolProxy, proxy_policy
from harness.retrieval.records import CatalogTool
from harness.selection.discovery import MAX_ANSWER_TOKENS, ToolSearch, listed
from test_proxy_hardening import NOTES


def huge_schema(kilobytes: int = 400, description_words: int = 120) -> dict:
    """An input schema of about ``kilobytes`` KB: many parameters, each with a description of about so many words."""
    text = " ".join(["filter"] * description_words)
    n = kilobytes * 1024 // (len(text) + 40)
    return {"type": "object", "properties": {f"column_{i:05d}": {"type": "string", "description": text} for i in range(n)}}


def test_a_chapter_4_search_answer_stays_under_the_cap_and_names_what_was_cut():
    giant = Tool("export_report", "Export the sales report as a file.", huge_schema(description_words=2))  # 8,000 parameters
    small = [Tool(f"export_{kind}", f"Export the {kind} as a file.", {"type": "object", "properties": {"path": {"type": "string"}}})
             for kind in ("invoice", "ledger", "contacts")]
    search = ToolSearch([], [giant, *small])
    answer = search.search("export the sales report as a file")
    payload = json.loads(answer)
    assert count_text(answer) <= MAX_ANSWER_TOKENS
    assert listed(answer)[0] == "export_report" and set(listed(answer)) == {t.name for t in [giant, *small]}
    cut = next(m for m in payload["matches"] if m["name"] == "export_report")
    assert "parameters" not in cut and "parameters" in cut["omitted"]
    assert all("parameters" in m for m in payload["matches"] if m["name"] != "export_report")
    assert "export_report" in payload["note"] and f"{MAX_ANSWER_TOKENS:,} tokens" in payload["note"]


@pytest.mark.mcp
def test_a_proxy_search_answer_with_a_400_kb_schema_stays_under_the_cap(tmp_path):
    giant = CatalogTool("big/export_report", "export_report", "Export the sales report as a file.", huge_schema(), "big")

    async def session_run():
        async with MCPHub({"mcpServers": NOTES}, log_dir=tmp_path / "logs", policy=proxy_policy()) as hub:
            return ToolProxy(hub, retriever="bm25-fielded", extra=[giant]).search_tools("export the sales report", 5)

    answer = run(session_run())
    payload = json.loads(answer)
    assert count_text(answer) <= MAX_ANSWER_TOKENS, count_text(answer)
    entry = payload["matches"][0]
    assert entry["name"].endswith("export_report") and "input_schema" not in entry and entry["omitted"] == ["input_schema"]
    assert "Export the sales report" in entry["description"]
    assert "cut" in payload["note"] and "export_report" in payload["note"]
