"""Prompt-cache tokens survive every step from the provider's reply to a run's total.

Anthropic bills cache writes at a premium and cache reads at a tenth of the input price
(:mod:`workbook.evaluation.prompt_cache`), so a total that drops them understates a cached run's
reads and a first run's writes.
"""
from __future__ import annotations

from typing import Sequence

from conftest import run
from harness.core.messages import Message, TextBlock, ToolCall, Transcript
from harness.core.tools import Tool
from harness.providers.base import ModelTurn, Provider, Usage
from harness.providers.cached import CachedProvider
from harness.selection.agent import arun
from harness.selection.catalog import ToolCatalog

TURN_USAGE = Usage(input_tokens=10, output_tokens=2, cache_creation_input_tokens=300, cache_read_input_tokens=40)


class CachingModel:
    """Calls the first tool it is shown once, then answers; every reply bills the same cache use."""

    name = "caching"

    async def complete(self, *, system: str, transcript: Transcript, tools: Sequence[Tool],
                       max_tokens: int = 1024) -> ModelTurn:
        if len(transcript.messages) == 1:
            return ModelTurn(Message("assistant", [ToolCall("c1", tools[0].name, {"path": "a.txt"})]), "tool_use",
                             TURN_USAGE, self.name)
        return ModelTurn(Message("assistant", [TextBlock("done")]), "end_turn", TURN_USAGE, self.name)


def test_usages_add_up_field_by_field():
    assert TURN_USAGE + Usage(1, 1, 1, 1) == Usage(11, 3, 301, 41)
    assert sum([TURN_USAGE, TURN_USAGE], Usage()) == Usage(20, 4, 600, 80)


def test_a_runs_usage_keeps_the_cache_reads_and_writes_of_every_turn(small_tools):
    model: Provider = CachingModel()
    result = run(arun(model, ToolCatalog(small_tools), "Read the file 'a.txt'"))
    assert len(result.turns) == 2
    assert result.usage == Usage(20, 4, 600, 80)


def test_a_reply_served_from_the_cache_file_keeps_its_cache_tokens(tmp_path, small_tools):
    t = Transcript()
    t.add_user("Read the file 'a.txt'")
    path = tmp_path / "cache.jsonl"
    first = run(CachedProvider(CachingModel(), path).complete(system="s", transcript=t, tools=small_tools))
    again = CachedProvider(CachingModel(), path)
    second = run(again.complete(system="s", transcript=t, tools=small_tools))
    assert again.hits == 1 and first.usage == second.usage == TURN_USAGE
