"""``search_tools`` in your own loop: the README's two examples, read from the README and run as a user runs them.

Introduced in Chapter 7 ("Tool search in your own loop"). The README's "As a library" section holds a plain
Anthropic SDK loop and a plain OpenAI SDK loop, about 30 lines each. Why they are read from there rather than kept
here: the README is where a user copies them from, so the chapter, which shows and runs them, and
``tests/test_readme_library.py``, which checks them, both take the README's text — one copy, three readers.

Each runs as its own script (the request as its argument, the settings in the environment, as a user starts it),
either against the workbook's fake API with scripted replies — a search, then a call of the tool it found — so that
what the loop sent can be read back request by request (:func:`request_lines`), or against the real small model
behind llama-server's own OpenAI-compatible endpoint (:func:`on_llama_server`), where what it sends is rendered by
the model's chat template and a malformed request is refused.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from harness.core.json_types import JSON, JSONObject
from harness.providers.chat_format import FOUND_HEADER
from workbook.providers.fake_anthropic import FakeAnthropicServer
from workbook.providers.fake_openai import FakeOpenAIServer, tool_call
from workbook.providers.local_llama import find_install, openai_endpoint

SDK = Literal["anthropic", "openai"]
#: The README of this checkout (the workbook's apparatus lives only in a checkout, never in the wheel).
README = Path(__file__).resolve().parents[1] / "README.md"
#: The line that starts each example, how the README's code blocks are told apart.
MARKERS: dict[SDK, str] = {"anthropic": "import anthropic", "openai": "from openai import OpenAI"}
#: The request each run is given, and what the example's get_forecast returns for it.
ASK = "What will the weather be in Oslo tomorrow?"
FORECAST = "Oslo: sunny, 21 °C"
#: A key of the right shape for the fake Messages API (split: no key-shaped string in a committed file).
FAKE_KEY = "sk-ant-" + "test-0123456789abcdefghij"
#: What a run on the real model prints where it is not installed.
NOT_INSTALLED = "Not run on the real model: it is not installed (`make real-model`)."
#: The OpenAI example's loop line; a run on the real model replaces its count of turns.
OPENAI_TURNS_LINE = "for turn in range(6):"


def readme_section(readme: Path = README) -> str:
    """The README's "As a library" section, where the two loops are."""
    return readme.read_text(encoding="utf-8").split("### As a library\n", 1)[1].split("\n### ", 1)[0]


def readme_loop(sdk: SDK, readme: Path = README) -> str:
    """The README's Python block of the ``sdk`` loop, exactly as written there."""
    blocks = re.findall(r"```python\n(.*?)```", readme_section(readme), flags=re.S)
    (code,) = [block for block in blocks if MARKERS[sdk] in block]
    return code


@dataclass
class LoopRun:
    """One run of an example: what it printed, its exit, and the bodies of the requests the fake API received
    (none from a real server)."""

    sdk: SDK
    printed: list[str]
    returncode: int
    stderr: str
    requests: list[JSONObject]

    def output(self) -> list[str]:
        """What the run printed; a run that failed raises with the end of its error output instead, so a cell that
        prints a run never shows a failure as an empty result."""
        if self.returncode != 0:
            raise RuntimeError(f"the {self.sdk} loop exited with {self.returncode}: {self.stderr[-600:]}")
        return self.printed


def run_script(code: str, folder: Path, env: dict[str, str], request: str = ASK,
               timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``code`` as a user runs it: a script of its own in ``folder``, the request as its argument, the settings
    (``env``) in the environment. The caller's ``OPENAI_*`` and ``ANTHROPIC_*`` settings are dropped, so a run meant for a fake
    never reaches a real API with a real key."""
    script = folder / "example.py"
    script.write_text(code, encoding="utf-8")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    return subprocess.run([sys.executable, str(script), request], cwd=folder, capture_output=True, text=True,
                          encoding="utf-8", timeout=timeout, env={**clean, "PYTHONIOENCODING": "utf-8", **env})


def _bodies(server: FakeAnthropicServer | FakeOpenAIServer) -> list[JSONObject]:
    return [r.body for r in server.requests if isinstance(r.body, dict)]


def on_fake_anthropic(folder: Path, code: str | None = None) -> LoopRun:
    """The Anthropic loop against the fake Messages API: it searches, then calls what it found; the fake's own rule
    answers the third request (a text quoting the tool's result). The fake refuses a ``tool_reference`` to a tool
    not sent deferred, and a deferred tool that no result names."""
    with FakeAnthropicServer(api_key=FAKE_KEY) as server:
        server.reply_next([{"type": "tool_use", "id": "toolu_1", "name": "search_tools",
                            "input": {"query": "weather forecast"}}], "tool_use")
        server.reply_next([{"type": "tool_use", "id": "toolu_2", "name": "get_forecast", "input": {"city": "Oslo"}}],
                          "tool_use")
        done = run_script(code or readme_loop("anthropic"), folder,
                          {"ANTHROPIC_API_KEY": FAKE_KEY, "ANTHROPIC_BASE_URL": server.base_url})
    return LoopRun("anthropic", done.stdout.splitlines(), done.returncode, done.stderr, _bodies(server))


def on_fake_openai(folder: Path, code: str | None = None) -> LoopRun:
    """The OpenAI loop against a fake chat endpoint: a search, then a call written as JSON text (as a small model
    often writes it), then an answer."""
    with FakeOpenAIServer() as server:
        server.reply_next({"content": None, "tool_calls": [tool_call("c1", "search_tools", {"query": "weather forecast"})]},
                          "tool_calls")
        server.reply_next({"content": '{"name": "get_forecast", "arguments": {"city": "Oslo"}}'})
        server.reply_next({"content": f"Tomorrow: {FORECAST}."})
        done = run_script(code or readme_loop("openai"), folder, {"OPENAI_BASE_URL": server.base_url, "OPENAI_MODEL": "m"})
    return LoopRun("openai", done.stdout.splitlines(), done.returncode, done.stderr, _bodies(server))


def on_llama_server(folder: Path, turns: int = 2, model: str = "0.5b", timeout: float = 600) -> LoopRun:
    """The OpenAI loop on the real small model behind llama-server's OpenAI endpoint, ``turns`` turns instead of six:
    a turn of the 0.5B takes up to a minute on two busy cores. Where ``make real-model`` has not installed it, a run
    that says so in one printed sentence: a learner's machine usually has no real model, and the chapter runs on."""
    if find_install(model=model) is None:
        return LoopRun("openai", [NOT_INSTALLED], 0, "", [])
    code = readme_loop("openai").replace(OPENAI_TURNS_LINE, f"for turn in range({turns}):")
    with openai_endpoint(model=model) as url:
        done = run_script(code, folder, {"OPENAI_BASE_URL": url, "OPENAI_MODEL": f"qwen2.5-coder-{model}"}, timeout=timeout)
    return LoopRun("openai", done.stdout.splitlines(), done.returncode, done.stderr, [])


def show(run: LoopRun) -> None:
    """In a notebook: the README's loop that made ``run``, as code, then what the run printed and a line per request
    the fake received (:func:`request_lines`)."""
    from IPython.display import Markdown, display  # the notebooks extra: only a chapter calls this

    display(Markdown(f"The README's {run.sdk} loop:\n```python\n{readme_loop(run.sdk)}```"))
    print(*run.output(), *request_lines(run), sep="\n")


def _short(value: JSON, limit: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return repr(text if len(text) <= limit else text[:limit] + "…")


def _shown_tools(run: LoopRun, body: JSONObject) -> tuple[list[str], list[str]]:
    """(tools the model is shown in the tools block, tools sent deferred) of one request."""
    tools = body.get("tools") or []
    if run.sdk == "openai":
        return [t["function"]["name"] for t in tools], []
    return ([t["name"] for t in tools if not t.get("defer_loading")], [t["name"] for t in tools if t.get("defer_loading")])


def _last_message(run: LoopRun, body: JSONObject) -> str:
    """What the request ends with, in a few words: where a found tool went shows here."""
    last = body["messages"][-1]
    if run.sdk == "openai":
        if last["role"] != "tool":
            return f"the {last['role']}'s message"
        result, _, found = str(last["content"]).partition(FOUND_HEADER)
        names = re.findall(r'"name": "([^"]+)"', found)
        return f"a tool result {_short(result)}" + (f" + the found definitions of {', '.join(names)}" if names else "")
    parts = []
    for block in last["content"] if isinstance(last["content"], list) else [{"type": "text", "text": last["content"]}]:
        if block.get("type") != "tool_result":
            return "the user's message"
        inner = block["content"] if isinstance(block["content"], list) else [{"type": "text", "text": block["content"]}]
        texts = [_short(c["text"]) for c in inner if c["type"] == "text"]
        refs = [c["tool_name"] for c in inner if c["type"] == "tool_reference"]
        parts.append(f"a tool result {', '.join(texts)}" + (f" + tool_reference {', '.join(refs)}" if refs else ""))
    return "; ".join(parts)


def keeps_prefix(run: LoopRun, earlier: JSONObject, later: JSONObject) -> bool:
    """True when ``later`` begins with everything ``earlier`` showed the model: the same tools block (deferred
    definitions aside: the API loads them only where a result names them) and its messages, unchanged — so a
    prompt cache holding ``earlier`` still serves all of it."""
    shown = _shown_tools(run, earlier)[0] == _shown_tools(run, later)[0]
    same_tools = [t for t in earlier.get("tools") or [] if not t.get("defer_loading")] == \
                 [t for t in later.get("tools") or [] if not t.get("defer_loading")]
    return shown and same_tools and later["messages"][:len(earlier["messages"])] == earlier["messages"]


def request_lines(run: LoopRun) -> list[str]:
    """One line per request the fake received: the tools shown, those sent deferred, what the request ends with,
    and whether it begins with the whole request before it."""
    lines = []
    for n, body in enumerate(run.requests):
        shown, deferred = _shown_tools(run, body)
        tools = ", ".join(shown) + (f" + deferred {', '.join(deferred)}" if deferred else "")
        kept = "" if n == 0 else f" | starts with request {n}: {'yes' if keeps_prefix(run, run.requests[n - 1], body) else 'NO'}"
        lines.append(f"request {n + 1}: tools [{tools}] | ends with {_last_message(run, body)}{kept}")
    return lines
