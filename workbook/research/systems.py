"""Named systems' ranking styles, rebuilt from their published descriptions and source.

Introduced in Chapter 6a (``notebooks/06a_public_benchmarks.ipynb``) so that what shipping tool-search
systems do can be measured on the same catalogs and queries as everything else:

* PizzaPi — substring scoring per query term: exact name +10, name contains +5, description
  contains +3, a parameter contains +1; the whole query in the name +8, in the description +4.
* StackOne — BM25 and TF-IDF fused by score: α·sigmoid(BM25/10) + (1−α)·TF-IDF cosine, α = 0.2,
  with the name repeated three times in the TF-IDF text (their ``local_search.py``).
* Stacklok — full-text BM25 and embeddings, the result list split 50/50 between them (no RRF):
  here the two lists alternate, so any top-k holds half of each.

Each reuses this package's tokenizer, BM25 index and embeddings, so a difference in the table
is a difference in *ranking style*, not in plumbing.
"""
from __future__ import annotations

import math
from collections import Counter
from itertools import chain, zip_longest
from typing import Sequence

import numpy as np

from harness.selection.ranking import check_k, require_tools, top_ids
from harness.selection.bm25_index import InvertedBM25
from harness.retrieval.dense import DenseRetriever
from harness.retrieval.records import CatalogTool
from harness.core.text import split_identifier, tokenize


class PizzaPiRetriever:
    """Substring scores per query term; tools scoring 0 are left out."""

    name = "pizzapi-substring"

    def __init__(self, tools: Sequence[CatalogTool]) -> None:
        require_tools(tools)
        self.ids = [t.id for t in tools]
        self._docs = [(t.name.lower(), t.description.lower(), [f"{n} {d}".lower() for n, d in t.parameters])
                      for t in tools]

    def score(self, query: str, doc: tuple[str, str, list[str]]) -> float:
        name, description, params = doc
        whole = query.strip().lower()
        total = (8.0 if whole and whole in name else 0.0) + (4.0 if whole and whole in description else 0.0)
        for term in tokenize(query):
            total += 10.0 if term == name else 5.0 if term in name else 0.0
            total += 3.0 if term in description else 0.0
            total += 1.0 if any(term in p for p in params) else 0.0
        return total

    def rank(self, query: str, k: int | None = None) -> list[str]:
        scores = np.array([self.score(query, d) for d in self._docs])
        return top_ids(self.ids, scores, k)


class _TfIdf:
    """Cosine similarity over l2-normalised tf·idf vectors (smooth idf, as scikit-learn's default)."""

    def __init__(self, corpus: Sequence[Sequence[str]]) -> None:
        n = len(corpus)
        df = Counter(term for doc in corpus for term in set(doc))
        self.idf = {t: math.log((1 + n) / (1 + c)) + 1 for t, c in df.items()}
        self._postings: dict[str, list[tuple[int, float]]] = {}
        for i, doc in enumerate(corpus):
            weights = {t: c * self.idf[t] for t, c in Counter(doc).items()}
            norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
            for t, w in weights.items():
                self._postings.setdefault(t, []).append((i, w / norm))
        self.size = n

    def scores(self, query: Sequence[str]) -> np.ndarray:
        weights = {t: c * self.idf[t] for t, c in Counter(query).items() if t in self.idf}
        norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
        out = np.zeros(self.size)
        for t, w in weights.items():
            for i, dw in self._postings[t]:
                out[i] += dw * w / norm
        return out


class StackOneRetriever:
    """α·sigmoid(BM25/10) + (1−α)·TF-IDF, α = 0.2 (BM25's share)."""

    name = "stackone-bm25-tfidf"

    def __init__(self, tools: Sequence[CatalogTool], alpha: float = 0.2) -> None:
        require_tools(tools)
        if not 0 <= alpha <= 1:
            raise ValueError(f"alpha is BM25's share, between 0 and 1; got {alpha}.")
        self.ids, self.alpha = [t.id for t in tools], alpha
        bm25_docs, tfidf_docs = [], []
        for t in tools:
            parts = split_identifier(t.name)
            category = parts[0] if parts else ""
            actions = " ".join(p for p in parts if p in {"create", "update", "delete", "get", "list", "search"})
            bm25_docs.append(tokenize(f"{t.name} {t.description} {category} {' '.join(parts)} {actions}"))
            tfidf_docs.append(tokenize(f"{t.name} {t.name} {t.name} {category} {actions} {t.description} {' '.join(parts)}"))
        self._bm25 = InvertedBM25(bm25_docs)
        self._tfidf = _TfIdf(tfidf_docs)

    def _scored(self, terms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Every tool's score and the indices of the tools sharing a term with the query."""
        raw, candidates = self._bm25.scores_and_candidates(terms)
        bm25 = 1.0 / (1.0 + np.exp(-raw / 10.0))
        return self.alpha * bm25 + (1 - self.alpha) * self._tfidf.scores(terms), candidates

    def scores(self, query: str) -> np.ndarray:
        return self._scored(tokenize(query))[0]

    def rank_with_scores(self, query: str, k: int | None = None) -> tuple[list[str], np.ndarray]:
        check_k(k)
        scores, candidates = self._scored(tokenize(query))
        # sigmoid(0) = 0.5 gives every tool a floor; rank only tools sharing a term with the query
        return top_ids(self.ids, scores, k, candidates=candidates, positive_only=False), scores

    def rank(self, query: str, k: int | None = None) -> list[str]:
        return self.rank_with_scores(query, k)[0]


class StacklokRetriever:
    """BM25 (name, description, parameters) and dense lists, alternated and de-duplicated."""

    name = "stacklok-split"

    def __init__(self, tools: Sequence[CatalogTool], *, dense: DenseRetriever | None = None) -> None:
        require_tools(tools)
        self.ids = [t.id for t in tools]
        docs = [tokenize(t.search_text) for t in tools]  # name, description, parameters
        self._bm25 = InvertedBM25(docs, k1=1.2)  # SQLite FTS5's bm25() constants
        self.dense = dense or DenseRetriever(tools)

    def rank(self, query: str, k: int | None = None) -> list[str]:
        check_k(k)
        scores, candidates = self._bm25.scores_and_candidates(tokenize(query))
        lists = [top_ids(self.ids, scores, None, candidates=candidates), self.dense.rank(query)]
        alternated = (tid for tid in chain.from_iterable(zip_longest(*lists)) if tid is not None)
        return list(dict.fromkeys(alternated))[:k]
