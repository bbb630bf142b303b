"""The README's figures for ``harness serve``, measured: ``python -m experiments.proxy_figures [--write README.md]``.

Runs :func:`harness.mcp.proxy.measure.measure` — what ``harness serve --measure`` prints — on Chapter 5's
real-server landscape (in a temporary sandbox), once with fielded BM25 and once with hybrid retrieval
(when the embedding extra is installed), each also with the MCP-Zero catalog added as catalog-only
tools when the public data is present. It writes what it measured to :data:`RESULTS` (committed), and
with ``--write`` the README's table from that file, between :data:`START` and :data:`END`;
``tests/test_proxy_figures.py`` fails when the README's table is not the one the file gives. The
timings are wall-clock on the machine that ran it, with whatever else it was running: read them as rough.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import tempfile
from pathlib import Path

import numpy as np

from harness.core.json_types import JSONObject
from harness.evaluation.datasets import dataset_dir
from harness.mcp.proxy.measure import ProxyFigures, measure
from harness.retrieval.dense import dense_unavailable_reason
from workbook.landscape import landscape_config

RESULTS = Path(__file__).parent / "data" / "proxy_figures.json"
START = "<!-- proxy-figures:start (written by: python -m experiments.proxy_figures --write README.md) -->"
END = "<!-- proxy-figures:end -->"
RETRIEVERS = {"bm25-fielded": "fielded BM25", "hybrid": "hybrid"}


def _ms(samples: tuple[float, ...]) -> list[float]:
    return [round(s * 1000, 2) for s in samples]


def record(figures: ProxyFigures) -> JSONObject:
    """What one measurement keeps: connection sizes, start-up seconds and every search's milliseconds."""
    catalog = figures.catalog_latency
    return {
        "direct": {"tools": len(figures.direct.tools), "tokens": figures.direct.tokens,
                   "startup_seconds": round(figures.direct.startup_seconds, 2)},
        "proxied": {"tools": len(figures.proxied.tools), "tokens": figures.proxied.tokens,
                    "startup_seconds": round(figures.proxied.startup_seconds, 2)},
        "latency": {"deferred": figures.latency.deferred, "new_ms": _ms(figures.latency.new),
                    "repeated_ms": _ms(figures.latency.repeated)},
        "catalog": None if catalog is None else {
            "deferred": catalog.deferred, "new_ms": _ms(catalog.new), "repeated_ms": _ms(catalog.repeated),
            "startup_seconds": round(figures.catalog_startup_seconds or 0.0, 2)},
    }


async def measure_all() -> JSONObject:
    """Every figure the README's table shows, measured now."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None  # what else the machine was doing
    with tempfile.TemporaryDirectory(prefix="proxy-figures-") as folder:
        land = landscape_config(Path(folder) / "sandbox")
        catalog = dataset_dir("mcpzero_catalog")
        retrievers = [r for r in RETRIEVERS if r != "hybrid" or dense_unavailable_reason() is None]
        runs = {r: record(await measure(land.config, retriever=r, catalog=catalog)) for r in retrievers}
    machine = f"{os.cpu_count()} CPUs ({platform.machine()}), Python {platform.python_version()}"
    return {"machine": machine + (f", load average {load:.1f} when it began" if load is not None else ""),
            "servers": len(land.config["mcpServers"]), "skipped": land.skipped, "runs": runs}


def _p(samples: list[float]) -> str:
    """p50 (p95) of millisecond samples."""
    return f"{np.percentile(samples, 50):.1f} ms ({np.percentile(samples, 95):.1f} ms)"


def table(data: JSONObject) -> str:
    """The README's tables from :data:`RESULTS`'s data."""
    runs = data["runs"]
    first = next(iter(runs.values()))
    d, p = first["direct"], first["proxied"]
    startups = "; ".join(f"{RETRIEVERS[r]} {run['proxied']['startup_seconds']:.1f} s" for r, run in runs.items())
    lines = [
        "| | direct | through the proxy |",
        "|---|---|---|",
        f"| tool definitions given at connection ({data['servers']}-server landscape) | {d['tools']} tools, "
        f"{d['tokens']:,} tokens | {p['tools']} tools, {p['tokens']:,} tokens ({1 - p['tokens'] / d['tokens']:.1%} fewer) |",
        f"| start-up to a listed connection | {d['startup_seconds']:.1f} s (in-process hub) | {startups} |",
        "",
    ]
    catalog = first["catalog"]
    lines += [f"| `search_tools` latency, p50 (p95) | {first['latency']['deferred']} tools | "
              + (f"+ MCP-Zero catalog ({catalog['deferred']:,} deferred) |" if catalog else "+ MCP-Zero catalog |"),
              "|---|---|---|"]
    for r, run in runs.items():
        kinds = [("", "new_ms", "repeated_ms")] if r == "bm25-fielded" else [
            (", a query seen before (vector remembered)", "repeated_ms", None),
            (", a new query (embedded on the CPU)", "new_ms", None)]
        for label, key, more in kinds:
            cells = []
            for part in (run["latency"], run["catalog"]):
                samples = None if part is None else part[key] + (part[more] if more else [])
                cells.append(_p(samples) if samples else "not measured (no public data here)")
            lines.append(f"| {RETRIEVERS[r]}{label} | {cells[0]} | {cells[1]} |")
    if catalog:
        starts = "; ".join(f"{RETRIEVERS[r]} {run['catalog']['startup_seconds']:.1f} s" for r, run in runs.items() if run["catalog"])
        lines += ["", f"Start-up with the catalog added: {starts}. Measured on {data['machine']}."]
    else:
        lines += ["", f"Measured on {data['machine']}."]
    return "\n".join(lines)


def rewrite(text: str, data: JSONObject) -> str:
    """``text`` (the README) with its proxy-figures section replaced by :func:`table` of ``data``."""
    if START not in text or END not in text:
        raise ValueError(f"The README has no proxy-figures section: put {START!r} and {END!r} where it belongs.")
    return f"{text[:text.index(START)]}{START}\n{table(data)}\n{END}{text[text.index(END) + len(END):]}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", metavar="README", help="rewrite this README's table from the results file")
    parser.add_argument("--table-only", action="store_true", help="do not measure: rewrite the table from the committed results")
    args = parser.parse_args(argv)
    if not args.table_only:
        data = asyncio.run(measure_all())
        RESULTS.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    data = json.loads(RESULTS.read_text(encoding="utf-8"))
    print(table(data))
    if args.write:
        readme = Path(args.write)
        readme.write_text(rewrite(readme.read_text(encoding="utf-8"), data), encoding="utf-8")


if __name__ == "__main__":
    main()
