"""What every model provider offers the agent loop: one async ``complete`` call.

Introduced in Chapter 0. The loop (Chapter 3) never knows whether Claude, the offline stand-in
model or a scripted test double is answering; that is what lets every chapter run offline and,
with a key, unchanged on Claude.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence, runtime_checkable

from harness.messages import Message, Transcript
from harness.tools import Tool


class ProviderError(RuntimeError):
    """A model call failed in a way the user must act on; the message is one plain sentence."""


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class ModelTurn:
    """One model response: an assistant message, why it stopped, and what it cost."""

    message: Message
    stop_reason: str
    usage: Usage = Usage()
    model: str = ""


@runtime_checkable
class Provider(Protocol):
    name: str

    async def complete(
        self, *, system: str, transcript: Transcript, tools: Sequence[Tool], max_tokens: int = 1024
    ) -> ModelTurn:
        """The model's next message given the conversation and the tools shown this turn."""
        ...
