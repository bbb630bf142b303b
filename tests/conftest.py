"""Shared fixtures: a small, fixed tool set that every core test can reason about by hand."""
from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from harness.tools import tool

# Tests never talk to the real API, whatever the developer's shell holds.
os.environ.pop("ANTHROPIC_API_KEY", None)
sys.path.insert(0, str(Path(__file__).parent))


def run(coro):
    """Run a coroutine from a sync test (no pytest-asyncio here)."""
    return asyncio.run(coro)


@tool(tags={"read"}, domain="files")
def read_file(path: str) -> str:
    """Read a text file from the workspace and return its contents.

    Args:
        path: Path of the file, relative to the workspace.
    """
    return f"contents of {path}"


@tool(tags={"write"}, domain="files")
def write_file(path: str, content: str) -> str:
    """Write text to a file in the workspace, replacing it.

    Args:
        path: Path of the file to write.
        content: The text to write.
    """
    return f"wrote {len(content)} characters to {path}"


@tool(tags={"write", "network"}, domain="chat")
def post_message(channel: str, text: str) -> str:
    """Post a message to a team chat channel.

    Args:
        channel: Channel name, like dev or general.
        text: The message to post.
    """
    return f"posted to #{channel.lstrip('#')}"


@tool(tags={"read"}, domain="code")
def search_code(query: str) -> list[str]:
    """Search the source code for a text pattern and return matching lines.

    Args:
        query: Text to look for in the code.
    """
    return [f"src/app.py:3: {query}"]


@tool(tags={"read"}, domain="docs")
def search_docs(query: str) -> list[str]:
    """Search the project documentation pages for a topic.

    Args:
        query: Topic to look up in the documentation.
    """
    return [f"docs/guide.md: {query}"]


@tool(tags={"write"}, domain="calendar")
def create_event(title: str, date: str, time: str = "09:00") -> str:
    """Create a calendar event.

    Args:
        title: Event title.
        date: Day of the event, YYYY-MM-DD.
        time: Start time, HH:MM.
    """
    return f"event {title!r} on {date} at {time}"


SMALL_TOOLS = [read_file, write_file, post_message, search_code, search_docs, create_event]


@pytest.fixture
def small_tools():
    return list(SMALL_TOOLS)


def pytest_configure(config):
    config.addinivalue_line("markers", "real_model: runs the local llama.cpp model (skips unless `make real-model` installed it)")
