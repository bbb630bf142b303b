"""Document expansion at index time: the questions a tool answers, written once per tool.

Introduced in Chapter 8a (``notebooks/08a_zero_shot_ideas.ipynb``).

Users ask ("can you save this as a PDF?"); tools describe ("Convert a document to PDF format").
Doc2query-style expansion (and TOOL-REX's expanded tool documents, 2025) closes that gap on the
*document* side: each tool gets a few questions a user might ask for it, appended to its
description before indexing, so both BM25 and the embedding see them. It costs nothing per query.

Here the questions are written by rules from the schema — the name in words under the action
words users say for its verb (:data:`harness.retrieval.terms.ACTION_SYNONYMS` read backwards:
a ``write_*`` tool is what "save" and "store" ask for), its required parameters ("… by city"),
and its enum values — because the real small model writes about one tool every few seconds on
these cores, hours for the catalogs here. Any writer (a model's, too) plugs in as a function
from a tool to its questions; :class:`QuestionCache` keeps them by writer and definition hash,
so a tool is written for once and again only when its definition changes. A writer whose text is
more than a list of questions (Chapter 8b's model-written documents) passes its own ``render``.
"""
from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

from harness.retrieval.records import CatalogTool
from harness.retrieval.terms import ACTION_SYNONYMS
from harness.core.text import first_sentence, split_identifier, stem

Writer = Callable[[CatalogTool], list[str]]

#: A tool's verb (stemmed) → the everyday words users ask it with: ACTION_SYNONYMS read backwards.
def _asked_with() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for word, alternatives in ACTION_SYNONYMS.items():
        for alt in alternatives.split():
            asks = out.setdefault(stem(alt), [])
            if word not in asks and stem(word) != stem(alt):
                asks.append(word)
    return out


ASKED_WITH = _asked_with()


def name_words(t: CatalogTool) -> list[str]:
    """The tool's name in words, without a leading copy of its server's name (``mcp_howtocook_…``)."""
    words = split_identifier(t.name)
    server = set(split_identifier(t.server)) | {"mcp"}
    start = 0
    while start < len(words) - 2 and words[start] in server:  # keep at least two words (``fetch_json``)
        start += 1
    return words[start:]


def rule_questions(t: CatalogTool, limit: int = 4) -> list[str]:
    """Up to ``limit`` questions a user might ask for ``t``, written from its name and schema alone."""
    words = name_words(t)
    verb, thing = words[0], " ".join(words[1:]) or first_sentence(t.description, 80).lower()
    out = [f"How do I {' '.join(words)}?"]
    out += [f"Can you {alt} {thing}?".replace(" ?", "?") for alt in ASKED_WITH.get(stem(verb), [])[:2]]
    props = t.input_schema.get("properties") or {}
    required = [n for n in t.input_schema.get("required") or [] if n in props]
    if required:
        out.append(f"{' '.join(words).capitalize()} by {' and '.join(' '.join(split_identifier(n)) for n in required)}.")
    for name, spec in props.items():
        if isinstance(spec, dict) and isinstance(spec.get("enum"), list) and spec["enum"]:
            values = ", ".join(str(v) for v in spec["enum"][:6])
            out.append(f"{' '.join(words).capitalize()} with {' '.join(split_identifier(name))} {values}.")
            break
    return list(dict.fromkeys(out))[:limit]


class QuestionCache:
    """Questions per (writer, definition hash); kept in memory and, given a ``path``, in one JSON file."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.written = 0  # how many tools a writer was actually called for
        self._data: dict[str, list[str]] = {}
        if self.path and self.path.is_file():
            try:
                self._data = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError):  # a damaged cache is rebuilt, not fatal
                self._data = {}

    def questions(self, t: CatalogTool, writer: Writer) -> list[str]:
        key = f"{writer.__module__}.{writer.__qualname__}|{t.definition_hash()}"
        if key not in self._data:
            self._data[key] = list(writer(t))
            self.written += 1
        return self._data[key]

    def save(self) -> None:
        if self.path:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self._data, ensure_ascii=False, indent=0), encoding="utf-8")
            os.replace(tmp, self.path)


def questions_text(questions: Sequence[str]) -> str:
    """How questions are appended to a description."""
    return f"Questions it answers: {' '.join(questions)}"


def expanded(tools: Sequence[CatalogTool], writer: Writer = rule_questions,
             cache: QuestionCache | None = None, render: Callable[[Sequence[str]], str] = questions_text
             ) -> list[CatalogTool]:
    """The same tools (same ids) with what ``writer`` wrote, rendered, appended to each description;
    a tool it wrote nothing for is returned as it was."""
    cache = cache or QuestionCache()
    out = []
    for t in tools:
        questions = cache.questions(t, writer)
        out.append(replace(t, description=f"{t.description}\n{render(questions)}".strip()) if questions else t)
    cache.save()
    return out
