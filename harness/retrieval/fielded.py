"""Fielded BM25: a tool's name, server, parameters and descriptions scored apart, then weighed.

Introduced in Chapter 6a (``notebooks/06a_public_benchmarks.ipynb``).

One bag of words per tool lets a long description drown its name. Here each field gets its
own BM25 (its own document lengths and idf), and a tool's score is the weighted sum: a query
word in the name counts more than the same word deep in a parameter description. The query's
terms are weighted too: the verbs that open most of *this* catalog's tool names count less
(:func:`~harness.retrieval.terms.leading_verbs`), everyday action words bring their tool-speak
synonyms at half weight, abbreviations are expanded on both sides. (A tool the query names
exactly is put first by the :class:`~harness.selection.ranking.Selector`, not here.) The name weight and ``verb_weight`` were chosen on development queries only
(LiveMCPBench's, the demo world's and ToolLens', never their test queries) from six settings, by
the procedure of :mod:`experiments.tuning`: the name weighs as much as the description
(the earlier default, double, was no better there); the other weights are round values, not tuned.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from harness.selection.ranking import lexical_ids, require_tools
from harness.selection.bm25_index import InvertedBM25
from harness.retrieval.records import CatalogTool
from harness.retrieval.terms import expand, leading_verbs, synonyms
from harness.core.text import tokenize

DEFAULT_WEIGHTS: dict[str, float] = {
    "name": 1.0, "server": 1.0, "description": 1.0, "parameters": 0.5, "server_description": 0.5,
}


def tool_fields(t: CatalogTool) -> dict[str, str]:
    """The text of each field of a tool."""
    return {
        "name": t.name,
        "server": " ".join(dict.fromkeys(filter(None, (t.server, str(t.extra.get("server_title", "")))))),
        "description": t.description,
        "parameters": " ".join(f"{n} {d}" for n, d in t.parameters),
        "server_description": t.server_description,
    }


class FieldedBM25:
    """Weighted per-field BM25 with catalog-learned verb weights and abbreviations."""

    name = "bm25-fielded"

    def __init__(self, tools: Sequence[CatalogTool], *, weights: Mapping[str, float] = DEFAULT_WEIGHTS,
                 verb_weight: float = 0.3, synonym_weight: float = 0.5, expand_abbreviations: bool = True,
                 k1: float = 1.2, b: float = 0.75) -> None:
        require_tools(tools)
        unknown = set(weights) - set(DEFAULT_WEIGHTS)
        if unknown:
            raise ValueError(f"Unknown field(s) {sorted(unknown)}; fields are {sorted(DEFAULT_WEIGHTS)}.")
        self.ids = [t.id for t in tools]
        self.expand_abbreviations = expand_abbreviations
        self.verbs = leading_verbs(tools)
        self.verb_weight = verb_weight
        self.synonym_weight = synonym_weight
        texts = [tool_fields(t) for t in tools]
        self._fields: list[tuple[float, InvertedBM25]] = []
        for field, weight in weights.items():
            corpus = [self._terms(doc[field]) for doc in texts]
            if weight > 0 and any(corpus):  # a field no tool fills adds nothing
                self._fields.append((weight, InvertedBM25(corpus, k1=k1, b=b)))

    def _terms(self, text: str) -> list[str]:
        terms = tokenize(text)
        return expand(terms) if self.expand_abbreviations else terms

    def query_terms(self, query: str) -> tuple[list[str], list[float]]:
        """The query's terms and the weight of each: catalog verbs count ``verb_weight``, and the
        action synonyms appended after them ``synonym_weight``."""
        terms = self._terms(query)
        weights = [self.verb_weight if t in self.verbs else 1.0 for t in terms]
        extra = synonyms(terms) if self.synonym_weight > 0 else []
        return terms + extra, weights + [self.synonym_weight] * len(extra)

    def lexical(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """The weighted sum of the fields' scores, and per tool the most query terms one field holds."""
        terms, term_weights = self.query_terms(query)
        total = np.zeros(len(self.ids))
        matched = np.zeros(len(self.ids), dtype=np.int32)
        for weight, index in self._fields:
            scores, _, field_matched = index.lexical(terms, term_weights)
            total += weight * scores
            np.maximum(matched, field_matched, out=matched)
        return total, matched

    def scores(self, query: str) -> np.ndarray:
        return self.lexical(query)[0]

    def rank_with_scores(self, query: str, k: int | None = None) -> tuple[list[str], np.ndarray]:
        scores, matched = self.lexical(query)
        return lexical_ids(self.ids, scores, matched, k), scores

    def rank(self, query: str, k: int | None = None) -> list[str]:
        return self.rank_with_scores(query, k)[0]
