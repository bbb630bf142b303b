"""A usage prior: the tools past tasks needed get a share of the list, after the relevant ones.

Introduced in Chapter 6c (``notebooks/06c_learned_and_end_to_end.ipynb``), after whole-task retrieval stalls.

A task rarely names all it needs. "Generate a report and save it as Markdown to /root/x.md"
needs ``write_file``; "trains to Shanghai next Wednesday" needs the clock; "where to park near
the Forbidden City" needs a geocoder first. The plan behind a task leaves those tools implicit,
so no text match finds them — but a harness knows which tools its earlier tasks used, and a few
utility tools serve many tasks. This retriever learns that from a labelled log: each tool's
uses (a slot with several acceptable tools shares one use among them), as ``log1p`` scaled to
0–1 and added to the base's scores rescaled to 0–1. The ranking keeps the base retriever's
first ``head`` places untouched, then alternates: one place by relevance, the next by
relevance + ``weight`` × prior. So a popular tool never pushes out the best matches, and one
that is also relevant comes early. Like every learned component here it is only honest on
queries it never saw (:mod:`harness.evaluation.splits`). ``head`` (3) and ``weight`` (0.5) were chosen
from six settings on LiveMCPBench's development tasks, cross-validated by gold set
(:mod:`experiments.tuning`); "every second place" is a round value, not tuned.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from harness.selection.ranking import Scorer, check_k, min_max, top_ids
from harness.retrieval.records import Query


def usage_prior(ids: Sequence[str], log: Iterable[Query]) -> np.ndarray:
    """Per tool: log1p of its uses in the log, scaled so the most used tool is 1 (all 0 if none)."""
    index = {tid: i for i, tid in enumerate(ids)}
    uses = np.zeros(len(ids))
    for q in log:
        for slot in q.slots:
            known = [index[t] for t in slot if t in index]  # a tool the catalog lost counts for nothing
            for i in known:
                uses[i] += 1 / len(known)
    prior = np.log1p(uses)
    top = prior.max(initial=0.0)
    return prior / top if top > 0 else prior


def interleave(relevant: Sequence[str], boosted: Sequence[str], head: int, every: int) -> list[str]:
    """``relevant``'s first ``head`` ids, then every ``every``-th place from ``boosted``; each id once.

    When one list runs out, the other fills the remaining places.
    """
    out: list[str] = []
    seen: set[str] = set()
    pending = {False: list(reversed(relevant)), True: list(reversed(boosted))}  # pop() takes the best
    while pending[False] or pending[True]:
        place = len(out) + 1
        source = place > head and (place - head) % every == 0
        if not pending[source]:
            source = not source
        tid = pending[source].pop()
        if tid not in seen:
            seen.add(tid)
            out.append(tid)
    return out


class UsagePriorRetriever:
    """A scoring retriever whose lower places are shared with the tools past tasks used most."""

    def __init__(self, log: Sequence[Query], base: Scorer, *, weight: float = 0.5, head: int = 3,
                 every: int = 2) -> None:
        if not log:
            raise ValueError("The usage log is empty: there is nothing to learn from.")
        if head < 0 or every < 1 or weight < 0:
            raise ValueError(f"head ≥ 0, every ≥ 1 and weight ≥ 0 are needed, got {head}, {every} and {weight}.")
        self.base, self.weight, self.head, self.every = base, weight, head, every
        self.name = f"{base.name}+usage"
        self.prior = usage_prior(base.ids, log)

    def rank(self, query: str, k: int | None = None) -> list[str]:
        check_k(k)
        scores = self.base.scores(query)  # once: for hybrid bases this embeds the query
        relevant = top_ids(self.base.ids, scores, None)
        boosted = top_ids(self.base.ids, min_max(scores) + self.weight * self.prior, None)
        return interleave(relevant, boosted, self.head, self.every)[:k]
