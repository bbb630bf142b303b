"""How the offline stand-in model fills a tool's arguments from a request.

Introduced in Chapter 0 with the offline model; Chapter 1 counts its argument mistakes.

The stand-in pulls typed pieces out of the request — quoted strings, URLs, paths, numbers,
dates, times, ``#channels``, ``@people``, enum values — and hands them to the schema's
properties by name and type, in the order both appear. That is roughly what a model does, and
it fails the way models do when two parameters look alike (``source``/``destination``,
``title``/``body``): the right tool with misplaced arguments, a failure Chapter 1 counts apart
from picking the wrong tool.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import AbstractSet

from workbook.providers.offline_concepts import CONCEPTS
from workbook.steps import QUOTED, quoted_values
from harness.core.text import STOP_WORDS, split_identifier, stem, tokenize
from harness.core.json_types import JSON, JSONObject

_URL = re.compile(r"https?://[^\s'\"<>),]+")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_TIME = re.compile(r"\b\d{1,2}:\d{2}\b")
_CHANNEL = re.compile(r"(?<![\w&])#([A-Za-z][\w-]*)")
_PERSON = re.compile(r"(?<![\w.])@([A-Za-z][\w.-]*[A-Za-z0-9])")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.]+\b")
_PATH = re.compile(r"(?<![\w/])(?:\.{0,2}/)?(?:[\w.-]+/)*[\w-]+\.[A-Za-z][\w]{0,5}\b|(?<![\w/:])(?:[\w.-]+/)+[\w.-]*")
_NUMBER = re.compile(r"(?<![\w.#:/-])-?\d+(?:\.\d+)?(?![\w:/-])")

_ARITHMETIC = re.compile(r"[-(]*\d[\d.]*(?:\s*[-+*/^%]\s*[(]*\d[\d.]*[)]*)+")

_PATH_PARAMS = ("path", "file", "filename", "source", "src", "destination", "dest", "dir", "directory", "folder", "target")
_QUERY_PARAMS = ("query", "pattern", "term", "keyword", "keywords", "search", "filter")
_LONG_TEXT_PARAMS = ("text", "body", "content", "message", "comment", "description", "summary", "note")
_PERSON_PARAMS = ("recipient", "user", "person", "to", "assignee", "attendee", "attendees", "username", "owner")


#: Everyday words that are never a package, branch or test name ("which versions *exist*").
COMMON_WORDS = frozenset("""exist exists existing latest new old first last current every today tomorrow
    yesterday again done gone happen happened going give take keep work working lately recent recently
    which whether available ready still yet right left okay please morning evening week day""".split())


@dataclass
class Pieces:
    """Typed pieces found in a request, each list in order of appearance; used up as assigned."""

    quoted: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    dates: list[str] = field(default_factory=list)
    times: list[str] = field(default_factory=list)
    channels: list[str] = field(default_factory=list)
    people: list[str] = field(default_factory=list)
    emails: list[str] = field(default_factory=list)
    numbers: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)


def extract(text: str) -> Pieces:
    p = Pieces()
    p.quoted = quoted_values(text)
    rest = QUOTED.sub(" ", text)
    p.urls = _URL.findall(rest)
    rest = _URL.sub(" ", rest)
    p.emails = _EMAIL.findall(rest)
    rest = _EMAIL.sub(" ", rest)
    p.dates = _DATE.findall(rest)
    p.times = _TIME.findall(rest)
    rest = _TIME.sub(" ", _DATE.sub(" ", rest))
    p.channels = _CHANNEL.findall(rest)
    p.people = _PERSON.findall(rest)
    rest = _PERSON.sub(" ", _CHANNEL.sub(" ", rest))
    p.paths = [x.rstrip(".,;:") for x in _PATH.findall(rest) if not x.endswith(".") or "/" in x]
    rest = _PATH.sub(" ", rest)
    p.numbers = _NUMBER.findall(rest)
    p.words = [w for w in re.findall(r"[A-Za-z][\w-]*", rest) if w.lower() not in STOP_WORDS]
    return p


def intent_text(step: str) -> str:
    """The words that say *what to do*: quoted values, URLs, paths and addresses removed.

    "Read 'notes/todo.md'" is about reading a file, not about notes; values are arguments, not
    intent — but its *kind* is: a path becomes the word 'file', a URL 'url', a channel 'channel'.
    """
    text = QUOTED.sub(" ", step)
    for pattern, kind in ((_URL, " url "), (_EMAIL, " email "), (_PATH, " file ")):
        text = pattern.sub(kind, text)
    text = _CHANNEL.sub(" channel ", text)
    return _PERSON.sub(" person ", text)


def _kind(name: str) -> set[str]:
    parts = set(split_identifier(name)) | {name.lower()}
    return parts


def _take(found: list[str], earlier: list[str], required: bool) -> str | None:
    """The next piece of this kind in the step, else (for a required argument) the latest said before."""
    if found:
        return found.pop(0)
    return earlier[0] if required and earlier else None


def _looks_like_path(text: str) -> bool:
    return bool(re.fullmatch(r"[\w./-]+", text)) and ("/" in text or "." in text)


def _number(value: str, typ: str) -> int | float:
    return int(float(value)) if typ == "integer" else float(value)


def fill_arguments(
    request: str,
    schema: JSONObject,
    *,
    tool_words: AbstractSet[str] = frozenset(),
    previous_result: str | None = None,
    context: str = "",
    tool_text: str = "",
) -> JSONObject:
    """Arguments for ``schema`` taken from ``request`` (and the previous result, for long text).

    Required properties always get a value when any piece fits; optional ones only when the
    request clearly supplies one (an enum value it names, a piece of the right kind left over).
    ``context`` is what the user said before this step: a required path, URL, channel, person
    or date the step leaves out ("describe *its* column") is taken from there, latest first.
    """
    pieces = extract(request)
    # What came before, most recent first: the previous result, then the user's earlier steps.
    earlier = extract(f"{context}\n{previous_result or ''}")
    for piece in ("paths", "urls", "channels", "people", "dates", "emails"):
        setattr(earlier, piece, list(reversed(getattr(earlier, piece))))
    props: JSONObject = schema.get("properties", {}) or {}
    required = list(schema.get("required", []) or [])
    order = required + [n for n in props if n not in required]
    args: JSONObject = {}
    keywords = [w for w in pieces.words if w.lower() not in tool_words]
    # For an identifier-like value (a package, a branch, a test name): the words that are
    # neither common vocabulary nor the tool's own words — "promptkit" in "show promptkit's info".
    own = set(tokenize(tool_text))

    def identifiers(words: list[str]) -> list[str]:
        return [w for w in words if w.lower() not in tool_words and w.lower() not in CONCEPTS
                and stem(w.lower()) not in CONCEPTS and stem(w.lower()) not in own and w.lower() not in COMMON_WORDS]

    said = extract(context)
    names = identifiers(pieces.words) or said.quoted[-1:] or identifiers(list(reversed(said.words)))[:1]

    for name in order:
        spec = props.get(name, {}) if isinstance(props.get(name), dict) else {}
        typ = spec.get("type", "string")
        kind = _kind(name)
        is_required = name in required
        value: JSON = None
        if "enum" in spec:
            lowered = request.lower()
            value = next((v for v in spec["enum"] if isinstance(v, str) and re.search(rf"\b{re.escape(v.lower())}\b", lowered)), None)
            if value is None and is_required:
                value = spec["enum"][0]
        elif kind & {"expression", "formula"}:
            m = _ARITHMETIC.search(request)
            value = m.group(0).strip() if m else None
        elif typ in ("integer", "number"):
            if pieces.numbers:
                value = _number(pieces.numbers.pop(0), typ)
        elif typ == "boolean":
            if kind & {w.lower() for w in pieces.words}:
                value = True
        elif "url" in kind or "uri" in kind or "link" in kind:
            value = _take(pieces.urls, earlier.urls, is_required)
        elif kind & set(_PATH_PARAMS):
            value = _take(pieces.paths, earlier.paths, is_required)
            if value is None and is_required and pieces.quoted and _looks_like_path(pieces.quoted[0]):
                value = pieces.quoted.pop(0)
        elif "channel" in kind:
            value = _take(pieces.channels, earlier.channels, is_required)
        elif "email" in kind:
            value = _take(pieces.emails, earlier.emails, is_required)
        elif kind & set(_PERSON_PARAMS):
            value = _take(pieces.people, earlier.people, is_required) or (pieces.emails.pop(0) if pieces.emails else None)
        elif "date" in kind or "day" in kind:
            value = _take(pieces.dates, earlier.dates, is_required)
        elif "time" in kind or "start" in kind:
            value = pieces.times.pop(0) if pieces.times else None
        elif pieces.quoted:
            value = pieces.quoted.pop(0)
        elif kind & set(_QUERY_PARAMS):
            value = " ".join(keywords) or None
        elif kind & set(_LONG_TEXT_PARAMS) and is_required:
            value = (previous_result or "").strip()[:500] or " ".join(keywords) or None
        elif is_required and typ == "string":
            value = " ".join(names) or " ".join(keywords) or None
        if value is not None and typ == "array":
            value = [value] if not isinstance(value, list) else value
        if value is not None:
            args[name] = value
    return args
