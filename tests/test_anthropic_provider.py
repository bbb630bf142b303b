"""AnthropicProvider against a local Messages API: the real SDK, real HTTP, no network."""
from __future__ import annotations

import asyncio
import logging
import time

import pytest

from workbook.providers.fake_anthropic import FakeAnthropicServer, unused_port
from harness.core.messages import Message, TextBlock, ToolCall, Transcript
from harness.providers import settings
from harness.providers.anthropic_provider import PRICES, AnthropicProvider, Price, price_for, redact
from harness.providers.base import Provider, ProviderError, Usage
from harness.core.registry import ToolRegistry
from harness.core.tools import tool

KEY = "sk-ant-" + "test-0123456789abcdefghijWXYZ"  # a made-up key; the server accepts only this one


@tool(tags={"read"})
def word_count(text: str) -> int:
    """Count the words in a text.

    Args:
        text: The text to count.
    """
    return len(text.split())


@tool(tags={"read"})
def reverse_text(text: str) -> str:
    """Reverse a text character by character.

    Args:
        text: The text to reverse.
    """
    return text[::-1]


@pytest.fixture(autouse=True)
def isolated(no_settings):
    """No setting leaks in from the machine (see conftest)."""


@pytest.fixture
def server():
    with FakeAnthropicServer(api_key=KEY) as s:
        yield s


def make(server: FakeAnthropicServer, **overrides) -> AnthropicProvider:
    options = dict(model="claude-haiku-4-5", api_key=KEY, base_url=server.base_url, timeout=5, backoff=0.01, max_delay=1.0)
    return AnthropicProvider(**(options | overrides))


def ask(provider: AnthropicProvider, text: str, tools=(word_count,)):
    transcript = Transcript()
    transcript.add_user(text)
    return asyncio.run(provider.complete(system="Be brief.", transcript=transcript, tools=list(tools)))


def one_sentence(text: str) -> bool:
    return text.endswith((".", "?")) and "\n" not in text and ". " not in text.rstrip(".?")


def test_tool_use_round_trip_through_the_registry(server):
    provider = make(server)
    assert isinstance(provider, Provider)
    registry = ToolRegistry([word_count, reverse_text])
    transcript = Transcript()
    transcript.add_user('Please run word_count on {"text": "the quick brown fox"}')

    async def run_two_turns():
        first = await provider.complete(system="Be brief.", transcript=transcript, tools=list(registry))
        transcript.append(first.message)
        results = [await registry.adispatch(c.name, c.input, c.id) for c in first.message.tool_calls]
        transcript.append(Message("user", results))
        second = await provider.complete(system="Be brief.", transcript=transcript, tools=list(registry))
        await provider.aclose()
        return first, second

    first, second = asyncio.run(run_two_turns())
    assert first.stop_reason == "tool_use"
    (call,) = first.message.tool_calls
    assert (call.name, call.input) == ("word_count", {"text": "the quick brown fox"})
    assert first.message.text == "I'll use word_count."
    assert transcript.result_for(call.id).content == "4"
    assert second.stop_reason == "end_turn" and second.message.text == "Done: word_count returned 4."
    # what the real SDK put on the wire
    sent = server.requests[1]
    assert sent.path == "/v1/messages" and sent.api_key() == KEY
    assert sent.body["system"] == "Be brief." and sent.body["max_tokens"] == 1024
    assert sent.body["tools"] == [word_count.to_api(), reverse_text.to_api()]
    assert sent.body["messages"] == transcript.to_api()[:3]


def test_usage_and_model_come_from_the_response(server):
    provider = make(server)
    few = ask(provider, "hello there", tools=[word_count])
    many = ask(provider, "hello there", tools=[word_count, reverse_text])
    returned = server.responses[-1]
    fields = {k: v for k, v in returned["usage"].items() if k != "service_tier"}
    assert many.usage == Usage(**fields) and many.model == "claude-haiku-4-5"
    assert many.usage.input_tokens > few.usage.input_tokens > 0  # a second schema costs input tokens
    assert few.message.text == "No tool was named. You said: hello there"


def test_count_tokens_is_the_servers_count_of_the_same_input(server):
    provider = make(server)
    transcript = Transcript()
    transcript.add_user("count me")
    with_tools = asyncio.run(provider.count_tokens("Be brief.", transcript, [word_count, reverse_text]))
    without = asyncio.run(provider.count_tokens("Be brief.", transcript, []))
    turn = asyncio.run(provider.complete(system="Be brief.", transcript=transcript, tools=[word_count, reverse_text]))
    assert with_tools == turn.usage.input_tokens > without > 0
    assert server.requests[0].path == "/v1/messages/count_tokens" and "max_tokens" not in server.requests[0].body


def test_429_and_529_are_retried_until_success(server):
    server.fail_next("rate_limit_error", headers={"retry-after": "0"})
    server.fail_next("overloaded_error")
    server.fail_next("disconnect")
    turn = ask(make(server), "hello")
    assert turn.stop_reason == "end_turn"
    assert len(server.requests) == 4


def test_backoff_grows_and_retry_after_is_honoured(server):
    server.fail_next("overloaded_error", times=2)
    start = time.perf_counter()
    ask(make(server, backoff=0.1), "hello")
    assert time.perf_counter() - start >= 0.8 * (0.1 + 0.2)  # two waits, doubling, at most 20 % jitter off
    server.fail_next("rate_limit_error", headers={"retry-after": "0.3"})
    start = time.perf_counter()
    ask(make(server, backoff=0.0), "hello")
    assert time.perf_counter() - start >= 0.3


def test_a_retry_after_beyond_max_delay_fails_at_once(server):
    server.fail_next("rate_limit_error", headers={"retry-after": "120"})
    with pytest.raises(ProviderError) as caught:
        ask(make(server, max_delay=1.0), "hello")
    assert "asks to wait 120 s" in str(caught.value) and one_sentence(str(caught.value))
    assert len(server.requests) == 1


@pytest.mark.parametrize("kind, words", [("overloaded_error", "still overloaded (529)"), ("api_error", "server error (500)"),
                                         ("rate_limit_error", "still rate-limiting this key (429)")])
def test_exhausted_retries_give_one_sentence(server, kind, words):
    server.fail_next(kind, times=5)
    with pytest.raises(ProviderError) as caught:
        ask(make(server, max_retries=2), "hello")
    message = str(caught.value)
    assert words in message and "after 3 attempts" in message and one_sentence(message)
    assert len(server.requests) == 3 and len(server.faults) == 2
    assert caught.value.__cause__ is None and caught.value.__context__ is None


def test_a_rejected_key_is_one_sentence_and_not_retried(server):
    wrong = "sk-ant-" + "wrong-0000000000000000009999"
    with pytest.raises(ProviderError) as caught:
        ask(make(server, api_key=wrong), "hello")
    message = str(caught.value)
    assert message == "The Anthropic API rejected the API key (401): check ANTHROPIC_API_KEY in your environment or .env."
    assert len(server.requests) == 1 and server.requests[0].api_key() == wrong  # sent, never shown
    assert wrong not in repr(caught.value)


def test_a_bad_request_quotes_the_api(server):
    transcript = Transcript([
        Message("user", [TextBlock("hi")]),
        Message("assistant", [ToolCall("toolu_1", "word_count", {"text": "a b"})]),
        Message("user", [TextBlock("no result given")]),
    ])
    with pytest.raises(ProviderError) as caught:
        asyncio.run(make(server).complete(system="", transcript=transcript, tools=[word_count]))
    message = str(caught.value)
    assert message.startswith("The Anthropic API rejected the request (400 invalid_request_error): messages.2:")
    assert "without `tool_result` blocks" in message and len(server.requests) == 1


def test_an_unreachable_api_says_so():
    port = unused_port()
    provider = AnthropicProvider(api_key=KEY, base_url=f"http://127.0.0.1:{port}", max_retries=1, backoff=0.01)
    with pytest.raises(ProviderError) as caught:
        ask(provider, "hello")
    assert str(caught.value) == f"Cannot reach the Anthropic API at 127.0.0.1:{port}: is the network up?"


def test_a_silent_api_times_out(server):
    server.fail_next("hang", seconds=3)
    with pytest.raises(ProviderError) as caught:
        ask(make(server, timeout=0.3, max_retries=0), "hello")
    assert "did not answer within 0.3 s" in str(caught.value) and one_sentence(str(caught.value))


def test_the_key_never_shows(server, caplog, capsys):
    provider = make(server)
    assert repr(provider) == f"AnthropicProvider(model='claude-haiku-4-5', api_key='sk-ant-…WXYZ', base_url='{server.base_url}')"
    assert str(provider) == repr(provider) and redact("short") == "***"
    caplog.set_level(logging.DEBUG)  # the SDK's and httpx's debug logs too
    server.fail_next("overloaded_error")
    ask(provider, 'word_count {"text": "x"}')
    with pytest.raises(ProviderError) as caught:
        ask(make(server, api_key=KEY[:-1] + "Q"), "hello")
    assert server.requests[0].api_key() == KEY
    assert "retrying" in caplog.text  # the logs did capture something
    for shown in (caplog.text, str(caught.value), capsys.readouterr().out, repr(provider)):
        assert KEY not in shown and KEY[:-1] not in shown


def test_one_provider_serves_several_event_loops(server):
    provider = make(server)
    assert ask(provider, "one").message.text.endswith("one")
    assert ask(provider, "two").message.text.endswith("two")  # a new asyncio.run, a fresh client


def test_missing_key_and_bad_arguments():
    with pytest.raises(ProviderError, match="No Anthropic API key found"):
        AnthropicProvider()
    with pytest.raises(ValueError, match="max_retries"):
        AnthropicProvider(api_key=KEY, max_retries=-1)
    with pytest.raises(ValueError, match="transcript is empty"):
        asyncio.run(AnthropicProvider(api_key=KEY).complete(system="", transcript=Transcript(), tools=[]))


def test_model_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_MODEL", "claude-sonnet-4-5")
    assert AnthropicProvider(api_key=KEY).model == "claude-sonnet-4-5"
    assert AnthropicProvider(api_key=KEY, model="claude-opus-4-6").name == "claude-opus-4-6"


def test_estimated_cost_follows_the_price_table():
    provider = AnthropicProvider(api_key=KEY, model="claude-haiku-4-5")
    haiku = PRICES["claude-haiku-4-5"]
    expected = 1000 * (2000 * haiku.input_per_mtok + 100 * haiku.output_per_mtok) / 1e6
    assert provider.estimate_cost(1000, 2000, 100) == pytest.approx(expected)
    assert price_for("claude-haiku-4-5-20251001") == haiku  # a dated snapshot takes its alias's row
    assert price_for("claude-opus-5-5").input_per_mtok < price_for("claude-opus-5").input_per_mtok
    assert provider.estimate_cost(10, 1000, 0, prices={"haiku": Price(2.0, 0.0)}) == pytest.approx(0.02)
    with pytest.raises(ValueError, match="No price is known for model 'gpt-x'"):
        price_for("gpt-x")
    with pytest.raises(ValueError, match="zero or more"):
        provider.estimate_cost(-1, 10, 10)


# --- no secret shown: URL credentials, key fragments, the SDK error, redirects ------------------

PASSWORD = "pw-s3cret-value-42"


def test_credentials_in_the_base_url_are_sent_but_never_shown(server, caplog):
    import base64

    caplog.set_level(logging.DEBUG)  # the SDK's and httpx's debug logs too
    host = server.base_url.split("://", 1)[1]
    provider = make(server, base_url=f"http://proxyuser:{PASSWORD}@{host}")
    assert ask(provider, "hello").message.text.endswith("hello")
    sent = server.requests[-1].headers.get("authorization", "")
    assert base64.b64decode(sent.split()[-1]).decode() == f"proxyuser:{PASSWORD}"  # still used, as Basic auth
    assert server.requests[-1].headers["x-api-key"] == KEY  # and the key beside it
    port = unused_port()
    down = AnthropicProvider(api_key=KEY, base_url=f"http://proxyuser:{PASSWORD}@127.0.0.1:{port}", max_retries=1, backoff=0.01)
    with pytest.raises(ProviderError) as caught:
        ask(down, "hello")
    assert str(caught.value) == f"Cannot reach the Anthropic API at 127.0.0.1:{port}: is the network up?"
    for shown in (caplog.text, str(caught.value), repr(provider), repr(down), provider.host):
        assert PASSWORD not in shown and "proxyuser:" not in shown and KEY[-12:] not in shown
    assert "http://***@127.0.0.1" in repr(down)


@pytest.mark.parametrize("fragment", [KEY[-12:], KEY[5:25], KEY[:10], KEY[-8:]])
def test_any_fragment_of_the_key_echoed_by_the_endpoint_is_scrubbed(server, fragment):
    server.fail_next("invalid_request_error", message=f"header x-api-key {fragment} is malformed")
    with pytest.raises(ProviderError) as caught:
        ask(make(server), "hello")
    message = str(caught.value)
    assert fragment not in message and "is malformed" in message and one_sentence(message)


def test_a_password_echoed_by_the_endpoint_is_scrubbed(server):
    host = server.base_url.split("://", 1)[1]
    server.fail_next("invalid_request_error", message=f"proxy login proxyuser:{PASSWORD[:12]} refused")
    with pytest.raises(ProviderError) as caught:
        ask(make(server, base_url=f"http://proxyuser:{PASSWORD}@{host}"), "hello")
    assert PASSWORD[:12] not in str(caught.value) and "refused" in str(caught.value)


@pytest.mark.parametrize("fault", ["authentication_error", "disconnect", "html"])
def test_the_sdk_error_is_not_kept_in_the_chain(server, fault):
    server.fail_next(fault, times=2)
    with pytest.raises(ProviderError) as caught:
        ask(make(server, max_retries=0, api_key=KEY if fault != "authentication_error" else KEY[:-1] + "Q"), "hello")
    assert caught.value.__context__ is None and caught.value.__cause__ is None


@pytest.mark.parametrize("status", [307, 308])
def test_a_redirect_to_another_origin_is_refused_and_the_body_not_resent(server, status):
    with FakeAnthropicServer(api_key=KEY) as elsewhere:
        server.redirect_next(elsewhere.base_url.replace("127.0.0.1", "localhost"), status)
        with pytest.raises(ProviderError) as caught:
            ask(make(server), "a private conversation")
        assert elsewhere.requests == [] and len(server.requests) == 1  # refused, not retried
    message = str(caught.value)
    assert message.startswith(f"The Anthropic API at {server.base_url.split('://')[1]} redirected ({status}) to another origin, localhost:")
    assert one_sentence(message)


def test_a_redirect_within_the_origin_is_followed(server):
    server.redirect_next(server.base_url, 307)
    assert ask(make(server), "hello").message.text.endswith("hello")
    assert len(server.requests) == 2


@pytest.mark.parametrize("block, what", [
    ({"type": "tool_use", "id": "toolu_1", "name": "word_count", "input": "text=hi"}, "its input is a str"),
    ({"type": "tool_use", "id": "toolu_1", "name": "word_count", "input": ["hi"]}, "its input is a list"),
    ({"type": "tool_use", "name": "word_count", "input": {"text": "hi"}}, "it has no id"),
    ({"type": "tool_use", "id": "toolu_1", "input": {"text": "hi"}}, "it has no name"),
])
def test_a_malformed_tool_use_block_is_one_sentence(server, block, what):
    server.reply_next([block], "tool_use")
    with pytest.raises(ProviderError) as caught:
        ask(make(server), "hello")
    message = str(caught.value)
    assert what in message and one_sentence(message), message
