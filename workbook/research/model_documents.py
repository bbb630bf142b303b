"""Tool documents written by the real small model for retrieval, each example request checked by the same model.

Introduced in Chapter 8b (``notebooks/08b_embedder_and_query_time.ipynb``).

Why: Chapter 8a's rule-written questions (:mod:`workbook.research.expansion`) gave no call, while the
published Tool-DE result is that rewriting a tool's document — when to use it, what it is not for,
requests in a user's words — gave the largest gain on tool-retrieval benchmarks. So the local model
writes one short document per tool: ``use_when`` and ``not_for`` (a sentence each) and example requests
in a user's words. Why every part is the model's answer forced to begin with a given opening
(:data:`USE_WHEN`, :data:`NOT_FOR`, :data:`OPENINGS`: "I need to", "Can you", ...): asked for a JSON
document at once, the 0.5B model wrote the same request three times, mostly the description copied, and
copied the instructions' own words into ``use_when``; an opening fixes what each sentence is and varies
the examples' form. Everything is decoded greedily, so a rebuild writes the same.

Why a guard: a small model invents capabilities and copies. A candidate is dropped unasked when it
names the tool, repeats an earlier candidate or copies the description (:data:`COPIED_WORDS` words in a
row); the rest are kept only if the same model, shown the tool and its four nearest neighbours in the
catalog (BM25 over the original documents, in an order fixed by the tool's hash), picks this tool
(:meth:`LocalLlamaProvider.choose <workbook.providers.local_llama.LocalLlamaProvider.choose>`); at most
:data:`EXAMPLES` are kept. Every verdict is kept with its reason, and :func:`sample_for_review` prints a fixed sample for
a person to read. Only ``use_when`` and the kept examples are appended to a description, through
:func:`~workbook.research.expansion.expanded`, keyed by the definition hash the document was written
for: a tool whose definition has changed since keeps its original text. ``not_for`` is written and kept
for review but not appended: read by the maintainer, 26 of 30 sampled demo documents' ``not_for`` denied the
tool's own job ("It does not read files from the project workspace" of ``read_file``;
``experiments/data/tool_documents/demo.review.md``), an invented limitation that would put the tool's own
words in a sentence saying it does not do them.
"""
from __future__ import annotations

import json
import os
import random
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Mapping, Protocol, Sequence

DATA = resources.files("experiments").joinpath("data")  # the committed results this reads (written by the experiments)
from harness.core.json_types import JSON, JSONObject
from harness.core.tools import Tool
from harness.mcp.names import MAX_NAME_LENGTH, sanitize
from workbook.providers.local_llama import ToolChooser
from harness.retrieval.bm25 import bm25, name_and_description
from workbook.research.expansion import QuestionCache, Writer, expanded
from harness.retrieval.records import CatalogTool

SYSTEM = "You help people find the right software tool."
#: Each part of a document: what the model is asked after the tool's definition, and how its answer begins.
USE_WHEN = ("In one sentence, say when a user would need this tool.", "Use it when")
NOT_FOR = ("In one sentence, name a related job this tool does not do.", "It does not")
EXAMPLE_INSTRUCTIONS = (
    "Write one short request a user might type to an assistant that this tool would serve. Use the user's own "
    "everyday words, mention a concrete example (a file name, a person, a city, a date...), do not copy the "
    "description and do not name the tool. Write only the request."
)
#: How each candidate example must begin: one candidate per opening, so their form differs.
OPENINGS = ("I need to", "Can you", "How do I", "I want to")
#: The most examples a document keeps (the first that pass the guard, in the order of :data:`OPENINGS`).
EXAMPLES = 3
#: A candidate sharing this many words in a row with the tool's description is a copy, not a user's request.
COPIED_WORDS = 8
#: Why a candidate is dropped before the model is asked (the verdicts' reasons, counted by :func:`guard_counts`).
NAMES_TOOL, REPEATS, COPIES = "it names the tool", "it repeats an earlier example", "it copies the description"
NEIGHBOURS = 4
#: How much of a long description the model reads (a few descriptions are pages long).
DESCRIPTION_CHARS = 800


class DocumentModel(ToolChooser, Protocol):
    """What writing and guarding need of a model: the real one is :class:`~workbook.providers.local_llama.LocalLlamaProvider`."""

    def complete_from(self, system: str, request: str, opening: str) -> str: ...


@dataclass(frozen=True)
class ToolDocument:
    """One tool's retrieval document."""

    use_when: str
    examples: tuple[str, ...]
    not_for: str

    @classmethod
    def from_json(cls, data: JSON) -> "ToolDocument":
        """The document in ``data``; a one-sentence ValueError when it is not of :data:`DOCUMENT_SCHEMA`'s shape."""
        ok = (isinstance(data, dict) and isinstance(data.get("use_when"), str) and isinstance(data.get("not_for"), str)
              and isinstance(data.get("examples"), list) and all(isinstance(e, str) for e in data["examples"]))
        if not ok:
            raise ValueError(f"A tool document needs use_when, examples and not_for as text, got {str(data)[:80]!r}.")
        assert isinstance(data, dict)
        return cls(data["use_when"].strip(), tuple(e.strip() for e in data["examples"]), data["not_for"].strip())

    def to_json(self) -> JSONObject:
        return {"use_when": self.use_when, "examples": list(self.examples), "not_for": self.not_for}

    def lines(self) -> list[str]:
        """The text appended to the tool's description: ``use_when``, then the examples when some are left
        (``not_for`` is not: see the module's docstring)."""
        examples = [f"Example requests: {' / '.join(self.examples)}"] if self.examples else []
        return [self.use_when, *examples]


@dataclass(frozen=True)
class Verdict:
    """The guard's word on one example request: kept, or dropped and why."""

    request: str
    kept: bool
    reason: str
    chosen: str | None = None  # the tool id the model picked (None: it was not asked)
    margin: float | None = None

    def to_json(self) -> JSONObject:
        return {"request": self.request, "kept": self.kept, "reason": self.reason, "chosen": self.chosen,
                "margin": self.margin}

    @classmethod
    def from_json(cls, data: JSONObject) -> "Verdict":
        margin = data.get("margin")
        return cls(str(data["request"]), bool(data["kept"]), str(data["reason"]),
                   None if data.get("chosen") is None else str(data["chosen"]),
                   None if margin is None else float(str(margin)))


@dataclass(frozen=True)
class DocumentRecord:
    """One line of ``experiments/data/tool_documents/<dataset>.jsonl``: a tool's document and how it was made."""

    id: str
    sha256: str  # the definition hash the document was written for
    document: ToolDocument
    guard: tuple[Verdict, ...] = ()
    seconds: float = 0.0
    model_sha256: str = ""
    threads: int = 0

    def kept(self) -> ToolDocument:
        """The document with only the examples the guard kept (at most :data:`EXAMPLES`)."""
        kept = {v.request for v in self.guard if v.kept}
        examples = tuple(e for e in self.document.examples if e in kept)[:EXAMPLES]
        return ToolDocument(self.document.use_when, examples, self.document.not_for)

    def to_json(self) -> JSONObject:
        return {"id": self.id, "sha256": self.sha256, "document": self.document.to_json(),
                "guard": [v.to_json() for v in self.guard], "seconds": round(self.seconds, 2),
                "model_sha256": self.model_sha256, "threads": self.threads}

    def to_json_line(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False)

    @classmethod
    def from_json(cls, data: JSON) -> "DocumentRecord":
        if not isinstance(data, dict) or not isinstance(data.get("id"), str) or not isinstance(data.get("sha256"), str):
            raise ValueError("A tool-document line needs an id and a sha256.")
        guard = data.get("guard") or []
        return cls(data["id"], data["sha256"], ToolDocument.from_json(data.get("document")),
                   tuple(Verdict.from_json(v) for v in guard if isinstance(v, dict)) if isinstance(guard, list) else (),
                   float(data.get("seconds") or 0.0), str(data.get("model_sha256") or ""), int(data.get("threads") or 0))


def read_text(path: str | os.PathLike[str]) -> str:
    """A documents file's text ('' when absent); one that cannot be read is a one-sentence ValueError."""
    p = Path(path)
    if not p.exists():
        return ""
    try:
        return p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"The tool-document file {p.name} cannot be read ({type(e).__name__}).") from None


def read_records(path: str | os.PathLike[str]) -> list[DocumentRecord]:
    """The records of a documents file, in file order (none when absent); a line that does not parse
    (a run cut mid-line) is dropped."""
    return parse_records(read_text(path))


def parse_records(text: str) -> list[DocumentRecord]:
    """The records of a documents file's text; lines that do not parse are dropped."""
    out = []
    for line in text.splitlines():
        try:
            out.append(DocumentRecord.from_json(json.loads(line)))
        except (ValueError, KeyError, TypeError):
            continue  # a cut last line, or a damaged one: that tool is written again on the next run
    return out


def tool_text(t: CatalogTool) -> str:
    """The tool's definition in short, as the writer reads it."""
    params = "; ".join(f"{n}: {d}" if d else n for n, d in t.parameters) or "none"
    server = f"Server: {t.server}\n" if t.server else ""
    return f"{server}Tool: {t.name}\nDescription: {t.description[:DESCRIPTION_CHARS]}\nParameters: {params}\n\n"


def answer(model: DocumentModel, t: CatalogTool, instructions: str, opening: str) -> str:
    """The model's one-line answer about ``t``, beginning with ``opening``, its spacing tidied."""
    return " ".join(model.complete_from(SYSTEM, tool_text(t) + instructions, opening).split())


def write_document(t: CatalogTool, model: DocumentModel) -> ToolDocument:
    """The model's document for ``t``: ``use_when``, ``not_for`` and one candidate example per opening (the
    tool's definition comes first in every request, so the prompt cache reads it once)."""
    return ToolDocument(answer(model, t, *USE_WHEN), tuple(answer(model, t, EXAMPLE_INSTRUCTIONS, o) for o in OPENINGS),
                        answer(model, t, *NOT_FOR))


def neighbours(tools: Sequence[CatalogTool], k: int = NEIGHBOURS) -> dict[str, list[CatalogTool]]:
    """Each tool's ``k`` nearest tools by BM25 over the original documents: its name and description as the
    query, itself and tools with the very same definition left out (the model could not tell them apart)."""
    index = bm25(tools)
    by_id = {t.id: t for t in tools}
    out = {}
    for t in tools:
        ranked = (by_id[i] for i in index.rank(name_and_description(t)))
        out[t.id] = [n for n, _ in zip((n for n in ranked if n.definition_hash() != t.definition_hash()), range(k))]
    return out


def shown_tools(group: Sequence[CatalogTool]) -> list[Tool]:
    """The tools as the model is shown them: valid, distinct names (sanitised; numbered if two collide)."""
    names = [sanitize(t.name)[:MAX_NAME_LENGTH] or "tool" for t in group]
    if len(set(names)) < len(names):
        names = [f"{n[:MAX_NAME_LENGTH - 4]}_{i}" for i, n in enumerate(names)]
    return [t.to_tool(n) for t, n in zip(group, names)]


def names_tool(request: str, t: CatalogTool) -> bool:
    """Whether the request spells out the tool's identifier (an identifier, not a plain word like ``search``)."""
    return len(t.name) >= 4 and bool(re.search(r"[^a-z]", t.name)) and t.name.lower() in request.lower()


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def copies(request: str, description: str, run: int = COPIED_WORDS) -> bool:
    """Whether the request shares ``run`` words in a row with the description."""
    said = _words(description)
    runs = {tuple(said[i:i + run]) for i in range(len(said) - run + 1)}
    asked = _words(request)
    return any(tuple(asked[i:i + run]) in runs for i in range(len(asked) - run + 1))


def repeats(request: str, earlier: Sequence[str]) -> bool:
    """Whether the request has nearly the same words as an earlier one (Jaccard at least 0.8 once its opening's
    words are set aside)."""
    def content(text: str) -> set[str]:
        words = _words(text)
        opening = next((_words(o) for o in OPENINGS if words[:len(_words(o))] == _words(o)), [])
        return set(words[len(opening):])
    mine = content(request)
    return any(len(mine & content(e)) >= 0.8 * len(mine | content(e)) for e in earlier)


def dropped_unasked(request: str, t: CatalogTool, earlier: Sequence[str]) -> str:
    """Why a candidate is dropped without asking the model ('' when it is asked)."""
    if names_tool(request, t):
        return NAMES_TOOL
    if repeats(request, earlier):
        return REPEATS
    if copies(request, t.description):
        return COPIES
    return ""


def guard(t: CatalogTool, document: ToolDocument, near: Sequence[CatalogTool], model: DocumentModel) -> list[Verdict]:
    """A verdict per candidate example: dropped unasked (:func:`dropped_unasked`), else kept only if the model,
    shown ``t`` among ``near``, picks ``t`` for it."""
    group = [t, *near]
    random.Random(t.definition_hash()).shuffle(group)  # where the tool sits is fixed, not always first
    shown = shown_tools(group)
    by_name = {s.name: g for s, g in zip(shown, group)}
    verdicts: list[Verdict] = []
    for i, request in enumerate(document.examples):
        why = dropped_unasked(request, t, document.examples[:i])
        if why:
            verdicts.append(Verdict(request, False, why))
            continue
        choice = model.choose(request, shown)
        chosen = by_name[choice.tool]
        if chosen.id == t.id:
            verdicts.append(Verdict(request, True, f"the model chose this tool among {len(group)}", t.id, choice.margin))
        else:
            verdicts.append(Verdict(request, False, f"the model chose {chosen.id} instead", chosen.id, choice.margin))
    return verdicts


def documents_writer(records: Mapping[str, DocumentRecord]) -> Writer:
    """A :data:`~workbook.research.expansion.Writer` giving a tool its guarded document's lines, if one was
    written for its current definition (nothing otherwise, so the tool keeps its text)."""
    def document_lines(t: CatalogTool) -> list[str]:
        r = records.get(t.id)
        return r.kept().lines() if r is not None and r.sha256 == t.definition_hash() else []
    return document_lines


def document_block(lines: Sequence[str]) -> str:
    """How a document's lines are appended to a description."""
    return "\n".join(lines)


def with_documents(tools: Sequence[CatalogTool], records: Mapping[str, DocumentRecord]) -> list[CatalogTool]:
    """The tools with their documents appended (same ids); tools without a current document unchanged."""
    return expanded(tools, documents_writer(records), QuestionCache(), render=document_block)


#: Where the committed documents live in the package's data: one ``<dataset>.jsonl`` per catalog.
FOLDER = "tool_documents"


def committed_records() -> dict[str, DocumentRecord]:
    """Every committed document, of every catalog, by the definition hash it was written for."""
    folder = DATA.joinpath(FOLDER)
    if not folder.is_dir():
        return {}
    files = sorted((f for f in folder.iterdir() if f.name.endswith(".jsonl")), key=lambda f: f.name)
    return {r.sha256: r for f in files for r in parse_records(f.read_text("utf-8"))}


def with_committed_documents(tools: Sequence[CatalogTool]) -> list[CatalogTool]:
    """The tools with the committed document of their current definition appended, whatever catalog
    they come from (a tool with none keeps its text): what ``hybrid-rrf+documents`` searches."""
    by_hash = committed_records()
    return with_documents(tools, {t.id: by_hash[t.definition_hash()] for t in tools if t.definition_hash() in by_hash})


def guard_counts(records: Sequence[DocumentRecord]) -> dict[str, int]:
    """How many candidate examples the guard kept and dropped, and the dropped ones by reason's kind."""
    verdicts = [v for r in records for v in r.guard]
    dropped = [v for v in verdicts if not v.kept]
    return {"kept": len(verdicts) - len(dropped), "dropped": len(dropped),
            "dropped_for_naming_the_tool": sum(v.reason == NAMES_TOOL for v in dropped),
            "dropped_as_a_repeat": sum(v.reason == REPEATS for v in dropped),
            "dropped_as_a_copy": sum(v.reason == COPIES for v in dropped),
            "dropped_for_a_neighbour": sum(v.chosen is not None for v in dropped)}


def review_sample(records: Sequence[DocumentRecord], tools: Sequence[CatalogTool], n: int = 30,
                  seed: int = 0) -> list[tuple[DocumentRecord, CatalogTool]]:
    """``n`` documents of tools in ``tools`` drawn with ``seed``, in file order, each with its tool: the
    sample a person reviews (``experiments/data/tool_documents/demo.review.md`` read this draw)."""
    by_id = {t.id: t for t in tools}
    present = [r for r in records if r.id in by_id]
    chosen = sorted(random.Random(seed).sample(range(len(present)), min(n, len(present))))
    return [(present[i], by_id[present[i].id]) for i in chosen]


def sample_for_review(records: Sequence[DocumentRecord], tools: Sequence[CatalogTool], n: int = 30,
                      seed: int = 0) -> str:
    """A readable sample of ``n`` documents (:func:`review_sample`) with each tool's definition in short and
    the guard's verdicts, for a person to check that no example asks for more than the tool can do."""
    blocks = []
    for k, (r, t) in enumerate(review_sample(records, tools, n, seed), 1):
        params = ", ".join(name for name, _ in t.parameters) or "none"
        verdicts = "\n".join(f"    [{'kept' if v.kept else 'DROPPED'}] {v.request}  ({v.reason})" for v in r.guard)
        blocks.append(f"{k}. {t.id}\n  Description: {t.description[:300]}\n  Parameters: {params}\n"
                      f"  {r.document.use_when}\n  {r.document.not_for}\n  Examples:\n{verdicts}")
    return "\n\n".join(blocks)
