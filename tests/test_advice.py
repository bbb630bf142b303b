"""The "What to do in your agent" page and the package's defaults: one text, tested numbers, one constant each."""
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from experiments import advice
from harness.selection.ranking import DEFAULT_K

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CHAPTER_7 = ROOT / "notebooks" / "07_use_it_in_your_agent.ipynb"
PAGE = advice.page()


def test_the_readme_and_chapter_7_show_the_page_itself():
    assert PAGE in README, "the README's 'What to do in your agent' section differs from workbook/data/what_to_do.md"
    closing = json.loads(CHAPTER_7.read_text(encoding="utf-8"))["cells"][-1]
    assert closing["cell_type"] == "markdown" and "".join(closing["source"]) == PAGE, \
        "Chapter 7's closing cell differs from workbook/data/what_to_do.md"


def test_the_page_fits_on_one_page():
    assert len(PAGE.split()) <= 800


@pytest.fixture(scope="module")
def figures() -> dict[str, str]:
    return advice.figures()  # runs the stand-in over Chapter 4's scenarios: once for the module


def test_every_number_on_the_page_is_computed(figures):
    missing = [f"{name}: {value}" for name, value in figures.items() if value not in PAGE]
    assert not missing, f"figures not quoted as computed: {missing}"
    # Every other number on the page must be one of them: chapter, section and item numbers and
    # names with digits in them are taken out first.
    rest = re.sub(r"(Chapters?|§|Exercise) ?\d+b?( and \d+)?|\*\*\d\. |Qwen2\.5-Coder-[01]\.5B|\b[01]\.5B|BM25|R@\d+|95 %", " ", PAGE)
    numbers = re.findall(r"[+-]?\d[\d,]*(?:\.\d+)?(?: \[[^\]]+\])?", rest)
    unchecked = [n for n in numbers if n not in figures.values()]
    assert numbers and not unchecked, f"numbers on the page that no figure computes: {unchecked}"


def test_the_page_says_the_guard_finished_no_more_than_the_plain_loop(figures):
    assert figures["guarded success"] == figures["real tasks success"] and "still finished\nnone" in PAGE


def test_the_page_calls_a_difference_only_where_its_interval_excludes_zero(figures):
    for name in ("real k=10 - all 74", "pinned - plain", "documents hybrid-rrf", "1.5b search_tools - top-10"):
        low, high = map(float, re.findall(r"[+-]\d\.\d\d", figures[name])[1:])
        assert low < 0 < high and "not separated" in PAGE
    for name in ("dev latest - transcript", "heldout latest - transcript", "hybrid - bm25 demo", "hybrid - bm25 livemcp-task",
                 "documents bm25", "documents bm25 toollens", "1.5b top-10 - all tools"):
        low, high = map(float, re.findall(r"[+-]\d\.\d\d", figures[name])[1:])
        assert low > 0, name
    low, high = map(float, re.findall(r"[+-]\d\.\d\d", figures["1.5b deferred - top-10"])[1:])
    assert high < 0 and "below 10 a turn by " + figures["1.5b deferred - top-10"] in PAGE


# --- the defaults the README names, one sentence each ---------------------------------------------

def _readme_defaults() -> dict[str, str]:
    section = README.split("### The package's defaults, and why", 1)[1].split("\n#", 1)[0]
    return dict(re.findall(r"^\* `([^`]+)` = `([^`]+)`", section, flags=re.M))


def _actual_defaults() -> dict[str, str]:
    from workbook.demo import demo_tools
    from harness.selection.discovery import DEFAULT_LIMIT, ToolSearch
    from harness.mcp.proxy.server import best_retriever
    from harness.selection.queries import DEFAULT_QUERY
    from harness.retrieval.dense import dense_unavailable_reason
    from harness.selection.agent import arun
    from harness.mcp.client import MCPHub
    from harness.retrieval.named import REGISTRY

    search = ToolSearch([], demo_tools())
    retriever = search.selector.ranker.name  # what ranks when no retriever is given, under its registry name
    assert retriever in REGISTRY and inspect.signature(MCPHub).parameters["retriever"].default is None
    assert best_retriever() == ("hybrid" if dense_unavailable_reason() is None else "bm25-fielded")
    return {"harness.selection.ranking.DEFAULT_K": str(DEFAULT_K), "harness.selection.queries.DEFAULT_QUERY": DEFAULT_QUERY.__name__,
            "harness.selection.discovery.DEFAULT_LIMIT": str(DEFAULT_LIMIT), "search_tools retriever": retriever,
            "harness serve --retriever": "hybrid, else bm25-fielded",
            "harness.selection.agent.arun on_repeat": repr(inspect.signature(arun).parameters["on_repeat"].default)}


def test_each_default_the_readme_names_is_the_package_default():
    assert _readme_defaults() == _actual_defaults()


def test_the_readme_no_longer_calls_hybrid_the_search_tools_default():
    assert "default retriever of `search_tools` and `harness serve` is **hybrid-rrf**" not in README


def test_arun_and_the_real_model_runs_share_the_default_query():
    from harness.selection.agent import arun
    from harness.selection.queries import DEFAULT_QUERY, query_from_transcript
    from experiments.real_steps import top_k

    assert DEFAULT_QUERY is query_from_transcript  # changed only by experiments/data/real_model_rules.json's query rule
    assert inspect.signature(arun).parameters["query_fn"].default is DEFAULT_QUERY
    assert inspect.signature(top_k).parameters["query_fn"].default is DEFAULT_QUERY


def test_the_cli_search_shows_default_k_tools():
    out = subprocess.run([sys.executable, "-m", "harness", "search", "read write create list delete send file message"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert len(out.stdout.splitlines()) == DEFAULT_K


def test_the_bench_cuts_at_default_k(monkeypatch, tmp_path):
    from experiments import bench

    seen = {}

    def stop(quick, k, say):
        seen["k"] = k
        raise ValueError("stopped before the work")

    monkeypatch.setattr(bench, "run", stop)
    assert bench.main(["--out", str(tmp_path / "results.json")]) == 2
    assert seen["k"] == DEFAULT_K


@pytest.mark.parametrize("path", ["bench/README.md", "experiments/bench.py"])
def test_the_bench_usage_names_default_k(path):
    text = (ROOT / path).read_text(encoding="utf-8")
    assert f"[--k {DEFAULT_K}]" in text and "--k 5" not in text
