"""Whether the real-model tests can run here (one answer for every test file that re-checks committed runs); the
real model behind llama-server's OpenAI-compatible endpoint is :func:`workbook.providers.local_llama.openai_endpoint`,
which Chapter 7 uses too."""
from __future__ import annotations

import pytest

from harness.providers.base import ProviderError
from workbook.providers.local_llama import find_install, openai_endpoint

__all__ = ["model_missing", "needs_model", "openai_endpoint"]


def model_missing() -> str | None:
    """Why the real-model tests cannot run here (None when they can)."""
    try:
        return None if find_install() else "the real model is not installed: run `make real-model`"
    except ProviderError as e:
        return str(e)


#: Marks a test that runs the local llama.cpp model, skipped (saying why) where it is not installed.
needs_model = pytest.mark.skipif(model_missing() is not None, reason=str(model_missing()))
