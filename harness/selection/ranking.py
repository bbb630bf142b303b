"""The ranking contract and the selector: what every retriever answers, and what the model is shown.

Introduced in Chapter 2 (``notebooks/02_catalog_and_selector.ipynb``) with the BM25 catalog;
Chapter 3's loop, Chapter 4's ``search_tools``, Chapter 5's MCP search and every Chapter 6
retriever go through it.

There is one contract: a :class:`Ranker` answers ``rank(query, k=None)`` with tool ids, best
first. BM25, fielded BM25, embeddings and their fusions all answer it, so any of them can choose
the tools of a turn; a :class:`Scorer` also gives each tool's score, from the same pass. What a
harness does *around* a ranking — always show the pinned tools, put a tool the user named exactly
first, cut to ``k``, drop weak matches below a score floor — is the :class:`Selector`, written once
(no ranker puts named tools first itself) and used by the loop (:func:`harness.selection.agent.arun`),
the search tool (:class:`harness.selection.discovery.ToolSearch`), the evaluation
(:func:`harness.evaluation.metrics.evaluate`) and the benchmark. A selector is a ranker too:
``rank`` gives ids everywhere, ``ranked`` the same choice as :class:`Ranked` records.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence, TypeVar, runtime_checkable

import numpy as np

from harness.core.text import split_identifier
from harness.core.tools import Tool


@runtime_checkable
class Ranker(Protocol):
    """Anything that ranks tool ids for a query: the one interface every retriever offers."""

    name: str

    def rank(self, query: str, k: int | None = None) -> list[str]:
        """Tool ids, best first; at most ``k`` of them (all candidates when ``k`` is None)."""
        ...


@runtime_checkable
class Scorer(Ranker, Protocol):
    """A ranker that can also say how strongly each tool matched (what a score floor and the turn timeline read).

    The one capability beyond :class:`Ranker`: a selector tests for it with ``isinstance`` and then
    asks :meth:`rank_with_scores`, so a query is scored once.
    """

    ids: list[str]

    def scores(self, query: str) -> np.ndarray:
        """One score per id in ``ids`` (higher is better)."""
        ...

    def rank_with_scores(self, query: str, k: int | None = None) -> tuple[list[str], np.ndarray]:
        """``rank(query, k)`` and ``scores(query)`` from one scoring pass."""
        ...


# --- turning scores into a ranking ------------------------------------------------------------

def check_k(k: int | None) -> None:
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k <= 0):
        raise ValueError(f"k must be a positive number of tools, got {k!r} (None means all of them).")


def require_tools(tools: Sequence[object]) -> None:
    """The one empty-catalog check every retriever makes when it is built."""
    if not tools:
        raise ValueError("A retriever needs at least one tool; the catalog is empty.")


Id = TypeVar("Id")  # a tool id, or an index into a list the caller keeps


def top_ids(ids: Sequence[Id], scores: np.ndarray, k: int | None, *, candidates: np.ndarray | None = None,
            positive_only: bool = True) -> list[Id]:
    """Ids by descending score (ties in catalog order), optionally only the ``candidates`` indices."""
    check_k(k)
    idx = np.arange(len(scores)) if candidates is None else np.asarray(candidates)
    vals = scores[idx]
    if positive_only:
        keep = vals > 0
        idx, vals = idx[keep], vals[keep]
    if k is not None and k < len(vals) and not np.isnan(vals).any():  # NaN sorts last: keep the full sort
        # only the k best are returned: sort them and every tie of the k-th, not the whole catalog
        keep = vals >= np.partition(vals, len(vals) - k)[len(vals) - k]
        idx, vals = idx[keep], vals[keep]
    order = np.lexsort((idx, -vals))
    return [ids[i] for i in idx[order[:k]]]


def lexical_ids(ids: Sequence[str], scores: np.ndarray, matched: np.ndarray, k: int | None) -> list[str]:
    """The tools that share a term with the query (``matched`` > 0), best first.

    Positive BM25 scores come first, by score (ties in catalog order). BM25's idf is ≤ 0 for a
    term in half the documents or more, so in a catalog of one or two tools *every* score is
    ≤ 0: those tools still share terms with the query, and come next, by how many distinct
    query terms they share, then by score. On catalogs of realistic size that tail is empty.
    """
    check_k(k)
    idx = np.flatnonzero(matched)
    vals, counts = scores[idx], matched[idx]
    positive = vals > 0
    order = np.lexsort((idx, -vals, np.where(positive, 0, -counts), ~positive))
    return [ids[i] for i in idx[order[:k]]]


def exact_first(exact: Sequence[str], ranked: Sequence[str]) -> list[str]:
    """Tools the query names exactly, then the ranking without them (a user who types a name wants it first)."""
    named = set(exact)
    return [*exact, *(i for i in ranked if i not in named)]


def min_max(scores: np.ndarray) -> np.ndarray:
    """Scores rescaled to 0–1 (all 0 when they are all equal), so unlike scorers can be added."""
    lo, hi = float(scores.min()), float(scores.max())
    return (scores - lo) / (hi - lo) if hi > lo else np.zeros_like(scores)


# --- exact names ------------------------------------------------------------------------------

_IDENTIFIER = re.compile(r"[\w][\w\-./:]*[\w]|\w", re.UNICODE)


def name_index(names: Iterable[tuple[str, str]], min_parts: int = 2) -> dict[str, list[str]]:
    """(name a tool answers to, tool id) pairs → lower-cased name → ids, for :func:`exact_name_matches`.

    With ``min_parts`` 2 (the default) one-word names are left out: "load" in a sentence is a
    word, not a request for the tool called ``load``. A search box, where a single word may well
    be a name, uses 1.
    """
    index: dict[str, list[str]] = {}
    for name, tid in names:
        key = name.lower()
        if key and " " not in key and len(split_identifier(key)) >= min_parts and tid not in index.get(key, ()):
            index.setdefault(key, []).append(tid)
    return index


def exact_name_matches(query: str, names: Mapping[str, Sequence[str]]) -> list[str]:
    """Ids of tools whose whole name the query spells out, in the order the query names them."""
    found: list[str] = []
    for token in _IDENTIFIER.findall(query.lower()):
        for tid in names.get(token.strip("./:-"), ()):
            if tid not in found:
                found.append(tid)
    return found


# --- the selector -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Ranked:
    """One tool a selector chose, with its score when the ranker gives one."""

    tool: Tool
    score: float | None = None
    pinned: bool = False


#: Tools shown per turn when nobody says otherwise: chosen in Chapter 3 at the knee of success
#: against schema tokens on the development scenarios (and reported there on the held-out ones).
DEFAULT_K = 10


def _own_name(t: Tool) -> set[str]:
    return {t.name}


class Selector:
    """The tools to show for a query: pinned tools, then exact names, then the ranker's best ``k``.

    ``ranker`` ranks the ids (tool names) of ``tools``; ``pinned`` tools are shown whatever
    their rank, in the order given, and may live outside ``tools`` (a discovery tool) — a name
    given instead of a tool is looked up in ``tools``. ``k`` counts the ranked tools only.
    ``floor`` drops ranked tools scoring below it (the ranker must then be a :class:`Scorer`);
    with ``exact_first`` a tool the query names exactly (under any name ``names_of`` gives it, or
    as ``names`` — a :func:`name_index` of ids — says) comes before the ranking, even one the ranker
    left out: the one place that rule is written.

    A selector is itself a :class:`Ranker` (:meth:`rank` gives ids), so :func:`harness.evaluation.metrics.evaluate`
    measures a retriever through one, as the agent uses it; :meth:`ranked` gives the same choice as
    :class:`Ranked` records (with scores, for the turn timeline) and :meth:`select` as tools.
    """

    def __init__(self, ranker: Ranker, tools: Sequence[Tool], pinned: Sequence[Tool | str] = (), *,
                 k: int | None = DEFAULT_K, floor: float | None = None, exact_first: bool = False,
                 names_of: Callable[[Tool], set[str]] = _own_name, names: Mapping[str, Sequence[str]] | None = None) -> None:
        check_k(k)
        by_name = {t.name: t for t in tools}
        unknown = [p for p in pinned if isinstance(p, str) and p not in by_name]
        if unknown:
            raise KeyError(f"Pinned tool(s) not among the {len(by_name)} tools: {', '.join(unknown)}.")
        if floor is not None and not isinstance(ranker, Scorer):
            raise ValueError(f"A score floor needs a ranker that gives scores; {ranker.name!r} ranks only.")
        pins = [by_name[p] if isinstance(p, str) else p for p in pinned]
        self.ranker, self.tools, self.k, self.floor, self.exact_first = ranker, tools, k, floor, exact_first
        # a learner's ranker may offer only ``rank``: its class names it then (evaluate's reports need a name)
        self.name: str = getattr(ranker, "name", type(ranker).__name__)
        self.pinned: tuple[Tool, ...] = tuple({t.name: t for t in pins}.values())
        self._by_name = by_name
        if names is None:
            names = name_index(((n, t.name) for t in tools for n in names_of(t)), min_parts=1)
        self._names = names if exact_first else {}

    @classmethod
    def over(cls, catalog: Any, **options: Any) -> "Selector":  # Any: a ToolCatalog (whose module imports this one)
        """A selector ranking with ``catalog`` itself (a :class:`~harness.selection.catalog.ToolCatalog`, which holds its tools)."""
        return cls(catalog, catalog.tools, **options)

    @classmethod
    def around(cls, ranker: Ranker, **options: Any) -> "Selector":  # Any: forwarded unchanged to the constructor
        """A selector over whatever ``ranker`` ranks, with no tool objects: ids only (:meth:`rank`), every one
        of them unless ``k`` says otherwise — how a retriever of a public catalog is measured."""
        return cls(ranker, (), **{"k": None, **options})

    def __len__(self) -> int:
        return len(self.tools)

    @property
    def pinned_tools(self) -> tuple[Tool, ...]:
        """The pinned tools (``__post_init__`` looked up the names given)."""
        return tuple(t for t in self.pinned if isinstance(t, Tool))

    def get(self, name: str) -> Tool:
        """The tool called ``name`` (a pinned one included)."""
        for t in self.pinned_tools:
            if t.name == name:
                return t
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"No tool named {name!r} among the {len(self.tools)} tools.") from None

    def exact_matches(self, query: str) -> list[str]:
        """Names of the tools ``query`` names exactly (only with ``exact_first``)."""
        return exact_name_matches(query, self._names)

    def choose(self, query: str, k: int | None = None) -> tuple[list[str], dict[str, float]]:
        """The ids chosen after the pinned ones, and the ranker's score of every id (none when it gives
        no scores), from one scoring pass: what :meth:`rank` and :meth:`ranked` present."""
        k = self.k if k is None else k
        check_k(k)
        pins = {t.name for t in self.pinned}
        # a floor or exact names may reach past the k-th: those need the whole ranking
        depth = None if self.floor is not None or self.exact_first or k is None else k + len(pins)
        scores: dict[str, float] = {}
        if isinstance(self.ranker, Scorer):
            ranked, vector = self.ranker.rank_with_scores(query, depth)
            scores = dict(zip(self.ranker.ids, (float(s) for s in vector)))
        else:
            ranked = self.ranker.rank(query, depth)
        if self.floor is not None:
            ranked = [i for i in ranked if scores.get(i, 0.0) >= self.floor]
        ids = exact_first(self.exact_matches(query), ranked) if self.exact_first else ranked
        return [i for i in ids if i not in pins][:k], scores

    def rank(self, query: str, k: int | None = None) -> list[str]:
        """Ids of the pinned tools, then of the ranked ones (at most ``k``, by default the selector's own)."""
        chosen, _ = self.choose(query, k)
        return [t.name for t in self.pinned] + chosen

    def ranked(self, query: str, k: int | None = None) -> list[Ranked]:
        """What :meth:`rank` chooses, as records holding each tool and its score."""
        chosen, scores = self.choose(query, k)
        return ([Ranked(t, scores.get(t.name), pinned=True) for t in self.pinned]
                + [Ranked(self.get(i), scores.get(i)) for i in chosen])

    def select(self, query: str, k: int | None = None) -> list[Tool]:
        """The tools to show the model for ``query``."""
        return [r.tool for r in self.ranked(query, k)]
