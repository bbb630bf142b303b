"""Untrusted or unusual tool text: other scripts, control characters, markup — kept, found, escaped, flagged."""
from harness.selection.catalog import ToolCatalog
from harness.mcp.suspicious import flag_suspicious
from harness.core.registry import ToolRegistry
from harness.core.tools import Tool
from workbook.views.explorer import ranking_html, ranking_rows

EMPTY = {"type": "object", "properties": {}}
CHINESE = Tool("bing_search", "使用必应搜索指定的关键词，并返回搜索结果列表", EMPTY, fn=lambda: "ok")
CONTROL = Tool("ansi_tool", "Lists files.\x1b[8m hidden \x1b[0m\x07", EMPTY, fn=lambda: "ok")
PLAIN = Tool("list_files", "List the files in a folder.", EMPTY, fn=lambda: "ok")


def test_a_description_in_another_script_is_indexed_and_callable():
    cat = ToolCatalog([CHINESE, PLAIN, CONTROL])
    assert [t.name for t in cat.select("使用必应搜索指定的关键词")][0] == "bing_search"
    assert ToolRegistry([CHINESE]).dispatch("bing_search", {}).content == "ok"
    assert flag_suspicious(CHINESE.description) == []


def test_control_characters_are_kept_flagged_and_escaped_in_views():
    assert CONTROL.description.endswith("\x07"), "descriptions are kept exactly as given"
    flags = flag_suspicious(CONTROL.description)
    assert flags == ["3 control characters (terminal escapes can hide or rewrite what a reviewer sees)"]
    assert flag_suspicious("Line one.\n\tLine two.\r\n") == []
    html = ranking_html(ranking_rows(ToolCatalog([CONTROL, PLAIN]), "lists files"), "<img src=x onerror=alert(1)>")
    assert "<img" not in html and "&lt;img" in html
