import pytest

from rank_bm25 import BM25Okapi

from harness.selection.catalog import ToolCatalog
from harness.selection.ranking import Selector
from harness.core.registry import DuplicateToolError, ToolRegistry
from harness.core.text import split_identifier, tokenize


def test_tokenizer_splits_identifiers_and_keeps_the_whole_name():
    assert split_identifier("listPullRequests") == ["list", "pull", "requests"]
    assert split_identifier("git-log") == ["git", "log"]
    terms = tokenize("Use search_code on the files")
    assert "search_code" in terms and "search" in terms and "code" in terms
    assert "file" in terms  # plural stripped
    assert "the" not in terms and "on" not in terms
    assert tokenize("what can you do?") == []


def test_select_ranks_by_bm25_and_respects_k(small_tools):
    cat = ToolCatalog(small_tools)
    picked = cat.select("search the source code for TODO", k=2)
    assert [t.name for t in picked][0] == "search_code"
    assert len(picked) <= 2


def test_score_floor_never_returns_unrelated_tools(small_tools):
    cat = ToolCatalog(small_tools)
    assert cat.select("hi") == []
    assert all(r.score > 0 for r in Selector.over(cat).ranked("post a message"))
    assert "create_event" not in [t.name for t in cat.select("post a message")]


def test_catalog_scores_are_rank_bm25s(small_tools):
    cat = ToolCatalog(small_tools)
    reference = BM25Okapi([tokenize(t.search_text) for t in small_tools])
    for q in ["search the code", "read a file and post a message", "create an event on the calendar"]:
        assert list(cat.scores(q)) == list(reference.get_scores(tokenize(q)))


def test_a_one_or_two_tool_catalog_still_ranks_by_shared_terms(small_tools):
    """BM25's idf is ≤ 0 for a term in half the documents, so in a tiny catalog every score is ≤ 0
    (issue 18, item 14): the tools that share terms with the query must still be found."""
    read_file = next(t for t in small_tools if t.name == "read_file")
    other = next(t for t in small_tools if t.name == "post_message")
    one = ToolCatalog([read_file])
    assert all(s <= 0 for s in one.scores("read a file"))
    assert one.rank("read a file") == ["read_file"] and one.select("read a file") == [read_file]
    two = ToolCatalog([other, read_file])
    assert all(s <= 0 for s in two.scores("read a file"))
    assert two.rank("read a file") == ["read_file"]  # the other tool shares no term
    assert ToolCatalog([read_file, other]).rank("read the file, then post a message")[0] in {"read_file", "post_message"}
    assert one.rank("hi") == [] and one.rank("calendar") == []


def test_pinned_tools_come_first_whatever_their_score(small_tools):
    cat = ToolCatalog(small_tools)
    ranked = Selector.over(cat, k=2, pinned=["create_event"]).ranked("search the code")
    assert ranked[0].tool.name == "create_event" and ranked[0].pinned
    assert [r.tool.name for r in ranked].count("create_event") == 1
    assert len(ranked) == 3
    assert [t.name for t in Selector.over(cat, pinned=["create_event"]).select("hi")] == ["create_event"]


def test_explain_sums_to_the_score(small_tools):
    cat = ToolCatalog(small_tools)
    q = "search code for the login function"
    parts = cat.explain(q, "search_code")
    assert [p.term for p in parts] == tokenize(q)
    assert sum(p.contribution for p in parts) == pytest.approx(cat.scores(q)[cat.ids.index("search_code")])
    assert all(p.tf == 0 and p.contribution == 0 for p in parts if p.term == "login")


def test_bad_input_is_a_clear_error(small_tools):
    cat = ToolCatalog(small_tools)
    with pytest.raises(ValueError, match="k must be a positive number of tools, got 0"):
        cat.select("read", k=0)
    with pytest.raises(ValueError, match="got -1"):
        cat.select("read", k=-1)
    with pytest.raises(KeyError, match="Pinned tool\\(s\\) not among the 6 tools: nope"):
        Selector.over(cat, pinned=["nope"])
    with pytest.raises(DuplicateToolError, match="already has a tool named 'read_file'"):
        ToolCatalog(small_tools + small_tools[:1])
    with pytest.raises(KeyError, match="No tool named 'zzz'"):
        cat.get("zzz")


def test_empty_catalog_and_empty_queries(small_tools):
    empty = ToolCatalog([])
    assert len(empty) == 0 and empty.select("read a file") == [] and empty.rank("x") == []
    cat = ToolCatalog(small_tools)
    for q in ["", "   ", "the and of what can you do"]:
        assert cat.select(q) == []
        assert set(cat.scores(q)) == {0.0}


def test_from_registry(small_tools):
    assert ToolCatalog.from_registry(ToolRegistry(small_tools)).all_names() == [t.name for t in small_tools]
