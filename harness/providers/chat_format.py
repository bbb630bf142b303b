"""The conversation in the OpenAI chat format: what ``/v1/chat/completions`` and a chat template read.

Introduced in Chapter 5c, where the real model runs the loop; the OpenAI-compatible provider
(:mod:`harness.providers.openai_compat`) sends it, and the workbook's local model has llama.cpp render its
chat template from it. One conversion for both, so the two see the same conversation.

Where a tool a search found goes (the page's item 4): its definition follows the search result that found it
(:attr:`~harness.core.tools.Tool.found_after`), inside that tool message, not in the ``tools`` list, so
everything before it — the system prompt, the tools block and the earlier turns — stays the prefix a server
has cached. Chat Completions has no ``defer_loading``; a definition in the conversation is how a chat
endpoint is told, as Anthropic's ``tool_reference`` and OpenAI's ``tool_search_output`` place theirs.
"""
from __future__ import annotations

import json
from typing import Sequence

from harness.core.json_types import JSONObject
from harness.core.messages import Message, ToolCall, ToolResult, Transcript
from harness.core.tools import Tool

#: What precedes the definitions of tools a search found, inside the tool message that found them.
FOUND_HEADER = "These tools are now callable:"


def tool_spec(t: Tool) -> JSONObject:
    """A tool as the chat format's ``tools`` list holds it (a function with JSON-Schema parameters)."""
    return {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}


def found_definitions(found: Sequence[Tool]) -> str:
    """What follows a search result that found ``found``: their definitions, in the Hermes ``<tools>`` form Qwen's
    template uses (a plain chat loop appends it to that tool message, as :func:`chat_messages` does); nothing when
    the search found nothing new."""
    if not found:
        return ""
    return (f"\n\n{FOUND_HEADER}\n<tools>\n" + "\n".join(json.dumps(tool_spec(t), ensure_ascii=False) for t in found)
            + "\n</tools>")


def chat_messages(system: str, transcript: Transcript, found: Sequence[Tool] = ()) -> list[JSONObject]:
    """The transcript as chat messages; each ``found`` tool's definition follows the search result that found it
    (its ``found_after``), inside that tool message (:func:`found_definitions`)."""
    out: list[JSONObject] = [{"role": "system", "content": system}]
    for i, m in enumerate(transcript.messages, 1):
        _one_message(out, m)
        here = [t for t in found if t.found_after == i]
        if here and out[-1]["role"] == "tool":
            out[-1] = {**out[-1], "content": out[-1]["content"] + found_definitions(here)}
    return out


def _one_message(out: list[JSONObject], m: Message) -> None:
    """Append ``m`` to ``out`` in the chat format: an assistant turn, or tool results and the user's text."""
    text = m.text
    calls = [b for b in m.content if isinstance(b, ToolCall)]
    results = [b for b in m.content if isinstance(b, ToolResult)]
    if m.role == "assistant":
        item: JSONObject = {"role": "assistant", "content": text}
        if calls:
            item["tool_calls"] = [{"id": c.id, "type": "function",
                                   "function": {"name": c.name, "arguments": json.dumps(c.input)}} for c in calls]
        out.append(item)
        return
    out.extend({"role": "tool", "tool_call_id": r.tool_use_id, "content": r.content} for r in results)
    if text:
        out.append({"role": "user", "content": text})
