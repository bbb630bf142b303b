"""Tool calls a model wrote as text: read them as calls, the way a real harness's tool-call parser does.

Introduced in Chapter 5c. Small open models often answer with a call instead of making one: the chat
template's ``<tool_call>`` tag, a fenced ```` ```json ```` block, or a bare JSON object
``{"name": …, "arguments": …}``. Serving stacks parse these (vLLM's and llama.cpp's Hermes parsers read
the tag); an answer that *is* a call, taken as the final answer, ends the run with nothing done. So a
provider reads such an answer as the call it spells (:func:`call_in_text`), and the loop runs it — or,
for a tool that is not loaded or does not exist, answers with the registry's error, which tells the
model what to do next. Prose that only talks about a call ("you would call `find_free_slot` with …")
stays an answer: only JSON that names a tool and gives its arguments as an object is a call.
"""
from __future__ import annotations

import json
import re

from harness.core.json_types import JSONObject

_WRAPPERS = re.compile(r"^(?:<tool_call>|```(?:json)?)\s*", re.IGNORECASE)


def call_in_text(text: str) -> tuple[str, JSONObject] | None:
    """``(name, arguments)`` when ``text`` opens with one call written as JSON — bare, fenced, or in the
    ``<tool_call>`` tag — else None. Arguments given as a JSON string (OpenAI's wire form) are decoded;
    anything after the call's object (a closing tag or fence, a sentence) is ignored."""
    body = _WRAPPERS.sub("", text.strip(), count=1)
    if not body.startswith("{"):
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(body)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or not value["name"].strip():
        return None
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            return None
    return (value["name"].strip(), arguments) if isinstance(arguments, dict) else None
