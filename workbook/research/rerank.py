"""A learned re-ranker: a handful of match signals weighed by logistic regression, trained elsewhere.

Introduced in Chapter 8a (``notebooks/08a_zero_shot_ideas.ipynb``).

Hybrid search adds two rankings with fixed weights. Which signal deserves trust — a query word in
the tool's *name* rather than deep in a parameter, a high cosine, a server the query mentions, a
tool whose server neighbours also match — can be learned from labelled queries. To stay
zero-shot on the catalog it is used on, the model is trained on a *different* catalog (ToolLens'
RapidAPI endpoints) and applied to MCP catalogs it has never seen (and the reverse, in Chapter 8).
That only transfers if the features mean the same in every catalog, so each is relative to the
query's own candidates (a field's BM25 over the best candidate's) or bounded (cosine, 0/1 flags).

The first stage is hybrid search (fielded BM25 and MiniLM by RRF); its top ``depth`` candidates
are re-scored by ``w · features + b``; the rest keep their order below them. The model is 15 numbers in package data (:data:`MODELS_FILE`, rebuilt by
the command in it); training is NumPy Newton steps on an L2-penalised log-likelihood — seconds.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Sequence

import numpy as np

DATA = resources.files("experiments").joinpath("data")  # the committed results this reads (written by the experiments)
from harness.selection.ranking import check_k, exact_name_matches, name_index, require_tools
from harness.retrieval.dense import DenseRetriever, Encoder
from harness.retrieval.fielded import DEFAULT_WEIGHTS, FieldedBM25, tool_fields
from harness.retrieval.hybrid import HybridRetriever
from harness.retrieval.records import CatalogTool, Query
from workbook.research.task import clauses
from harness.core.text import split_identifier, tokenize

FIELDS = tuple(DEFAULT_WEIGHTS)
FEATURES = (*(f"bm25_{f}" for f in FIELDS), "bm25_fielded", "cosine", "cosine_gap", "clause_cosine",
            "first_stage", "exact_name", "server_named", "server_best", "coverage")


class FeatureExtractor:
    """First-stage candidates for a query and one row of :data:`FEATURES` per candidate."""

    def __init__(self, tools: Sequence[CatalogTool], *, encoder: Encoder | None = None, depth: int = 30) -> None:
        require_tools(tools)
        check_k(depth)
        self.ids = [t.id for t in tools]
        self.depth = depth
        self.fielded = FieldedBM25(tools)
        self.per_field = [FieldedBM25(tools, weights={f: 1.0}) for f in FIELDS]
        self.dense = DenseRetriever(tools, encoder=encoder)
        self.first = HybridRetriever(tools, lexical=self.fielded, dense=self.dense)
        self._pos = {tid: i for i, tid in enumerate(self.ids)}
        servers = sorted({t.server for t in tools})
        self._server = np.array([servers.index(t.server) for t in tools])
        self._server_words = [set(w for w in split_identifier(t.server) if len(w) > 2) - {"mcp", "server"}
                              for t in tools]
        self._terms = [set(tokenize(" ".join(tool_fields(t).values()))) for t in tools]
        self._names = name_index((n, t.id) for t in tools for n in (t.name, t.id))  # the exact_name feature's

    def candidates(self, query: str) -> list[str]:
        return self.first.rank(query, self.depth)

    def features(self, query: str, candidates: Sequence[str]) -> np.ndarray:
        """One row per candidate, columns in :data:`FEATURES` order."""
        idx = np.array([self._pos[c] for c in candidates], dtype=int)
        rows = np.zeros((len(idx), len(FEATURES)))
        if not len(idx):
            return rows
        for j, scorer in enumerate([*self.per_field, self.fielded]):
            s = scorer.scores(query)[idx]
            top = s.max()
            rows[:, j] = s / top if top > 0 else 0.0
        texts = [query, *clauses(query)]
        vectors = self.dense.encoder.encode(texts)
        sims = self.dense.matrix @ vectors.T
        cos = sims[:, 0]
        j = len(FIELDS) + 1
        rows[:, j] = cos[idx]
        rows[:, j + 1] = cos[idx] - cos[idx].max()
        rows[:, j + 2] = sims[idx].max(axis=1)
        rows[:, j + 3] = 1.0 / np.log2(2 + np.arange(len(idx)))  # candidates arrive in first-stage order
        exact = set(exact_name_matches(query, self._names))
        rows[:, j + 4] = [c in exact for c in candidates]
        q_terms = set(tokenize(query))
        rows[:, j + 5] = [bool(self._server_words[i] & q_terms) for i in idx]
        best = np.full(self._server.max() + 1, -np.inf)
        np.maximum.at(best, self._server[idx], cos[idx])
        rows[:, j + 6] = best[self._server[idx]] - cos[idx].max()
        rows[:, j + 7] = [len(q_terms & self._terms[i]) / len(q_terms) if q_terms else 0.0 for i in idx]
        return rows


@dataclass(frozen=True)
class LinearModel:
    """Standardised features → ``coef · z + bias``; where it was trained travels with it."""

    coef: tuple[float, ...]
    bias: float
    mean: tuple[float, ...]
    std: tuple[float, ...]
    trained_on: str = ""

    def score(self, rows: np.ndarray) -> np.ndarray:
        z = (rows - np.asarray(self.mean)) / np.asarray(self.std)
        return z @ np.asarray(self.coef) + self.bias

    def to_json(self) -> dict[str, object]:
        return {"features": list(FEATURES), "coef": list(self.coef), "bias": self.bias, "mean": list(self.mean),
                "std": list(self.std), "trained_on": self.trained_on}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> "LinearModel":
        if data.get("features") != list(FEATURES):
            raise ValueError("The re-ranker file was trained on other features; rebuild it (see its 'command').")
        return cls(tuple(data["coef"]), float(data["bias"]), tuple(data["mean"]),  # type: ignore[arg-type]
                   tuple(data["std"]), str(data.get("trained_on", "")))  # type: ignore[arg-type]


def training_rows(extractor: FeatureExtractor, queries: Sequence[Query]) -> tuple[np.ndarray, np.ndarray]:
    """Features and 0/1 labels (a candidate among the query's gold ids) for every query's candidates."""
    xs, ys = [], []
    for q in queries:
        cands = extractor.candidates(q.query)
        gold = set(q.gold)
        xs.append(extractor.features(q.query, cands))
        ys.append(np.array([c in gold for c in cands], dtype=float))
    return np.vstack(xs), np.concatenate(ys)


def fit(rows: np.ndarray, labels: np.ndarray, *, l2: float = 1.0, steps: int = 25, trained_on: str = "") -> LinearModel:
    """L2-penalised logistic regression by Newton's method (a few hundred thousand rows: seconds)."""
    if rows.shape[0] != labels.shape[0] or not rows.shape[0]:
        raise ValueError(f"Need one label per row and at least one row, got {rows.shape[0]} rows, {labels.shape[0]} labels.")
    if labels.min() == labels.max():
        raise ValueError("The training rows are all one class: nothing to learn from.")
    mean, std = rows.mean(axis=0), rows.std(axis=0)
    std[std == 0] = 1.0
    z = np.hstack([(rows - mean) / std, np.ones((len(rows), 1))])
    w = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[-1] = 0.0  # the bias is not shrunk
    for _ in range(steps):
        p = 1 / (1 + np.exp(-z @ w))
        grad = z.T @ (p - labels) + penalty * w
        hess = (z * (p * (1 - p))[:, None]).T @ z + np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return LinearModel(tuple(w[:-1]), float(w[-1]), tuple(mean), tuple(std), trained_on)


#: The package data file holding the trained models (with Chapter 8's measurement and the command that rebuilds both).
MODELS_FILE = "zero_shot_results.json"


def load_model(source: str = "toollens") -> LinearModel:
    """A re-ranker shipped as package data: ``"toollens"`` (the default's, trained on ToolLens development
    queries) or ``"livemcp+demo"`` (the reverse, for scoring on ToolLens)."""
    models = json.loads(DATA.joinpath(MODELS_FILE).read_text("utf-8"))["rerankers"]
    if source not in models:
        raise ValueError(f"No re-ranker trained on {source!r}; there are: {', '.join(models)}.")
    return LinearModel.from_json(models[source])


class RerankRetriever:
    """Hybrid search's top ``depth`` re-ordered by a linear model over :data:`FEATURES`."""

    name = "rerank-lr"

    def __init__(self, tools: Sequence[CatalogTool], *, model: LinearModel | None = None,
                 encoder: Encoder | None = None, depth: int = 30) -> None:
        self.extractor = FeatureExtractor(tools, encoder=encoder, depth=depth)
        self.ids = self.extractor.ids
        self.model = model or load_model()

    def rank(self, query: str, k: int | None = None) -> list[str]:
        check_k(k)
        first = self.extractor.first.rank(query)
        head = first[: self.extractor.depth]
        scores = self.model.score(self.extractor.features(query, head))
        order = sorted(range(len(head)), key=lambda i: (-scores[i], i))
        return ([head[i] for i in order] + first[len(head):])[:k]
