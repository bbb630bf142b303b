"""Tools files as users have them: every shape a tool list comes in, read as the workbook's own record.

Introduced in Chapter 6a with the public data's ``tools.jsonl``; :func:`harness.evaluation.datasets.load_tools`
(behind ``harness search --tools``, ``harness serve --extra-tools`` and ``harness eval``) reads any of:

* the workbook's records: ``{"id", "server", "name", "description", "input_schema"}`` — Anthropic's tool
  definitions are these without ``id`` and ``server``;
* MCP ``tools/list`` output: ``{"tools": [{"name", "description", "inputSchema"}, …]}``, or the JSON-RPC
  response around it, or its entries alone;
* OpenAI function definitions: ``{"type": "function", "function": {"name", "description", "parameters"}}``
  (Chat Completions) or the flat ``{"type": "function", "name", "description", "parameters"}`` (Responses);

as a JSON array, a JSON object (one of the wrappers above, or one tool), or JSON lines (``.jsonl``: one
entry a line, in any of the shapes). Each entry's schema is kept under whichever key its format uses —
never dropped, so its parameters still count in the ranking — and a tool without an ``id`` is
``server/name`` (or ``name`` without a server).
"""
from __future__ import annotations

import json
from typing import Iterator

from harness.core.json_types import JSON, JSONObject

#: What each format calls a tool's input schema; a tool naming two of them is refused.
_SCHEMA_KEYS = ("input_schema", "inputSchema", "parameters")


def _type_name(value: JSON) -> str:
    names: dict[type, str] = {dict: "JSON object", list: "list", str: "string"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def parse_document(text: str, origin: str) -> JSON:
    """A whole file as one JSON value; None when it is not one but its first line is (so it is JSON lines);
    a one-sentence ValueError when it is neither."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError(f"{origin}: nested too deeply to read (a tools file is a few levels deep): "
                         "check it is the right file.") from None
    except json.JSONDecodeError as exc:
        first = next((line for line in text.splitlines() if line.strip()), "")
        try:
            json.loads(first)
            return None
        except (json.JSONDecodeError, RecursionError):
            raise ValueError(f"{origin}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}).") from None


def document_entries(document: JSON, origin: str) -> Iterator[tuple[str, JSON]]:
    """(where, entry) for each tool of a JSON document: an array, MCP's ``{"tools": […]}`` (also inside a
    JSON-RPC ``result``), or one tool."""
    result = document.get("result") if isinstance(document, dict) else None
    if isinstance(result, dict) and isinstance(result.get("tools"), list):
        document = result
    if isinstance(document, dict) and isinstance(document.get("tools"), list):
        yield from ((f"{origin}, tools[{i}]", entry) for i, entry in enumerate(document["tools"]))
    elif isinstance(document, list):
        yield from ((f"{origin}, entry {i + 1}", entry) for i, entry in enumerate(document))
    else:
        yield origin, document


def as_record(entry: JSON, where: str) -> JSONObject:
    """One entry in any of the formats as the workbook's record (``id``, ``name``, ``description``,
    ``input_schema``, ``server``; other fields kept), or a one-sentence ValueError."""
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: expected a JSON object (a tool), got {_type_name(entry)}.")
    if entry.get("type") == "function" and "function" in entry:  # Chat Completions: the tool is inside
        inner = entry["function"]
        if not isinstance(inner, dict):
            raise ValueError(f"{where}: field 'function' must be a JSON object, got {_type_name(inner)}.")
        entry = {**{k: v for k, v in entry.items() if k not in ("type", "function")}, **inner}
    elif entry.get("type") == "function":  # Responses: flat
        entry = {k: v for k, v in entry.items() if k != "type"}
    schemas = [k for k in _SCHEMA_KEYS if k in entry]
    if len(schemas) > 1:
        raise ValueError(f"{where}: has both '{schemas[0]}' and '{schemas[1]}'; keep the one that holds its parameters.")
    record = {k: v for k, v in entry.items() if k not in _SCHEMA_KEYS}
    if schemas:
        record["input_schema"] = entry[schemas[0]]
    if "id" not in record and isinstance(record.get("name"), str):
        server = record.get("server")
        record["id"] = f"{server}/{record['name']}" if isinstance(server, str) and server else record["name"]
    return record
