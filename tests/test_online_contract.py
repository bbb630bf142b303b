"""The online path against what the real Messages API sends (issue 18, items 16–21).

The fake server (workbook/providers/fake_anthropic.py) produces what the API's types and docs say it
produces — thinking blocks, empty content, every stop reason, parallel tool calls, cache usage
fields, rate-limit headers, 402/403/408/409/413/504, bodies a proxy sends — and the client must
survive each with a clear outcome.
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import anthropic
import httpx
import pytest

from conftest import run
from workbook.providers.fake_anthropic import FakeAnthropicServer
from harness.selection.agent import arun
from harness.selection.catalog import ToolCatalog
from harness.core.messages import RedactedThinkingBlock, ThinkingBlock, Transcript
from harness.providers.anthropic_provider import THINKING_HEADROOM, AnthropicProvider
from harness.providers.base import ProviderError
from harness.selection.ranking import Selector
from harness.core.tools import tool

KEY = "sk-ant-" + "test-0123456789abcdefghijWXYZ"
ROOT = Path(__file__).resolve().parents[1]
CALLS: list[str] = []


@tool(tags={"write"})
def save_note(title: str, text: str = "") -> str:
    """Save a note with a title.

    Args:
        title: The note's title.
        text: The note's body.
    """
    CALLS.append(title)
    return f"saved {title}"


@tool(tags={"read"})
def word_count(text: str) -> int:
    """Count the words in a text.

    Args:
        text: The text to count.
    """
    return len(text.split())


@pytest.fixture(autouse=True)
def isolated(no_settings):
    """No setting leaks in from the machine (see conftest)."""
    CALLS.clear()


def make(server: FakeAnthropicServer, **overrides) -> AnthropicProvider:
    options = dict(model="claude-haiku-4-5", api_key=KEY, base_url=server.base_url, timeout=5, backoff=0.01, max_delay=1.0)
    return AnthropicProvider(**(options | overrides))


def catalog() -> ToolCatalog:
    return ToolCatalog([])


def agent(provider: AnthropicProvider, text: str, transcript: Transcript | None = None):
    """arun with both tools shown every turn (pinned), so selection plays no part here."""
    selector = Selector.over(catalog(), pinned=[save_note, word_count])
    return run(arun(provider, selector, text, transcript=transcript))


def one_sentence(text: str) -> bool:
    return text.endswith((".", "?")) and "\n" not in text


# --- item 16: thinking ----------------------------------------------------------------------

def test_thinking_blocks_are_kept_and_sent_back_before_the_tool_call():
    with FakeAnthropicServer(api_key=KEY, thinking=True) as server:
        result = agent(make(server), 'Use save_note {"title": "plan"}')
        follow_up = agent(make(server), "And now?", result.transcript)
    assert CALLS == ["plan"] and result.stopped == "end_turn"
    first = result.transcript.messages[1]
    assert isinstance(first.content[0], ThinkingBlock) and first.tool_calls  # kept, in order
    assert result.final_text.startswith("Done: save_note returned saved plan")
    assert follow_up.stopped == "end_turn"  # the reused transcript, thinking and all, is accepted
    sent = server.requests[1].body["messages"][1]["content"]
    assert sent[0]["type"] == "thinking" and sent[0]["signature"]  # unchanged, signature included


def test_redacted_thinking_round_trips():
    block = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"}
    with FakeAnthropicServer(api_key=KEY) as server:
        server.reply_next([block, {"type": "text", "text": "Done."}], "end_turn")
        result = agent(make(server), "hello")
    assert result.transcript.messages[1].content[0] == RedactedThinkingBlock(block["data"])
    assert result.transcript.to_api()[1]["content"][0] == block


def test_a_model_that_thinks_by_default_gets_headroom_for_its_thinking():
    with FakeAnthropicServer(api_key=KEY, thinking=True) as server:
        transcript = Transcript()
        transcript.add_user("hello")
        run(make(server, model="claude-opus-5-5").complete(system="", transcript=transcript, tools=[], max_tokens=400))
        run(make(server).complete(system="", transcript=transcript, tools=[], max_tokens=400))
    assert [r.body["max_tokens"] for r in server.requests] == [400 + THINKING_HEADROOM, 400]


# --- item 17: stop reasons and empty content -------------------------------------------------

def test_a_tool_call_cut_off_at_max_tokens_is_not_run_and_the_transcript_stays_valid():
    cut = [{"type": "text", "text": "Saving."}, {"type": "tool_use", "id": "toolu_cut", "name": "save_note", "input": {"title": "pa"}}]
    with FakeAnthropicServer(api_key=KEY) as server:
        server.reply_next(cut, "max_tokens")
        result = agent(make(server), "Save a note")
        results = result.transcript.messages[-1].tool_results
        again = agent(make(server), "hello", result.transcript)
    assert CALLS == [] and result.stopped == "max_tokens"
    assert [r.is_error for r in results] == [True] and "cut off at max_tokens" in results[0].content
    assert again.stopped == "end_turn"  # the API accepted the transcript


def test_the_loop_guard_asks_claude_for_an_answer_in_a_request_the_api_accepts():
    """The API refuses tool blocks in a request that defines no tools: the guard's answer turn names the
    conversation's tools and forbids them (tool_choice none), and the repeated call is not run."""
    call = lambda i: [{"type": "tool_use", "id": f"toolu_{i}", "name": "save_note", "input": {"title": "plan"}}]
    with FakeAnthropicServer(api_key=KEY) as server:
        for i in (1, 2):
            server.reply_next(call(i), "tool_use")
        server.reply_next([{"type": "text", "text": "Saved the note 'plan'."}], "end_turn")
        selector = Selector.over(catalog(), pinned=[save_note, word_count])
        result = run(arun(make(server), selector, "Save a note called plan", on_repeat="answer"))
        last = server.requests[-1].body
    assert result.stopped == "repeated_call" and result.final_text == "Saved the note 'plan'." and CALLS == ["plan"]
    assert last["tool_choice"] == {"type": "none"} and [t["name"] for t in last["tools"]] == ["save_note"]


@pytest.mark.parametrize("stop", ["refusal", "model_context_window_exceeded", "end_turn"])
def test_an_empty_reply_ends_with_its_stop_reason_and_does_not_poison_the_transcript(stop):
    with FakeAnthropicServer(api_key=KEY) as server:
        server.reply_next([], stop)
        result = agent(make(server), "Save a note")
        roles = [m.role for m in result.transcript.messages]
        again = agent(make(server), "hello", result.transcript)
    assert result.stopped == stop and result.final_text == "" and CALLS == []
    assert roles == ["user"]  # no empty assistant turn kept
    assert again.stopped == "end_turn"


def test_parallel_tool_calls_all_run_and_answer_in_one_message():
    calls = [{"type": "tool_use", "id": "toolu_a", "name": "save_note", "input": {"title": "a"}},
             {"type": "tool_use", "id": "toolu_b", "name": "word_count", "input": {"text": "one two"}}]
    with FakeAnthropicServer(api_key=KEY) as server:
        server.reply_next(calls, "tool_use")
        result = agent(make(server), "Do both")
    assert CALLS == ["a"] and result.stopped == "end_turn"
    answer = result.transcript.messages[2]
    assert [r.tool_use_id for r in answer.tool_results] == ["toolu_a", "toolu_b"]
    assert result.final_text == "Done: save_note returned saved a; word_count returned 2."


def test_cache_usage_and_rate_limit_headers_are_read_without_trouble():
    with FakeAnthropicServer(api_key=KEY) as server:
        transcript = Transcript()
        transcript.add_user("hello")
        turn = run(make(server).complete(system="", transcript=transcript, tools=[]))
    assert turn.usage.cache_read_input_tokens == 0 and turn.usage.cache_creation_input_tokens == 0
    assert turn.usage.input_tokens > 0


# --- item 18: a 200 that is not a Messages API response --------------------------------------

@pytest.mark.parametrize("fault", ["html", "truncated", "empty_object"])
def test_a_proxy_page_or_broken_body_is_a_provider_error(fault):
    with FakeAnthropicServer(api_key=KEY) as server:
        server.fail_next(fault)
        transcript = Transcript()
        transcript.add_user("hello")
        with pytest.raises(ProviderError) as caught:
            run(make(server).complete(system="", transcript=transcript, tools=[]))
    message = str(caught.value)
    assert "answered with something that is not a Messages API response" in message and one_sentence(message)
    assert caught.value.__cause__ is None


# --- item 19: version pin and retry policy ----------------------------------------------------

def test_the_sdk_major_version_is_pinned_to_the_one_tested():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    spec = next(d for d in deps if re.match(r"anthropic\b", d))
    assert re.search(r">=\s*2\.\d+", spec) and "<3" in spec, spec
    assert anthropic.__version__.startswith("2.")


def ask(server: FakeAnthropicServer, **overrides):
    transcript = Transcript()
    transcript.add_user("hello")
    return run(make(server, **overrides).complete(system="", transcript=transcript, tools=[]))


@pytest.mark.parametrize("status", [408, 409, 504])
def test_lock_and_request_timeouts_are_retried_like_the_sdk(status):
    with FakeAnthropicServer(api_key=KEY) as server:
        server.fail_next("timeout_error" if status == 504 else "api_error", status=status)
        assert ask(server).stop_reason == "end_turn"
    assert len(server.requests) == 2


def test_a_spend_limit_429_is_not_retried_and_says_what_to_do():
    with FakeAnthropicServer(api_key=KEY) as server:
        server.fail_next("rate_limit_error", times=3,
                         message="You have reached your specified workspace API usage limits. You will regain access on 2026-12-01")
        with pytest.raises(ProviderError) as caught:
            ask(server)
    assert len(server.requests) == 1
    assert "raise the limit in the Console, retrying will not help" in str(caught.value) and one_sentence(str(caught.value))


@pytest.mark.parametrize("kind, words", [("permission_error", "(403 permission_error)"),
                                         ("request_too_large", "(413 request_too_large)"),
                                         ("billing_error", "(402 billing_error)")])
def test_errors_waiting_cannot_fix_are_not_retried(kind, words):
    with FakeAnthropicServer(api_key=KEY) as server:
        server.fail_next(kind, times=3)
        with pytest.raises(ProviderError) as caught:
            ask(server)
    assert len(server.requests) == 1 and words in str(caught.value) and one_sentence(str(caught.value))


def test_a_wait_the_sdk_would_honour_is_honoured_by_default():
    # The SDK obeys any retry-after; this provider obeys up to max_delay, which by default covers a 45 s ask.
    assert AnthropicProvider(api_key=KEY).max_delay >= 45
    with FakeAnthropicServer(api_key=KEY) as server:
        server.fail_next("rate_limit_error", headers={"retry-after": "0.2"})
        assert ask(server, max_delay=1.0).stop_reason == "end_turn"
    assert len(server.requests) == 2


def test_an_error_without_the_2x_fields_is_still_one_sentence():
    provider = AnthropicProvider(api_key=KEY)
    response = httpx.Response(400, request=httpx.Request("POST", "https://api.anthropic.com/v1/messages"))
    err = anthropic.BadRequestError.__new__(anthropic.BadRequestError)
    err.response, err.status_code, err.body = response, 400, {"error": {"message": "messages: roles must alternate"}}
    text = provider._describe(err, None, 1, 0.0, None)  # a 0.x-shaped error: no .type, no .api_message
    assert text == "The Anthropic API rejected the request (400 error): messages: roles must alternate."


# --- item 21: server-side tool search: pause_turn, a search error, running out of turns -----

SEARCH = {"type": "server_tool_use", "id": "srvtoolu_01", "name": "tool_search_tool_bm25", "input": {"query": "list notes"}}
FOUND = {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_01",
         "content": {"type": "tool_search_tool_search_result",
                     "tool_references": [{"type": "tool_reference", "tool_name": "mcp__notes__list_notes"}]}}
SEARCH_FAILED = {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_01",
                 "content": {"type": "tool_search_tool_result_error", "error_code": "unavailable"}}
CALL = {"type": "tool_use", "id": "toolu_01", "name": "mcp__notes__list_notes", "input": {}}


def search_session(tmp_path, replies, max_turns=10):
    from harness.mcp.client import MCPHub
    from harness.mcp.server_search import run_with_server_search
    from workbook.servers import server_entry

    with FakeAnthropicServer(api_key=KEY) as server:
        for content, stop in replies:
            server.reply_next(content, stop)

        async def session():
            async with MCPHub({"mcpServers": {"notes": server_entry("notes")}}, log_dir=tmp_path) as hub:
                return await run_with_server_search(make(server), hub, "What notes do I have?", max_turns=max_turns)

        return run(session()), server.requests


@pytest.mark.mcp
def test_a_paused_server_side_turn_is_sent_back_and_continues(tmp_path):
    result, requests = search_session(tmp_path, [([SEARCH, FOUND], "pause_turn"), ([CALL], "tool_use"),
                                                 ([{"type": "text", "text": "Three notes."}], "end_turn")])
    assert (result.final_text, result.stopped) == ("Three notes.", "end_turn")
    assert result.searches == ["list notes"] and result.found == [["mcp__notes__list_notes"]]
    assert result.calls == [("mcp__notes__list_notes", {}, True)]
    assert requests[1].body["messages"][-1] == {"role": "assistant", "content": [SEARCH, FOUND]}  # sent back as is
    first = requests[0].body["tools"]
    assert first[0]["type"] == "tool_search_tool_bm25_20251119" and all(t["defer_loading"] for t in first[1:])


@pytest.mark.mcp
def test_a_failed_server_side_search_is_recorded_and_the_answer_kept(tmp_path):
    result, _ = search_session(tmp_path, [([SEARCH, SEARCH_FAILED, {"type": "text", "text": "Search is down."}], "end_turn")])
    assert (result.final_text, result.stopped, result.found, result.calls) == ("Search is down.", "end_turn", [[]], [])


@pytest.mark.mcp
def test_a_server_side_search_run_out_of_turns_says_so(tmp_path):
    result, requests = search_session(tmp_path, [([CALL], "tool_use"), ([{**CALL, "id": "toolu_02"}], "tool_use")], max_turns=2)
    assert result.stopped == "max_turns" and len(result.calls) == 2 and len(requests) == 2


def test_a_found_tool_is_sent_deferred_and_referenced_where_the_search_found_it():
    """The package's deferred loop through Claude: search_tools finds save_note; the tools block keeps search_tools
    first and sends save_note with defer_loading; the search's tool_result carries its tool_reference, so the API
    expands the definition there and the cached prefix survives (Anthropic's custom tool search)."""
    from harness.selection.discovery import ToolSearch

    search = ToolSearch([], [save_note, word_count])
    with FakeAnthropicServer(api_key=KEY) as server:
        server.reply_next([{"type": "tool_use", "id": "toolu_s", "name": "search_tools", "input": {"query": "save a note"}}],
                          "tool_use")
        server.reply_next([{"type": "tool_use", "id": "toolu_n", "name": "save_note", "input": {"title": "plan"}}], "tool_use")
        result = run(arun(make(server), catalog(), "Save a note called plan", deferral=search.deferral()))
        second, third = server.requests[1].body, server.requests[2].body
    assert CALLS == ["plan"] and result.stopped == "end_turn"
    prefix = lambda body: [t for t in body["tools"] if not t.get("defer_loading")]
    assert [t["name"] for t in prefix(second)] == ["search_tools"] == [t["name"] for t in prefix(third)]
    assert "save_note" in {t["name"] for t in second["tools"] if t.get("defer_loading")}
    refs = [c for c in second["messages"][-1]["content"][0]["content"] if c["type"] == "tool_reference"]
    assert "save_note" in [r["tool_name"] for r in refs]
    assert second["messages"] == third["messages"][:len(second["messages"])], "the conversation only grows"
