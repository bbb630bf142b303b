import asyncio
import time

import pytest

from conftest import run
from harness.core.registry import DuplicateToolError, ToolRegistry, truncate
from harness.core.tools import tool


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


# --- issue 18: hostile schemas, SystemExit, invalid Unicode, hung sync tools -----------------

from harness.core.tools import Tool  # noqa: E402

HOSTILE_SCHEMAS = [
    {"type": "object", "properties": {"x": {"$ref": "#/properties/x"}}},
    {"type": "object", "$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}]}}, "properties": {"x": {"$ref": "#/$defs/a"}}},
    {"type": "object", "properties": {"x": {"enum": 5}}},
    {"type": "object", "properties": {"x": {"type": "integer", "minimum": "3"}}},
    {"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}},
]


@pytest.mark.parametrize("schema", HOSTILE_SCHEMAS)
def test_a_hostile_schema_is_caught_at_registration_and_never_breaks_dispatch(schema):
    reg = ToolRegistry([Tool("hostile", "A tool.", schema, fn=lambda **kw: "ran")])
    assert list(reg.invalid) == ["hostile"] and "\n" not in reg.invalid["hostile"]
    sync = reg.dispatch("hostile", {"x": 1}, "c")
    sync_nested = reg.dispatch("hostile", {"x": {"x": {"x": 1}}}, "c")
    async_ = run(reg.adispatch("hostile", {"x": 1}, "c"))
    for r in (sync, sync_nested, async_):
        assert r.is_error and r.content.startswith("Tool 'hostile' cannot be called: its input schema is invalid (")


def test_a_recursive_schema_that_reads_input_is_fine():
    tree = {"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#"}}}}
    reg = ToolRegistry([Tool("tree", "A tree.", tree, fn=lambda **kw: "ok")])
    assert not reg.invalid
    bad = reg.dispatch("tree", {"children": [{"children": [{"name": 3}]}]})
    assert bad.content == "Invalid arguments for 'tree': argument 'children[0].children[0].name' must be of type string, got int 3."


def test_arguments_nested_past_the_limit_are_refused_not_recursed():
    reg = ToolRegistry([Tool("deep", "Deep.", {"type": "object", "additionalProperties": True}, fn=lambda **kw: "ok")])
    value: dict = {}
    for _ in range(5_000):
        value = {"x": value}
    assert "nest deeper than" in reg.dispatch("deep", {"v": value}).content


def test_a_tool_calling_sys_exit_becomes_an_error_result():
    import argparse

    def cli(argv: str) -> str:
        """Parse a command line the argparse way.

        Args:
            argv: The arguments.
        """
        argparse.ArgumentParser(prog="cli").parse_args(argv.split())  # exits on bad input
        return "parsed"

    async def async_exit() -> str:
        """Exit from a coroutine."""
        raise SystemExit(3)

    reg = ToolRegistry([tool(cli), tool(async_exit)])
    sync = reg.dispatch("cli", {"argv": "--nope"}, "c1")
    from_loop = run(reg.adispatch("cli", {"argv": "--nope"}, "c2"))
    coroutine = run(reg.adispatch("async_exit", {}, "c3"))
    assert sync.is_error and sync.content == "Tool 'cli' tried to exit the program (SystemExit: 2); the program goes on."
    assert from_loop.content == sync.content
    assert coroutine.content == "Tool 'async_exit' tried to exit the program (SystemExit: 3); the program goes on."


def test_results_with_lone_surrogates_become_valid_unicode():
    name = b"caf\xe9.txt".decode("utf-8", "surrogateescape")  # a Latin-1 file name as os.listdir gives it

    def listing() -> str:
        """List files."""
        return f"files: {name}, odd \ud800"

    def failing() -> str:
        """Fail naming a file."""
        raise ValueError(f"cannot open {name}")

    reg = ToolRegistry([tool(listing), tool(failing)])
    for r in (reg.dispatch("listing", {}), run(reg.adispatch("listing", {})), reg.dispatch("failing", {})):
        r.content.encode("utf-8")  # raises on a lone surrogate
    assert reg.dispatch("listing", {}).content == "files: caf\\xe9.txt, odd \ufffd"


def test_hung_sync_tools_do_not_exhaust_a_shared_pool():
    import threading

    release = threading.Event()

    def hang() -> str:
        """Hang until released."""
        release.wait(30)
        return "late"

    def quick() -> str:
        """Answer at once."""
        return "quick"

    reg = ToolRegistry([tool(hang), tool(quick)], timeout=0.2)
    try:
        hung = [reg.dispatch("hang", {}) for _ in range(10)]
        assert all(r.is_error and "did not return within" in r.content for r in hung)
        began = time.perf_counter()
        assert reg.dispatch("quick", {}).content == "quick"
        assert run(reg.adispatch("quick", {})).content == "quick"
        assert time.perf_counter() - began < 1
        # A hung call's thread must not keep the interpreter from exiting.
        assert all(t.daemon for t in threading.enumerate() if t.name.startswith("tool:hang"))
    finally:
        release.set()


def test_a_hung_sync_tool_does_not_block_interpreter_exit(tmp_path):
    import subprocess
    import sys

    script = (
        "import threading\n"
        "from harness.core.registry import ToolRegistry\n"
        "from harness.core.tools import tool\n"
        "@tool\n"
        "def hang() -> str:\n"
        "    '''Hang forever.'''\n"
        "    threading.Event().wait()\n"
        "print(ToolRegistry([hang], timeout=0.2).dispatch('hang', {}).is_error)\n"
    )
    began = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                         env={**__import__("os").environ, "PYTHONPATH": str(__import__("pathlib").Path(__file__).parents[1])})
    assert out.stdout.strip() == "True" and out.returncode == 0
    assert time.perf_counter() - began < 20
