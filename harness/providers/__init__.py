"""Model providers: what answers the agent loop (Claude, an OpenAI-compatible server, or a script).

Introduced in Chapter 0. ``AnthropicProvider`` is loaded on first use (PEP 562) because importing the
anthropic SDK takes about two seconds, which a run that never calls Claude should not pay. The workbook's own
models — the offline stand-in and the real small models run by llama.cpp — are :mod:`workbook.providers`.
"""
from __future__ import annotations

from typing import Any

from harness.providers.base import ModelTurn, Provider, ProviderError, Usage
from harness.providers.scripted import ScriptedProvider

__all__ = ["AnthropicProvider", "ModelTurn", "Provider", "ProviderError", "ScriptedProvider", "Usage"]


def __getattr__(name: str) -> Any:  # Any: lazily loads a class; each has its own type
    if name == "AnthropicProvider":
        from harness.providers.anthropic_provider import AnthropicProvider

        return AnthropicProvider
    raise AttributeError(f"module 'harness.providers' has no attribute {name!r}")
