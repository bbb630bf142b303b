"""Checking tool schemas and tool-call arguments with ``jsonschema``, one sentence per problem.

Introduced in Chapter 0 with the registry; Chapter 5 checks every MCP server's schemas with it.

A schema comes from whoever wrote the tool — for MCP, an untrusted server — so it is checked
twice: the schema itself against the JSON Schema metaschema before it is used
(:func:`schema_problem`), and each call's arguments against the schema (:func:`first_error`).
The validator is ``jsonschema`` (Draft 2020-12, the dialect the Anthropic API reads), a
well-kept library, instead of a hand-written subset that a ``$ref`` loop or ``"enum": 5`` broke.

Its import cost is measured, not assumed: ``import jsonschema`` took 1.7–2.0 s on a 2-core
machine, of which 1.7 s is ``rfc3987_syntax`` building a grammar for the ``iri`` *format*
checker, which this module never uses (format is an annotation here, not an assertion). So the
first use imports ``jsonschema`` with that optional package hidden, which brings the import to
about 0.15 s; a process that imported ``jsonschema`` already keeps its own.
"""
from __future__ import annotations

import functools
import json
import sys
from typing import Any

from harness.core.json_types import JSON, JSONObject

#: Deeper instances or schemas than this are refused rather than risk Python's recursion limit.
MAX_DEPTH = 64


def _jsonschema() -> Any:  # Any: jsonschema ships no types
    """``jsonschema``, imported on first use without the ``iri`` format checker's grammar."""
    if "jsonschema" in sys.modules:
        return sys.modules["jsonschema"]
    hide = "rfc3987_syntax" not in sys.modules
    if hide:
        sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  # makes its import fail fast
    try:
        import jsonschema
    finally:
        if hide and sys.modules.get("rfc3987_syntax", 0) is None:
            del sys.modules["rfc3987_syntax"]
    return jsonschema


def _depth(value: JSON, limit: int = MAX_DEPTH) -> int:
    """How deeply ``value`` nests, counted up to ``limit + 1`` without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if deepest > limit:
            break
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, level + 1) for child in children)
    return deepest


def _one_line(text: str, limit: int = 160) -> str:
    """``text`` on one line, cut with an ellipsis past ``limit`` characters (a message, not a sentence rule)."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


@functools.lru_cache(maxsize=4096)
def _validator(schema_json: str) -> tuple[Any, str | None]:  # Any: a jsonschema validator (no types)
    """(validator, None) for a usable schema, or (None, why it is not), cached by the schema's JSON."""
    schema = json.loads(schema_json)
    if _depth(schema) > MAX_DEPTH:
        return None, f"it nests deeper than {MAX_DEPTH} levels"
    js = _jsonschema()
    from referencing import Registry

    try:
        js.Draft202012Validator.check_schema(schema)
    except js.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        return None, _one_line(f"{where + ': ' if where else ''}{exc.message}")
    except RecursionError:
        return None, "checking it against the metaschema recursed without end"
    loop = _ref_problem(schema)
    if loop:
        return None, loop
    # An empty registry: a $ref resolves inside the schema or not at all, never over the network.
    validator = js.Draft202012Validator(schema, registry=Registry())
    return validator, None


_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_IN_PLACE_SCHEMAS = ("not", "if", "then", "else")


def _pointer(root: JSON, ref: str) -> JSON:
    """The node a local ``$ref`` (``#`` or ``#/a/b``) points at; KeyError when there is none."""
    from urllib.parse import unquote

    node = root
    for raw in [p for p in ref[1:].split("/") if p != ""] if ref != "#" else []:
        part = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise KeyError(ref)
    return node


def _ref_problem(schema: JSONObject) -> str | None:
    """Why the schema's ``$ref`` s cannot be followed: one that points nowhere, off the document, or
    back to itself without reading any input (``{"$ref": "#/x"}`` at ``x``, or via ``anyOf``)."""
    refs: list[JSONObject] = []
    stack: list[JSON] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                refs.append(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    for start in refs:
        ref = start["$ref"]
        if not ref.startswith("#"):
            return f"its $ref {ref!r} points outside the schema, which is not followed"
        try:
            _pointer(schema, ref)
        except KeyError:
            return f"its $ref {ref!r} points at nothing in the schema"
        # Follow what applies to the same value (refs and in-place keywords) and look for start again.
        seen: set[int] = set()
        todo: list[JSON] = [_pointer(schema, ref)]
        while todo:
            node = todo.pop()
            if not isinstance(node, dict) or id(node) in seen:
                continue
            if node is start:
                return f"its $ref {ref!r} refers back to itself without end"
            seen.add(id(node))
            target = node.get("$ref")
            if isinstance(target, str) and target.startswith("#"):
                try:
                    todo.append(_pointer(schema, target))
                except KeyError:
                    pass
            for key in _IN_PLACE_LISTS:
                if isinstance(node.get(key), list):
                    todo.extend(node[key])
            todo.extend(node.get(key) for key in _IN_PLACE_SCHEMAS)
    return None


def _key(schema: JSON) -> str:
    return json.dumps(schema, sort_keys=True, ensure_ascii=False, default=repr)


def schema_problem(schema: JSON) -> str | None:
    """Why ``schema`` cannot be used as a tool's input schema (a phrase), or None when it can."""
    if not isinstance(schema, dict):
        return f"it must be a JSON object, got {type(schema).__name__}"
    if schema.get("type") != "object":
        return f"its type must be 'object', got {schema.get('type')!r}"
    try:
        return _validator(_key(schema))[1]
    except (TypeError, ValueError, RecursionError) as exc:
        return _one_line(f"it cannot be read as JSON: {exc}")


def _name(path: str) -> str:
    return path or "(input)"


def _path(parts: Any) -> str:  # Any: a jsonschema error's path (no types)
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


#: Which problem to report first when there are several: shallow before deep, then by keyword.
_ORDER = ("anyOf", "oneOf", "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
          "minLength", "maxLength", "required", "additionalProperties")


def _phrase(error: Any) -> str:  # Any: a jsonschema ValidationError (no types)
    """One jsonschema ValidationError as a phrase that names the argument the model got wrong."""
    path = _path(error.absolute_path)
    value, kind, expected = error.instance, error.validator, error.validator_value
    if kind == "type":
        allowed = expected if isinstance(expected, list) else [expected]
        return f"argument '{_name(path)}' must be of type {' or '.join(allowed)}, got {type(value).__name__} {value!r}"
    if kind == "enum":
        return f"argument '{_name(path)}' must be one of {expected}, got {value!r}"
    if kind == "const":
        return f"argument '{_name(path)}' must be {expected!r}, got {value!r}"
    if kind in ("minimum", "exclusiveMinimum"):
        return f"argument '{_name(path)}' must be {'≥' if kind == 'minimum' else '>'} {expected}, got {value}"
    if kind in ("maximum", "exclusiveMaximum"):
        return f"argument '{_name(path)}' must be {'≤' if kind == 'maximum' else '<'} {expected}, got {value}"
    if kind == "minLength":
        return f"argument '{_name(path)}' must have at least {expected} characters"
    if kind == "maxLength":
        return f"argument '{_name(path)}' must have at most {expected} characters"
    if kind == "required":
        missing = [r for r in expected if isinstance(value, dict) and r not in value]
        name = missing[0] if missing else "?"
        return f"missing required argument '{f'{path}.{name}' if path else name}'"
    if kind == "additionalProperties":
        allowed = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        extra = [k for k in value if k not in allowed] if isinstance(value, dict) else []
        return f"unexpected argument(s) {', '.join(repr(f'{path}.{k}' if path else k) for k in extra)}"
    if kind in ("anyOf", "oneOf"):
        return f"argument '{_name(path)}' matches none of the allowed forms"
    return f"argument '{_name(path)}': {_one_line(error.message, 120)}"


def first_error(value: JSON, schema: JSONObject) -> str | None:
    """The first way ``value`` breaks ``schema``, as a phrase naming the argument, or None.

    An unusable schema is reported as such (never raised): see :func:`schema_problem`.
    """
    problem = schema_problem(schema)
    if problem:
        return f"the tool's input schema is invalid ({problem}), so no call can be checked"
    if _depth(value) > MAX_DEPTH:
        return f"the arguments nest deeper than {MAX_DEPTH} levels"
    validator, _ = _validator(_key(schema))
    try:
        errors = list(validator.iter_errors(value))
    except RecursionError:
        return "checking the arguments against the tool's schema recursed without end"
    if not errors:
        return None
    rank = {k: i for i, k in enumerate(_ORDER)}
    best = min(errors, key=lambda e: (len(e.absolute_path), rank.get(e.validator, len(_ORDER))))
    return _phrase(best)
