"""The README's "As a library" examples, run as written: each is taken from the README here, so the two cannot drift.

Reading and running them is :mod:`workbook.own_loop`'s, which Chapter 7 uses too: the chapter shows and runs what
these tests check. The Anthropic one runs against the workbook's fake Messages API
(``workbook/providers/fake_anthropic.py``), which refuses a ``tool_reference`` to a tool not sent deferred and a
deferred tool no result names. The OpenAI one runs against the real small model behind llama-server's own
OpenAI-compatible endpoint where ``make real-model`` installed it, and always against a small fake endpoint with
scripted replies, which shows where the found definitions went.
"""
from __future__ import annotations

import pytest

from real_model_support import needs_model
from experiments import measure
from harness.providers.chat_format import FOUND_HEADER
from workbook import own_loop
from workbook.own_loop import (FORECAST, OPENAI_TURNS_LINE, LoopRun, keeps_prefix, on_fake_anthropic,
                               on_fake_openai, on_llama_server, readme_loop, readme_section, request_lines)

SECTION = readme_section()


def test_each_example_is_about_thirty_lines():
    for sdk in ("anthropic", "openai"):
        assert 25 <= len(readme_loop(sdk).splitlines()) <= 36, sdk


def test_the_anthropic_example_sends_found_tools_deferred_and_named_in_the_result_that_found_them(tmp_path):
    done = on_fake_anthropic(tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.printed[:2] == ["→ search_tools {'query': 'weather forecast'}", "→ get_forecast {'city': 'Oslo'}"]
    assert FORECAST in done.printed[2]  # the fake's last answer quotes what get_forecast returned
    first, second, third = done.requests
    assert [t["name"] for t in first["tools"]] == ["search_tools"] and "defer_loading" not in first["tools"][0]
    assert second["tools"][0] == first["tools"][0] and third["tools"] == second["tools"]  # the tools block never changes
    deferred = {t["name"] for t in second["tools"] if t.get("defer_loading")}
    assert "get_forecast" in deferred and len(deferred) == len(second["tools"]) - 1
    (result,) = second["messages"][-1]["content"]
    referenced = {c["tool_name"] for c in result["content"] if c["type"] == "tool_reference"}
    assert result["tool_use_id"] == "toolu_1" and referenced == deferred
    assert third["messages"][-1]["content"][0]["content"] == [{"type": "text", "text": FORECAST}]


def test_the_openai_example_keeps_tools_fixed_and_puts_found_definitions_after_the_search_result(tmp_path):
    done = on_fake_openai(tmp_path)  # its second reply writes the call as JSON text
    assert done.returncode == 0, done.stderr
    assert done.printed == ['→ search_tools {"query": "weather forecast"}', '→ get_forecast {"city": "Oslo"}',
                            f"Tomorrow: {FORECAST}."]
    first, second, third = done.requests
    assert first["tools"] == second["tools"] == third["tools"] and [t["function"]["name"] for t in first["tools"]] == ["search_tools"]
    assert second["messages"][:1] == first["messages"] and third["messages"][:len(second["messages"])] == second["messages"]
    searched = second["messages"][-1]
    assert searched["role"] == "tool" and searched["tool_call_id"] == "c1" and searched["content"].startswith('{"matches"')
    assert '"name": "get_forecast"' in searched["content"].split(FOUND_HEADER, 1)[1]
    assert third["messages"][-2]["tool_calls"][0]["function"]["name"] == "get_forecast"
    assert third["messages"][-1]["content"] == FORECAST  # found nothing new: the result alone


@needs_model
def test_the_openai_example_runs_on_the_real_model_behind_llama_servers_endpoint(tmp_path):
    """The README's code on a real server, which renders every message it is sent through the model's chat template
    and rejects a malformed one. Two turns, not six: a turn of the 0.5B takes up to a minute on two busy cores, and it
    spent all six calling (498 s, measured)."""
    assert OPENAI_TURNS_LINE in readme_loop("openai")
    done = on_llama_server(tmp_path, turns=2)
    assert done.returncode == 0, done.stderr
    assert done.printed and done.printed[0].startswith("→ "), "the model made no call: the loop was not exercised"


def test_the_lines_chapter_7_prints_say_where_each_found_tool_went(tmp_path):
    assert request_lines(on_fake_openai(tmp_path))[1:] == [
        "request 2: tools [search_tools] | ends with a tool result '{\"matches\":[{\"name\":\"get_forecast\",\"desc…' + "
        "the found definitions of get_forecast | starts with request 1: yes",
        f"request 3: tools [search_tools] | ends with a tool result {FORECAST!r} | starts with request 2: yes"]
    second = request_lines(on_fake_anthropic(tmp_path))[1]
    assert "tools [search_tools + deferred get_forecast]" in second and "+ tool_reference get_forecast |" in second


def test_a_found_tool_put_into_the_tools_block_is_caught_breaking_the_prefix():
    """The check the chapter prints can fail: a definition added to the shown tools, or an earlier message changed,
    is a request that no longer starts with the one before it."""
    search = {"type": "function", "function": {"name": "search_tools", "parameters": {"type": "object"}}}
    found = {"type": "function", "function": {"name": "get_forecast", "parameters": {"type": "object"}}}
    ask = [{"role": "user", "content": "weather?"}]
    run = LoopRun("openai", [], 0, "", [])
    assert keeps_prefix(run, {"tools": [search], "messages": ask}, {"tools": [search], "messages": ask + ask})
    assert not keeps_prefix(run, {"tools": [search], "messages": ask}, {"tools": [search, found], "messages": ask + ask})
    assert not keeps_prefix(run, {"tools": [search], "messages": ask}, {"tools": [search], "messages": [{"role": "user", "content": "x"}]})
    anthropic = LoopRun("anthropic", [], 0, "", [])
    tool = {"name": "get_forecast", "input_schema": {"type": "object"}}
    assert keeps_prefix(anthropic, {"tools": [], "messages": ask}, {"tools": [tool | {"defer_loading": True}], "messages": ask})
    assert not keeps_prefix(anthropic, {"tools": [], "messages": ask}, {"tools": [tool], "messages": ask})


def test_without_the_real_model_the_run_on_it_says_so_in_one_sentence(tmp_path, monkeypatch):
    monkeypatch.setattr(own_loop, "find_install", lambda model: None)
    assert on_llama_server(tmp_path).output() == [own_loop.NOT_INSTALLED]


def test_a_failed_run_raises_its_error_instead_of_printing_nothing():
    with pytest.raises(RuntimeError, match="exited with 1: Traceback"):
        LoopRun("openai", [], 1, "Traceback (most recent call last): ...", []).output()


def test_what_the_readme_says_harness_measure_runs_is_what_it_runs():
    described = measure.SETS["small"][1]
    assert f"{described} of the demo world under the four ways" in " ".join(SECTION.split())
    assert measure.parser().parse_args([]).set == "small" and len(measure.CONFIGS) == 4
