"""Every request to ``harness serve`` gets a reply, including lines the MCP SDK cannot read.

Introduced in Chapter 7 with ``harness serve``. The SDK's stdio transport hands a line it cannot
parse to the server as an exception, and the server drops it: the client then waits out its own
timeout. :func:`answer_unreadable` turns such a line into either the message it meant (a lone
surrogate escape such as ``"\\ud800"`` is valid JSON to Python but not to the SDK's parser; it
becomes U+FFFD) or the JSON-RPC error the line's ``id`` is owed (``-32700`` for text that is not
JSON, e.g. nested 3,000 deep; ``-32600`` for JSON that is not a message).
"""
from __future__ import annotations

import json
import re

import mcp.types as types
import pydantic

from harness.core.json_types import JSON
from harness.mcp.client import one_line

_SURROGATE = re.compile("[\ud800-\udfff]")
_ID_VALUE = re.compile(r'\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')
#: How far into an unparseable line its top-level ``"id"`` is looked for.
ID_SCAN_CHARS = 100_000


def unread_input(error: Exception) -> JSON:
    """The line the SDK failed to read (or the JSON it parsed from it), as its validation error kept it."""
    for problem in error.errors() if isinstance(error, pydantic.ValidationError) else ():
        raw = problem.get("input")  # the whole line for bad JSON; the message for a field it lacks
        if isinstance(raw, dict) or (isinstance(raw, str) and not problem.get("loc")):
            return raw
    return None


def top_level_id(line: str) -> int | str | None:
    """The ``id`` of a JSON object too broken (or too deep) to parse, read off its outer level."""
    depth, i, end = 0, 0, min(len(line), ID_SCAN_CHARS)
    while i < end:
        char = line[i]
        if char == '"':
            j = i + 1
            while j < end and line[j] != '"':
                j += 2 if line[j] == "\\" else 1
            if depth == 1 and line[i + 1:j] == "id" and (m := _ID_VALUE.match(line, j + 1)):
                return json.loads(m.group(1))
            i = j + 1
            continue
        depth += (char in "{[") - (char in "}]")
        i += 1
    return None


def _request_id(data: JSON) -> int | str | None:
    rid = data.get("id") if isinstance(data, dict) else None
    return rid if isinstance(rid, (int, str)) and not isinstance(rid, bool) else None


def _parse_error(line: str, error: Exception) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=top_level_id(line), error=types.ErrorData(
        code=types.PARSE_ERROR, message=f"The request is not JSON the proxy can read ({one_line(error)[:120]}); it was not run."))


def answer_unreadable(error: Exception) -> types.JSONRPCMessage | types.JSONRPCError | None:
    """What to do with a line the SDK could not read: the repaired message, the error reply it is owed, or None.

    None for a notification (no ``id``) that is valid JSON: JSON-RPC never answers those.
    """
    data = unread_input(error)
    if isinstance(data, str):
        try:
            data = json.loads(data)  # Python's parser takes lone surrogates; deep nesting raises RecursionError
        except (ValueError, RecursionError):
            return _parse_error(data, error)
    elif not isinstance(data, dict):
        return None
    try:
        return types.jsonrpc_message_adapter.validate_json(
            _SURROGATE.sub("\ufffd", json.dumps(data, ensure_ascii=False)), by_name=False)
    except (pydantic.ValidationError, ValueError, RecursionError) as exc:
        rid = _request_id(data)
        return None if rid is None else types.JSONRPCError(jsonrpc="2.0", id=rid, error=types.ErrorData(
            code=types.INVALID_REQUEST, message=f"The request is not a JSON-RPC message the proxy can run ({one_line(exc)[:120]})."))
