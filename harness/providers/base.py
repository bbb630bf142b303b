"""What every model provider offers the agent loop: one async ``complete`` call.

Introduced in Chapter 0. The loop (Chapter 3) never knows whether Claude, the offline stand-in
model or a scripted test double is answering; that is what lets every chapter run offline and,
with a key, unchanged on Claude.
"""
from __future__ import annotations

from dataclasses import astuple, dataclass
from typing import Any, Protocol, Sequence, runtime_checkable

from harness.core.messages import Message, ToolResult, Transcript
from harness.core.tools import Tool

#: Stop reasons that end a run with that reason as its outcome (the API's names, and the loop guard's), and why.
ENDING_STOPS = {
    "max_tokens": "the reply was cut off at max_tokens, so this call may be incomplete",
    "refusal": "the model declined to continue",
    "model_context_window_exceeded": "the conversation no longer fits the model's context window",
    "repeated_call": "the run ended when the model repeated its previous calls (the loop guard)",
}


class ProviderError(RuntimeError):
    """A model call failed in a way the user must act on; the message is one plain sentence."""


@dataclass(frozen=True)
class Usage:
    """The tokens a reply was billed for; ``+`` adds two (a run's total), cache reads and writes kept apart."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0  # prompt caching: written to the cache (billed at a premium)
    cache_read_input_tokens: int = 0  # prompt caching: read from it (billed at a discount)

    def __add__(self, other: Usage) -> Usage:
        return Usage(*(a + b for a, b in zip(astuple(self), astuple(other))))

    @classmethod
    def from_api(cls, usage: Any) -> Usage:  # Any: the SDK's usage object, parsed from the API's JSON
        """The Messages API's ``usage``; the cache fields are absent or null where nothing was cached."""
        return cls(usage.input_tokens, usage.output_tokens,
                   getattr(usage, "cache_creation_input_tokens", None) or 0,
                   getattr(usage, "cache_read_input_tokens", None) or 0)


@dataclass(frozen=True)
class ModelTurn:
    """One model response: an assistant message, why it stopped, and what it cost."""

    message: Message
    stop_reason: str
    usage: Usage = Usage()
    model: str = ""
    from_text: bool = False  # its call was read from what the model wrote as text (harness.providers.text_calls)


@runtime_checkable
class Provider(Protocol):
    name: str

    async def complete(
        self, *, system: str, transcript: Transcript, tools: Sequence[Tool], max_tokens: int = 1024
    ) -> ModelTurn:
        """The model's next message given the conversation and the tools shown this turn."""
        ...


def stop_outcome(turn: ModelTurn) -> str | None:
    """The run's outcome when this turn's stop reason ends it (see :data:`ENDING_STOPS`), else None."""
    return turn.stop_reason if turn.stop_reason in ENDING_STOPS else None


def unrun_results(message: Message, outcome: str) -> list[ToolResult]:
    """Error results for the tool calls of a turn that ended with ``outcome``: a call cut off at
    max_tokens may be incomplete, so none is run — but each gets a result, which keeps the
    transcript valid for the next request."""
    why = ENDING_STOPS[outcome]
    return [ToolResult(c.id, f"Not run: {why}.", is_error=True) for c in message.tool_calls]
