"""A provider wrapper that records answers to a file, so a re-run never pays twice.

Introduced in Chapter 1, where a sweep on Claude makes hundreds of calls.

The key is a SHA-256 of everything that determines the answer (model, system prompt,
transcript, tools shown, max_tokens). Only requests and responses are stored, never the API
key. Delete the file to spend again.

A line cut mid-write (a killed kernel) or edited by hand is skipped and listed in ``damaged``
(and logged): the other answers are kept, and that request is simply asked again. Each new line
goes to the file in one ``write`` on a file opened for appending, after a newline if the last
line was cut, so a new answer is never glued onto a damaged one.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import asdict
from pathlib import Path
from typing import Sequence

from harness.core.messages import Message, Transcript
from harness.providers.base import ModelTurn, Provider, Usage
from harness.core.tools import Tool
from harness.core.json_types import JSONObject

log = logging.getLogger(__name__)
_FIELDS = {"key", "message", "stop_reason", "usage", "model"}


class CachedProvider:
    def __init__(self, inner: Provider, path: str | Path) -> None:
        self.inner = inner
        self.name = f"{inner.name} (cached)"
        self.path = Path(path)
        self.hits = self.misses = 0
        self._cache: dict[str, JSONObject] = {}
        self.damaged: list[str] = []  # one sentence per line that could not be read
        if self.path.is_dir():
            raise ValueError(f"The answer cache {self.path} is a folder, not a file: name a file in it, "
                             f"e.g. {self.path / 'answers.jsonl'}.")
        if self.path.exists():
            self._load()

    def _load(self) -> None:
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise ValueError(f"The answer cache {self.path} cannot be read: {exc.strerror or exc}.") from None
        for number, raw in enumerate(data.split(b"\n"), start=1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw.decode("utf-8"))
                if not isinstance(row, dict) or not _FIELDS <= set(row):
                    raise ValueError("not a cache row")
                self._cache[row["key"]] = row
            except ValueError:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
                self.damaged.append(f"{self.path}, line {number}: not valid JSON (cut off or edited?); skipped")
                log.warning(self.damaged[-1])

    def __repr__(self) -> str:
        return f"CachedProvider({self.inner!r}, path={self.path.name!r}, entries={len(self._cache)})"

    def key(self, system: str, transcript: Transcript, tools: Sequence[Tool], max_tokens: int) -> str:
        blob = json.dumps(
            {"model": getattr(self.inner, "model", self.inner.name), "system": system, "messages": transcript.to_api(),
             "tools": [t.to_api() for t in tools], "max_tokens": max_tokens},
            sort_keys=True, ensure_ascii=False,
        )
        return hashlib.sha256(blob.encode()).hexdigest()

    async def complete(self, *, system: str, transcript: Transcript, tools: Sequence[Tool], max_tokens: int = 1024) -> ModelTurn:
        key = self.key(system, transcript, tools, max_tokens)
        row = self._cache.get(key)
        if row is not None:
            self.hits += 1
            return ModelTurn(Message.from_api(row["message"]), row["stop_reason"], Usage(**row["usage"]), row["model"])
        self.misses += 1
        turn = await self.inner.complete(system=system, transcript=transcript, tools=tools, max_tokens=max_tokens)
        row = {"key": key, "message": turn.message.to_api(), "stop_reason": turn.stop_reason,
               "usage": asdict(turn.usage), "model": turn.model}
        self._cache[key] = row
        self._append(json.dumps(row, ensure_ascii=False))
        return turn

    def _append(self, line: str) -> None:
        """One line added in a single write, starting on a line of its own."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            cut = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
            os.write(fd, (("\n" if cut else "") + line + "\n").encode("utf-8"))
        finally:
            os.close(fd)
