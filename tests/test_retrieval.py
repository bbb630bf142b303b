"""Retrievers on a small synthetic catalog, the exact fast BM25, fusion, and the embedding cache."""
from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from harness.evaluation.datasets import dataset_dir, load_queries, load_tools, missing_data_note, step_queries
from harness.evaluation.metrics import evaluate
from harness.retrieval.records import CatalogTool, Query
from harness.retrieval.bm25 import bm25
from workbook.research.rank_bm25_reference import RankBM25
from harness.selection.bm25_index import InvertedBM25
from harness.retrieval.dense import (DenseRetriever, EmbeddingCache, Encoder, dense_available,
                                     dense_unavailable_reason)
from harness.retrieval.fielded import FieldedBM25
from harness.retrieval.hybrid import HybridRetriever, rrf
from workbook.research.learned import QueryLogRetriever
from workbook.research.systems import PizzaPiRetriever, StacklokRetriever, StackOneRetriever
from workbook.research.task import TaskRetriever, clauses
from workbook.research.usage import UsagePriorRetriever, interleave, usage_prior
from harness.selection.ranking import exact_name_matches, name_index
from harness.retrieval.terms import ACTION_SYNONYMS, expand, leading_verbs, synonyms
from harness.core.text import tokenize


def _tool(server: str, name: str, description: str, **params: str) -> CatalogTool:
    props = {p: {"type": "string", "description": d} for p, d in params.items()}
    return CatalogTool(f"{server}/{name}", name, description, {"type": "object", "properties": props}, server,
                       {"server_description": f"The {server} server."})


CATALOG = [
    _tool("files", "read_file", "Read the contents of a text file from disk.", path="Path of the file"),
    _tool("files", "write_file", "Create or overwrite a file with new content.", path="Path of the file", content="Text to write"),
    _tool("files", "list_directory", "List the files and folders inside a directory.", path="Directory path"),
    _tool("files", "delete_file", "Delete a file permanently.", path="Path of the file"),
    _tool("git", "git_log", "Show the commit history of a git repository.", repo_path="Repository folder"),
    _tool("git", "git_commit", "Record staged changes as a new commit.", message="Commit message"),
    _tool("git", "git_diff", "Show unstaged changes in the working tree.", repo_path="Repository folder"),
    _tool("git", "create_pull_request", "Open a pull request on GitHub for a branch.", title="Title", branch="Head branch"),
    _tool("weather", "get_forecast", "Get the weather forecast (rain, temperature, wind) for the coming days.", city="City name"),
    _tool("weather", "get_current_weather", "Get the current weather conditions in a city.", city="City name"),
    _tool("calendar", "create_event", "Add a meeting or appointment to the calendar.", title="Event title", start="Start time"),
    _tool("calendar", "list_events", "List upcoming calendar events and meetings.", day="Which day"),
    _tool("mail", "send_email", "Send an email message to a recipient.", to="Recipient address", body="Message text"),
    _tool("mail", "search_inbox", "Search received emails in the inbox by keyword.", query="Search words"),
    _tool("chart", "generate_bar_chart", "Draw a bar chart comparing values across categories.", data="Values"),
    _tool("chart", "generate_line_chart", "Plot a line chart of a trend over time.", data="Values"),
    _tool("chart", "generate_pie_chart", "Draw a pie chart showing proportions of a whole.", data="Values"),
    _tool("db", "run_sql_query", "Run a SQL query against the database and return rows.", sql="The SQL"),
    _tool("db", "list_tables", "List the tables in the database schema.", schema="Schema name"),
    _tool("web", "fetch_url", "Download a web page and return its text.", url="The address"),
    _tool("web", "search_web", "Search the internet for pages about a topic.", query="Search words"),
    _tool("music", "get_lyrics", "Look up the lyrics of a song.", title="Song title"),
    _tool("music", "play_song", "Play a song on the speaker.", title="Song title"),
    _tool("notes", "create_note", "Write a new note to the notebook.", text="Note text"),
]
IDS = [t.id for t in CATALOG]
QUERIES = [
    Query("1", "show me the commit history of this repo", ("git/git_log",)),
    Query("2", "save this text to notes.txt on disk", ("files/write_file",)),
    Query("3", "will it rain in Paris tomorrow", ("weather/get_forecast",)),
    Query("4", "email Bob the quarterly report", ("mail/send_email",)),
    Query("5", "plot monthly sales as bars", ("chart/generate_bar_chart",)),
    Query("6", "which tables does the database have", ("db/list_tables",)),
    Query("7", "download the page at example.org", ("web/fetch_url",)),
    Query("8", "put a meeting with Ana on my calendar for Friday", ("calendar/create_event",)),
    Query("9", "open a PR for my feature branch", ("git/create_pull_request",)),
    Query("10", "what are the words of that song", ("music/get_lyrics",)),
    Query("11", "remove the old file", ("files/delete_file",)),
    Query("12", "what changed in the working tree that is not staged", ("git/git_diff",)),
]


def random_recall_at_5(seed: int = 0, rounds: int = 200) -> float:
    rng = random.Random(seed)
    hits = [q.gold[0] in rng.sample(IDS, 5) for _ in range(rounds) for q in QUERIES]
    return sum(hits) / len(hits)


def check_retriever(r) -> float:
    """Valid, duplicate-free ids; k respected; R@5 returned."""
    for q in QUERIES:
        ranking = r.rank(q.query)
        assert set(ranking) <= set(IDS) and len(ranking) == len(set(ranking))
        assert r.rank(q.query, k=3) == ranking[:3]
    with pytest.raises(ValueError, match="k must be a positive number"):
        r.rank("anything", k=0)
    return evaluate(r, QUERIES).recall(5)


LEXICAL = {
    "bm25": lambda: bm25(CATALOG),
    "bm25 (rank_bm25)": lambda: RankBM25(CATALOG),
    "fielded": lambda: FieldedBM25(CATALOG),
    "pizzapi": lambda: PizzaPiRetriever(CATALOG),
    "stackone": lambda: StackOneRetriever(CATALOG),
}


@pytest.mark.parametrize("name", sorted(LEXICAL))
def test_lexical_retrievers_beat_random(name):
    baseline = random_recall_at_5()  # about 5/24
    assert check_retriever(LEXICAL[name]()) > baseline + 0.2


def test_empty_catalog_is_one_clear_error():
    for make in (bm25, RankBM25, FieldedBM25, PizzaPiRetriever, StackOneRetriever):
        with pytest.raises(ValueError, match="the catalog is empty"):
            make([])


# --- the fast scorer equals rank_bm25 --------------------------------------------------------------

def assert_same_scores(corpus: list[list[str]], queries: list[list[str]]) -> None:
    ours, theirs = InvertedBM25(corpus), BM25Okapi(corpus)
    assert ours.avgdl == theirs.avgdl and ours.average_idf == theirs.average_idf and ours.idf == theirs.idf
    for q in queries:
        assert np.array_equal(ours.get_scores(q), theirs.get_scores(q)), q


def test_fast_scorer_equals_rank_bm25_on_a_synthetic_corpus():
    corpus = [tokenize(f"{t.name} {t.description}") for t in CATALOG] + [["file"] * 3, [], ["file", "the"]]
    common = [["file"], ["file", "file", "read"], ["nothing"], [], ["git", "commit", "git"], ["chart", "file", "song"]]
    assert_same_scores(corpus, common + [tokenize(q.query) for q in QUERIES])
    # a term in more than half the documents gets rank_bm25's epsilon floor
    assert_same_scores([["a", "b"], ["a"], ["a", "c"], ["d"]], [["a"], ["a", "d"], ["c", "a", "a"]])


def test_fast_ranking_equals_rank_bm25_ranking():
    slow, fast = RankBM25(CATALOG), bm25(CATALOG)
    for q in QUERIES:
        assert fast.rank(q.query) == slow.rank(q.query)


@pytest.mark.parametrize("name", ["livemcpbench", "toollens_train", "mcpzero_catalog"])
def test_fast_scorer_equals_rank_bm25_on_public_catalogs(name):
    folder = dataset_dir(name)
    if folder is None:
        pytest.skip(missing_data_note(name))
    tools = load_tools(folder)
    corpus = [tokenize(f"{t.name} {t.description}") for t in tools]
    queries = [tokenize(t.description) for t in tools[::max(1, len(tools) // 40)]]
    if (folder / "queries.jsonl").is_file():
        queries += [tokenize(q.query) for q in load_queries(folder, tools)[:40]]
    assert_same_scores(corpus, queries)


# --- fielded BM25's parts ------------------------------------------------------------------------

def test_catalog_verbs_are_learned_from_names():
    verbs = leading_verbs(CATALOG, min_share=0.1, min_tools=3)
    assert verbs == {"get": 3, "list": 3, "create": 3, "generate": 3}
    assert leading_verbs(CATALOG[:4], min_tools=3) == {}


def test_abbreviations_and_synonyms():
    assert expand(tokenize("open a PR in the repo")) == ["open", "pr", "pull", "request", "repo", "repository"]
    assert synonyms(tokenize("save it and show me")) == ["write", "file", "display"]
    assert all(tokenize(word) for word in ACTION_SYNONYMS)  # no key is a stop word the index never sees


def test_exact_names_are_found_under_every_name_of_a_tool():
    index = name_index((n, t.id) for t in CATALOG for n in (t.name, t.id))
    assert "read_file" in index and "files/read_file" in index and "read" not in index
    assert exact_name_matches("call git_diff, then files/read_file.", index) == ["git/git_diff", "files/read_file"]


def test_field_weights_are_checked():
    with pytest.raises(ValueError, match=r"Unknown field\(s\) \['title'\]"):
        FieldedBM25(CATALOG, weights={"title": 1.0})


# --- fusion, named systems, learning -------------------------------------------------------------

def test_rrf_by_hand():
    assert rrf([["a", "b", "c"], ["b", "c", "d"]], k=60) == ["b", "c", "a", "d"]
    assert rrf([["x"], ["y"]]) == ["x", "y"]  # a tie keeps first-seen order
    assert rrf([["a"], ["b"]], weights=[1.0, 2.0]) == ["b", "a"]
    with pytest.raises(ValueError, match="one weight per ranking"):
        rrf([["a"]], weights=[1.0, 2.0])


def test_pizzapi_scores_by_hand():
    tool = _tool("s", "search", "Search the web.", query="Words to search")
    r = PizzaPiRetriever([tool])
    # term 'search': exact name 10 + description 3 + parameter 1; whole query in name 8, in description 4
    assert r.score("search", r._docs[0]) == 26.0
    assert r.score("web", r._docs[0]) == 3.0 + 4.0  # in the description, and the whole query is too


def test_stackone_uses_alpha_as_bm25_share():
    with pytest.raises(ValueError, match="between 0 and 1"):
        StackOneRetriever(CATALOG, alpha=1.5)
    pure_tfidf, pure_bm25 = StackOneRetriever(CATALOG, alpha=0.0), StackOneRetriever(CATALOG, alpha=1.0)
    by_name = bm25(CATALOG, document=lambda t: t.name)  # not the same text, but both rank 'forecast' first
    assert pure_tfidf.rank("weather forecast")[0] == pure_bm25.rank("weather forecast")[0] == "weather/get_forecast"
    assert by_name.rank("forecast")[0] == "weather/get_forecast"


def test_query_log_learns_from_past_queries_only():
    log = [Query(f"l{i}", text, gold) for i, (text, gold) in enumerate([
        ("I need the lyrics of a ballad", ("music/get_lyrics",)),
        ("words of the song on the radio", ("music/get_lyrics",)),
        ("what are the lines they sing in that tune", ("music/get_lyrics",)),
        ("will I need an umbrella tomorrow", ("weather/get_forecast",)),
    ])]
    with pytest.raises(ValueError, match="query log is empty"):
        QueryLogRetriever([], FieldedBM25(CATALOG))
    r = QueryLogRetriever(log, FieldedBM25(CATALOG), neighbours=2)
    assert r.rank("the lines they sing in this tune")[0] == "music/get_lyrics"
    assert r.rank("umbrella tomorrow in Oslo")[0] == "weather/get_forecast"
    assert check_retriever(r) > random_recall_at_5() + 0.2


def test_usage_prior_counts_slots_and_skips_unknown_tools():
    log = [Query("a", "x", ("files/write_file", "git/git_log"), (("files/write_file",), ("git/git_log",))),
           Query("b", "y", ("files/write_file", "notes/create_note"), (("files/write_file", "notes/create_note"),)),
           Query("c", "z", ("gone/tool",))]
    prior = dict(zip(IDS, usage_prior(IDS, log)))
    assert prior["files/write_file"] == 1.0  # 1 + ½ uses: the most used
    assert prior["git/git_log"] == pytest.approx(np.log1p(1) / np.log1p(1.5))
    assert prior["notes/create_note"] == pytest.approx(np.log1p(0.5) / np.log1p(1.5))
    assert sum(v > 0 for v in prior.values()) == 3
    assert not usage_prior(IDS, [Query("c", "z", ("gone/tool",))]).any()


def test_interleave_keeps_the_head_then_alternates():
    assert interleave(list("abcdefg"), list("xyazb"), 3, 2) == list("abcdxeyfzg")
    assert interleave(list("ab"), list("xyz"), 3, 2) == list("abxyz")  # a list that runs out hands over
    assert interleave(list("abc"), list("cba"), 0, 1) == list("cba")


def test_usage_prior_fills_the_lower_places_only():
    base = FieldedBM25(CATALOG)
    log = [Query(str(i), "a task", ("files/write_file",)) for i in range(5)]
    r = UsagePriorRetriever(log, base)
    assert r.name == "bm25-fielded+usage"
    query = "draw a chart of the weather"
    assert "files/write_file" not in base.rank(query)
    assert r.rank(query, 4) == base.rank(query, 4)  # the head, then a place by relevance
    assert r.rank(query) == base.rank(query, 4) + ["files/write_file", *base.rank(query)[4:]]
    check_retriever(r)
    with pytest.raises(ValueError, match="usage log is empty"):
        UsagePriorRetriever([], base)
    with pytest.raises(ValueError, match="every ≥ 1"):
        UsagePriorRetriever(log, base, every=0)


def test_clauses():
    assert clauses("Read the sales sheet, plot it by month and save the chart. Then email it.") == [
        "Read the sales sheet", "plot it by month", "save the chart", "email it"]
    assert clauses("Read 'a, and b.txt', then post it") == ["Read 'a, and b.txt'", "post it"]  # quoted text stays whole
    assert clauses("hello") == []


# --- dense retrieval (needs the embedding extra) ---------------------------------------------------

@pytest.fixture(scope="module")
def encoder():
    if not dense_available():
        pytest.skip(dense_unavailable_reason())
    enc = Encoder()
    enc.encode(["load the model once for this module"])
    return enc


@pytest.fixture(scope="module")
def dense(encoder, tmp_path_factory):
    return DenseRetriever(CATALOG, encoder=encoder, cache=EmbeddingCache(tmp_path_factory.mktemp("emb")))


def test_embedding_cache_is_keyed_by_definition(encoder, tmp_path):
    cache = EmbeddingCache(tmp_path)
    before = encoder.texts_encoded
    first = DenseRetriever(CATALOG, encoder=encoder, cache=cache)
    assert encoder.texts_encoded - before == len(CATALOG)
    before = encoder.texts_encoded
    again = DenseRetriever(CATALOG, encoder=encoder, cache=cache)
    assert encoder.texts_encoded == before  # nothing re-embedded
    assert np.array_equal(first.matrix, again.matrix)
    changed = list(CATALOG)
    changed[3] = replace(changed[3], description="Move a file to the trash, where it can be restored.")
    renamed = [replace(t, id=f"copy-{t.id}") for t in changed]  # ids are not part of a definition
    DenseRetriever(renamed, encoder=encoder, cache=cache)
    assert encoder.texts_encoded - before == 1  # only the changed tool
    assert len(list(tmp_path.rglob("*.npy"))) == len(CATALOG) + 1


def test_dense_vectors_are_unit_length(dense):
    assert dense.matrix.shape == (len(CATALOG), 384)
    assert np.allclose(np.linalg.norm(dense.matrix, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("name", ["dense", "hybrid", "task", "stacklok"])
def test_dense_based_retrievers_beat_random(name, dense):
    make = {
        "dense": lambda: dense,
        "hybrid": lambda: HybridRetriever(CATALOG, dense=dense),
        "task": lambda: TaskRetriever(CATALOG, dense=dense),
        "stacklok": lambda: StacklokRetriever(CATALOG, dense=dense),
    }[name]
    assert check_retriever(make()) > random_recall_at_5() + 0.3


def test_stacklok_splits_the_list_between_bm25_and_dense(dense):
    r = StacklokRetriever(CATALOG, dense=dense)
    for q in QUERIES:  # whatever BM25 puts first, the dense list's first is in the top two
        assert dense.rank(q.query)[0] in r.rank(q.query, k=2)


def test_step_queries_retrieve_on_public_data():
    folder = dataset_dir("livemcpbench")
    if folder is None:
        pytest.skip(missing_data_note("livemcpbench"))
    tools = load_tools(folder)
    steps = step_queries(load_queries(folder, tools))[:40]
    assert evaluate(FieldedBM25(tools), steps).hit(10) > 0.4


# --- the benchmark's pieces (lexical retrievers only: seconds) ---------------------------------------

def test_bench_rows_and_table_on_the_synthetic_catalog():
    from experiments.bench import bench_dataset, bench_table, retrievers, scaled

    rows = bench_dataset(CATALOG, {"synthetic": QUERIES}, retrievers(dense=False), k=5, dense=False, latency_n=3)
    assert [r.retriever for r in rows] == ["bm25", "bm25-fielded", "pizzapi-substring", "stackone-bm25-tfidf"]
    assert [r.tuned for r in rows] == ["-", "dev", "published", "published"]
    for r in rows:
        assert r.n_queries == len(QUERIES) and r.metrics["R@5"] > random_recall_at_5()
        assert 0 < r.token_cut < 1 and r.p50_ms is not None and r.p50_ms <= r.p95_ms
        for c, (low, high) in r.intervals.items():
            assert low <= r.metrics[c] <= high, f"{r.retriever} {c}: the interval holds the mean"
    printed = bench_table(rows, k=5)
    first = printed.splitlines()[0].split()
    assert first[:2] == ["dataset", "retriever"] and "CI]" in first
    assert f"{rows[0].metrics['R@5']:.3f} [{rows[0].intervals['R@5'][0]:.2f}–" in printed
    bigger = scaled(CATALOG, 3)
    assert len({t.id for t in bigger}) == 3 * len(CATALOG) and bigger[len(CATALOG)].name == CATALOG[0].name


def test_bench_usage_row_is_cross_validated():
    from experiments.bench import bench_usage

    tasks = [Query(f"t{i}", text, gold) for i, (text, gold) in enumerate([
        ("commit history, then save it to log.txt", ("git/git_log", "files/write_file")),
        ("weather in Oslo, saved to oslo.txt", ("weather/get_forecast", "files/write_file")),
        ("the lyrics of that song, into lyrics.txt", ("music/get_lyrics", "files/write_file")),
        ("list the database tables into tables.txt", ("db/list_tables", "files/write_file")),
        ("bar chart of sales, written to chart.txt", ("chart/generate_bar_chart", "files/write_file")),
        ("download example.org to page.txt", ("web/fetch_url", "files/write_file")),
    ])]
    rows = bench_usage(CATALOG, tasks, dense=False, k=5)
    assert [r.held_out for r in rows] == ["cv by query id (memorisation)", "cv by gold set (generalisation)"]
    row = rows[0]
    assert (row.dataset, row.retriever, row.n_queries, row.tuned) == ("livemcp-test", "bm25-fielded+usage", len(tasks), "dev")
    plain = evaluate(FieldedBM25(CATALOG), tasks)
    assert row.metrics["R@5"] > plain.recall(5)  # write_file, never named, was used by the other folds' tasks


def test_encoder_keeps_text_vectors_on_disk(tmp_path, monkeypatch):
    def fake(self, texts):
        self.texts_encoded += len(texts)
        return np.stack([np.full(384, float(len(t)), dtype=np.float32) for t in texts])

    monkeypatch.setattr(Encoder, "_model_encode", fake)
    first = Encoder(disk=EmbeddingCache(tmp_path))
    vectors = first.encode(["find a file", "weather"])
    assert first.texts_encoded == 2
    again = Encoder(disk=EmbeddingCache(tmp_path))
    assert np.array_equal(again.encode(["weather", "find a file"]), vectors[::-1]) and again.texts_encoded == 0


def test_chapter_6_can_leave_out_chapter_8s_zero_shot_rows():
    from experiments.bench import TABLE, ZERO_SHOT, retrievers

    assert set(retrievers(dense=True)) == set(TABLE)
    assert set(retrievers(dense=True, zero_shot=False)) == set(TABLE) - set(ZERO_SHOT)
