"""The proxy's memory stays bounded however many distinct long queries it answers (issue 40: it grew by about
100 MB per 1,000, the tokenizer's caches holding 100,000 texts); the caches are bounded by bytes."""
from __future__ import annotations

import gc
import random
import tracemalloc

import pytest

from conftest import run
from harness.core.memo import BytesBoundedMemo, bounded_by_bytes
from harness.core.text import _tokenize
from harness.mcp.client import MCPHub
from harness.mcp.proxy.server import MAX_QUERY_CHARS, ToolProxy, proxy_policy
from test_proxy_hardening import NOTES


_LETTERS = str.maketrans("0123456789", "ghijklmnop")


def long_query(seed: int) -> str:
    """A query of 4,000 characters of made-up words: every one distinct, as a stream of pasted texts is."""
    rnd = random.Random(seed)
    words = (format(rnd.getrandbits(4 * rnd.randint(3, 9)), "x").translate(_LETTERS) for _ in range(800))
    return " ".join(words)[:MAX_QUERY_CHARS]


def test_a_memo_keeps_recent_results_within_its_bytes():
    calls: list[str] = []

    @bounded_by_bytes(20_000)
    def shout(text: str) -> str:
        calls.append(text)
        return text.upper()

    assert isinstance(shout, BytesBoundedMemo)
    for i in range(200):
        assert shout(f"{i:03d}" * 30) == f"{i:03d}" * 30
    assert shout.bytes <= 20_000 and 0 < len(shout) < 200
    shout("199" * 30)  # the most recent is kept
    assert calls.count("199" * 30) == 1
    shout("000" * 30)  # the oldest went
    assert calls.count("000" * 30) == 2
    assert shout("x" * 50_000) == "X" * 50_000 and shout.bytes <= 20_000  # too big to keep: answered, not kept


@pytest.mark.mcp
def test_the_proxy_s_memory_stops_growing_under_distinct_long_queries(tmp_path):
    async def session_run():
        async with MCPHub({"mcpServers": NOTES}, log_dir=tmp_path / "logs", policy=proxy_policy()) as hub:
            proxy = ToolProxy(hub, retriever="bm25-fielded")
            proxy.search_tools(long_query(-1))
            gc.collect()
            tracemalloc.start()
            try:
                base = tracemalloc.get_traced_memory()[0]
                for i in range(600):
                    proxy.search_tools(long_query(i))
                gc.collect()
                return (tracemalloc.get_traced_memory()[0] - base) / 1e6
            finally:
                tracemalloc.stop()

    grown = run(session_run())  # about 50 MB when the caches held 100,000 texts
    assert grown < 30, f"{grown:.0f} MB more after 600 distinct long queries"
    assert _tokenize.bytes <= _tokenize.max_bytes
