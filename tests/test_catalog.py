import pytest

from harness.catalog import ToolCatalog
from harness.registry import DuplicateToolError, ToolRegistry
from harness.text import split_identifier, tokenize


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
    assert all(r.score > 0 for r in cat.rank("post a message", k=7))
    assert "create_event" not in [t.name for t in cat.select("post a message")]


def test_pinned_tools_come_first_whatever_their_score(small_tools):
    cat = ToolCatalog(small_tools)
    ranked = cat.rank("search the code", k=2, must_include=["create_event"])
    assert ranked[0].tool.name == "create_event" and ranked[0].pinned
    assert [r.tool.name for r in ranked].count("create_event") == 1
    assert len(ranked) == 3
    assert [t.name for t in cat.select("hi", must_include=["create_event"])] == ["create_event"]


def test_explain_sums_to_the_score(small_tools):
    cat = ToolCatalog(small_tools)
    q = "search code for the login function"
    parts = cat.explain(q, "search_code")
    assert [p.term for p in parts] == tokenize(q)
    assert sum(p.contribution for p in parts) == pytest.approx(cat.scores(q)["search_code"])
    assert all(p.tf == 0 and p.contribution == 0 for p in parts if p.term == "login")


def test_bad_input_is_a_clear_error(small_tools):
    cat = ToolCatalog(small_tools)
    with pytest.raises(ValueError, match="k must be a positive number of tools, got 0"):
        cat.select("read", k=0)
    with pytest.raises(ValueError, match="got -1"):
        cat.select("read", k=-1)
    with pytest.raises(KeyError, match="must_include names tool\\(s\\) not in the catalog: nope"):
        cat.select("read", must_include=["nope"])
    with pytest.raises(DuplicateToolError, match="already has a tool named 'read_file'"):
        ToolCatalog(small_tools + small_tools[:1])
    with pytest.raises(KeyError, match="No tool named 'zzz'"):
        cat.get("zzz")


def test_empty_catalog_and_empty_queries(small_tools):
    empty = ToolCatalog([])
    assert len(empty) == 0 and empty.select("read a file") == [] and empty.search("x") == []
    cat = ToolCatalog(small_tools)
    for q in ["", "   ", "the and of what can you do"]:
        assert cat.select(q) == []
        assert set(cat.scores(q).values()) == {0.0}


def test_from_registry(small_tools):
    assert ToolCatalog.from_registry(ToolRegistry(small_tools)).all_names() == [t.name for t in small_tools]
