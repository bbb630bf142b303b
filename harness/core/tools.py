"""Tools: a name, a description, a JSON-Schema input and the Python callable behind it.

Introduced in Chapter 0 (``notebooks/00_start_here.ipynb``) and used by every chapter.

A model never sees the callable, only ``Tool.to_api()``: the name, the description and the
input schema. That is why the ``@tool`` decorator builds the schema from the same place a
Python reader looks — the type hints and the docstring — so the two cannot drift apart.
"""
from __future__ import annotations

import functools
import inspect
import json
import re
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping, get_args, get_origin

from harness.core.json_types import JSON, JSONObject

from harness.core.text import first_sentence

#: Side-effect tags a tool may carry. They let a harness ask for confirmation before
#: destructive calls or keep network tools out of an offline run.
SIDE_EFFECTS = frozenset({"read", "write", "destructive", "network", "discovery"})


@dataclass(frozen=True)
class Tool:
    """One callable tool as a model sees it, plus what runs when it is called."""

    name: str
    description: str
    input_schema: JSONObject = field(default_factory=lambda: {"type": "object", "properties": {}})
    fn: Callable[..., JSON] | None = field(default=None, compare=False, repr=False)
    tags: frozenset[str] = frozenset()
    domain: str = ""
    #: Where a definition a search found sits: after this many messages of the conversation (the search result
    #: that found it) rather than in the tools block, so the prompt before it stays a cacheable prefix
    #: (Anthropic's ``tool_reference``); None — the tools block. Set by the agent loop, read by providers.
    found_after: int | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.name or not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", self.name):
            raise ValueError(
                f"Tool name {self.name!r} is invalid: use 1-64 characters from A-Z, a-z, 0-9, '_' and '-'."
            )
        if self.input_schema.get("type") != "object":
            raise ValueError(f"Tool {self.name!r}: input_schema must be a JSON Schema of type 'object'.")
        unknown = set(self.tags) - SIDE_EFFECTS
        if unknown:
            raise ValueError(f"Tool {self.name!r}: unknown tags {sorted(unknown)}; known: {sorted(SIDE_EFFECTS)}.")
        object.__setattr__(self, "tags", frozenset(self.tags))

    @property
    def summary(self) -> str:
        """The description's first sentence: what a one-line listing shows."""
        return first_sentence(self.description.strip().split("\n", 1)[0])

    @property
    def parameters(self) -> list[tuple[str, str]]:
        """(name, description) of each top-level input parameter (:func:`parameter_texts`)."""
        return parameter_texts(self.input_schema)

    @property
    def required(self) -> list[str]:
        return list(self.input_schema.get("required", []))

    def to_api(self) -> JSONObject:
        """The definition in the Anthropic Messages API shape (what the model is shown)."""
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    # Tools are immutable, so derived text is computed once: sweeps read it thousands of times.
    @functools.cached_property
    def api_json(self) -> str:
        """The definition as the compact JSON it travels in (what its tokens are counted on)."""
        return json.dumps(self.to_api(), ensure_ascii=False, separators=(",", ":"))

    @functools.cached_property
    def search_text(self) -> str:
        """What a search reads (:func:`search_text`)."""
        return search_text(self.name, self.description, self.input_schema)


# --- what a search reads of a tool (a catalog record reads the same) ---------------------

def parameter_texts(schema: Mapping[str, JSON]) -> list[tuple[str, str]]:
    """(name, description) of each top-level parameter of an input schema ('' where none is given)."""
    props = schema.get("properties") or {}
    return [(n, s.get("description", "") if isinstance(s, dict) else "") for n, s in props.items()]


def search_text(name: str, description: str, schema: Mapping[str, JSON]) -> str:
    """Name, description, and parameter names and descriptions: what a search reads of a tool (Chapter 2's
    BM25 document, as Codex CLI indexes it), for a :class:`Tool` and a catalog record alike."""
    params = " ".join(f"{n} {d}" for n, d in parameter_texts(schema))
    return f"{name} {description} {params}".strip()


# --- building a schema from a Python signature -------------------------------------------

_JSON_TYPES: dict[object, str] = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object"}


def json_type(annotation: Any) -> JSONObject:  # Any: a Python annotation (a class or a typing form)
    """The JSON Schema for one Python annotation (str, int, list[str], Literal[...], X | None)."""
    origin = get_origin(annotation)
    if annotation in _JSON_TYPES:
        return {"type": _JSON_TYPES[annotation]}
    if origin is Literal:
        values = list(get_args(annotation))
        schema = json_type(type(values[0]))
        return {**schema, "enum": values}
    if origin in (list, tuple, set, frozenset):
        args = get_args(annotation)
        return {"type": "array", "items": json_type(args[0])} if args else {"type": "array"}
    if origin is dict:
        return {"type": "object"}
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in get_args(annotation) if a is not type(None)]
        if len(inner) == 1:
            return json_type(inner[0])
    raise TypeError(f"Cannot express the annotation {annotation!r} as JSON Schema; use str, int, float, bool, list[...], dict or Literal[...].")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into (description, {parameter: description}).

    Everything before ``Args:`` is the tool description; each ``name: text`` line under it
    (continuation lines indented further) becomes that parameter's description.
    """
    text = inspect.cleandoc(doc or "")
    parts = re.split(r"^\s*(?:Args|Arguments|Parameters):\s*$", text, maxsplit=1, flags=re.MULTILINE)
    # Wrapped lines join into one; blank lines still separate paragraphs.
    description = "\n\n".join(" ".join(line.strip() for line in para.splitlines()) for para in re.split(r"\n\s*\n", parts[0].strip()))
    params: dict[str, str] = {}
    if len(parts) == 2:
        current = None
        for line in parts[1].splitlines():
            if re.match(r"^\s*(Returns|Raises|Yields|Examples?):\s*$", line):
                break
            m = re.match(r"^\s{0,8}(\w+)\s*(?:\([^)]*\))?:\s*(.*)$", line)
            if m and (current is None or len(line) - len(line.lstrip()) <= 4):
                current = m.group(1)
                params[current] = m.group(2).strip()
            elif current and line.strip():
                params[current] = (params[current] + " " + line.strip()).strip()
    return description, params


def schema_from_signature(fn: Callable[..., object], param_docs: dict[str, str]) -> JSONObject:
    """The input schema of ``fn``: one property per parameter, required when it has no default."""
    hints = typing.get_type_hints(fn)
    properties: JSONObject = {}
    required: list[str] = []
    for pname, param in inspect.signature(fn).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"{fn.__name__}: *args and **kwargs cannot be described to a model.")
        if pname not in hints:
            raise TypeError(f"{fn.__name__}: parameter {pname!r} needs a type hint to become part of the schema.")
        prop = json_type(hints[pname])
        if pname in param_docs:
            prop["description"] = param_docs[pname]
        if param.default is inspect.Parameter.empty:
            required.append(pname)
        elif param.default is not None:
            prop["default"] = param.default
        properties[pname] = prop
    schema: JSONObject = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def tool(
    fn: Callable[..., object] | None = None,
    *,
    name: str | None = None,
    tags: typing.Iterable[str] = (),
    domain: str = "",
) -> Any:  # Any: a Tool, or (given only options) a decorator that makes one
    """Turn a typed, docstringed function into a :class:`Tool`.

    >>> @tool(tags={"read"})
    ... def word_count(text: str) -> int:
    ...     '''Count the words in a text.
    ...
    ...     Args:
    ...         text: The text to count.
    ...     '''
    ...     return len(text.split())
    >>> word_count.input_schema["properties"]["text"]["description"]
    'The text to count.'
    """

    def build(f: Callable[..., object]) -> Tool:
        description, param_docs = parse_docstring(f.__doc__)
        if not description:
            raise ValueError(f"{f.__name__}: a tool needs a docstring; it is the description the model reads.")
        return Tool(
            name=name or f.__name__,
            description=description,
            input_schema=schema_from_signature(f, param_docs),
            fn=f,
            tags=frozenset(tags),
            domain=domain,
        )

    return build(fn) if fn is not None else build
