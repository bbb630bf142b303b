"""An inverted-index BM25 that gives exactly rank_bm25's BM25Okapi scores, fast, and the catalog BM25 built on it.

Introduced in Chapter 2 (``notebooks/02_catalog_and_selector.ipynb``) as the index under the catalog; Chapter 6b
(``notebooks/06b_scale_and_speed.ipynb``) reuses it for its lexical retrievers and times it.
:class:`CatalogBM25` — one text per tool, ranked and answered by id — is the one catalog BM25: Chapter 2's
:class:`~harness.selection.catalog.ToolCatalog` and the ``catalog-bm25`` and ``bm25`` retrievers
(:func:`~harness.retrieval.bm25.bm25`) rank with it.

rank_bm25 builds a numpy array over *every* document for every query term, in Python, so a
query costs O(terms × catalog). Here each term keeps a postings list (the documents holding it
and their term frequencies), so a query only touches the documents that share a term with it.
The statistics (document frequencies, average length, idf with rank_bm25's epsilon floor for
terms in more than half the documents) and the arithmetic are rank_bm25's own, in the same
order, so the scores are equal to the last bit — which the tests check on the public catalogs.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from harness.core.text import tokenize
from harness.selection.ranking import check_k, lexical_ids


class InvertedBM25:
    """BM25Okapi (k1, b, epsilon as in rank_bm25) over pre-tokenised documents."""

    def __init__(self, corpus: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> None:
        if not corpus:
            raise ValueError("BM25 needs at least one document; the corpus is empty.")
        self.k1, self.b, self.epsilon = k1, b, epsilon
        doc_freq: dict[str, int] = {}  # insertion order = rank_bm25's, so the idf average sums identically
        postings: dict[str, tuple[list[int], list[int]]] = {}
        doc_len: list[int] = []
        total = 0
        for i, doc in enumerate(corpus):
            doc_len.append(len(doc))
            total += len(doc)
            freqs: dict[str, int] = {}
            for word in doc:
                freqs[word] = freqs.get(word, 0) + 1
            for word, tf in freqs.items():
                doc_freq[word] = doc_freq.get(word, 0) + 1
                docs, tfs = postings.setdefault(word, ([], []))
                docs.append(i)
                tfs.append(tf)
        self.corpus_size = len(corpus)
        self.avgdl = total / self.corpus_size
        self.doc_freq = doc_freq  # term -> how many documents hold it
        self.idf = self._idf(doc_freq)
        self.doc_len = np.array(doc_len)
        # rank_bm25's length normalisation, same expression and operand order
        self._norm = self.k1 * (1 - self.b + self.b * self.doc_len / self.avgdl)
        self._postings = {w: (np.array(d), np.array(t)) for w, (d, t) in postings.items()}

    def _idf(self, doc_freq: dict[str, int]) -> dict[str, float]:
        idf: dict[str, float] = {}
        idf_sum = 0.0
        negative = []
        for word, freq in doc_freq.items():
            value = math.log(self.corpus_size - freq + 0.5) - math.log(freq + 0.5)
            idf[word] = value
            idf_sum += value
            if value < 0:
                negative.append(word)
        self.average_idf = idf_sum / len(idf) if idf else 0.0
        for word in negative:
            idf[word] = self.epsilon * self.average_idf
        return idf

    def lexical(self, query: Sequence[str], weights: Sequence[float] | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every document's score, the indices that matched, and how many distinct query terms each holds.

        ``weights`` (one per query term) scale each term's contribution; without them the
        arithmetic is rank_bm25's exactly. Work grows with the postings of the query's terms;
        allocating the zeroed buffers is the only step proportional to the catalog (a memset).
        """
        scores = np.zeros(self.corpus_size)
        matched = np.zeros(self.corpus_size, dtype=np.int32)
        touched = []
        seen: set[str] = set()
        for i, term in enumerate(query):  # repeated terms count again, as in rank_bm25
            posting = self._postings.get(term)
            if posting is None:
                continue
            docs, tfs = posting
            part = self.idf[term] * (tfs * (self.k1 + 1) / (tfs + self._norm[docs]))
            scores[docs] += part if weights is None else weights[i] * part
            if term not in seen:
                seen.add(term)
                matched[docs] += 1
                touched.append(docs)
        candidates = np.unique(np.concatenate(touched)) if touched else np.empty(0, dtype=int)
        return scores, candidates, matched

    def scores_and_candidates(self, query: Sequence[str], weights: Sequence[float] | None = None
                              ) -> tuple[np.ndarray, np.ndarray]:
        """Every document's score (zeros where no term matches) and the indices that matched."""
        scores, candidates, _ = self.lexical(query, weights)
        return scores, candidates

    def get_scores(self, query: Sequence[str]) -> np.ndarray:
        """The same array rank_bm25's ``BM25Okapi.get_scores`` returns."""
        return self.lexical(query)[0]

    def term_stats(self, term: str, doc: int) -> tuple[float, int, float]:
        """(idf, tf, tf-part) of ``term`` in document ``doc``: the factors of its share of the score."""
        posting = self._postings.get(term)
        hit = np.flatnonzero(posting[0] == doc) if posting is not None else np.empty(0, dtype=int)
        if not len(hit):
            return self.idf.get(term, 0.0), 0, 0.0
        tfs = posting[1][hit]  # type: ignore[index]
        part = tfs * (self.k1 + 1) / (tfs + self._norm[np.array([doc])])  # the scoring expression, unchanged
        return self.idf[term], int(tfs[0]), float(part[0])


class CatalogBM25:
    """BM25 over one text per tool, answering with the tools' ids; any catalog, an empty one too."""

    def __init__(self, ids: Sequence[str], texts: Sequence[str], name: str = "bm25") -> None:
        self.ids = list(ids)
        self.name = name
        docs = [tokenize(text) for text in texts]
        self.index = InvertedBM25(docs) if docs else None  # BM25 divides by the corpus size: no index for none

    def scores(self, query: str) -> np.ndarray:
        """Every tool's BM25 score for ``query``, in catalog order (all 0 for a stop-word-only query)."""
        return self.index.get_scores(tokenize(query)) if self.index is not None else np.zeros(0)

    def rank(self, query: str, k: int | None = None) -> list[str]:
        """Ids of the tools sharing a term with ``query``, best first (ties keep catalog order; see
        :func:`~harness.selection.ranking.lexical_ids`)."""
        return self.rank_with_scores(query, k)[0]

    def rank_with_scores(self, query: str, k: int | None = None) -> tuple[list[str], np.ndarray]:
        """:meth:`rank` and :meth:`scores` from one pass over the index."""
        check_k(k)
        if self.index is None:
            return [], np.zeros(0)
        scores, _, matched = self.index.lexical(tokenize(query))
        return lexical_ids(self.ids, scores, matched, k), scores
