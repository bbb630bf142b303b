"""One ranking contract: every named retriever chooses tools in the loop, in search_tools and in MCP search."""
from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import SMALL_TOOLS, run
from harness.selection.agent import LoopSettings, TurnEvent, arun
from harness.selection.discovery import Deferral
from harness.selection.catalog import ToolCatalog
from harness.selection.discovery import SEARCH_TOOL_NAME, ToolSearch
from harness.evaluation.metrics import evaluate
from harness.mcp.client import MCPHub
from workbook.servers import server_entry
from harness.mcp.tool_search import mcp_search
from workbook.providers.offline import OfflineModel
from harness.selection.ranking import Selector, exact_name_matches, name_index
from harness.retrieval.dense import dense_unavailable_reason
from harness.retrieval.named import ALIASES, make_retriever, maker, needs_embeddings, retriever_names
from harness.retrieval.records import CatalogTool, Query

DENSE_SKIP = dense_unavailable_reason()
NAMES = [pytest.param(n, marks=pytest.mark.skipif(needs_embeddings(n) and DENSE_SKIP is not None, reason=str(DENSE_SKIP)))
         for n in retriever_names(dense=True)]
TASK = "Read the file 'a.txt', then post it to the #dev channel"


class Fixed:
    """A ranker that always answers the same ids, with scores: what the selector does around it is under test."""

    name = "fixed"

    def __init__(self, ids, scores):
        self.ids, self._scores = list(ids), np.array(scores, dtype=float)

    def scores(self, query):
        return self._scores

    def rank_with_scores(self, query, k=None):
        order = [self.ids[i] for i in np.argsort(-self._scores, kind="stable")]
        return order[:k], self._scores

    def rank(self, query, k=None):
        return self.rank_with_scores(query, k)[0]


# --- the selector -------------------------------------------------------------------------------

def test_selector_pins_first_then_k_ranked_without_duplicates():
    names = [t.name for t in SMALL_TOOLS]
    sel = Selector(Fixed(names, [6, 5, 4, 3, 2, 1]), SMALL_TOOLS, pinned=["create_event", SMALL_TOOLS[1]], k=2)
    ranked = sel.ranked("anything")
    assert [r.tool.name for r in ranked] == ["create_event", "write_file", "read_file", "post_message"]
    assert [r.pinned for r in ranked] == [True, True, False, False]
    assert ranked[2].score == 6.0
    assert [t.name for t in sel.select("anything", k=1)] == ["create_event", "write_file", "read_file"]


def test_selector_floor_drops_weak_matches_and_needs_scores():
    names = [t.name for t in SMALL_TOOLS]
    sel = Selector(Fixed(names, [6, 5, 0.5, 3, 0.1, 1]), SMALL_TOOLS, k=None, floor=1.0)
    assert [t.name for t in sel.select("q")] == ["read_file", "write_file", "search_code", "create_event"]

    class RankOnly:
        name = "rank-only"

        def rank(self, query, k=None):
            return names[:k]

    with pytest.raises(ValueError, match="A score floor needs a ranker that gives scores; 'rank-only' ranks only"):
        Selector(RankOnly(), SMALL_TOOLS, floor=1.0)


def test_selector_puts_exact_names_first_even_ones_the_ranker_left_out():
    cat = ToolCatalog(SMALL_TOOLS)
    plain = Selector(cat, SMALL_TOOLS, k=2)
    exact = Selector(cat, SMALL_TOOLS, k=2, exact_first=True)
    query = "search the code and the docs for the code that calls create_event"
    assert cat.rank(query)[0] == "search_code"  # BM25 alone ranks the named tool second (Codex CLI #21503)
    assert [t.name for t in exact.select(query)][:2] == ["create_event", "search_code"]
    assert [t.name for t in plain.select(query)] == ["search_code", "create_event"]
    assert exact.exact_matches("call CREATE_EVENT, then read_file.") == ["create_event", "read_file"]


def test_selector_rejects_bad_input_in_one_sentence():
    cat = ToolCatalog(SMALL_TOOLS)
    with pytest.raises(KeyError, match="Pinned tool\\(s\\) not among the 6 tools: nope"):
        Selector.over(cat, pinned=["nope"])
    with pytest.raises(ValueError, match="k must be a positive number of tools, got 0"):
        Selector.over(cat, k=0)
    empty = Selector(ToolCatalog([]), [], pinned=[SMALL_TOOLS[0]])
    assert [t.name for t in empty.select("read a file")] == ["read_file"]


def test_one_exact_name_matcher_with_one_or_two_part_names():
    pairs = [("read_file", "read_file"), ("fetch", "web/fetch"), ("web/fetch", "web/fetch")]
    assert exact_name_matches("fetch it, then read_file", name_index(pairs)) == ["read_file"]
    assert exact_name_matches("fetch it, then read_file", name_index(pairs, min_parts=1)) == ["web/fetch", "read_file"]
    assert exact_name_matches("use “web/fetch”", name_index(pairs)) == ["web/fetch"]


# --- every named retriever, everywhere ----------------------------------------------------------

def test_every_bench_retriever_has_a_name_and_aliases_resolve():
    assert {"bm25", "bm25-fielded", "dense-minilm", "hybrid-rrf", "hybrid-task", "catalog-bm25"} <= set(retriever_names(dense=True))
    assert set(ALIASES) == {"dense", "hybrid", "catalog"}
    with pytest.raises(ValueError, match="No retriever named 'nope'; the names are: catalog-bm25, bm25"):
        make_retriever("nope", SMALL_TOOLS)


def test_the_catalog_by_name_ranks_as_toolcatalog_does():
    cat, named = ToolCatalog(SMALL_TOOLS), make_retriever("catalog", SMALL_TOOLS)
    assert hasattr(named, "scores")  # it scores, as the catalog does
    for q in ["read a file", "post the notes to the channel", "search code and docs", "hi"]:
        assert named.rank(q) == cat.rank(q)
        assert list(named.scores(q)) == list(cat.scores(q))


@pytest.mark.parametrize("name", NAMES)
def test_each_retriever_chooses_the_tools_of_every_turn_in_arun(name):
    ranker = make_retriever(name, SMALL_TOOLS)
    events: list[TurnEvent] = []
    result = run(arun(OfflineModel(), Selector(ranker, SMALL_TOOLS, k=3), TASK, settings=LoopSettings(on_event=events.append)))
    assert result.succeeded() == ["read_file", "post_message"], (name, result.calls())
    for ev in events:  # what the model saw is what this retriever ranked first for that turn's query
        assert ev.tool_names == ranker.rank(ev.query, 3)


@pytest.mark.parametrize("name", NAMES)
def test_each_retriever_ranks_behind_search_tools(name):
    search = ToolSearch([], SMALL_TOOLS, retriever=maker(name))
    assert search.selector.ranker.name.startswith(make_retriever(name, SMALL_TOOLS).name)
    found = [m["name"] for m in json.loads(search.search("post a message to a channel", 2))["matches"]]
    assert found[0] == "post_message" and len(found) <= 2
    assert json.loads(search.search("create_event", 1))["matches"][0]["name"] == "create_event"  # exact names first
    search.reset()
    result = run(arun(OfflineModel(), ToolCatalog([]), "Post 'shipped' to the #dev channel",
                      deferral=Deferral(extra_tools=search.tools_for_turn, on_finish=search.end_turn)))
    assert [c[0] for c in result.calls()][0] == SEARCH_TOOL_NAME
    assert result.succeeded()[-1] == "post_message", (name, result.calls())


def test_a_search_takes_a_retriever_by_its_maker_and_says_so_when_given_a_name(tmp_path):
    """The search (Chapter 4) knows no retriever names: a name gets one sentence pointing at ``maker``."""
    for build in (lambda: ToolSearch([], SMALL_TOOLS, retriever="bm25-fielded"),  # type: ignore[arg-type]  # on purpose
                  lambda: MCPHub({"mcpServers": {}}, log_dir=tmp_path, retriever="bm25-fielded")):  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"^A search takes a function .*maker\('bm25-fielded'\)\.$"):
            build()
    with pytest.raises(ValueError, match="No retriever named 'bm25-felded'"):
        maker("bm25-felded")  # a typo fails where it is written


@pytest.mark.mcp
def test_each_retriever_ranks_mcp_search_tools_over_real_servers(tmp_path):
    """The workbook's notes server, deferred; the stand-in searches and calls it, ranked by each retriever."""
    config = {"mcpServers": {"notes": server_entry("notes", deferLoading=True),
                             "tickets": server_entry("tickets", deferLoading=True)}}
    names = retriever_names()

    async def session():
        out = {}
        async with MCPHub(config, log_dir=tmp_path, retriever=maker("bm25-fielded")) as hub:
            assert hub.search.selector.ranker.name == "bm25-fielded"
            deferred = hub.search.deferred
            for name in names:
                search = mcp_search([], deferred, retriever=maker(name), keep_loaded=False)
                result = await arun(OfflineModel(), ToolCatalog([]), "List my notes",
                                    deferral=Deferral(extra_tools=search.tools_for_turn, on_finish=search.end_turn))
                out[name] = (result.succeeded(), search.find("notes/list_notes", 1))
        return out

    for name, (succeeded, exact) in run(session()).items():
        assert succeeded[0] == SEARCH_TOOL_NAME and "mcp__notes__list_notes" in succeeded, (name, succeeded)
        assert [t.name for t in exact] == ["mcp__notes__list_notes"]  # server/tool is an exact name


@pytest.mark.parametrize("name", NAMES)
def test_each_retriever_is_evaluated_through_the_same_contract(name):
    records = [CatalogTool.from_tool(t) for t in SMALL_TOOLS]
    queries = [Query("q1", "read a file", ("read_file",)), Query("q2", "post to the channel", ("post_message",))]
    report = evaluate(make_retriever(name, records), queries, ks=(1, 5))
    assert report.recall(5) == 1.0
