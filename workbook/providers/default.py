"""Which model answers: Claude when an API key is set, else the offline stand-in model.

Introduced in Chapter 0; every chapter's setup cell calls :func:`default_provider`.

The choice is made in one place so that every chapter runs offline by default and, given a key,
unchanged on Claude. It prints one line saying which model it picked and why, because a reader
must know whether a cell costs money; the line names where the key came from, never the key.
The SDK is imported only when a key is present: offline runs do not pay for it.
"""
from __future__ import annotations

from harness.providers.base import Provider
from harness.providers.settings import setting

KEY_NAME = "ANTHROPIC_API_KEY"
_SOURCES = {"environment": "ANTHROPIC_API_KEY in the environment", ".env": "ANTHROPIC_API_KEY in .env"}


def key_source() -> str | None:
    """Where the Anthropic API key comes from: 'environment', '.env', or None when there is none."""
    return setting(KEY_NAME)[1]


def online() -> bool:
    """True when a key is set, so :func:`default_provider` will call Claude."""
    return key_source() is not None


def offline_model() -> Provider:
    """The deterministic stand-in model that needs no network."""
    from workbook.providers.offline import OfflineModel

    return OfflineModel()


def default_provider(verbose: bool = True) -> Provider:
    """Claude when ANTHROPIC_API_KEY is set (environment first, then .env), else the offline model."""
    source = key_source()
    if source is None:
        provider = offline_model()
        line = "Model: offline stand-in (no ANTHROPIC_API_KEY set) — deterministic, no network."
    else:
        from harness.providers.anthropic_provider import AnthropicProvider

        provider = AnthropicProvider()
        line = f"Model: Claude {provider.model} via the Anthropic API (key from {_SOURCES[source]}) — calls are billed."
    if verbose:
        print(line)
    return provider
