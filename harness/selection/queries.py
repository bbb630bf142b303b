"""Queries from the transcript: what the selector searches with on each turn.

Introduced in Chapter 3 (``notebooks/03_transcript_queries.ipynb``).

The user's words say what the task is; the recent tool calls say where the work is now. A
query made of only the first message forgets the middle of a long task; one made of only the
latest turns forgets the task. Chapter 3 measures three strategies side by side; they share
one signature, ``(transcript) -> str``, so the loop takes any of them.
"""
from __future__ import annotations

from typing import Callable

from harness.core.messages import Transcript

QueryFn = Callable[[Transcript], str]


def _recent_activity(transcript: Transcript, recent: int) -> list[str]:
    """Assistant texts and tool calls (name and argument keys) of the last ``recent`` assistant turns."""
    turns = [m for m in transcript.messages if m.role == "assistant"][-recent:] if recent > 0 else []
    parts: list[str] = []
    for m in turns:
        if m.text:
            parts.append(m.text)
        for call in m.tool_calls:
            parts.append(" ".join([call.name, *call.input.keys()]))
    return parts


def query_from_user_message(transcript: Transcript) -> str:
    """Only the latest thing the user typed."""
    texts = transcript.user_texts()
    return texts[-1] if texts else ""


def query_from_transcript(transcript: Transcript, recent: int = 3) -> str:
    """The first user message plus the last few assistant texts and tool calls (names, argument keys)."""
    texts = transcript.user_texts()
    head = [texts[0]] if texts else []
    return " ".join(head + _recent_activity(transcript, recent))


def query_from_recent(transcript: Transcript, recent: int = 3) -> str:
    """The latest user message plus the last few assistant texts and tool calls."""
    return " ".join(filter(None, [query_from_user_message(transcript), *_recent_activity(transcript, recent)]))


#: The query the loop ranks tools with when nobody says otherwise (``arun``, the real-model runs).
#: Chapter 3 measures the latest user message ahead on conversations that pivot; this stays the
#: transcript query until the rule in ``experiments/data/real_model_rules.json`` separates them on the
#: real model's choices (Chapter 7's page says so).
DEFAULT_QUERY: QueryFn = query_from_transcript

#: Named as :data:`experiments.real_rules.QUERY_CONFIGS` names them, so Chapter 3's stand-in and
#: real-model tables call each query the same.
QUERY_STRATEGIES: dict[str, QueryFn] = {
    "latest message": query_from_user_message,
    "transcript": query_from_transcript,
    "latest message + recent turns": query_from_recent,
}
