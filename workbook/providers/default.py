"""Which model answers: Claude when an API key is set, else a model server of the reader's own when one is named,
else the offline stand-in model.

Introduced in Chapter 0; every chapter's setup cell calls :func:`default_provider`.

The choice is made in one place so that every chapter runs offline by default and, given a key or a model
server, unchanged on Claude or on any OpenAI-compatible endpoint (Ollama, LM Studio, vLLM, llama.cpp's
``llama-server``, OpenAI). Claude comes first when both are set: its key is the older setting of this workbook,
and ``harness measure --provider`` picks either explicitly. It prints one line saying which model it picked and
why, because a reader must know whether a cell costs money; the line names where a key came from, never the
key. An SDK is imported only when its model is chosen: offline runs do not pay for it.
"""
from __future__ import annotations

from harness.providers.base import Provider
from harness.providers.settings import setting

KEY_NAME = "ANTHROPIC_API_KEY"
#: Naming a model served at ``OPENAI_BASE_URL`` (``harness.providers.openai_compat``) chooses it.
MODEL_NAME = "OPENAI_MODEL"
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
    """Claude when ANTHROPIC_API_KEY is set (environment first, then .env); else the model OPENAI_MODEL names at
    OPENAI_BASE_URL; else the offline model."""
    source = key_source()
    model, model_source = setting(MODEL_NAME)
    provider: Provider
    if source is not None:
        from harness.providers.anthropic_provider import AnthropicProvider

        provider = AnthropicProvider()
        line = f"Model: Claude {provider.model} via the Anthropic API (key from {_SOURCES[source]}) — calls are billed."
    elif model is not None:
        from harness.providers.openai_compat import OpenAICompatProvider

        provider = OpenAICompatProvider()
        line = (f"Model: {model} at an OpenAI-compatible endpoint ({MODEL_NAME} in {model_source}; {provider!r}) — "
                "a hosted one bills its calls.")
    else:
        provider = offline_model()
        line = "Model: offline stand-in (no ANTHROPIC_API_KEY set) — deterministic, no network."
    if verbose:
        print(line)
    return provider
