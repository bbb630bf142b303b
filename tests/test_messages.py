import pytest

from harness.core.messages import Message, TextBlock, ToolCall, ToolResult, Transcript


def test_round_trip_through_api_dicts():
    t = Transcript()
    t.add_user("read a.txt")
    t.append(Message("assistant", [TextBlock("ok"), ToolCall("toolu_1", "read_file", {"path": "a.txt"})]))
    t.append(Message("user", [ToolResult("toolu_1", "hello", is_error=False)]))
    t.append(Message("user", [ToolResult("toolu_2", "nope", is_error=True)]))
    api = t.to_api()
    assert api[1]["content"][1] == {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.txt"}}
    assert api[3]["content"][0] == {"type": "tool_result", "tool_use_id": "toolu_2", "content": "nope", "is_error": True}
    assert Transcript.from_api(api).to_api() == api


def test_api_forms_we_must_accept():
    m = Message.from_api({"role": "user", "content": "plain string"})
    assert m.text == "plain string"
    r = Message.from_api({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x",
                                                       "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]})
    assert r.tool_results[0].content == "a\nb"
    with pytest.raises(ValueError, match="Unknown content block type 'image'"):
        Message.from_api({"role": "user", "content": [{"type": "image"}]})
    with pytest.raises(ValueError, match="'user' or 'assistant'"):
        Message("system", [])


def test_transcript_queries():
    t = Transcript()
    t.add_user("first")
    t.append(Message("assistant", [ToolCall("a", "x", {})]))
    t.append(Message("user", [ToolResult("a", "res")]))
    t.add_user("second")
    assert t.user_texts() == ["first", "second"]
    assert [c.name for c in t.tool_calls()] == ["x"]
    assert t.result_for("a").content == "res" and t.result_for("zz") is None
