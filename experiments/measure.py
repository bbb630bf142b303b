"""``harness measure``: a fixed, small version of the page's measurements, run on the reader's own model.

Introduced in Chapter 5c. The what-to-do page compares the ways of loading tools
(:mod:`workbook.evaluation.loading`) on whole tasks of the demo world judged on their effects
(:mod:`workbook.demo.effects`). This command runs the same loop, turn limit, answer cap and judge
(:func:`experiments.real_tasks.task_row`) on any model — behind an OpenAI-compatible endpoint (Ollama, LM Studio,
vLLM, llama-server, OpenAI: :mod:`harness.providers.openai_compat`), Claude, or the workbook's local model — and
prints its success rates beside those the workbook's committed rows give on the same scenarios
(:data:`experiments.real_tasks.RESULTS_FILES`: the 0.5B's, and the 1.5B's where they exist).

Why this size: the default set is the first 8 development single-request tasks — the 1.5B's pilot in issue 41,
fixed before any of these runs — under the four ways: 32 runs of at most 6 turns, replies capped at 256 tokens,
greedy (temperature 0) where the provider allows it. Eight tasks a way cannot separate two ways; they show whether a
model finishes the page's tasks, under which way, and where it fails. Measured on the 2-core machine that wrote the
committed rows, the 0.5B's runs of these 8 tasks took 8.2 minutes with per-turn top-10, 8.1 with all tools and 3.0
with deferred search, on two threads: the 32 runs fit in about half an hour there, so in well under that on a
laptop's server (more cores, or a GPU); the 1.5B took 33 minutes for one way, so a model that size wants a laptop's
GPU, or ``--concurrency`` against a server that batches. A larger set (``--set tasks``: the 39 single-request tasks;
``--set all``: the 70 scenarios) is the page's own measurement, for a server that can take it.

Why concurrent: ``--concurrency N`` keeps N scenarios running at once, each on its own demo world, sharing one
provider (for the local model: N servers). A server that batches requests — vLLM, llama-server with ``-np N``,
Ollama with ``OLLAMA_NUM_PARALLEL`` — answers them together, which is how a run outgrows one machine.

Why Wilson intervals: with 8 runs a way, a bootstrap interval around no success is [0, 0]; Wilson's is [0, 0.32].
A difference from a committed model is paired over the scenarios both ran (:func:`harness.core.rates.paired_difference_interval`)
and called only where its interval excludes zero.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterator, Sequence

from experiments import DATA
from experiments.real_steps import SPLITS
from experiments.real_tasks import (CONFIGS, MAX_TOKENS, MAX_TURNS, RESULTS_FILES, TASK_FAILURES, TaskRow, chosen,
                                    read_rows, run_tasks)
from harness.core.rates import paired_difference_interval, wilson_interval
from harness.core.safe_text import printable
from harness.core.temp_folders import exit_cleanly_on_sigterm, owned_temp_dir
from harness.providers.base import Provider, ProviderError

#: The default set: the first 8 development single-request tasks (the 1.5B's pilot).
SMALL = tuple(f"task-{n:02d}" for n in range(1, 9))
#: The sets ``--set`` names: which scenarios (as :func:`experiments.real_tasks.chosen` takes them) and what they are.
SETS: dict[str, tuple[dict[str, Any], str]] = {  # Any: keyword options of chosen
    "small": ({"splits": ("dev",), "ids": SMALL}, "the first 8 development single-request tasks"),
    "tasks": ({"splits": SPLITS, "kinds": ("task",)}, "the 39 single-request tasks (26 development, 13 held out)"),
    "all": ({"splits": SPLITS}, "all 70 scenarios (44 development, 26 held out)"),
}
PROVIDERS = ("openai", "claude", "local")
TEMP_PREFIX = "harness-measure-"


def selection(set_name: str, ids: Sequence[str] | None) -> tuple[dict[str, Any], str]:  # Any: as SETS
    """The scenarios to run, as :func:`experiments.real_tasks.run_tasks` takes them, and a phrase saying which."""
    if not ids:
        return SETS[set_name]
    every = {s.id for split in SPLITS for s in chosen(split)}
    unknown = sorted(set(ids) - every)
    if unknown:
        raise ValueError(f"There is no scenario {', '.join(unknown)}; the scenarios are task-01…, pivot-01…, conv-01…, "
                         "opener-01… and the held-out h-task-01… (see workbook/data).")
    return {"splits": SPLITS, "ids": tuple(ids)}, f"{len(set(ids))} chosen scenario{'s' * (len(set(ids)) > 1)}"


@contextlib.contextmanager
def providers(kind: str, model: str | None, concurrency: int) -> Iterator[list[Provider]]:
    """``concurrency`` providers of ``kind`` (one shared, or for the local model one server each), closed after."""
    with contextlib.ExitStack() as stack:
        if kind == "local":
            from workbook.providers.local_llama import DEFAULT_MODEL, LocalLlamaProvider

            yield [stack.enter_context(LocalLlamaProvider(model=model or DEFAULT_MODEL, max_tokens=MAX_TOKENS))
                   for _ in range(concurrency)]
            return
        one: Provider
        if kind == "claude":
            from harness.providers.anthropic_provider import AnthropicProvider

            one = AnthropicProvider(model)
        else:
            from harness.providers.openai_compat import OpenAICompatProvider

            one = OpenAICompatProvider(model, max_tokens=MAX_TOKENS, temperature=0)
        yield [one] * concurrency


def committed() -> dict[str, tuple[str, list[TaskRow]]]:
    """Each local model's committed rows, by its key, with its label: what the user's rates are shown beside."""
    from workbook.providers.local_llama import MODELS

    return {key: (MODELS[key].label, read_rows(DATA.joinpath(name))) for key, name in RESULTS_FILES.items()}


def _rate(rows: Sequence[TaskRow]) -> str:
    if not rows:
        return "—"
    hits = sum(r.success for r in rows)
    low, high = wilson_interval(hits, len(rows))
    return f"{hits / len(rows):.2f} [{low:.2f}, {high:.2f}] ({hits}/{len(rows)})"


def _by_way(rows: Sequence[TaskRow], way: str, ids: set[str]) -> dict[str, TaskRow]:
    return {r.scenario: r for r in rows if r.config == way and r.scenario in ids}


def report(mine: Sequence[TaskRow], ways: Sequence[str], ids: set[str],
           others: dict[str, tuple[str, list[TaskRow]]]) -> list[str]:
    """The user's success per way beside each committed model's on the same scenarios, the paired differences, and
    where the user's runs failed."""
    header = "success [95 % Wilson interval] (runs)"
    width = max(len(header), *(len(w) for w in ways))
    lines = [f"{header:<{width}}  " + "".join(
        f"{name:<28}" for name in ["your model", *(f"{key} (committed)" for key in others)])]
    differences, failures = [], []
    for way in ways:
        yours = _by_way(mine, way, ids)
        theirs = {key: _by_way(rows, way, ids) for key, (_, rows) in others.items()}
        lines.append(f"{way:<{width}}  " + "".join(f"{_rate(list(rows.values())):<28}" for rows in [yours, *theirs.values()]))
        for key, rows in theirs.items():
            both = sorted(set(yours) & set(rows))
            if both:
                a, b = [float(yours[s].success) for s in both], [float(rows[s].success) for s in both]
                low, high = paired_difference_interval(a, b)
                verdict = "separated" if low > 0 or high < 0 else "not separated"
                differences.append(f"  {way}, you − {key} over {len(both)}: {statistics.fmean(a) - statistics.fmean(b):+.2f} "
                                   f"[{low:+.2f}, {high:+.2f}], {verdict}")
        counts = Counter(r.failure for r in yours.values() if r.failure)
        if counts:
            failures.append(f"  {way}: " + ", ".join(f"{k} {counts[k]}" for k in TASK_FAILURES if counts[k]))
    lines += [f"  {key} = {label}" + ("" if rows else " (no rows committed yet)") for key, (label, rows) in others.items()]
    if differences:
        lines += ["your rate minus a committed model's, paired over the scenarios both ran [95 % bootstrap]:", *differences]
    if failures:
        lines += ["where your runs failed (experiments.real_tasks.TASK_FAILURES):", *failures]
    return lines


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="harness measure", description="Run a fixed, small version of the page's measurements on your model: "
        "whole tasks of the demo world under the ways of loading tools, judged on their effects, beside the workbook's figures.")
    parser.add_argument("--provider", choices=PROVIDERS, default="openai",
                        help="openai: an OpenAI-compatible endpoint (OPENAI_BASE_URL, OPENAI_MODEL, OPENAI_API_KEY from the "
                             "environment or .env); claude: the Anthropic API (ANTHROPIC_API_KEY); local: the workbook's "
                             "llama.cpp model (make real-model). Default openai")
    parser.add_argument("--model", help="the model: as the server names it (openai; else OPENAI_MODEL), a Claude id "
                                        "(claude; else ANTHROPIC_MODEL or the default), or 0.5b / 1.5b (local)")
    parser.add_argument("--set", choices=list(SETS), default="small",
                        help="which scenarios: " + "; ".join(f"{k}: {v[1]}" for k, v in SETS.items()) + " (default small)")
    parser.add_argument("--scenarios", nargs="+", metavar="ID", help="these scenarios instead of a set (e.g. task-01 opener-01)")
    parser.add_argument("--ways", nargs="+", choices=CONFIGS, default=list(CONFIGS), metavar="WAY",
                        help=f"ways of loading tools (default all four: {', '.join(repr(c) for c in CONFIGS)})")
    parser.add_argument("--concurrency", type=int, default=1,
                        help="scenarios run at once (default 1; a batching server such as vLLM takes 8 or more)")
    parser.add_argument("--out", help="keep your rows in this JSON-lines file (a run resumes from it); default: not kept")
    return parser


async def _run(kind: str, model: str | None, concurrency: int, out: Path, ways: Sequence[str],
               chosen_by: dict[str, Any]) -> int:  # Any: as SETS
    with providers(kind, model, concurrency) as models:
        try:
            return await run_tasks(models, out, ways, log=lambda line: print(line, file=sys.stderr, flush=True), **chosen_by)
        finally:
            for closing in {id(m): m for m in models}.values():
                aclose = getattr(closing, "aclose", None)
                if aclose is not None:
                    await aclose()


def main(argv: Sequence[str] | None = None) -> int:
    """``harness measure``; returns the exit status (2 with one sentence for bad input or a failing model)."""
    args = parser().parse_args(argv)
    try:
        if args.concurrency < 1:
            raise ValueError(f"--concurrency must be 1 or more, got {args.concurrency}.")
        chosen_by, described = selection(args.set, args.scenarios)
        ids = {s.id for split in chosen_by["splits"] for s in chosen(split, chosen_by.get("kinds"), None, chosen_by.get("ids"))}
        exit_cleanly_on_sigterm()  # a stopped run removes its demo worlds and servers
        started = time.perf_counter()
        with contextlib.ExitStack() as stack:
            out = Path(args.out) if args.out else stack.enter_context(owned_temp_dir(TEMP_PREFIX)) / "rows.jsonl"
            asyncio.run(_run(args.provider, args.model, args.concurrency, out, args.ways, chosen_by))
            mine = [r for r in read_rows(out) if r.scenario in ids and r.config in args.ways]
    except (ProviderError, ValueError, ImportError) as err:
        print(printable(f"error: {err}", keep_newlines=False), file=sys.stderr)
        return 2
    minutes = (time.perf_counter() - started) / 60
    model = next((r.model for r in mine if r.model), args.model or "?")
    seconds = statistics.median(r.seconds for r in mine) if mine else 0.0
    cap = "1024 tokens (the loop's)" if args.provider == "claude" else f"{MAX_TOKENS} tokens"
    lines = [f"harness measure: {model} ({args.provider}) on {described}, under {len(args.ways)} way"
             f"{'s' * (len(args.ways) > 1)} of loading tools; at most {MAX_TURNS} turns, replies of at most {cap}; "
             "judged on the demo world's state",
             *report(mine, args.ways, ids, committed()),
             f"{len(mine)} runs in {minutes:.1f} min ({seconds:.0f} s a run at the median, {args.concurrency} at a time)"
             + (f"; your rows: {args.out}" if args.out else "")]
    print("\n".join(printable(line, keep_newlines=False) for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
