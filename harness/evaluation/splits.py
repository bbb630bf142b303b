"""Splitting labelled queries so an evaluation answers the question it claims to: folds and dev/test.

Introduced in Chapter 6a (``notebooks/06a_public_benchmarks.ipynb``), where every tuned default is chosen
on a development split and every reported row is measured on queries that tuning never saw.

Two questions need two ways of splitting a query log, and mixing them up flatters a learned
retriever:

* **Memorisation** — "my users repeat the same jobs: does the log help on a new wording of a job
  it has seen?" Split by query id (``by="query"``). ToolLens has 16,893 templated queries but only
  463 distinct gold tool sets, each at least twice, so nearly every held-out query's exact tool
  combination is in the training folds.
* **Generalisation** — "does it find a combination of tools it has never been shown?" Split by the
  gold set (``by="gold"``): all queries needing the same set of tools fall in the same fold, so no
  combination is on both sides. (Single tools still recur inside other combinations: that is the
  catalog, not a leak.)

Every assignment is a SHA-256 of a key (the query id, or the canonical gold set) with a seed, so
it is stable across runs, machines and the order the queries come in, and a query never moves
when others are added. :func:`development_split` cuts off a seeded development share — the only
queries any default may be tuned on — and :func:`folds` cross-validates what is left.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal, Sequence

from harness.retrieval.records import Query

By = Literal["query", "gold"]
#: The share of queries kept for development (tuning) by default; the rest is the test.
DEV_SHARE = 0.25
N_FOLDS = 5


def gold_key(q: Query) -> str:
    """The query's gold tool set in one canonical form (slot order and id order do not matter)."""
    return "|".join(sorted(",".join(sorted(slot)) for slot in q.slots))


def unit_key(q: Query, by: By) -> str:
    """What a split keeps together: the query itself (``"query"``) or everything sharing its gold set (``"gold"``)."""
    if by == "query":
        return q.qid
    if by == "gold":
        return gold_key(q)
    raise ValueError(f"A split is by 'query' or by 'gold', got {by!r}.")


def _hash(key: str, seed: int) -> int:
    return int(hashlib.sha256(f"{seed}:{key}".encode("utf-8")).hexdigest(), 16)


def fold_of(key: str, n_folds: int = N_FOLDS, seed: int = 0) -> int:
    """The fold a key (a query id or a gold key) falls in: its seeded SHA-256 modulo ``n_folds``."""
    if n_folds < 2:
        raise ValueError(f"Cross-validation needs at least 2 folds, got {n_folds}.")
    return _hash(key, seed) % n_folds


def folds(queries: Sequence[Query], held_out: int, n_folds: int = N_FOLDS, *, by: By = "query",
          seed: int = 0) -> tuple[list[Query], list[Query]]:
    """(train, test): the queries outside fold ``held_out`` and those in it, split ``by`` query or gold set."""
    if not 0 <= held_out < n_folds:
        raise ValueError(f"held_out must be a fold number from 0 to {n_folds - 1}, got {held_out}.")
    inside = [fold_of(unit_key(q, by), n_folds, seed) == held_out for q in queries]
    return [q for q, i in zip(queries, inside) if not i], [q for q, i in zip(queries, inside) if i]


@dataclass(frozen=True)
class Split:
    """Development queries (tune on these) and test queries (report on these only)."""

    development: list[Query]
    test: list[Query]
    by: By
    seed: int


def development_split(queries: Sequence[Query], share: float = DEV_SHARE, *, by: By = "query",
                      seed: int = 0) -> Split:
    """A seeded development/test split: the ``share`` of units (queries, or gold sets) with the lowest
    seeded hash go to development, the rest to test; file order is kept within each side.

    ``by="gold"`` keeps every gold set wholly on one side (ToolLens: tuning sees no combination the
    test asks for); ``by="query"`` suits sets whose queries are not templated (LiveMCPBench's 94
    tasks, 92 distinct gold sets; the demo world's queries, which a fixed catalog's 74 tools share).
    At least one unit goes to each side when there are two or more.
    """
    if not 0 < share < 1:
        raise ValueError(f"The development share must be between 0 and 1, got {share}.")
    keys = list(dict.fromkeys(unit_key(q, by) for q in queries))
    if len(keys) < 2:
        raise ValueError(f"A development/test split needs at least two distinct units, got {len(keys)}.")
    n_dev = min(len(keys) - 1, max(1, round(share * len(keys))))
    dev_keys = set(sorted(keys, key=lambda k: _hash(k, seed))[:n_dev])
    dev = [q for q in queries if unit_key(q, by) in dev_keys]
    return Split(dev, [q for q in queries if unit_key(q, by) not in dev_keys], by, seed)
