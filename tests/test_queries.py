from harness.core.messages import Message, TextBlock, ToolCall, ToolResult, Transcript
from harness.selection.queries import QUERY_STRATEGIES, query_from_recent, query_from_transcript, query_from_user_message


def _transcript():
    t = Transcript()
    t.add_user("Fix the failing login test")
    for i, (name, args) in enumerate([("run_tests", {"path": "tests"}), ("read_file", {"path": "a.py"}),
                                      ("search_code", {"query": "login"}), ("write_file", {"path": "a.py", "content": "x"})]):
        t.append(Message("assistant", [TextBlock(f"step {i}"), ToolCall(f"c{i}", name, args)]))
        t.append(Message("user", [ToolResult(f"c{i}", "SECRET RESULT TEXT")]))
    t.add_user("now tell the team")
    return t


def test_transcript_query_is_first_message_plus_recent_calls():
    q = query_from_transcript(_transcript(), recent=2)
    assert q.startswith("Fix the failing login test")
    assert "search_code query" in q and "write_file path content" in q
    assert "run_tests" not in q  # older than the last two assistant turns
    assert "SECRET" not in q  # tool results are not part of the query
    assert "tell the team" not in q


def test_other_strategies():
    t = _transcript()
    assert query_from_user_message(t) == "now tell the team"
    assert query_from_recent(t, recent=1).startswith("now tell the team step 3 write_file")
    assert set(QUERY_STRATEGIES) == {"latest message", "transcript", "latest message + recent turns"}
    assert query_from_transcript(Transcript()) == ""


def test_the_strategies_are_named_as_the_real_model_rules_name_them():
    """Chapter 3 compares the strategies on the stand-in and on the real model: one name for each query."""
    from experiments.real_rules import QUERY_CONFIGS

    assert set(QUERY_STRATEGIES) == set(QUERY_CONFIGS)
