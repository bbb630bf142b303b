"""The OpenAI-compatible provider: on the real llama-server's own ``/v1/chat/completions`` with the real model, and
against a small fake endpoint for what a real server here cannot be made to do (HTML, ``null``, errors, hangs).

The real-model tests skip, saying why, where ``make real-model`` has not installed the model.
"""
from __future__ import annotations

import json

import pytest

from conftest import run
from workbook.providers.fake_openai import BODY_FAULTS, Fault, FakeOpenAIServer, tool_call
from real_model_support import needs_model, openai_endpoint
from harness.core.messages import Message, ToolCall, ToolResult, Transcript
from harness.core.tools import Tool, tool
from harness.providers.base import ProviderError
from harness.providers.chat_format import FOUND_HEADER
from harness.providers.openai_compat import OpenAICompatProvider
from harness.selection.agent import arun
from harness.selection.catalog import ToolCatalog
from harness.selection.discovery import ToolSearch

KEY = "sk-proj-Secret0123456789abcdefABCDEF"


@tool(tags={"read"})
def get_forecast(city: str) -> str:
    """Tomorrow's weather forecast for a city.

    Args:
        city: The city's name.
    """
    return f"{city}: sunny, 21 C"


@tool(tags={"write"})
def post_message(channel: str, text: str) -> str:
    """Post a message to a chat channel.

    Args:
        channel: The channel, e.g. #ops.
        text: What to post.
    """
    return f"posted to {channel}"


def asked(request: str) -> Transcript:
    transcript = Transcript()
    transcript.add_user(request)
    return transcript


def after_search(search: ToolSearch) -> tuple[Transcript, list[Tool]]:
    """A conversation in which ``search_tools`` found post_message, and the tools the loop shows next (the found one
    placed after the result that found it, as the loop places it)."""
    transcript = asked("Post 'build is green' to #ops.")
    transcript.append(Message("assistant", [ToolCall("call_1", "search_tools", {"query": "post a message"})]))
    transcript.append(Message("user", [ToolResult("call_1", search.search("post a message", 1))]))
    found = search.activated[0]
    return transcript, [search.tool, Tool(found.name, found.description, found.input_schema, found.fn, found_after=3)]


# --- the real model, behind llama-server's OpenAI-compatible endpoint -----------------------------------------------

@pytest.fixture(scope="module")
def real_url():
    with openai_endpoint() as url:
        yield url


@needs_model
def test_the_real_model_calls_a_shown_tool(real_url):
    provider = OpenAICompatProvider("qwen", real_url, max_tokens=128, temperature=0)
    turn = run(provider.complete(system="You are a helpful assistant with tools.", tools=[get_forecast, post_message],
                                 transcript=asked("What will the weather be in Oslo tomorrow?")))
    assert turn.stop_reason == "tool_use", turn
    (call,) = turn.message.tool_calls
    assert call.name == "get_forecast" and "oslo" in json.dumps(call.input).lower()
    assert turn.usage.input_tokens + turn.usage.cache_read_input_tokens > 50 and turn.usage.output_tokens > 0


@needs_model
def test_the_real_server_keeps_the_prefix_cached_when_a_found_tool_follows_its_result(real_url):
    """The page's item 4 on a real server: a found definition after the conversation leaves the prompt before it
    cached; the same tool inserted among the definitions (the template renders ``tools`` before the conversation)
    re-bills everything after it."""
    provider = OpenAICompatProvider("qwen", real_url, max_tokens=8, temperature=0)
    search = ToolSearch([], [get_forecast, post_message])
    system = "You are a helpful assistant with tools."
    first = run(provider.complete(system=system, transcript=asked("Post 'build is green' to #ops."), tools=[search.tool]))
    transcript, shown = after_search(search)
    placed = run(provider.complete(system=system, transcript=transcript, tools=shown))
    prompt = first.usage.input_tokens + first.usage.cache_read_input_tokens
    declared = run(provider.complete(system=system, transcript=transcript, tools=[search.tool, post_message]))
    assert declared.usage.cache_read_input_tokens < prompt - 8 <= placed.usage.cache_read_input_tokens, \
        (first.usage, placed.usage, declared.usage)
    assert declared.usage.input_tokens > placed.usage.input_tokens


@needs_model
def test_the_loop_runs_on_the_real_model_through_the_provider(real_url):
    provider = OpenAICompatProvider("qwen", real_url, max_tokens=128, temperature=0)
    result = run(arun(provider, ToolCatalog([get_forecast, post_message]), "What will the weather be in Oslo tomorrow?",
                      max_turns=2))
    assert result.turns[0].response.tool_calls[0].name == "get_forecast"
    assert result.turns[0].results[0].content == "Oslo: sunny, 21 C"


# --- the request: settings, the key, found tools ------------------------------------------------------------------

def test_settings_come_from_the_environment_or_dotenv_and_the_key_is_never_shown(no_settings, monkeypatch):
    (no_settings / ".env").write_text(f"OPENAI_BASE_URL=http://127.0.0.1:9/v1\nOPENAI_MODEL=qwen2.5:7b\nOPENAI_API_KEY={KEY}\n")
    provider = OpenAICompatProvider()
    assert (provider.base_url, provider.model) == ("http://127.0.0.1:9/v1", "qwen2.5:7b")
    assert KEY not in repr(provider) and KEY[-4:] not in repr(provider) and "api_key=set" in repr(provider)
    monkeypatch.setenv("OPENAI_MODEL", "from-the-environment")
    assert OpenAICompatProvider().model == "from-the-environment"


@pytest.mark.parametrize("settings, says", [
    ({}, "No OpenAI API key found"),
    ({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, "No model named: set OPENAI_MODEL"),
    ({"OPENAI_BASE_URL": "ftp://127.0.0.1/v1", "OPENAI_MODEL": "m"}, "must be an http(s) address"),
    ({"OPENAI_BASE_URL": "http://me:hunter2hunter2@127.0.0.1:9/v1", "OPENAI_MODEL": "m"}, "holds a user name or password"),
])
def test_missing_or_bad_settings_are_one_sentence(no_settings, monkeypatch, settings, says):
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ProviderError) as caught:
        OpenAICompatProvider()
    message = str(caught.value)
    assert says in message and "hunter2" not in message and message.count(". ") == 0


def test_a_local_server_gets_no_authorization_and_a_keyed_one_its_bearer(no_settings):
    with FakeOpenAIServer() as server:
        run(OpenAICompatProvider("m", server.base_url).complete(system="", transcript=asked("hi"), tools=[]))
        run(OpenAICompatProvider("m", server.base_url, KEY).complete(system="", transcript=asked("hi"), tools=[]))
    assert "authorization" not in server.requests[0].headers
    assert server.requests[1].headers["authorization"] == f"Bearer {KEY}"


def test_a_found_tool_follows_the_result_that_found_it_and_the_prefix_stays(no_settings):
    search = ToolSearch([], [get_forecast, post_message])
    with FakeOpenAIServer() as server:
        provider = OpenAICompatProvider("m", server.base_url)
        run(provider.complete(system="sys", transcript=asked("Post 'build is green' to #ops."), tools=[search.tool]))
        transcript, shown = after_search(search)
        run(provider.complete(system="sys", transcript=transcript, tools=shown))
    before, after = (r.body for r in server.requests)
    assert [t["function"]["name"] for t in after["tools"]] == ["search_tools"] == [t["function"]["name"] for t in before["tools"]]
    assert after["messages"][:len(before["messages"])] == before["messages"]
    result = after["messages"][-1]
    assert result["role"] == "tool" and result["content"].startswith('{"matches"')
    definition = json.loads(result["content"].split(f"{FOUND_HEADER}\n<tools>\n", 1)[1].split("\n</tools>")[0])
    assert definition["function"]["name"] == "post_message" and definition["function"]["parameters"]["required"] == ["channel", "text"]


def test_a_model_that_refuses_max_tokens_gets_max_completion_tokens(no_settings):
    with FakeOpenAIServer() as server:
        server.fail_next(Fault("status", 400, "Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens' instead."))
        provider = OpenAICompatProvider("m", server.base_url, max_tokens=50)
        run(provider.complete(system="", transcript=asked("hi"), tools=[]))
        run(provider.complete(system="", transcript=asked("hi"), tools=[]))
    assert [r.body.get("max_completion_tokens") for r in server.requests] == [None, 50, 50]
    assert server.requests[0].body["max_tokens"] == 50 and "max_tokens" not in server.requests[2].body


# --- the reply: calls, calls written as text, stop reasons, usage --------------------------------------------------

def complete_with(reply: dict, finish: str = "stop", **options) -> object:
    with FakeOpenAIServer() as server:
        server.reply_next(reply, finish)
        return run(OpenAICompatProvider("m", server.base_url, **options).complete(
            system="", transcript=asked("weather in Oslo?"), tools=[get_forecast]))


def test_a_structured_call_is_a_tool_call_with_usage_split_as_the_messages_api_does(no_settings):
    turn = complete_with({"content": None, "tool_calls": [tool_call("c1", "get_forecast", {"city": "Oslo"})]}, "tool_calls")
    assert turn.message.tool_calls == [ToolCall("c1", "get_forecast", {"city": "Oslo"})] and turn.stop_reason == "tool_use"
    assert (turn.usage.input_tokens, turn.usage.cache_read_input_tokens, turn.usage.output_tokens) == (41, 60, 10)
    assert not turn.from_text


@pytest.mark.parametrize("written", [
    '{"name": "get_forecast", "arguments": {"city": "Oslo"}}',
    '```json\n{"name": "get_forecast", "arguments": {"city": "Oslo"}}\n```',
    '<tool_call>\n{"name": "get_forecast", "arguments": {"city": "Oslo"}}\n</tool_call>',
])
def test_a_call_written_as_text_is_read_as_a_call_unless_told_not_to(no_settings, written):
    turn = complete_with({"content": written})
    assert [(c.name, c.input) for c in turn.message.tool_calls] == [("get_forecast", {"city": "Oslo"})]
    assert turn.from_text and turn.stop_reason == "tool_use"
    plain = complete_with({"content": written}, read_text_calls=False)
    assert plain.message.text == written and not plain.message.tool_calls and plain.stop_reason == "end_turn"


@pytest.mark.parametrize("finish, stop", [("length", "max_tokens"), ("content_filter", "refusal"), ("stop", "end_turn")])
def test_finish_reasons_become_the_loops_stop_reasons(no_settings, finish, stop):
    assert complete_with({"content": "It will be sunny."}, finish).stop_reason == stop


def test_malformed_arguments_go_out_empty_and_a_call_beside_stop_is_still_a_call(no_settings):
    call = {"id": "c1", "type": "function", "function": {"name": "get_forecast", "arguments": '{"city": "Os'}}
    turn = complete_with({"content": "", "tool_calls": [call]}, "stop")
    assert turn.message.tool_calls == [ToolCall("c1", "get_forecast", {})] and turn.stop_reason == "tool_use"


def test_a_call_without_a_name_is_one_sentence(no_settings):
    call = {"id": "c1", "type": "function", "function": {"name": "", "arguments": "{}"}}
    with pytest.raises(ProviderError, match="made a tool call without a name"):
        complete_with({"content": "", "tool_calls": [call]}, "tool_calls")


# --- failures: one sentence each, nothing the SDK held, the key never shown ------------------------------------------

def failure(fault: Fault | None, *, times: int = 1, key: str | None = None, url: str | None = None, **options) -> tuple[str, FakeOpenAIServer]:
    with FakeOpenAIServer(api_key="the-right-key" if key else None) as server:
        if fault:
            server.fail_next(fault, times)
        provider = OpenAICompatProvider("m", url or server.base_url, key, **options)
        with pytest.raises(ProviderError) as caught:
            run(provider.complete(system="", transcript=asked("hi"), tools=[]))
    err = caught.value
    assert err.__cause__ is None and err.__context__ is None, "an SDK error (which holds the request) stays reachable"
    assert str(err).count("\n") == 0 and str(err).endswith((".", "?"))
    return str(err), server


@pytest.mark.parametrize("kind", sorted(BODY_FAULTS))
def test_a_200_that_is_not_a_chat_completion_is_one_sentence(no_settings, kind):
    message, _ = failure(Fault(kind))
    assert "not a chat completion" in message and "OPENAI_BASE_URL" in message


def test_server_errors_are_retried_then_reported(no_settings):
    with FakeOpenAIServer() as server:
        server.fail_next(Fault("status", 503, "loading model"))
        turn = run(OpenAICompatProvider("m", server.base_url).complete(system="", transcript=asked("hi"), tools=[]))
    assert turn.message.text == "You said: hi" and len(server.requests) == 2
    message, server = failure(Fault("status", 500, "boom"), times=3, max_retries=2)
    assert message.startswith("The server at 127.0.0.1:") and "kept failing (500) after 3 attempts: boom" in message
    assert len(server.requests) == 3


def test_a_rejected_key_is_named_and_an_echoed_key_is_scrubbed(no_settings):
    message, _ = failure(None, key=KEY)
    assert "rejected the API key (401): check OPENAI_API_KEY" in message and KEY not in message
    echoed, _ = failure(Fault("status", 400, f"bad request from key {KEY[:20]}"), key=KEY)
    assert KEY[:20] not in echoed and KEY[3:11] not in echoed and "***" in echoed


def test_not_found_names_the_model_and_the_address(no_settings):
    message, _ = failure(Fault("status", 404, "model 'm' not found"))
    assert "404: model 'm' not found" in message and "OPENAI_MODEL, now 'm'" in message


def test_a_redirect_is_not_followed(no_settings):
    with FakeOpenAIServer() as elsewhere:
        message, _ = failure(Fault("status", 307, headers={"location": elsewhere.base_url + "/chat/completions"}))
    assert "redirect (307)" in message and not elsewhere.requests


def test_a_hang_is_a_timeout_and_a_closed_port_cannot_be_reached(no_settings):
    message, _ = failure(Fault("hang", seconds=5), timeout=0.5, max_retries=0)
    assert "did not answer within 0.5 s" in message
    with FakeOpenAIServer() as server:
        closed = server.base_url
    message, _ = failure(None, url=closed, max_retries=0)
    assert message.startswith("Cannot reach an OpenAI-compatible server at 127.0.0.1:")


def test_bad_options_are_one_value_error(no_settings):
    with pytest.raises(ValueError, match="timeout and max_tokens must be positive"):
        OpenAICompatProvider("m", "http://127.0.0.1:9/v1", timeout=0)
    with pytest.raises(ValueError, match="transcript is empty"):
        run(OpenAICompatProvider("m", "http://127.0.0.1:9/v1").complete(system="", transcript=Transcript(), tools=[]))


def test_an_empty_reply_is_an_empty_answer(no_settings):
    turn = complete_with({"content": None})
    assert turn.message.content == [] and turn.stop_reason == "end_turn"


def test_the_doctor_says_which_endpoint_and_model_and_never_the_key(no_settings, monkeypatch):
    from harness.__main__ import doctor_lines

    (line,) = [ln for ln in doctor_lines() if ln.startswith("OpenAI-compatible endpoint:")]
    assert "not set" in line
    (no_settings / ".env").write_text(f"OPENAI_BASE_URL=http://me:pw123456789@gpu-box:8000/v1\nOPENAI_MODEL=qwen\nOPENAI_API_KEY={KEY}\n")
    (line,) = [ln for ln in doctor_lines() if ln.startswith("OpenAI-compatible endpoint:")]
    assert "gpu-box:8000/v1, model qwen" in line and "pw123456789" not in line and KEY[8:20] not in line
