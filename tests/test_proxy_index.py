"""The proxy's index: built off the event loop, swapped whole, and shown in ``harness://status``.

An embedder held on a gate stands in for a slow one: while it is held, searches and calls must be
answered (by fielded BM25 over every tool), and the status must say "indexing"; once released, the
status names the proxy's retriever and how many tools of each server it indexed.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import reindexed, run
from harness.mcp.proxy import server as proxy_module
from harness.mcp.client import MCPHub
from harness.mcp.proxy.server import ToolProxy, proxy_policy
from harness.mcp.proxy.measure import search_latency
from workbook.servers import workbook_servers_config
from harness.retrieval.dense import DIMENSIONS, Encoder, dense_unavailable_reason

CHANGING = str(Path(__file__).parent / "mcp_fixtures" / "changing_server.py")
needs_dense = pytest.mark.skipif(dense_unavailable_reason() is not None, reason=f"{dense_unavailable_reason()}")


class GatedEncoder(Encoder):
    """Vectors from a hash of each text, given only once :attr:`release` is set (at most 20 s later);
    remembers whether it was ever asked on the event loop's thread."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.on_loop_thread = False

    def _model_encode(self, texts: list[str]) -> np.ndarray:
        self.on_loop_thread |= threading.current_thread() is threading.main_thread()
        self.release.wait(20)
        self.texts_encoded += len(texts)
        rows = [np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)).standard_normal(DIMENSIONS)
                for t in texts]
        return np.array([r / np.linalg.norm(r) for r in rows], dtype=np.float32)


def index_of(proxy: ToolProxy, server: str) -> dict:
    return next(row["index"] for row in proxy.status()["servers"] if row["name"] == server)


@needs_dense
def test_a_slow_embedder_blocks_no_search_and_no_call_and_the_status_says_indexing(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_EMBEDDING_CACHE", str(tmp_path / "cache"))

    async def session_run():
        async with MCPHub(workbook_servers_config(("notes",)), log_dir=tmp_path / "logs", policy=proxy_policy()) as hub:
            encoder = GatedEncoder()
            proxy = ToolProxy(hub, retriever="hybrid", encoder=encoder)
            try:
                n = sum(t.server == "notes" for t in hub.tools.values())
                assert index_of(proxy, "notes") == {"state": "indexing", "tools": n, "retriever": "bm25-fielded"}
                found, error = await asyncio.wait_for(proxy.asearch_tools("read a note", 3), 5)
                assert not error and json.loads(found)["matches"]
                called, error = await asyncio.wait_for(proxy.call_tool("notes__list_notes"), 5)
                assert not error and "standup" in called
                encoder.release.set()
                await asyncio.wait_for(proxy.indexed(), 30)
                assert index_of(proxy, "notes") == {"state": "indexed", "tools": n, "retriever": "hybrid-rrf"}
                assert proxy.status()["index"]["state"] == "indexed"
                assert not encoder.on_loop_thread
            finally:
                encoder.release.set()
                await proxy.aclose()

    run(session_run())


@needs_dense
def test_new_tools_are_searchable_at_once_while_they_are_embedded(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_EMBEDDING_CACHE", str(tmp_path / "cache"))

    async def session_run():
        config = {"mcpServers": {"garden": {"command": sys.executable, "args": [CHANGING]},
                                 **workbook_servers_config(("notes",))["mcpServers"]}}
        async with MCPHub(config, log_dir=tmp_path / "logs", policy=proxy_policy()) as hub:
            encoder = GatedEncoder()
            encoder.release.set()
            proxy = ToolProxy(hub, retriever="hybrid", encoder=encoder)
            try:
                await proxy.indexed()
                proxy.watch()
                encoder.release.clear()  # the next embedding waits
                assert (await proxy.call_tool("garden__grow", {"name": "harvest_pumpkins"})) == ("added harvest_pumpkins", False)
                assert await reindexed(proxy) == 1
                found, error = await asyncio.wait_for(proxy.asearch_tools("harvest the pumpkins", 1), 5)
                assert not error and json.loads(found)["matches"][0]["name"] == "garden__harvest_pumpkins"
                assert index_of(proxy, "garden") == {"state": "indexing", "tools": 3, "retriever": "bm25-fielded"}
                encoder.release.set()
                await asyncio.wait_for(proxy.indexed(), 30)
                assert index_of(proxy, "garden") == {"state": "indexed", "tools": 3, "retriever": "hybrid-rrf"}
            finally:
                encoder.release.set()
                await proxy.aclose()

    run(session_run())


def test_a_connected_server_with_nothing_indexed_is_a_visible_state(tmp_path):
    async def session_run():
        config = workbook_servers_config(("notes",))
        config["mcpServers"]["notes"]["deferLoading"] = False  # every tool listed directly: nothing to search
        async with MCPHub(config, log_dir=tmp_path / "logs", policy=proxy_policy()) as hub:
            proxy = ToolProxy(hub, retriever="bm25-fielded")
            assert index_of(proxy, "notes") == {"state": "nothing indexed", "tools": 0, "retriever": "bm25-fielded"}
            await proxy.aclose()

    run(session_run())


def test_without_the_embedding_extra_the_proxy_says_it_searches_with_bm25(tmp_path, monkeypatch):
    monkeypatch.setattr(proxy_module, "dense_unavailable_reason", lambda: "the embedding extra is not installed")

    async def session_run():
        async with MCPHub(workbook_servers_config(("notes",)), log_dir=tmp_path / "logs", policy=proxy_policy()) as hub:
            proxy = ToolProxy(hub)
            index = proxy.status()["index"]
            await proxy.aclose()
            return index

    index = run(session_run())
    assert index["retriever"] == "bm25-fielded" and index["state"] == "indexed"
    assert index["note"] == "hybrid-rrf needs embeddings: the embedding extra is not installed"


def test_latency_is_measured_only_once_the_retrievers_own_index_is_in_use():
    class Session:  # the proxy's answers: two reads while it embeds, then its index is in use
        states = ["indexing", "indexing", "indexed"]
        searches_before_indexed = 0

        async def read_resource(self, uri):
            state = self.states.pop(0) if len(self.states) > 1 else self.states[0]
            text = json.dumps({"retriever": "hybrid-rrf", "deferred": 3, "index": {"state": state}})
            return SimpleNamespace(contents=[SimpleNamespace(text=text)])

        async def call_tool(self, name, arguments):
            self.searches_before_indexed += len(self.states) > 1
            return SimpleNamespace(is_error=False)

    session = Session()
    latency = run(search_latency(session, queries=["a", "b"], repeats=2))
    assert session.searches_before_indexed == 0 and len(latency.samples) > 0


def test_an_index_that_fails_leaves_bm25_searching_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_EMBEDDING_CACHE", str(tmp_path / "cache"))

    class BrokenEncoder(GatedEncoder):
        def _model_encode(self, texts: list[str]) -> np.ndarray:
            raise RuntimeError("the model file is damaged")

    async def session_run():
        async with MCPHub(workbook_servers_config(("notes",)), log_dir=tmp_path / "logs", policy=proxy_policy()) as hub:
            proxy = ToolProxy(hub, retriever="hybrid", encoder=BrokenEncoder())
            await asyncio.wait_for(proxy.indexed(), 30)
            found = json.loads(proxy.search_tools("read a note", 1))["matches"]
            index = proxy.status()["index"]
            await proxy.aclose()
            return found, index

    found, index = run(session_run())
    assert found and index["state"] == "indexed" and index["retriever"] == "bm25-fielded"
    assert index["note"] == "hybrid-rrf could not index the tools, so bm25-fielded finds them: the model file is damaged"
