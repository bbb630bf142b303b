import json

import pytest

from harness.selection.catalog import ToolCatalog
from harness.selection.discovery import DEFAULT_LIMIT, ToolSearch, discovery_tool, listing
from harness.core.registry import ToolRegistry


def test_list_available_tools_lists_every_tool_one_line_each(small_tools):
    t = discovery_tool(ToolCatalog(small_tools))
    out = ToolRegistry([t]).dispatch("list_available_tools", {}).content
    assert out.splitlines()[0] == "read_file — Read a text file from the workspace and return its contents."
    assert len(out.splitlines()) == len(small_tools)
    assert "discovery" in t.tags


def test_filter_and_the_no_match_fallback(small_tools):
    t = discovery_tool(ToolCatalog(small_tools))
    assert t.fn(filter_term="calendar") == listing([small_tools[-1]])
    assert t.fn(filter_term="zebra").startswith("No tool mentions 'zebra'. All tools:\nread_file")
    plain = discovery_tool(ToolCatalog(small_tools), filtered=False)
    assert plain.input_schema["properties"] == {}


def test_search_puts_exact_names_first_dedups_and_truncates(small_tools):
    search = ToolSearch([], small_tools)
    names = [t.name for t in search.find("search the code and docs create_event", limit=3)]
    assert names[0] == "create_event" and len(names) == 3 and len(set(names)) == 3
    out = json.loads(search.search("post a chat message", limit=1))
    assert out["matches"][0]["name"] == "post_message" and out["matches"][0]["parameters"]["channel"] == "string (required)"
    assert [t.name for t in search.activated] == ["post_message"]
    assert search.tools_for_turn() == [search.activated[0], search.tool]


def test_search_with_no_match_lists_what_exists_and_bad_limits_are_refused(small_tools):
    search = ToolSearch([], small_tools)
    payload = json.loads(search.search("zebra quantum"))
    assert payload["matches"] == [] and payload["available"] == [t.name for t in small_tools]
    assert search.activated == []
    with pytest.raises(ValueError, match="limit must be a whole number from 1 to 50, got 0"):
        search.find("read", 0)
    with pytest.raises(ValueError, match="non-empty query"):
        search.find("  ")


def test_a_query_that_matches_nothing_is_quoted_short_and_unable_to_act_on_a_screen(small_tools):
    query = "zebra \u202equantum\x1b[2J " + "y" * 100_000
    note = json.loads(ToolSearch([], small_tools).search(query))["note"]
    assert len(note) < 300 and "…" in note
    assert "\u202e" not in note and "\x1b" not in note and "\\u202e" in note


def test_the_search_limit_is_a_constructor_argument_that_defaults_as_before(small_tools):
    assert ToolSearch([], small_tools).tool.input_schema["properties"]["limit"]["default"] == DEFAULT_LIMIT
    one = ToolSearch([], small_tools, limit=1)
    assert one.tool.input_schema["properties"]["limit"]["default"] == 1
    assert len(json.loads(one.search("search the code and docs"))["matches"]) == 1  # a model that names no limit
    assert len(one.find("search the code and docs create_event", 3)) == 3  # a limit asked for still wins
    with pytest.raises(ValueError, match="limit must be a whole number from 1 to 50, got 0"):
        ToolSearch([], small_tools, limit=0)
