"""Messages: the transcript an agent and its model share.

Introduced in Chapter 0 and read by Chapter 3, whose queries are derived from it.

The blocks mirror the Anthropic Messages API (text, ``tool_use``, ``tool_result``, and the
``thinking`` / ``redacted_thinking`` blocks of models that think) so a transcript converts to the
API's dicts and back without loss, and so the offline stand-in model and Claude read exactly the
same conversation. Thinking blocks are kept, unread, because the API requires them back
unchanged (signature included) before the tool calls they led to.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Iterator, Literal, Union

from harness.core.json_types import JSONObject


@dataclass(frozen=True)
class TextBlock:
    text: str

    def to_api(self) -> JSONObject:
        return {"type": "text", "text": self.text}


@dataclass(frozen=True)
class ToolCall:
    """The model asks for a tool: ``tool_use`` in the API."""

    id: str
    name: str
    input: JSONObject = field(default_factory=dict)

    def to_api(self) -> JSONObject:
        return {"type": "tool_use", "id": self.id, "name": self.name, "input": self.input}


@dataclass(frozen=True)
class ToolResult:
    """What running the tool gave back: ``tool_result`` in the API. Errors are results too."""

    tool_use_id: str
    content: str
    is_error: bool = False

    def to_api(self) -> JSONObject:
        out: JSONObject = {"type": "tool_result", "tool_use_id": self.tool_use_id, "content": self.content}
        if self.is_error:
            out["is_error"] = True
        return out


@dataclass(frozen=True)
class ThinkingBlock:
    """A model's visible reasoning, with the signature the API checks when it is sent back."""

    thinking: str
    signature: str

    def to_api(self) -> JSONObject:
        return {"type": "thinking", "thinking": self.thinking, "signature": self.signature}


@dataclass(frozen=True)
class RedactedThinkingBlock:
    """Reasoning the API returned encrypted; it goes back exactly as received."""

    data: str

    def to_api(self) -> JSONObject:
        return {"type": "redacted_thinking", "data": self.data}


Block = Union[TextBlock, ToolCall, ToolResult, ThinkingBlock, RedactedThinkingBlock]


def block_from_api(data: JSONObject) -> Block:
    """One API content block (a dict) as a typed block; unknown types are an error, not dropped."""
    kind = data.get("type")
    if kind == "text":
        return TextBlock(data["text"])
    if kind == "tool_use":
        return ToolCall(data["id"], data["name"], dict(data.get("input") or {}))
    if kind == "tool_result":
        content = data.get("content", "")
        if isinstance(content, list):  # the API allows a list of text blocks
            content = "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
        return ToolResult(data["tool_use_id"], str(content), bool(data.get("is_error", False)))
    if kind == "thinking":
        return ThinkingBlock(data.get("thinking", ""), data.get("signature", ""))
    if kind == "redacted_thinking":
        return RedactedThinkingBlock(data.get("data", ""))
    raise ValueError(f"Unknown content block type {kind!r}; expected text, tool_use, tool_result, thinking or redacted_thinking.")


@dataclass
class Message:
    role: Literal["user", "assistant"]
    content: list[Block]

    def __post_init__(self) -> None:
        if self.role not in ("user", "assistant"):
            raise ValueError(f"A message role is 'user' or 'assistant', not {self.role!r}.")

    @property
    def text(self) -> str:
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [b for b in self.content if isinstance(b, ToolCall)]

    @property
    def tool_results(self) -> list[ToolResult]:
        return [b for b in self.content if isinstance(b, ToolResult)]

    def to_api(self) -> JSONObject:
        return {"role": self.role, "content": [b.to_api() for b in self.content]}

    @classmethod
    def from_api(cls, data: JSONObject) -> "Message":
        content = data.get("content", [])
        if isinstance(content, str):
            blocks: list[Block] = [TextBlock(content)]
        else:
            blocks = [block_from_api(b) for b in content]
        return cls(data["role"], blocks)


@dataclass
class Transcript:
    """The conversation so far, oldest first."""

    messages: list[Message] = field(default_factory=list)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages)

    def __len__(self) -> int:
        return len(self.messages)

    def add_user(self, text: str) -> Message:
        return self.append(Message("user", [TextBlock(text)]))

    def append(self, message: Message) -> Message:
        self.messages.append(message)
        return message

    def user_texts(self) -> list[str]:
        """The texts the user typed (not tool results, which travel in user messages too)."""
        return [m.text for m in self.messages if m.role == "user" and m.text]

    def tool_calls(self) -> list[ToolCall]:
        return [c for m in self.messages for c in m.tool_calls]

    def result_for(self, call_id: str) -> ToolResult | None:
        for m in self.messages:
            for r in m.tool_results:
                if r.tool_use_id == call_id:
                    return r
        return None

    def to_api(self) -> list[JSONObject]:
        return [m.to_api() for m in self.messages]

    @classmethod
    def from_api(cls, messages: list[JSONObject]) -> "Transcript":
        return cls([Message.from_api(m) for m in messages])

    def to_json(self) -> str:
        return json.dumps(self.to_api(), ensure_ascii=False)
