"""The README's "As a library" examples, run as written: each is taken from the README here, so the two cannot drift.

The Anthropic one runs against the workbook's fake Messages API (``tests/fake_anthropic_server.py``), which refuses a
``tool_reference`` to a tool not sent deferred and a deferred tool no result names. The OpenAI one runs against the
real small model behind llama-server's own OpenAI-compatible endpoint where ``make real-model`` installed it, and
always against a small fake endpoint with scripted replies, which shows where the found definitions went.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from workbook.providers.fake_anthropic import FakeAnthropicServer
from workbook.providers.fake_openai import FakeOpenAIServer, tool_call
from real_model_support import needs_model, openai_endpoint
from experiments import measure
from harness.providers.chat_format import FOUND_HEADER

ROOT = Path(__file__).resolve().parents[1]
SECTION = (ROOT / "README.md").read_text(encoding="utf-8").split("### As a library\n", 1)[1].split("\n### ", 1)[0]
KEY = "sk-ant-" + "test-0123456789abcdefghij"  # split: no key-shaped string in a committed file
ASK = "What will the weather be in Oslo tomorrow?"
FORECAST = "Oslo: sunny, 21 °C"


def example(marker: str) -> str:
    """The README's Python block that contains ``marker``."""
    (code,) = [block for block in re.findall(r"```python\n(.*?)```", SECTION, flags=re.S) if marker in block]
    return code


def run_example(code: str, folder: Path, request: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess:
    """The example as a user runs it: a script of its own, the request as its argument, settings in the environment."""
    script = folder / "example.py"
    script.write_text(code, encoding="utf-8")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    return subprocess.run([sys.executable, str(script), request], cwd=folder, capture_output=True, text=True,
                          encoding="utf-8", timeout=timeout, env={**clean, "PYTHONIOENCODING": "utf-8", **env})


def test_each_example_is_about_thirty_lines():
    for marker in ("import anthropic", "from openai import OpenAI"):
        assert 25 <= len(example(marker).splitlines()) <= 36, marker


def test_the_anthropic_example_sends_found_tools_deferred_and_named_in_the_result_that_found_them(tmp_path):
    with FakeAnthropicServer(api_key=KEY) as server:
        server.reply_next([{"type": "tool_use", "id": "toolu_1", "name": "search_tools", "input": {"query": "weather forecast"}}],
                          "tool_use")
        server.reply_next([{"type": "tool_use", "id": "toolu_2", "name": "get_forecast", "input": {"city": "Oslo"}}], "tool_use")
        done = run_example(example("import anthropic"), tmp_path, ASK, ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=server.base_url)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:2] == ["→ search_tools {'query': 'weather forecast'}", "→ get_forecast {'city': 'Oslo'}"]
    assert FORECAST in done.stdout  # the fake's last answer quotes what get_forecast returned
    first, second, third = (r.body for r in server.requests)
    assert [t["name"] for t in first["tools"]] == ["search_tools"] and "defer_loading" not in first["tools"][0]
    assert second["tools"][0] == first["tools"][0] and third["tools"] == second["tools"]  # the tools block never changes
    deferred = {t["name"] for t in second["tools"] if t.get("defer_loading")}
    assert "get_forecast" in deferred and len(deferred) == len(second["tools"]) - 1
    (result,) = second["messages"][-1]["content"]
    referenced = {c["tool_name"] for c in result["content"] if c["type"] == "tool_reference"}
    assert result["tool_use_id"] == "toolu_1" and referenced == deferred
    assert third["messages"][-1]["content"][0]["content"] == [{"type": "text", "text": FORECAST}]


def test_the_openai_example_keeps_tools_fixed_and_puts_found_definitions_after_the_search_result(tmp_path):
    with FakeOpenAIServer() as server:
        server.reply_next({"content": None, "tool_calls": [tool_call("c1", "search_tools", {"query": "weather forecast"})]},
                          "tool_calls")
        server.reply_next({"content": '{"name": "get_forecast", "arguments": {"city": "Oslo"}}'})  # a call written as text
        server.reply_next({"content": f"Tomorrow: {FORECAST}."})
        done = run_example(example("from openai import OpenAI"), tmp_path, ASK, OPENAI_BASE_URL=server.base_url,
                           OPENAI_MODEL="m")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ['→ search_tools {"query": "weather forecast"}', '→ get_forecast {"city": "Oslo"}',
                                        f"Tomorrow: {FORECAST}."]
    first, second, third = (r.body for r in server.requests)
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
    code = example("from openai import OpenAI")
    assert "for turn in range(6):" in code
    with openai_endpoint() as url:
        done = run_example(code.replace("for turn in range(6):", "for turn in range(2):"), tmp_path, ASK, timeout=600,
                           OPENAI_BASE_URL=url, OPENAI_MODEL="qwen2.5-coder-0.5b")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("→ "), "the model made no call: the loop was not exercised"


def test_what_the_readme_says_harness_measure_runs_is_what_it_runs():
    described = measure.SETS["small"][1]
    assert f"{described} of the demo world under the four ways" in " ".join(SECTION.split())
    assert measure.parser().parse_args([]).set == "small" and len(measure.CONFIGS) == 4
