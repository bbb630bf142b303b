"""Checking a tool call's arguments against its JSON Schema, with one sentence per problem.

Introduced in Chapter 0 with the registry.

Why not the ``jsonschema`` package: importing it here also builds an RFC 3987 grammar and costs
about 3 s in every kernel and test process, for features tool schemas don't use. Tool input
schemas use a small part of JSON Schema — types, required, enum, const, nested properties and
items, additionalProperties, numeric and length bounds, anyOf/oneOf and local ``$ref`` — and
that part is checked here, with messages that name the argument a model got wrong.
"""
from __future__ import annotations

from typing import Any

_TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return schema  # remote refs are not followed: the server checks what we cannot
    node: Any = root
    for part in ref[2:].split("/"):
        node = node.get(part, {}) if isinstance(node, dict) else {}
    return node if isinstance(node, dict) else {}


def _name(path: str) -> str:
    return path or "(input)"


def first_error(value: Any, schema: dict[str, Any], root: dict[str, Any] | None = None, path: str = "") -> str | None:
    """The first way ``value`` breaks ``schema``, as a phrase naming the argument, or None."""
    root = root if root is not None else schema
    schema = _resolve(schema, root)
    if not isinstance(schema, dict):
        return None
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            if all(first_error(value, s, root, path) for s in schema[key]):
                return f"argument '{_name(path)}' matches none of the allowed forms"
    expected = schema.get("type")
    if expected is not None:
        allowed = expected if isinstance(expected, list) else [expected]
        if not any(_TYPES.get(t, lambda v: True)(value) for t in allowed):
            return f"argument '{_name(path)}' must be of type {' or '.join(allowed)}, got {type(value).__name__} {value!r}"
    if "enum" in schema and value not in schema["enum"]:
        return f"argument '{_name(path)}' must be one of {schema['enum']}, got {value!r}"
    if "const" in schema and value != schema["const"]:
        return f"argument '{_name(path)}' must be {schema['const']!r}, got {value!r}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return f"argument '{_name(path)}' must be ≥ {schema['minimum']}, got {value}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"argument '{_name(path)}' must be ≤ {schema['maximum']}, got {value}"
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            return f"argument '{_name(path)}' must have at least {schema['minLength']} characters"
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            return f"argument '{_name(path)}' must have at most {schema['maxLength']} characters"
    if isinstance(value, dict):
        props = schema.get("properties", {}) or {}
        for req in schema.get("required", []) or []:
            if req not in value:
                return f"missing required argument '{f'{path}.{req}' if path else req}'"
        extra = [k for k in value if k not in props]
        additional = schema.get("additionalProperties")
        if extra and additional is False:
            return f"unexpected argument(s) {', '.join(repr(f'{path}.{k}' if path else k) for k in extra)}"
        for key, item in value.items():
            sub = props.get(key, additional if isinstance(additional, dict) else None)
            if isinstance(sub, dict):
                err = first_error(item, sub, root, f"{path}.{key}" if path else key)
                if err:
                    return err
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            err = first_error(item, schema["items"], root, f"{path}[{i}]")
            if err:
                return err
    return None
