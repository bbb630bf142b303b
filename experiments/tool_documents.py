"""Chapter 8b's model-written tool documents: the builder that writes them, and their measurement.

Introduced in Chapter 8b (``notebooks/08b_embedder_and_query_time.ipynb``).

    python -m experiments.tool_documents --dataset demo [--limit N] [--threads T] \\
        --out experiments/data/tool_documents/demo.jsonl

writes, with the real small model, one guarded document per tool (:mod:`workbook.research.model_documents`)
to the committed JSONL, one line per tool as it finishes (with ``--review 30`` it writes nothing and
prints a seeded sample of the file's documents for a person to check). Why a line per tool: the catalogs here take
hours on two cores, so a cut run loses at most the tool it was writing. Run again, it resumes: tools
whose id and definition hash are in the file are skipped, a tool whose definition changed is written
again, and a cut last line is dropped. Each line records its seconds, the server's threads and the
model's pinned sha256, so the time on these cores is read from the data itself (:func:`timing`).

:func:`measure` scores bm25, bm25-fielded, dense-minilm and hybrid-rrf over the original and the
expanded definitions on the test rows of Chapter 8's split (:func:`experiments.zero_shot.catalogs`),
per query and paired: a difference is called only when its paired 95 % interval excludes zero. A public
catalog's measurement is committed too (:func:`load_measured`), since a learner's machine has no public
data to measure on:

    python -m experiments.tool_documents --dataset livemcpbench \\
        --measure experiments/data/tool_documents/measured.json
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Callable, Sequence

from experiments import DATA
from harness.core.json_types import JSONObject
from harness.core.temp_folders import exit_cleanly_on_sigterm
from harness.core.rates import bootstrap_interval, paired_difference_interval
from experiments.zero_shot import BASELINE, METRIC, Catalog, Line, catalogs, default_choice, per_query
from harness.providers.base import ProviderError
from workbook.providers.local_llama import MODEL_SHA256, LocalLlamaProvider
from harness.retrieval.dense import Encoder, dense_unavailable_reason
from workbook.research.model_documents import (FOLDER, DocumentModel, DocumentRecord, documents_writer, guard, guard_counts,
                                                neighbours, parse_records, read_records, read_text,
                                                sample_for_review, with_documents,
                                                write_document)
from harness.retrieval.named import make_retriever, needs_embeddings
from workbook.research.registry import DOCUMENTED

DATASETS = ("demo", "livemcpbench", "toollens")
RETRIEVERS = ("bm25", "bm25-fielded", "dense-minilm", "hybrid-rrf")
REBUILD = "python -m experiments.tool_documents --dataset {dataset} --out experiments/data/tool_documents/{dataset}.jsonl"
#: The committed measurements of the public catalogs, by dataset (package data, beside the documents).
MEASURED = "measured.json"


def catalog(dataset: str, seed: int = 0) -> Catalog:
    """The dataset's catalog and its development/test rows; a one-sentence ValueError for an unknown or absent one."""
    if dataset not in DATASETS:
        raise ValueError(f"No dataset named {dataset!r}; the datasets are: {', '.join(DATASETS)}.")
    found = catalogs(seed)
    if dataset not in found:
        raise ValueError(f"The {dataset} data is not here: set HARNESS_DATA to the folder holding it.")
    return found[dataset]


def build(dataset: str, out: str | os.PathLike[str], model: DocumentModel, *, limit: int | None = None,
          threads: int = 0, model_sha256: str = MODEL_SHA256, say: Callable[[str], None] = print) -> list[DocumentRecord]:
    """Write a document for every tool of ``dataset`` (the first ``limit``) not yet in ``out`` for its current
    definition; returns the records written now. ``out`` keeps only lines of current definitions."""
    tools = catalog(dataset).tools
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    current = {(t.id, t.definition_hash()) for t in tools}
    text = read_text(path)
    old = parse_records(text)
    keep = [r for r in old if (r.id, r.sha256) in current]
    clean = "".join(f"{r.to_json_line()}\n" for r in keep)
    if text != clean:  # a cut line, or lines of changed or removed tools: drop them before appending
        tmp = path.with_suffix(".tmp")
        tmp.write_text(clean, encoding="utf-8")
        os.replace(tmp, path)
        say(f"kept {len(keep)} of {len(text.splitlines())} lines (the rest were cut, or of changed or removed tools)")
    done = {(r.id, r.sha256) for r in keep}
    todo = [t for t in tools[:limit] if (t.id, t.definition_hash()) not in done]
    near = neighbours(tools)
    written = []
    with path.open("a", encoding="utf-8") as f:
        for i, t in enumerate(todo, 1):
            start = time.perf_counter()
            try:
                document = write_document(t, model)
            except ValueError as e:
                say(f"skipped {t.id}: {e}")  # no line: the next run tries it again
                continue
            verdicts = tuple(guard(t, document, near[t.id], model))
            record = DocumentRecord(t.id, t.definition_hash(), document, verdicts, time.perf_counter() - start,
                                    model_sha256, threads)
            f.write(record.to_json_line() + "\n")
            f.flush()
            written.append(record)
            say(f"{i}/{len(todo)} {t.id}: {sum(v.kept for v in verdicts)}/{len(verdicts)} examples kept, "
                f"{record.seconds:.1f} s")
    return written


@dataclass(frozen=True)
class DocumentSet:
    """A dataset's committed documents by tool id, and a note when there are none."""

    dataset: str
    records: dict[str, DocumentRecord] = field(default_factory=dict)
    note: str = ""


def load_documents(dataset: str) -> DocumentSet:
    """The committed documents of ``dataset`` (package data); none, with a note saying so, when absent."""
    if dataset not in DATASETS:
        raise ValueError(f"No dataset named {dataset!r}; the datasets are: {', '.join(DATASETS)}.")
    file = DATA.joinpath(FOLDER).joinpath(f"{dataset}.jsonl")
    if not file.is_file():
        return DocumentSet(dataset, note=f"No tool documents are committed for {dataset}: build them with  "
                                         + REBUILD.format(dataset=dataset))
    try:
        text = file.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"The committed tool documents of {dataset} cannot be read ({type(e).__name__}).") from None
    return DocumentSet(dataset, {r.id: r for r in parse_records(text)})


def timing(records: Sequence[DocumentRecord]) -> dict[str, float]:
    """Seconds per tool (median, total) and the server threads they were written with, from the records."""
    seconds = [r.seconds for r in records]
    return {"tools": len(records), "total_seconds": round(sum(seconds), 1),
            "median_seconds": round(statistics.median(seconds), 2) if seconds else 0.0,
            "threads": max((r.threads for r in records), default=0)}


@dataclass(frozen=True)
class Row:
    """One retriever on one test set: original against expanded definitions, per query and paired."""

    test_set: str
    retriever: str
    n: int
    original: tuple[float, float, float]  # mean, 95 % interval low, high
    expanded: tuple[float, float, float]
    difference: tuple[float, float, float]  # expanded − original: mean, paired interval low, high

    @property
    def verdict(self) -> str:
        return "better" if self.difference[1] > 0 else "worse" if self.difference[2] < 0 else "no call"

    def to_json(self) -> JSONObject:
        return {"test_set": self.test_set, "retriever": self.retriever, "n": self.n, "original": list(self.original),
                "expanded": list(self.expanded), "difference": list(self.difference)}

    @classmethod
    def from_json(cls, data: JSONObject) -> "Row":
        def triple(key: str) -> tuple[float, float, float]:
            a, b, c = (float(x) for x in data[key])
            return a, b, c
        return cls(str(data["test_set"]), str(data["retriever"]), int(data["n"]),
                   triple("original"), triple("expanded"), triple("difference"))


@dataclass(frozen=True)
class Measurement:
    """Every row of one dataset, how many of its tools had a document, and the retrievers skipped and why."""

    dataset: str
    documented: int
    tools: int
    rows: list[Row]
    skipped: dict[str, str]

    def report(self) -> str:
        """A printable table: one line per test set and retriever."""
        head = (f"{self.dataset}: {self.documented} of {self.tools} tools have a document "
                "(the rest keep their original text); test rows, expanded − original paired")
        lines = [head, f"{'test set':<13} {'metric':<6} {'retriever':<13} {'n':>4}  {'original':<22} "
                       f"{'expanded':<22} {'difference':<24} verdict"]
        for r in self.rows:
            lines.append(f"{r.test_set:<13} {METRIC[r.test_set]:<6} {r.retriever:<13} {r.n:>4}  {_cell(r.original):<22} "
                         f"{_cell(r.expanded):<22} {_cell(r.difference, signed=True):<24} {r.verdict}")
        lines += [f"skipped {name}: {why}" for name, why in self.skipped.items()]
        return "\n".join(lines)

    def to_json(self) -> JSONObject:
        return {"dataset": self.dataset, "documented": self.documented, "tools": self.tools,
                "rows": [r.to_json() for r in self.rows], "skipped": dict(self.skipped)}

    @classmethod
    def from_json(cls, data: JSONObject) -> "Measurement":
        return cls(str(data["dataset"]), int(data["documented"]), int(data["tools"]),
                   [Row.from_json(r) for r in data["rows"]], {str(k): str(v) for k, v in data["skipped"].items()})


def _cell(v: tuple[float, float, float], signed: bool = False) -> str:
    f = "+.3f" if signed else ".3f"
    return f"{v[0]:{f}} [{v[1]:{f}}, {v[2]:{f}}]"


def _mean_interval(values: Sequence[float]) -> tuple[float, float, float]:
    return (statistics.fmean(values), *bootstrap_interval(values))


def measure(dataset: str, records: dict[str, DocumentRecord] | str | os.PathLike[str] | None = None, *,
            names: Sequence[str] = RETRIEVERS, seed: int = 0, encoder: Encoder | None = None) -> Measurement:
    """Each retriever over the original and the expanded definitions of ``dataset`` (the committed documents
    unless ``records`` — by tool id, or a documents file the builder wrote — is given), on every test set
    of Chapter 8's split."""
    cat = catalog(dataset, seed)
    if isinstance(records, (str, os.PathLike)):  # a file of one's own run, e.g. Chapter 8b's exercise
        records = {r.id: r for r in read_records(records)}
    records = load_documents(dataset).records if records is None else records
    more = with_documents(cat.tools, records)
    has_document = documents_writer(records)
    documented = sum(bool(has_document(t)) for t in cat.tools)
    reason = dense_unavailable_reason()
    skipped = {n: reason for n in names if reason and needs_embeddings(n)}
    encoder = encoder or Encoder()
    rows = []
    for name in (n for n in names if n not in skipped):
        before, after = make_retriever(name, cat.tools, encoder=encoder), make_retriever(name, more, encoder=encoder)
        for test_set, queries in cat.test.items():
            a, b = per_query(before, queries, test_set), per_query(after, queries, test_set)
            diff = (statistics.fmean(b) - statistics.fmean(a), *paired_difference_interval(b, a))
            rows.append(Row(test_set, name, len(a), _mean_interval(a), _mean_interval(b), diff))
    return Measurement(dataset, documented, len(cat.tools), rows, skipped)


def load_measured(dataset: str) -> Measurement | None:
    """The committed measurement of ``dataset``'s documents (:data:`MEASURED`), or None when there is none."""
    file = DATA.joinpath(FOLDER).joinpath(MEASURED)
    found = json.loads(file.read_text("utf-8")) if file.is_file() else {}
    return Measurement.from_json(found[dataset]) if dataset in found else None


def save_measured(measurement: Measurement, path: str | os.PathLike[str]) -> None:
    """Write ``measurement`` into the JSON file at ``path`` under its dataset, keeping the other datasets'."""
    file = Path(path)
    found = json.loads(file.read_text("utf-8")) if file.is_file() else {}
    found[measurement.dataset] = measurement.to_json()
    tmp = file.with_suffix(".tmp")
    tmp.write_text(json.dumps(dict(sorted(found.items())), indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, file)


def default_with_documents(measurements: Sequence[Measurement]) -> str:
    """The default retriever once the documents are measured, by Chapter 8a's rule fixed in advance
    (:func:`experiments.zero_shot.default_choice`): :data:`DOCUMENTED` replaces hybrid-rrf only if
    its paired difference is *better* on LiveMCPBench's whole tasks and *worse* on no measured test set."""
    lines = []
    for m in measurements:
        for r in (r for r in m.rows if r.retriever == BASELINE):
            lines.append(Line(r.test_set, BASELINE, r.n, *r.original, 0.0, 0.0))
            lines.append(Line(r.test_set, DOCUMENTED, r.n, *r.expanded, r.difference[1], r.difference[2]))
    return default_choice(lines)


def main(argv: list[str] | None = None) -> int:
    exit_cleanly_on_sigterm()  # a stopped run removes its temp folders
    parser = argparse.ArgumentParser(prog="python -m experiments.tool_documents",
                                     description="Write a guarded retrieval document for each tool with the real small model.")
    parser.add_argument("--dataset", required=True, help=f"one of {', '.join(DATASETS)}")
    parser.add_argument("--out", help="the JSONL to write and resume (the committed one: "
                                      "experiments/data/tool_documents/DATASET.jsonl)")
    parser.add_argument("--limit", type=int, help="only the catalog's first N tools")
    parser.add_argument("--threads", type=int, default=0, help="llama-server threads (default: all cores but one)")
    parser.add_argument("--review", type=int, metavar="N",
                        help="write nothing: print a seeded sample of N documents of --out for a person to review")
    parser.add_argument("--measure", metavar="JSON",
                        help="write no documents: measure --out's (the committed ones if --out is not given) on the "
                             f"test rows and store the rows in JSON under the dataset (the committed: experiments/data/{FOLDER}/{MEASURED})")
    args = parser.parse_args(argv)
    out = args.out or f"experiments/data/{FOLDER}/{args.dataset}.jsonl"
    try:
        cat = catalog(args.dataset)  # a bad name fails before the model is started
        if args.review is not None:
            print(sample_for_review(read_records(out), cat.tools, n=args.review))
            return 0
        if args.measure is not None:
            measurement = measure(args.dataset, args.out)
            save_measured(measurement, args.measure)
            print(measurement.report())
            return 0
        start = time.perf_counter()
        with LocalLlamaProvider(threads=args.threads or None) as model:
            written = build(args.dataset, out, model, limit=args.limit, threads=model.server.threads,
                            say=lambda s: print(s, file=sys.stderr, flush=True))
        print(f"wrote {len(written)} documents in {time.perf_counter() - start:.0f} s wall time; "
              f"file: {timing(read_records(out))}; guard: {guard_counts(read_records(out))}")
    except (ValueError, ProviderError) as e:
        print(e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
