"""Flag tool descriptions that talk to the model instead of describing a tool.

Introduced in Chapter 5 (MCP integration).

A third-party server writes the text the model reads as a tool description: "tool poisoning"
hides instructions there ("ignore previous instructions", "do not tell the user", a file to read
and send along), sometimes in characters a human reviewer never sees (Unicode tag characters,
zero-width characters, HTML comments). The harness keeps descriptions exactly as given — it never
executes or rewrites them — and only *flags* them, so a person decides; these are heuristics,
and a clean result proves nothing.
"""
from __future__ import annotations

import re
from typing import Any

from harness.tools import Tool

_TAG_CHARS = re.compile("[\U000E0000-\U000E007F]")
_ZERO_WIDTH = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff\u202a-\u202e\u2066-\u2069]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # not \t \n \r: they are layout
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_HIDDEN_TAG = re.compile(r"<\s*(important|system|secret|hidden|instructions?)\b[^>]*>", re.I)

#: (pattern, what it means) for instruction-like text aimed at the model. Checked against 3,788
#: real tool definitions (the shared MCP-Zero, LiveMCPBench and ToolLens catalogs): words like
#: "password" or "API key" are everyday parameters, so only credential *files* count.
_PHRASES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(previous|prior|above|earlier|other|all)\b"
                r"[^.\n]{0,20}\b(instructions?|rules|prompts?|directions)\b", re.I),
     "tells the model to ignore its instructions"),
    (re.compile(r"\b(do not|don't|never|without)\b[^.\n]{0,20}\b(tell|telling|inform|informing|mention|mentioning|"
                r"reveal|revealing|show|showing|notify|notifying|alert|alerting)\b[^.\n]{0,20}\buser\b", re.I),
     "asks the model to hide something from the user"),
    (re.compile(r"\b(you are now|new instructions\s*:|your system prompt|"
                r"(reveal|print|send|repeat|leak)\b[^.\n]{0,20}\bsystem prompt)", re.I),
     "addresses the model's own instructions"),
    (re.compile(r"(~/\.ssh|\bid_rsa\b|\bid_ed25519\b|\.aws/credentials|\bmcp\.json\b|\.npmrc\b|\.netrc\b|"
                r"/etc/passwd|/etc/shadow|(?<![\w.])\.env\b)", re.I),
     "points at credential files"),
]


def _decode_tags(text: str) -> str:
    """The ASCII hidden in Unicode tag characters (U+E0020–U+E007E mirror printable ASCII)."""
    return "".join(chr(ord(c) - 0xE0000) for c in _TAG_CHARS.findall(text) if 0x20 <= ord(c) - 0xE0000 <= 0x7E)


def flag_suspicious(description: str) -> list[str]:
    """Why ``description`` looks like instructions aimed at the model (one short reason each); [] when clean."""
    flags: list[str] = []
    tags = _TAG_CHARS.findall(description)
    if tags:
        hidden = _decode_tags(description)
        flags.append(f"{len(tags)} invisible Unicode tag characters (U+E0000–U+E007F)"
                     + (f" hiding the text {hidden[:80]!r}" if hidden else ""))
    zero_width = _ZERO_WIDTH.findall(description)
    if zero_width:
        flags.append(f"{len(zero_width)} zero-width or direction-control characters")
    control = _CONTROL.findall(description)
    if control:
        flags.append(f"{len(control)} control characters (terminal escapes can hide or rewrite what a reviewer sees)")
    if _HTML_COMMENT.search(description):
        flags.append("a hidden HTML comment")
    tag = _HIDDEN_TAG.search(description)
    if tag:
        flags.append(f"an HTML tag <{tag.group(1).lower()}> aimed at the model")
    # Match phrases on the text with invisible characters removed and hidden tag text revealed.
    visible = _ZERO_WIDTH.sub("", _TAG_CHARS.sub("", description)) + " " + _decode_tags(description)
    flags.extend(reason for pattern, reason in _PHRASES if pattern.search(visible))
    return flags


def _schema_descriptions(schema: Any, path: str = "") -> list[tuple[str, str]]:
    """(parameter path, description) for every description nested in a JSON Schema."""
    found: list[tuple[str, str]] = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "description" and isinstance(value, str) and path:
                found.append((path, value))
            elif key == "properties" and isinstance(value, dict):
                for pname, sub in value.items():
                    found.extend(_schema_descriptions(sub, f"{path}.{pname}" if path else pname))
            elif isinstance(value, (dict, list)):
                found.extend(_schema_descriptions(value, path))
    elif isinstance(schema, list):
        for item in schema:
            found.extend(_schema_descriptions(item, path))
    return found


def flag_tool(t: Tool) -> list[str]:
    """Flags for a tool's description and for every parameter description in its input schema."""
    flags = flag_suspicious(t.description)
    for where, text in _schema_descriptions(t.input_schema):
        flags.extend(f"parameter '{where}': {reason}" for reason in flag_suspicious(text))
    return flags
