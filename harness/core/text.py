"""Tokenising tool text and queries: identifiers split, whole names kept, stop words dropped.

Introduced in Chapter 2, where it feeds BM25; the offline stand-in model and Chapter 6's
retrievers read text through it too, so every component agrees on what a "term" is.

Tool names are identifiers (``search_code``, ``listPullRequests``, ``git-log``). A query says
"search code"; a model that read the name says "search_code". Emitting the parts *and* the
whole name lets both match (users of Codex asked for exactly this).
"""
from __future__ import annotations

import re

from harness.core.memo import bounded_by_bytes

STOP_WORDS = frozenset(
    """a an the and or but if then else of to in on at by for with from into onto about as is are was
    were be been being am do does did doing have has had having i me my we our you your he she it its
    they them their this that these those there here what which who whom whose when where why how
    can could would should will shall may might must please just also so than too very all any some
    no not only own same such each few more most other both out up down over under again further once
    let lets us want need like get got make made one s t hi hello hey thanks thank ok okay now next
    anything something everything nothing""".split()
)

_WORD = re.compile(r"[^\W_]+(?:[_\-./][^\W_]+)*|\w+", re.UNICODE)
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def first_sentence(text: str, limit: int | None = None) -> str:
    """``text`` up to its first sentence end (``.``, ``!`` or ``?`` before a space), at most ``limit``
    characters: what a tool is for, in the one rule the listings and the server documents share."""
    return _SENTENCE_END.split(text.strip(), 1)[0][:limit]


def split_identifier(name: str) -> list[str]:
    """``listPullRequests`` → list, pull, requests; ``git_log`` → git, log; ``v1/nutrition`` → v1, nutrition."""
    return list(_split_identifier(name))


@bounded_by_bytes(4_000_000)
def _split_identifier(name: str) -> tuple[str, ...]:
    parts: list[str] = []
    for chunk in re.split(r"[_\-./\s]+", name):
        if not chunk:
            continue
        pieces = _CAMEL.findall(chunk) if chunk.isascii() else [chunk]
        parts.extend(p.lower() for p in (pieces or [chunk]))
    return tuple(parts)


def stem(word: str) -> str:
    """A deliberately light stemmer: plural -s / -es only, so 'files' meets 'file'.

    Heavier stemmers (Porter) merge words a tool catalog needs apart ('organization' and
    'organ'); plurals are the mismatch that costs most and merges least.
    """
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def tokenize(text: str, *, keep_stop_words: bool = False) -> list[str]:
    """Lower-cased terms of ``text``; identifiers give their parts and themselves."""
    return list(_tokenize(text or "", keep_stop_words))


# Cached: every fresh catalog re-tokenises the same tool texts, and sweeps the same queries; bounded by bytes,
# since a proxy reads long queries (harness.core.memo says why).
@bounded_by_bytes(16_000_000)
def _tokenize(text: str, keep_stop_words: bool) -> tuple[str, ...]:
    terms: list[str] = []
    for raw in _WORD.findall(text):
        parts = split_identifier(raw)
        if len(parts) > 1:
            terms.append(raw.lower())
        terms.extend(parts)
    out = [stem(t) for t in terms if keep_stop_words or t not in STOP_WORDS]
    return tuple(t for t in out if t)


def content_words(text: str) -> set[str]:
    """The distinct content terms of a text (used to check that paraphrases share none)."""
    return set(tokenize(text))
