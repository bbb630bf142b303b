"""Model providers: what answers the agent loop (Claude, an OpenAI-compatible server, or a script).

Introduced in Chapter 0. ``AnthropicProvider`` and ``OpenAICompatProvider`` are loaded on first use (PEP 562)
because importing either SDK takes about two seconds, which a run that calls neither should not pay (and the
openai SDK is an optional extra). The workbook's own
models — the offline stand-in and the real small models run by llama.cpp — are :mod:`workbook.providers`.
"""
from __future__ import annotations

from typing import Any

from harness.providers.base import ModelTurn, Provider, ProviderError, Usage
from harness.providers.scripted import ScriptedProvider

__all__ = ["AnthropicProvider", "ModelTurn", "OpenAICompatProvider", "Provider", "ProviderError", "ScriptedProvider",
           "Usage"]


def __getattr__(name: str) -> Any:  # Any: lazily loads a class; each has its own type
    if name == "AnthropicProvider":
        from harness.providers.anthropic_provider import AnthropicProvider

        return AnthropicProvider
    if name == "OpenAICompatProvider":
        from harness.providers.openai_compat import OpenAICompatProvider

        return OpenAICompatProvider
    raise AttributeError(f"module 'harness.providers' has no attribute {name!r}")
