"""Shared fixtures: a small, fixed tool set that every core test can reason about by hand."""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

import workbook.research  # noqa: F401  (the research retrievers by name, as the chapters have them)
from harness.core.tools import tool

# Tests never talk to the real API, whatever the developer's shell holds.
os.environ.pop("ANTHROPIC_API_KEY", None)
sys.path.insert(0, str(Path(__file__).parent))


@pytest.hookimpl(trylast=True)  # after -k and -m have deselected theirs
def pytest_collection_modifyitems(config, items):
    """Run each heavy file once: when tests/test_no_litter.py's child pytest will run them (with a
    fresh, watched temp folder), this session does not run them again. Their failures show in that
    test's report. Run alone (or with no_litter deselected), they run here as usual."""
    from test_no_litter import HEAVY, test_heavy_parts_of_the_suite_leave_the_temp_folder_as_they_found_it as child

    if not any(getattr(item, "function", None) is child for item in items):
        return
    twice = [item for item in items if item.nodeid.split("::")[0] in HEAVY]
    if twice:
        config.hook.pytest_deselected(items=twice)
        items[:] = [item for item in items if item.nodeid.split("::")[0] not in HEAVY]


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Compare each notebook's whole nbval run in this session with its committed run time
    (notebooks/run_times.json, which the chapters' stated run times are tested against) and say which
    drifted beyond 2×. A warning, not a failure: a session's time follows the machine's load, the
    real model (Chapter 1 re-checks it only where installed) and first-run caches, so failing here
    would fail honest code on a busy machine; the stated times themselves are tested against the
    committed measurement in tests/test_reading_time.py, and this line says when to re-measure.
    nbval's times are wall-clock, as are the file's when measured with nothing else running (--quiet)."""
    from workbook.views.reading_time import RUN_TIMES, all_notebooks, load_notebook, measured_seconds, run_time_drift

    seconds: dict[str, float] = {}
    cells: dict[str, int] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            name = getattr(report, "nodeid", "").split("::")[0]
            if name.endswith(".ipynb") and hasattr(report, "duration"):
                seconds[name] = seconds.get(name, 0.0) + report.duration
                cells[name] = cells.get(name, 0) + (report.when == "call")
    root = Path(str(config.rootpath))
    timed = {p.relative_to(root).as_posix() for p in all_notebooks(root)}  # chapters and solutions, not starters
    whole = {name: s for name, s in seconds.items() if name in timed  # a notebook run in part (-k, -x) says nothing
             and cells[name] == sum(c["cell_type"] == "code" for c in load_notebook(root / name)["cells"])}
    if whole and (root / RUN_TIMES).exists():
        lines = run_time_drift(whole, measured_seconds(root))
        if lines:
            terminalreporter.write_sep("-", "notebook run times beyond 2x of notebooks/run_times.json "
                                            "(re-measure: scripts/measure_run_times.py)")
            for line in lines:
                terminalreporter.write_line(line)


def pytest_sessionfinish(session, exitstatus):
    """nbval stops each notebook's kernel with SIGKILL, and a test may kill a proxy, which runs no
    clean-up: remove the demo worlds, chapter sandboxes and MCP log folders such killed processes left in the temp folder."""
    from workbook.demo.world import remove_stale_worlds
    from harness.mcp.client import LOG_PREFIX
    from harness.core.temp_folders import remove_stale_folders
    from harness.__main__ import SERVE_PREFIX
    from workbook.sandbox import remove_stale_sandboxes

    remove_stale_worlds()
    remove_stale_folders(LOG_PREFIX)
    remove_stale_folders(SERVE_PREFIX)
    remove_stale_sandboxes()


@pytest.fixture
def no_settings(monkeypatch, tmp_path) -> Path:
    """No setting leaks in from the machine: an empty working folder (no .env here or above it that
    the tests made), no key, model or base URL in the environment, Anthropic's or an OpenAI-compatible server's.
    Returns that folder."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HARNESS_ENV_FILE", raising=False)
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_MODEL", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL",
                 "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def run_pytest(args: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    """A child pytest over ``args`` from the repository root, with extra environment, its output captured."""
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp",
                           str(tmp_path / "base"), *args], cwd=Path(__file__).resolve().parents[1],
                          env={**os.environ, **env}, capture_output=True, text=True)


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


async def reindexed(proxy, seconds: float = 10.0) -> int:
    """How many times ``proxy`` re-indexed, once it has at least once (or ``seconds`` passed): an upstream's
    list_changed is handled in the background, so a test waits for it rather than sleeping a fixed time."""
    import asyncio

    for _ in range(int(seconds / 0.05)):
        if proxy.reindexed:
            break
        await asyncio.sleep(0.05)
    return proxy.reindexed
