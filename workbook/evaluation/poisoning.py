"""How good the poisoning detector's flags are: recall on poisoned descriptions, false alarms on benign ones.

Introduced in Chapter 5b (``notebooks/05b_mcp_operations.ipynb``). The detector is the library's
(:mod:`harness.mcp.suspicious`); the corpora it is measured on are the workbook's data:
``workbook/data/poisoning_corpus.jsonl`` (poisoned descriptions with their attack class, source and split, a
held-out part the rules were not written against), ``workbook/data/poisoning_fresh.jsonl`` (poisoned and
tricky benign rewordings written after the rules were frozen, each naming that commit) and
``workbook/data/poisoning_heldout_r4.jsonl`` (rewordings by kind of harm, some hiding the instruction in a
schema field, written before the rules of issue 40 were: :func:`heldout_rewordings`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Iterable

from harness.core.json_types import JSON, JSONObject
from harness.core.rates import Rate
from harness.mcp.suspicious import flag_definition, flag_suspicious

CORPUS_FILE = resources.files("workbook").joinpath("data").joinpath("poisoning_corpus.jsonl")
FRESH_FILE = resources.files("workbook").joinpath("data").joinpath("poisoning_fresh.jsonl")
HELDOUT_R4_FILE = resources.files("workbook").joinpath("data").joinpath("poisoning_heldout_r4.jsonl")


def poisoning_corpus() -> list[JSONObject]:
    """The poisoned descriptions Chapter 5 measures recall on: id, round, split, attack_class, source, text.

    Rows were written in rounds. A round's ``heldout`` rows were written before that round's rules
    and run once; rows that were read afterwards and used to widen the rules are ``dev``. Round 1
    wrote the published attacks' phrasings; rounds 2–6 wrote fresh paraphrases of the same classes (round 5
    was held out until the intent rules were written from it, round 6 was written to widen them).
    """
    lines = CORPUS_FILE.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def fresh_rewordings() -> list[JSONObject]:
    """Rewordings written after the rules were frozen: id, poisoned, intent, written_after (the frozen
    commit), text. They are scored as they stand; no rule was changed after they were first run."""
    lines = FRESH_FILE.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def heldout_rewordings() -> list[JSONObject]:
    """Rewordings written for issue 40 before its rules were: id, poisoned, harm, written, and a ``text`` or a
    ``description`` with an ``input_schema`` (the instruction in a schema field other than a description).

    Scored once, after the rules were written: recall 33/43, false alarms 2/43. The two false alarms were
    then read and fixed — a switch's own condition ("set force=true to delete it even if it is not empty")
    taken for "every call", and a transcript's "Assistant:" label taken for text addressing the model — so
    the benign half is no longer held out; the poisoned half is (its ten misses were not used).
    """
    lines = HELDOUT_R4_FILE.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@dataclass(frozen=True)
class RewordingScore:
    """The detector on a set of rewordings: recall on the poisoned ones (by kind of harm), false alarms on the rest."""

    recall: Rate
    false_alarms: Rate
    recall_by_harm: dict[str, Rate]
    missed: list[str]
    benign_flagged: list[str]

    def __str__(self) -> str:
        lines = [f"recall: {self.recall}", *(f"  {harm}: {rate}" for harm, rate in self.recall_by_harm.items()),
                 f"tricky benign rewordings flagged: {self.false_alarms}"]
        return "\n".join(lines)


def score_rewordings(rows: Iterable[JSONObject]) -> RewordingScore:
    """Flag each row as a tool is flagged — its text, or its description and every string of its input schema."""
    rows = list(rows)
    empty: JSONObject = {"type": "object", "properties": {}}
    hit = {str(r["id"]): bool(flag_definition(str(r.get("text") or r.get("description", "")), r.get("input_schema", empty)))
           for r in rows}
    poisoned = [r for r in rows if r["poisoned"]]
    benign = [r for r in rows if not r["poisoned"]]
    harms = dict.fromkeys(str(r["harm"]) for r in poisoned)
    return RewordingScore(
        recall=Rate(sum(hit[str(r["id"])] for r in poisoned), len(poisoned)),
        false_alarms=Rate(sum(hit[str(r["id"])] for r in benign), len(benign)),
        recall_by_harm={h: Rate(sum(hit[str(r["id"])] for r in poisoned if r["harm"] == h), sum(r["harm"] == h for r in poisoned))
                        for h in harms},
        missed=[str(r["id"]) for r in poisoned if not hit[str(r["id"])]],
        benign_flagged=[str(r["id"]) for r in benign if hit[str(r["id"])]],
    )


#: What a round's rows are, for the report a learner reads (round 1 wrote the published phrasings).
_ROWS_OF_ROUND = {1: "the published attacks' phrasings"}


@dataclass(frozen=True)
class DetectorReport:
    """Recall on the poisoning corpus (dev and held-out apart) and on the fresh rewordings, false alarms on
    the fresh tricky benign rewordings and on real tools."""

    recall_dev: Rate
    recall_heldout: Rate
    heldout_by_round: dict[int, Rate]  # the held-out part by the round that wrote it
    heldout_by_class: dict[str, Rate]
    false_positives: Rate | None  # None when no real definitions were given
    missed: list[str]  # corpus ids not flagged
    flagged_real: list[str]  # ids of real definitions that were flagged
    fresh_recall: Rate  # poisoned rewordings written after the freeze that were flagged
    fresh_by_intent: dict[str, Rate]
    fresh_benign_flagged: Rate  # tricky benign rewordings that were flagged (false alarms)
    fresh_missed: list[str]
    fresh_benign_hits: list[str]

    def __str__(self) -> str:
        lines = [f"recall, dev part (rules written against it): {self.recall_dev}",
                 f"recall, held-out part (not used to write rules): {self.recall_heldout}"]
        lines += [f"  held-out rows in {_ROWS_OF_ROUND.get(n, f'paraphrase set {n - 1}')}: {rate}"
                  for n, rate in self.heldout_by_round.items()]
        lines += [f"  held-out {kind} rows: {rate}" for kind, rate in self.heldout_by_class.items()]
        lines.append(f"recall on rewordings written after the rules were frozen: {self.fresh_recall}")
        lines += [f"  {kind} rewordings: {rate}" for kind, rate in self.fresh_by_intent.items()]
        lines.append(f"tricky benign rewordings flagged: {self.fresh_benign_flagged}")
        lines.append(f"false positives on real tool definitions: {self.false_positives}" if self.false_positives
                     else "false positives: no real tool definitions given (public data absent), not measured")
        return "\n".join(lines)


def measure_detector(real: Iterable[tuple[str, str, JSON]] = ()) -> DetectorReport:
    """Measure the detector: recall on :func:`poisoning_corpus`, false positives on ``real``
    definitions given as (id, description, input_schema) — tools presumed clean."""
    corpus = poisoning_corpus()
    caught = {row["id"]: bool(flag_suspicious(row["text"])) for row in corpus}
    split = {s: [row["id"] for row in corpus if row["split"] == s] for s in ("dev", "heldout")}
    flagged, n = [], 0
    for tool_id, description, schema in real:
        n += 1
        if flag_definition(description, schema):
            flagged.append(tool_id)
    held = [row for row in corpus if row["split"] == "heldout"]
    fresh = fresh_rewordings()
    fresh_hit = {row["id"]: bool(flag_suspicious(row["text"])) for row in fresh}
    poisoned = [row for row in fresh if row["poisoned"]]
    benign = [row for row in fresh if not row["poisoned"]]

    def rate(rows: list[JSONObject]) -> Rate:
        return Rate(sum(caught[row["id"]] for row in rows), len(rows))

    return DetectorReport(
        recall_dev=Rate(sum(caught[i] for i in split["dev"]), len(split["dev"])),
        recall_heldout=Rate(sum(caught[i] for i in split["heldout"]), len(split["heldout"])),
        heldout_by_round={n: rate([r for r in held if r["round"] == n]) for n in sorted({r["round"] for r in held})},
        heldout_by_class={k: rate([r for r in held if r["attack_class"] == k]) for k in sorted({r["attack_class"] for r in held})},
        false_positives=Rate(len(flagged), n) if n else None,
        missed=[i for i, ok in caught.items() if not ok],
        flagged_real=flagged,
        fresh_recall=Rate(sum(fresh_hit[r["id"]] for r in poisoned), len(poisoned)),
        fresh_by_intent={k: Rate(sum(fresh_hit[r["id"]] for r in poisoned if r["intent"] == k),
                                 sum(r["intent"] == k for r in poisoned)) for k in dict.fromkeys(r["intent"] for r in poisoned)},
        fresh_benign_flagged=Rate(sum(fresh_hit[r["id"]] for r in benign), len(benign)),
        fresh_missed=[r["id"] for r in poisoned if not fresh_hit[r["id"]]],
        fresh_benign_hits=[r["id"] for r in benign if fresh_hit[r["id"]]],
    )
