import asyncio
import time

import pytest

from conftest import run
from harness.registry import DuplicateToolError, ToolRegistry, truncate
from harness.tools import tool


def test_schemas_are_in_the_messages_api_shape(small_tools):
    schemas = ToolRegistry(small_tools).schemas()
    assert [s["name"] for s in schemas] == [t.name for t in small_tools]
    assert set(schemas[0]) == {"name", "description", "input_schema"}


def test_duplicate_names_fail_at_registration(small_tools):
    reg = ToolRegistry(small_tools)
    with pytest.raises(DuplicateToolError, match="'read_file' is already registered"):
        reg.register(small_tools[0])


def test_dispatch_runs_the_tool(small_tools):
    result = ToolRegistry(small_tools).dispatch("read_file", {"path": "a.txt"}, "c1")
    assert (result.tool_use_id, result.content, result.is_error) == ("c1", "contents of a.txt", False)


def test_unknown_tool_suggests_close_matches(small_tools):
    r = ToolRegistry(small_tools).dispatch("read_fil", {"path": "a"}, "c")
    assert r.is_error and r.content == "Unknown tool 'read_fil'. Did you mean: read_file, write_file?"


def test_known_but_unloaded_tool_says_so(small_tools):
    r = ToolRegistry(small_tools[:2], known=["post_message"]).dispatch("post_message", {}, "c")
    assert r.is_error and "exists but is not loaded this turn" in r.content


@pytest.mark.parametrize("args, message", [
    ({"path": 3}, "Invalid arguments for 'read_file': argument 'path' must be of type string, got int 3."),
    ({}, "Invalid arguments for 'read_file': missing required argument 'path'."),
    ({"path": "a", "mode": "r"}, "Invalid arguments for 'read_file': unexpected argument(s) 'mode'; it takes path."),
    ("a.txt", "Arguments for 'read_file' must be a JSON object, got str."),
])
def test_bad_arguments_name_the_field(small_tools, args, message):
    r = ToolRegistry(small_tools).dispatch("read_file", args, "c")
    assert r.is_error and r.content == message


def test_enum_violation_is_named():
    from typing import Literal

    @tool
    def close(state: Literal["open", "closed"]) -> str:
        """Close.

        Args:
            state: State.
        """
        return state

    r = ToolRegistry([close]).dispatch("close", {"state": "shut"})
    assert r.content == "Invalid arguments for 'close': argument 'state' must be one of ['open', 'closed'], got 'shut'."


def test_an_exception_in_the_tool_becomes_an_error_result():
    @tool
    def boom(x: int) -> int:
        """Explode.

        Args:
            x: Anything.
        """
        raise RuntimeError("disk on fire")

    r = ToolRegistry([boom]).dispatch("boom", {"x": 1})
    assert r.is_error and r.content == "Tool 'boom' failed: RuntimeError: disk on fire"


def test_a_tool_that_never_returns_times_out():
    @tool
    def hang(seconds: float) -> str:
        """Sleep.

        Args:
            seconds: How long.
        """
        time.sleep(seconds)
        return "woke"

    reg = ToolRegistry([hang], timeout=0.2)
    t0 = time.perf_counter()
    r = reg.dispatch("hang", {"seconds": 2.0})
    assert time.perf_counter() - t0 < 1.5
    assert r.is_error and r.content == "Tool 'hang' did not return within 0.2 s and was abandoned."


def test_adispatch_runs_async_and_sync_tools_and_times_out():
    @tool
    async def slow(seconds: float) -> str:
        """Wait.

        Args:
            seconds: How long.
        """
        await asyncio.sleep(seconds)
        return "done"

    @tool
    def fast(x: int) -> int:
        """Double.

        Args:
            x: A number.
        """
        return 2 * x

    reg = ToolRegistry([slow, fast], timeout=0.3)
    assert run(reg.adispatch("fast", {"x": 4})).content == "8"
    assert run(reg.adispatch("slow", {"seconds": 0.01})).content == "done"
    assert run(reg.adispatch("slow", {"seconds": 5})).is_error
    assert reg.dispatch("slow", {"seconds": 0}).content == "Tool 'slow' is asynchronous; call it with adispatch()."


def test_huge_results_are_truncated_with_a_note():
    @tool
    def dump(n: int) -> str:
        """Dump.

        Args:
            n: Size.
        """
        return "x" * n

    r = ToolRegistry([dump], max_result_chars=100).dispatch("dump", {"n": 1000})
    assert r.content.endswith("[truncated: 900 of 1,000 characters cut]")
    assert r.content.startswith("x" * 100 + "\n")
    assert truncate("short", 100) == "short"


def test_structured_results_are_json(small_tools):
    assert ToolRegistry(small_tools).dispatch("search_code", {"query": "TODO"}).content == '["src/app.py:3: TODO"]'
