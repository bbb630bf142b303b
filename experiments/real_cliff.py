"""The tool cliff on a real model: Chapter 1's sweep run on the local llama.cpp model, saved and loaded.

Introduced in Chapter 1. The committed results (``experiments/data/real_model_sweep.json``) were made
by :data:`COMMAND`; the chapter re-runs the sweep when the model is installed
(``make real-model``) and loads the committed file otherwise, and says which it did.

The sweep asks every labelled demo request once per N, inside fixed lists of N tools
(:func:`workbook.evaluation.cliff.fixed_lists`): the demo tools, then real MCP tools from the public data as
extra distractors when it is present. One seed; the spread is given by bootstrap intervals over
requests. Tool choice only, and forced: the model is constrained to the shown names
(``LocalLlamaProvider.choose``), may not answer instead, and its arguments are not generated — the
mode the committed file was made in. ``LocalLlamaProvider.complete`` lets it answer and generates the
arguments, for the agent loop; :mod:`experiments.real_steps` asks it per step that way.
"""
from __future__ import annotations

import argparse
import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from harness.core.temp_folders import exit_cleanly_on_sigterm
from workbook.evaluation.cliff import MarginChooser, Trial, fixed_list_sweep, read_trials, write_trials
from workbook.demo import CONFUSABLE_PAIRS, demo_tools, load_demo_queries
from harness.core.tools import Tool
from workbook.demo.labels import LabelledQuery
from workbook.evaluation.public_catalog import public_distractors
from harness.evaluation.datasets import dataset_dir, load_tools

if TYPE_CHECKING:
    from workbook.providers.local_llama import ToolChooser
from harness.core.json_types import JSONObject

#: 74: every demo tool. Beyond it the lists are topped up with real MCP tools (the public data) up to
#: 150, the largest multiple of 10 whose prompt fits the model's 32,768-token context with room for
#: a request: 150 tools are 23,869 schema tokens (cl100k) and 30,298 prompt tokens in the model's own
#: tokenizer; 160 would be 32,270. Without the public data the sweep stops at 74.
SWEEP_NS = (5, 10, 20, 40, 74, 120, 150)
SEED = 0
RESULTS_FILE = "real_model_sweep.json"
COMMAND = "make real-model && .venv/bin/python -m experiments.real_cliff --out experiments/data/real_model_sweep.json"
_FIELDS = ("qid", "n", "seed", "gold", "chosen", "tokens", "confusable_shown", "margin", "rival")


@dataclass
class SweepResult:
    """A sweep's trials and what produced them (model, provenance, pool, command, seconds per N)."""

    meta: JSONObject
    trials: list[Trial] = field(default_factory=list)


def sweep_pool(max_n: int) -> tuple[list[Tool], str]:
    """The demo tools plus, when the public data is present, real MCP tools as distractors, up to ``max_n``."""
    tools = demo_tools()
    live = dataset_dir("livemcpbench")
    if max_n <= len(tools):
        return tools, f"{len(tools)} demo tools"
    if live is None:
        return tools, f"{len(tools)} demo tools (public data absent)"
    pool = (tools + public_distractors(load_tools(live), taken={t.name for t in tools}))[:max(max_n, len(tools))]
    return pool, f"{len(tools)} demo tools + {len(pool) - len(tools)} real MCP tools (LiveMCPBench)"


def sample_queries(limit: int | None = None) -> list[LabelledQuery]:
    """The labelled demo requests, or ``limit`` of them spread evenly over the file (for CI's subset)."""
    queries = load_demo_queries()
    if limit is None or limit >= len(queries):
        return queries
    step = len(queries) / limit
    return [queries[int(i * step)] for i in range(limit)]


def real_model_chooser(provider: "ToolChooser") -> MarginChooser:
    """Ask the real model which shown tool it calls; keep the margin over its best rival."""
    def choose(query: str, shown: Sequence[Tool]) -> tuple[str, JSONObject, float | None, str | None]:
        choice = provider.choose(query, shown)
        return choice.tool, {}, choice.margin, choice.rival
    return choose


async def run_sweep(provider: "ToolChooser", ns: Iterable[int] = SWEEP_NS, *, limit: int | None = None,
                    progress: Callable[[Iterable], Iterable] | None = None) -> SweepResult:
    """Run the sweep on a :class:`~workbook.providers.local_llama.LocalLlamaProvider` (or any object with ``choose``)."""
    from workbook.providers.local_llama import MODEL_LABEL, MODEL_SHA256, PROVENANCE

    ns = sorted(set(ns))
    pool, pool_text = sweep_pool(max(ns))
    ns = sorted({min(n, len(pool)) for n in ns})
    queries, asked = load_demo_queries(), sample_queries(limit)
    trials, seconds = [], {}
    for n in ns:
        started = time.perf_counter()
        trials += await fixed_list_sweep(real_model_chooser(provider), pool, queries, [n], seed=SEED,
                                         confusable_pairs=CONFUSABLE_PAIRS, progress=progress, ask=[q.qid for q in asked])
        seconds[str(n)] = round(time.perf_counter() - started, 1)
    meta = {"model": MODEL_LABEL, "model_sha256": MODEL_SHA256, "provenance": PROVENANCE, "pool": pool_text,
            "ns": ns, "seed": SEED, "requests_per_n": len(asked), "command": COMMAND, "seconds_per_n": seconds}
    return SweepResult(meta, trials)


def save(result: SweepResult, path: str | Path) -> None:
    write_trials(path, result.meta, result.trials, _FIELDS)


def load(path: str | Path | None = None) -> SweepResult:
    """Saved results (the committed file by default), trials rebuilt with the requests' labelled arguments."""
    return SweepResult(*read_trials(path, RESULTS_FILE))


def agreement(rerun: Sequence[Trial], committed: Sequence[Trial]) -> tuple[int, int]:
    """(same choice, trials compared): a re-run's trials against the committed ones with the same request and N."""
    chosen = {(t.qid, t.n): t.chosen for t in committed}
    pairs = [(t.chosen, chosen[(t.qid, t.n)]) for t in rerun if (t.qid, t.n) in chosen]
    return sum(a == b for a, b in pairs), len(pairs)


def merged(done: SweepResult, part: SweepResult) -> SweepResult:
    """A sweep's saved N and a newly measured part as one result, its command naming every N it holds.

    The meta is the part's, with the pool text of the sweep that reached the larger N (lists of N up to
    74 are the same with or without the public tools) and the N and seconds of both.
    """
    ns = sorted({*done.meta.get("ns", []), *part.meta["ns"]})
    seconds = {**done.meta.get("seconds_per_n", {}), **part.meta["seconds_per_n"]}
    larger = done.meta if max(done.meta.get("ns", [0])) > max(part.meta["ns"]) else part.meta
    pool = larger.get("pool", part.meta.get("pool"))
    command = COMMAND if ns == list(SWEEP_NS) else f"{COMMAND} --ns {' '.join(map(str, ns))}"
    return SweepResult({**part.meta, "pool": pool, "ns": ns, "seconds_per_n": seconds, "command": command},
                       done.trials + part.trials)


def main(argv: Sequence[str] | None = None) -> None:
    exit_cleanly_on_sigterm()  # a stopped run removes its temp folders
    from workbook.providers.local_llama import MODEL_SHA256, LocalLlamaProvider

    parser = argparse.ArgumentParser(description="Chapter 1's tool-cliff sweep on the local real model.")
    parser.add_argument("--out", required=True, help="where to write the results (JSON); an existing file is resumed")
    parser.add_argument("--ns", type=int, nargs="+", default=list(SWEEP_NS))
    parser.add_argument("--limit", type=int, default=None, help="requests per N (default: all labelled requests)")
    parser.add_argument("--threads", type=int, default=None, help="llama-server threads (default: all cores but one)")
    options = parser.parse_args(argv)
    out = Path(options.out)
    result = load(out) if out.exists() else SweepResult({})  # resume: the N already saved are kept, not re-asked
    if result.meta and result.meta.get("model_sha256") != MODEL_SHA256:
        raise SystemExit(f"{out} holds another model's sweep; give a new --out.")
    todo = sorted(set(options.ns) - set(result.meta.get("ns", [])))
    pool, pool_text = sweep_pool(max(todo, default=0))
    if any(n > len(pool) for n in todo):  # lists larger than the pool would repeat its largest N
        print(f"N = {', '.join(str(n) for n in todo if n > len(pool))} skipped: the pool is {pool_text}.")
        todo = [n for n in todo if n <= len(pool)]
    # The first request of a long list reads every schema token once (about 30K at N = 150): allow an hour.
    with LocalLlamaProvider(threads=options.threads, request_timeout=3600.0) as provider:
        for n in todo:  # saved after each N, so an interrupted sweep keeps what it measured
            part = asyncio.run(run_sweep(provider, [n], limit=options.limit))
            result = merged(result, part)
            save(result, out)
            print(f"N={n}: {len(part.trials)} trials in {part.meta['seconds_per_n']} s", flush=True)
    print(f"{len(result.trials)} trials written to {options.out}")


if __name__ == "__main__":
    main()
