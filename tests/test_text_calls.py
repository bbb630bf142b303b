"""A call a model wrote as text is read as the call it spells; prose about a call stays an answer."""
import asyncio

import pytest

from harness.core.messages import Transcript
from harness.providers.text_calls import call_in_text


@pytest.mark.parametrize("text", [
    '{"name": "read_file", "arguments": {"path": "a.txt"}}',
    '  <tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n</tool_call>',
    '```json\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n```',
    '```\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n``` That reads the file.',
    '{"name": "read_file", "arguments": "{\\"path\\": \\"a.txt\\"}"}',  # OpenAI's wire form: arguments as a JSON string
    '{"name": "read_file", "parameters": {"path": "a.txt"}}',
])
def test_a_call_written_bare_fenced_or_tagged_is_read(text):
    assert call_in_text(text) == ("read_file", {"path": "a.txt"})


@pytest.mark.parametrize("text", [
    "You would call the `find_free_slot` function with the date 2025-03-11.",
    'To do this, call {"name": "read_file", "arguments": {"path": "a.txt"}}',  # a call inside prose is talk
    '{"name": "", "arguments": {}}', '{"arguments": {"path": "a"}}', '{"name": "x", "arguments": [1]}',
    '{"name": "x", "arguments": "not json"}', '{"name": "read_file", "arguments": ', "", "```json\n```",
])
def test_prose_and_broken_json_stay_an_answer(text):
    assert call_in_text(text) is None


def test_the_local_provider_runs_an_answer_that_is_a_call(small_tools):
    from test_local_llama import completion, scripted_provider

    written = '{"name": "read_file", "arguments": {"path": "a.txt"}}'
    provider = scripted_provider(completion("Sure", ["Sure"]), {"content": written, "stop_type": "eos"})
    transcript = Transcript()
    transcript.add_user("read a.txt")
    turn = asyncio.run(provider.complete(system="sys", transcript=transcript, tools=small_tools))
    assert turn.from_text and turn.stop_reason == "tool_use"
    assert [(c.name, c.input) for c in turn.message.tool_calls] == [("read_file", {"path": "a.txt"})]
    provider = scripted_provider(completion("Sure", ["Sure"]), {"content": written, "stop_type": "eos"})
    provider.read_text_calls = False
    turn = asyncio.run(provider.complete(system="sys", transcript=transcript, tools=small_tools))
    assert not turn.from_text and turn.stop_reason == "end_turn" and turn.message.text == written
