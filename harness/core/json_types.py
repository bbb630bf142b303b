"""The types of JSON values: what the APIs, MCP and tool schemas carry.

Introduced in Chapter 0, with the messages and tool definitions that cross the model's API as JSON.

They are ``Any`` on purpose, and a value's type names them rather than a bare ``Any`` where it is
JSON: JSON nests without limit, so a precise recursive type would make every reader cast. Code that reads a value narrows it where it reads
it (``isinstance``), and everything past that boundary has a real type.
"""
from __future__ import annotations

from typing import Any

#: One JSON value: an object, array, string, number, true/false or null, nested any way.
JSON = Any
#: A JSON object: a tool's input schema, a call's arguments, a message block as the API writes it.
JSONObject = dict[str, JSON]
