"""Model providers: what answers the agent loop (Claude, the offline stand-in, or a script).

Introduced in Chapter 0. ``AnthropicProvider`` is loaded on first use (PEP 562) because
importing the anthropic SDK takes about two seconds, which offline runs should not pay.
"""
from __future__ import annotations

from typing import Any

from harness.providers.base import ModelTurn, Provider, ProviderError, Usage
from harness.providers.default import default_provider, key_source, online
from harness.providers.offline import OfflineModel
from harness.providers.scripted import ScriptedProvider

__all__ = [
    "AnthropicProvider", "ModelTurn", "OfflineModel", "Provider", "ProviderError", "ScriptedProvider", "Usage",
    "default_provider", "key_source", "online",
]


def __getattr__(name: str) -> Any:  # Any: lazily loads a class or function; each has its own type
    if name == "AnthropicProvider":
        from harness.providers.anthropic_provider import AnthropicProvider

        return AnthropicProvider
    raise AttributeError(f"module 'harness.providers' has no attribute {name!r}")
