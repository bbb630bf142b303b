"""What the proxy saves and costs, measured through a real MCP client: tokens, search latency, start-up.

Introduced in Chapter 7 (``notebooks/07_use_it_in_your_agent.ipynb``); ``harness serve --measure``
prints the same figures.

Everything is measured from the client's side of a stdio connection, the way Claude Desktop or
Claude Code meets the proxy: the SDK's ``ClientSession`` starts ``python -m harness serve``, and
the figures are the definitions it is given at connection (counted with the real tokenizer, as
Chapter 1 counts schemas) and wall-clock times of its requests. The direct figure connects the same
landscape with :class:`~harness.mcp.client.MCPHub` and counts every enabled tool it lists.
"""
from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator, Mapping, Sequence

import numpy as np
from mcp import ClientSession, StdioServerParameters, stdio_client

from harness.core.tokens import tools_tokens
from harness.core.tools import Tool
from harness.mcp.client import MCPHub
from harness.mcp.proxy.server import best_retriever, split_always_load
from harness.core.json_types import JSON, JSONObject

#: Requests a user of the landscape's servers might make; each is searched :data:`REPEATS` times.
QUERIES = (
    "show the git status of the repository", "commit the staged changes", "what time is it in Tokyo",
    "convert 9:00 in Lisbon to New York time", "fetch the page at a URL as markdown", "read a file",
    "list the files in a directory", "create a note about the meeting", "open a ticket for the login bug",
    "schedule a meeting tomorrow at 10", "send a message to the team channel", "search notion pages",
    "create a GitHub issue", "find documents in a mongodb collection", "remember that Ana prefers tea",
    "add an observation to an entity in the knowledge graph", "echo a message back", "git_log",
    "search issues about crashes", "move a file to another folder",
)
REPEATS = 3


@dataclass(frozen=True)
class Connection:
    """What a client met at connection: tool definitions (as harness tools), their tokens, and the time it took."""

    tools: Sequence[Tool]
    tokens: int
    startup_seconds: float

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.tools]


@dataclass(frozen=True)
class Latency:
    """Wall-clock seconds of ``search_tools`` calls through the proxy.

    ``new`` are the first call of each query; ``repeated`` the later ones, which the dense half of
    a hybrid answers faster because the encoder remembers recent query vectors (an agent re-asks).
    """

    new: tuple[float, ...]
    repeated: tuple[float, ...]
    deferred: int  # how many tools the search ranked over

    @property
    def samples(self) -> tuple[float, ...]:
        return self.new + self.repeated

    @staticmethod
    def percentiles(samples: Sequence[float]) -> tuple[float, float]:
        """(p50, p95) in milliseconds."""
        return float(np.percentile(samples, 50)) * 1000, float(np.percentile(samples, 95)) * 1000

    def line(self) -> str:
        (n50, n95), (r50, r95) = self.percentiles(self.new), self.percentiles(self.repeated)
        return (f"new queries ({len(self.new)}) p50 {n50:.1f} ms, p95 {n95:.1f} ms; "
                f"repeated ({len(self.repeated)}) p50 {r50:.1f} ms, p95 {r95:.1f} ms")


def serve_parameters(config_path: str | Path, *extra_args: str, env: Mapping[str, str] | None = None) -> StdioServerParameters:
    """How a client starts ``harness serve`` with this Python (what Claude Desktop's config says, as parameters)."""
    import os

    passed = {k: os.environ[k] for k in ("PYTHONPATH", "HARNESS_DATA", "HARNESS_EMBEDDING_CACHE", "HARNESS_NODE_SERVERS")
              if k in os.environ}
    return StdioServerParameters(command=sys.executable, args=["-m", "harness", "serve", "--config", str(config_path), *extra_args],
                                 env={**passed, **(env or {})})


def as_tool(definition: Any) -> Tool:  # Any: the SDK's listed tool (mcp.types.Tool)
    """A listed MCP tool as a harness tool, so its tokens are counted as every other schema is."""
    return Tool(name=definition.name, description=definition.description or "", input_schema=dict(definition.input_schema))


@asynccontextmanager
async def connect(params: StdioServerParameters, errlog_dir: str | Path, timeout: float = 300.0) -> AsyncIterator[tuple[ClientSession, Connection]]:
    """A client session with the proxy, and what the client saw at connection (start, initialize, list)."""
    began = time.perf_counter()
    with open(Path(errlog_dir) / "proxy.log", "w", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=timeout) as session:
                await session.initialize()
                listed = (await session.list_tools()).tools
                tools = [as_tool(t) for t in listed]
                yield session, Connection(tools, tools_tokens(tools), time.perf_counter() - began)


def _text(item: object) -> str:
    """The text of one MCP content item or resource's contents: the proxy answers in text."""
    text = getattr(item, "text", None)  # TextContent and TextResourceContents have it; images and blobs do not
    if isinstance(text, str):
        return text
    raise RuntimeError(f"The proxy answered with {type(item).__name__} where text was expected.")


async def until_indexed(session: ClientSession, timeout: float = 600.0) -> JSONObject:
    """The proxy's status once its own retriever's index is in use (meanwhile its searches use fielded BM25)."""
    deadline = time.monotonic() + timeout
    while True:
        status = json.loads(_text((await session.read_resource("harness://status")).contents[0]))
        if status["index"]["state"] == "indexed" or time.monotonic() > deadline:
            return status
        await asyncio.sleep(0.2)


async def search_latency(session: ClientSession, queries: Sequence[str] = QUERIES, repeats: int = REPEATS) -> Latency:
    """Time ``search_tools`` for each query ``repeats`` times (after a warm-up call with a query not among them),
    once the retriever's own index is in use."""
    indexed = await until_indexed(session)
    if indexed["index"]["state"] != "indexed":
        raise RuntimeError(f"The proxy's {indexed['retriever']} index was not built within the wait; its latency is not measured.")
    await session.call_tool("search_tools", {"query": "warm up the search", "limit": 5})
    passes: list[list[float]] = []
    for _ in range(repeats):
        passes.append([])
        for q in queries:
            began = time.perf_counter()
            result = await session.call_tool("search_tools", {"query": q, "limit": 5})
            passes[-1].append(time.perf_counter() - began)
            if result.is_error:
                raise RuntimeError(f"search_tools failed for {q!r}: {_text(result.content[0])}")
    status = await session.read_resource("harness://status")
    deferred = json.loads(_text(status.contents[0]))["deferred"]
    return Latency(tuple(passes[0]), tuple(t for p in passes[1:] for t in p), deferred)


async def direct_connection(config: Mapping[str, JSON]) -> Connection:
    """Every enabled tool of ``config`` as a client connecting to each server directly would be given them
    (``alwaysLoad``, the proxy's own field, means nothing to a direct connection)."""
    began = time.perf_counter()
    async with MCPHub(split_always_load(config)[0]) as hub:
        seconds = time.perf_counter() - began
        tools = list(hub.tools.values())
        return Connection(tools, tools_tokens(tools), seconds)


@dataclass(frozen=True)
class ProxyFigures:
    direct: Connection
    proxied: Connection
    latency: Latency
    catalog_latency: Latency | None  # with the MCP-Zero catalog as extra deferred tools, when the data is here
    catalog_startup_seconds: float | None
    retriever: str
    skipped: tuple[str, ...]

    @property
    def saved_share(self) -> float:
        return 1 - self.proxied.tokens / self.direct.tokens

    def lines(self) -> list[str]:
        d, p = self.direct, self.proxied
        out = [
            f"Tokens at connection (cl100k, tool definitions): direct {d.tokens:,} for {len(d.tools)} tools; "
            f"through the proxy {p.tokens:,} for {len(p.tools)} tools ({self.saved_share:.1%} fewer).",
            f"Retriever behind search_tools: {self.retriever}.",
            "Timings below are wall-clock on this machine with whatever else it was running: read them as rough. "
            "A first start-up with the embedding extra embeds every tool; later ones read the on-disk cache.",
            f"Start-up to a listed connection: direct (in-process hub) {d.startup_seconds:.1f} s; "
            f"through the proxy {p.startup_seconds:.1f} s.",
            f"search_tools latency over {self.latency.deferred} deferred tools: {self.latency.line()}.",
        ]
        if self.catalog_latency is not None:
            c = self.catalog_latency
            out.append(f"With the MCP-Zero catalog added as catalog-only tools ({c.deferred:,} tools deferred, the servers' "
                       f"and the catalog's): {c.line()}; "
                       f"start-up {self.catalog_startup_seconds:.1f} s.")
        return out + list(self.skipped)


async def measure(config: Mapping[str, JSON], *, retriever: str | None = None, catalog: str | Path | None = None,
                  skipped: Sequence[str] = ()) -> ProxyFigures:
    """Connect to ``config`` directly and through ``harness serve``; time searches; with ``catalog`` too."""
    retriever = retriever or best_retriever()
    notes = list(skipped)
    direct = await direct_connection(config)
    with tempfile.TemporaryDirectory(prefix="harness-proxy-") as folder:
        path = Path(folder) / "mcp.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        args = ("--retriever", retriever)
        async with connect(serve_parameters(path, *args), folder) as (session, proxied):
            latency = await search_latency(session)
        catalog_latency = catalog_startup = None
        if catalog is not None:
            async with connect(serve_parameters(path, *args, "--extra-tools", str(catalog)), folder) as (session, with_catalog):
                catalog_latency = await search_latency(session)
                catalog_startup = with_catalog.startup_seconds
    return ProxyFigures(direct, proxied, latency, catalog_latency, catalog_startup, retriever, tuple(notes))
