"""A provider that replays scripted replies: for tests and for demonstrations of one exact run.

Introduced in Chapter 0. Each scripted reply is a text, a ready ``Message``, or a function of
(transcript, tools shown) returning one; every call is recorded so a test can check what the
loop showed the model.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence, Union

from harness.core.messages import Message, TextBlock, Transcript
from harness.providers.base import ModelTurn, ProviderError, Usage
from harness.core.tools import Tool

Reply = Union[str, Message, Callable[[Transcript, Sequence[Tool]], Message]]


@dataclass
class ScriptedCall:
    transcript: list[dict]
    tool_names: list[str]


@dataclass
class ScriptedProvider:
    replies: list[Reply]
    name: str = "scripted"
    calls: list[ScriptedCall] = field(default_factory=list)

    async def complete(
        self, *, system: str, transcript: Transcript, tools: Sequence[Tool], max_tokens: int = 1024
    ) -> ModelTurn:
        self.calls.append(ScriptedCall(transcript.to_api(), [t.name for t in tools]))
        if len(self.calls) > len(self.replies):
            raise ProviderError(f"The script has {len(self.replies)} replies and the loop asked for more.")
        reply = self.replies[len(self.calls) - 1]
        if callable(reply) and not isinstance(reply, Message):
            reply = reply(transcript, tools)
        message = reply if isinstance(reply, Message) else Message("assistant", [TextBlock(str(reply))])
        stop = "tool_use" if message.tool_calls else "end_turn"
        return ModelTurn(message, stop, Usage(), self.name)
