"""Grader for exercise 1, degraded descriptions (``exercises/01_degraded_descriptions.ipynb``).

The exercise follows Chapter 2 (the BM25 catalog) and reuses Chapter 1's sweep: rename every demo
tool to ``tool_1``, ``tool_2``, … with vague text, measure what that costs BM25 and the offline
stand-in, then restore one field at a time to find which one matters most — to each of them.

The grader measures the learner's own variants with the harness (``ToolCatalog`` for recall,
:func:`workbook.evaluation.cliff.selection_accuracy_sweep` for accuracy), so the answer it expects is the one
the learner's table shows. A variant is matched to the original tools by position, which is why
``degrade`` must keep the order: ``tool_3`` stands for the third demo tool.

An answer is judged by the chapters' rule: it is wrong only when another field brings the number back
measurably further — a paired 95 % interval over the same queries that lies above zero
(:func:`harness.core.rates.paired_difference_interval`) — and the message says so without naming that field.
"""
from __future__ import annotations

import dataclasses
import statistics
from typing import Callable, Sequence

from harness.selection.catalog import ToolCatalog
from workbook.evaluation.cliff import provider_chooser, selection_accuracy_sweep
from workbook.demo import CONFUSABLE_PAIRS, LabelledQuery, demo_tools, load_demo_queries
from harness.core.rates import paired_difference_interval
from harness.evaluation.metrics import recall_at_k
from workbook.grading.learner import Passed, call
from workbook.providers.offline import OfflineModel
from harness.selection.ranking import DEFAULT_K
from harness.core.text import content_words
from harness.core.tools import Tool
from harness.core.json_types import JSON, JSONObject
from harness.providers.base import Provider

FIELDS = ("name", "description", "parameter names", "parameter descriptions")
#: Recall is measured over the tools a turn shows (the package's one tools-per-turn default); accuracy with
#: N tools shown (the gold tool among them).
K = DEFAULT_K
N_SHOWN = 20


def accuracy_queries(queries: Sequence[LabelledQuery]) -> list[LabelledQuery]:
    """Every other literal query: the sweep subset (the stand-in misses paraphrases for its own reasons, Chapter 1)."""
    return [q for q in queries if q.kind == "literal"][::2]


def _properties(t: Tool) -> JSONObject:
    return t.input_schema.get("properties", {}) or {}


def field_value(t: Tool, field: str) -> JSON:
    """What one field of a tool is, in a form that compares by value."""
    if field == "name":
        return t.name
    if field == "description":
        return t.description
    if field == "parameter names":
        return tuple(_properties(t)), tuple(t.required)
    if field == "parameter descriptions":
        return tuple(spec.get("description") if isinstance(spec, dict) else None for spec in _properties(t).values())
    raise ValueError(f"Unknown field {field!r}; the fields are {', '.join(FIELDS)}.")


def renaming(original: Sequence[Tool], variant: Sequence[Tool]) -> dict[str, str]:
    """Original name → the variant's name for the tool in the same position."""
    return {o.name: v.name for o, v in zip(original, variant)}


def relabel(queries: Sequence[LabelledQuery], original: Sequence[Tool], variant: Sequence[Tool]) -> list[LabelledQuery]:
    """The queries with their gold tools renamed as in ``variant``."""
    names = renaming(original, variant)
    return [dataclasses.replace(q, gold=tuple(names[g] for g in q.gold)) for q in queries]


def recall_values(original: Sequence[Tool], variant: Sequence[Tool], queries: Sequence[LabelledQuery], k: int = K) -> list[float]:
    """Per query, recall@k of a ToolCatalog over ``variant`` (gold renamed), in the order of ``queries``."""
    catalog = ToolCatalog(variant)
    return [recall_at_k(catalog.rank(q.query, k), [(g,) for g in q.gold], k) for q in relabel(queries, original, variant)]


def bm25_recall(original: Sequence[Tool], variant: Sequence[Tool], queries: Sequence[LabelledQuery], k: int = K) -> float:
    """Recall@k of a ToolCatalog over ``variant`` on the labelled queries (gold renamed)."""
    return statistics.fmean(recall_values(original, variant, queries, k))


async def accuracy_values(original: Sequence[Tool], variant: Sequence[Tool], queries: Sequence[LabelledQuery],
                          provider: Provider | None = None, n: int = N_SHOWN, seeds: Sequence[int] = (0,)) -> list[float]:
    """Per trial (query and seed, in that order), 1.0 when the model picks the gold tool among ``n`` (Chapter 1's sweep)."""
    names = renaming(original, variant)
    pairs = [(names[a], names[b]) for a, b in CONFUSABLE_PAIRS]
    trials = await selection_accuracy_sweep(provider_chooser(provider or OfflineModel()), list(variant),
                                            relabel(queries, original, variant), ns=[n], seeds=seeds,
                                            confusable_pairs=pairs)
    return [float(t.correct_tool) for t in sorted(trials, key=lambda t: (t.qid, t.seed))]


async def selection_accuracy(original: Sequence[Tool], variant: Sequence[Tool], queries: Sequence[LabelledQuery],
                             provider: Provider | None = None, n: int = N_SHOWN, seeds: Sequence[int] = (0,)) -> float:
    """Chapter 1's sweep at one N: how often the model picks the gold tool among ``n`` (offline stand-in by default)."""
    return statistics.fmean(await accuracy_values(original, variant, queries, provider, n, seeds))


async def measure_values(original: Sequence[Tool], variants: dict[str, Sequence[Tool]],
                         queries: Sequence[LabelledQuery]) -> dict[str, tuple[list[float], list[float]]]:
    """Per variant, (BM25 recall@K per query, stand-in accuracy at N_SHOWN per query of :func:`accuracy_queries`)."""
    sweep_queries = accuracy_queries(queries)
    return {label: (recall_values(original, v, queries), await accuracy_values(original, v, sweep_queries))
            for label, v in variants.items()}


async def measure(original: Sequence[Tool], variants: dict[str, Sequence[Tool]],
                  queries: Sequence[LabelledQuery]) -> dict[str, tuple[float, float]]:
    """(BM25 recall@K on every query, stand-in accuracy at N_SHOWN on :func:`accuracy_queries`) per variant."""
    return {label: (statistics.fmean(r), statistics.fmean(a))
            for label, (r, a) in (await measure_values(original, variants, queries)).items()}


# --- checking the learner's variants ---------------------------------------------------------

def _shared(text: str, original: Tool) -> list[str]:
    """Words of ``text`` (numbers aside) that also occur in the original tool's own text."""
    return sorted(w for w in content_words(text) & content_words(original.search_text) if not w.isdigit())


def check_degraded(original: Sequence[Tool], degraded: object) -> None:
    """Every tool renamed ``tool_<position>`` and nothing left that gives it away."""
    if not isinstance(degraded, (list, tuple)) or len(degraded) != len(original):
        got = f"{len(degraded)} items" if isinstance(degraded, (list, tuple)) else type(degraded).__name__
        raise AssertionError(f"degrade(tools) should return one Tool per tool ({len(original)}), in order; got {got}.")
    for i, (o, d) in enumerate(zip(original, degraded), 1):
        want = f"tool_{i}"
        if not isinstance(d, Tool):
            raise AssertionError(f"degrade(tools)[{i - 1}] is a {type(d).__name__}, not a Tool.")
        if d.name == o.name:
            raise AssertionError(f"{want} still has its original name {o.name!r}.")
        if d.name != want:
            raise AssertionError(f"Tool {i} ({o.name}) is called {d.name!r}; expected {want!r}.")
        if words := _shared(d.description, o):
            raise AssertionError(f"{want}'s description still gives {o.name} away: it says {', '.join(map(repr, words[:4]))}.")
        o_props, d_props = list(_properties(o).items()), list(_properties(d).items())
        if len(o_props) != len(d_props):
            raise AssertionError(f"{want} has {len(d_props)} parameters; {o.name} has {len(o_props)}: rename them, keep them all.")
        for (on, ospec), (dn, dspec) in zip(o_props, d_props):
            if dn == on:
                raise AssertionError(f"{want}'s parameter {on!r} still has its original name.")
            if words := _shared(dn, o):
                raise AssertionError(f"{want}'s parameter {dn!r} (was {on!r}) still says {', '.join(map(repr, words))}.")
            if dspec.get("type") != ospec.get("type"):
                raise AssertionError(f"{want}'s parameter {dn!r} is of type {dspec.get('type')!r}; {on!r} was {ospec.get('type')!r}.")
            if words := _shared(str(dspec.get("description", "")), o):
                raise AssertionError(f"{want}'s parameter {dn!r} has a telling description: it says {', '.join(map(repr, words[:4]))}.")
        required = [j for j, (n, _) in enumerate(o_props) if n in o.required]
        if required != [j for j, (n, _) in enumerate(d_props) if n in d.required]:
            raise AssertionError(f"{want} requires other parameters than {o.name}: keep 'required' in step with the new names.")


def check_restored(original: Sequence[Tool], degraded: Sequence[Tool], restore: Callable[..., object]) -> dict[str, list[Tool]]:
    """``restore`` puts back exactly one field and leaves the others degraded; an unknown field is a ValueError."""
    out = {}
    for field in FIELDS:
        restored = call("restore", restore, list(original), list(degraded), field)
        if not isinstance(restored, (list, tuple)) or len(restored) != len(original):
            raise AssertionError(f"restore(original, degraded, {field!r}) should return one Tool per tool ({len(original)}).")
        for i, (o, d, r) in enumerate(zip(original, degraded, restored), 1):
            if not isinstance(r, Tool):
                raise AssertionError(f"restore(original, degraded, {field!r})[{i - 1}] is a {type(r).__name__}, not a Tool.")
            if field_value(r, field) != field_value(o, field):
                raise AssertionError(f"restore(original, degraded, {field!r}) did not give tool_{i} back its {field}: "
                                     f"it has {field_value(r, field)!r}; {o.name} has {field_value(o, field)!r}.")
            for other in FIELDS:
                if other != field and field_value(r, other) != field_value(d, other):
                    raise AssertionError(f"restore(original, degraded, {field!r}) also changed the {other} of tool_{i} "
                                         f"({o.name}): restore one field at a time.")
        out[field] = list(restored)
    try:
        restore(list(original), list(degraded), "colour")
    except ValueError:
        pass
    except Exception as exc:
        raise AssertionError(f"restore(original, degraded, 'colour') raised {type(exc).__name__}; "
                             "an unknown field should raise ValueError with one sentence naming it.") from exc
    else:
        raise AssertionError("restore(original, degraded, 'colour') returned a result; an unknown field should raise ValueError.")
    return out


def _check_answer(answer: object, values: dict[str, list[float]], reader: str, metric: str, constant: str) -> str:
    """The answer, unless another field brings ``metric`` back measurably further (a paired interval above zero)."""
    if answer not in FIELDS:
        raise AssertionError(f"{constant} should be one of {', '.join(map(repr, FIELDS))}; got {answer!r}.")
    mine = values[str(answer)]
    for field in FIELDS:
        low, _ = paired_difference_interval(values[field], mine)
        if field != answer and low > 0:
            raise AssertionError(f"You say {answer!r} matters most to {reader}, but restoring another field brings {metric} "
                                 f"back measurably further than {answer!r} does ({statistics.fmean(mine):.2f}; a paired 95 % "
                                 "interval over the same queries, wholly above zero): read the table again.")
    return str(answer)


def _tied(answer: str, values: dict[str, list[float]]) -> str:
    """The fields not measurably behind or ahead of ``answer``: what the verdict must say it cannot tell apart."""
    level = [f for f in FIELDS if f != answer and paired_difference_interval(values[answer], values[f])[0] <= 0]
    return f" (not measurably ahead of the {' or the '.join(level)})" if level else " (measurably ahead of every other field)"


async def check(degrade: Callable[..., object], restore: Callable[..., object], most_important_for_bm25: object,
                most_important_for_model: object) -> Passed:
    """Grade exercise 1: the degraded tools, each single-field restore, and which field matters most to whom."""
    original = demo_tools()
    queries = load_demo_queries()
    degraded = call("degrade", degrade, list(original))
    check_degraded(original, degraded)
    restored = check_restored(original, degraded, restore)
    values = await measure_values(original, {"original": original, "degraded": degraded, **restored}, queries)
    (r0, a0), (r1, a1) = ((statistics.fmean(x) for x in values[v]) for v in ("original", "degraded"))
    if r1 > r0 - 0.2:
        raise AssertionError(f"Degrading barely moved BM25 recall@{K} ({r0:.2f} → {r1:.2f}): the tools still give themselves away.")
    recall = {f: values[f][0] for f in FIELDS}
    accuracy = {f: values[f][1] for f in FIELDS}
    bm25 = _check_answer(most_important_for_bm25, recall, "BM25", f"recall@{K}", "MOST_IMPORTANT_FOR_BM25")
    model = _check_answer(most_important_for_model, accuracy, "the offline stand-in", f"accuracy among {N_SHOWN} tools",
                          "MOST_IMPORTANT_FOR_MODEL")
    return Passed(f"✓ degrading drops BM25 recall@{K} from {r0:.2f} to {r1:.2f} and the stand-in's accuracy among "
                  f"{N_SHOWN} tools from {a0:.2f} to {a1:.2f}; restoring the {bm25} brings recall back to "
                  f"{statistics.fmean(recall[bm25]):.2f}{_tied(bm25, recall)}, restoring the {model} brings accuracy back "
                  f"to {statistics.fmean(accuracy[model]):.2f}{_tied(model, accuracy)}.")
