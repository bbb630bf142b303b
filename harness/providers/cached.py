"""A provider wrapper that records answers to a file, so a re-run never pays twice.

Introduced in Chapter 1, where a sweep on Claude makes hundreds of calls.

The key is a SHA-256 of everything that determines the answer (model, system prompt,
transcript, tools shown, max_tokens). Only requests and responses are stored, never the API
key. Delete the file to spend again.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Sequence

from harness.messages import Message, Transcript
from harness.providers.base import ModelTurn, Usage
from harness.tools import Tool


class CachedProvider:
    def __init__(self, inner: Any, path: str | Path) -> None:
        self.inner = inner
        self.name = f"{inner.name} (cached)"
        self.path = Path(path)
        self.hits = self.misses = 0
        self._cache: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    self._cache[row["key"]] = row

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
               "usage": {"input_tokens": turn.usage.input_tokens, "output_tokens": turn.usage.output_tokens}, "model": turn.model}
        self._cache[key] = row
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
        return turn
