"""Whether the real-model tests can run here (one answer for every test file that re-checks committed runs), and the
real model behind llama-server's OpenAI-compatible endpoint for the tests of the provider that talks to it."""
from __future__ import annotations

import contextlib
from typing import Iterator

import pytest

from harness.providers.base import ProviderError
from workbook.providers.local_llama import LocalLlamaServer, find_install


def model_missing() -> str | None:
    """Why the real-model tests cannot run here (None when they can)."""
    try:
        return None if find_install() else "the real model is not installed: run `make real-model`"
    except ProviderError as e:
        return str(e)


#: Marks a test that runs the local llama.cpp model, skipped (saying why) where it is not installed.
needs_model = pytest.mark.skipif(model_missing() is not None, reason=str(model_missing()))


@contextlib.contextmanager
def openai_endpoint(model: str = "0.5b", slots: int = 1, context: int = 16384) -> Iterator[str]:
    """llama-server's own OpenAI-compatible endpoint on the real model, on 127.0.0.1 and a free port, with ``slots``
    requests served at once (``--jinja``: the model's chat template renders the tools and parses their calls);
    yields its ``/v1`` address and stops the server when the block ends."""
    install = find_install(model=model)
    if install is None:
        raise ProviderError(f"the real model {model} is not installed: run `make real-model`")
    server = LocalLlamaServer(install, context=context, extra_args=["--jinja", "-np", str(slots)])
    try:
        yield server.url + "/v1"
    finally:
        server.close()
