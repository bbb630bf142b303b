"""Bad files and hostile text (issue 18, items 9, 10, 12, 13): one clear sentence, nothing lost."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import run
from workbook.demo import demo_tools
from workbook.demo.world import DemoWorld
from harness.mcp.config import load_config
from harness.core.messages import Message, TextBlock, Transcript
from harness.providers import settings
from harness.providers.base import ModelTurn, Usage
from harness.providers.cached import CachedProvider
from harness.evaluation.datasets import load_queries, load_tools
from harness.retrieval.dense import Encoder
from harness.core.safe_text import printable

ROOT = Path(__file__).resolve().parents[1]
TOOL = {"id": "fs/read_file", "server": "fs", "name": "read_file", "description": "Read a file.", "input_schema": {"type": "object"}}


def cli(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


# --- item 9: terminal escapes -------------------------------------------------------------

def test_printable_shows_escapes_and_keeps_layout():
    assert printable("a\x1b[2Jb\tc\nd\x07\x9b") == "a\\x1b[2Jb\tc\nd\\x07\\x9b"
    assert printable("a\nb\r", keep_newlines=False) == "a\\nb\\r"


def test_escape_sequences_in_a_tools_file_do_not_reach_the_terminal(tmp_path):
    path = tmp_path / "tools.jsonl"
    rows = [{**TOOL, "description": "Read a file.\x1b[2J\x1b]0;owned\x07 It clears."},
            {**TOOL, "id": "web/fetch", "name": "fetch", "description": "Fetch a URL."},
            {**TOOL, "id": "db/query", "name": "query", "description": "Run SQL."}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = cli("search", "read a file", "--tools", str(path))
    assert out.returncode == 0 and "\x1b" not in out.stdout and "\x07" not in out.stdout
    assert "\\x1b[2J" in out.stdout


# --- item 10: symlinks out of the sandbox --------------------------------------------------

def test_walks_do_not_follow_links_out_of_the_sandbox(tmp_path):
    secret = tmp_path / "outside.txt"
    secret.write_text("root:x:0:0:secret line\n")
    world = DemoWorld(tmp_path / "world")
    (world.root / "docs").mkdir(exist_ok=True)
    (world.root / "docs" / "link.txt").symlink_to(secret)
    (world.root / "linkdir").symlink_to(tmp_path, target_is_directory=True)
    (world.root / "inside_link.txt").symlink_to(world.root / "README.md")
    tools = {t.name: t.fn for t in demo_tools(world) if t.fn is not None}
    found = tools["search_code"](query="secret line")
    assert found == ["No matches for 'secret line'."]
    assert "docs/link.txt" not in tools["find_files"](pattern="*.txt")
    assert "inside_link.txt" in tools["find_files"](pattern="*.txt")  # a link inside the sandbox is fine
    with pytest.raises(ValueError, match="outside the sandbox"):
        tools["read_file"](path="docs/link.txt")


# --- item 12: encodings, file names, .env, http servers ------------------------------------

def test_a_bom_at_the_start_of_a_data_file_is_accepted(tmp_path):
    tools = tmp_path / "tools.jsonl"
    tools.write_bytes(b"\xef\xbb\xbf" + json.dumps(TOOL).encode() + b"\n")
    assert [t.id for t in load_tools(tools)] == ["fs/read_file"]
    queries = tmp_path / "queries.jsonl"
    queries.write_bytes(b"\xef\xbb\xbf" + json.dumps({"qid": "q1", "query": "read it", "gold": ["fs/read_file"]}).encode() + b"\n")
    assert [q.qid for q in load_queries(queries, tools=load_tools(tools))] == ["q1"]


def test_a_file_that_is_not_utf8_is_named_in_the_error(tmp_path):
    path = tmp_path / "tools.jsonl"
    path.write_bytes(json.dumps(TOOL).encode() + b"\n" + json.dumps({**TOOL, "id": "fs/x", "description": "caf\xe9"}, ensure_ascii=False).encode("latin-1") + b"\n")
    with pytest.raises(ValueError) as info:
        load_tools(path)
    message = str(info.value)
    assert message.startswith(f"{path}, line 2: not UTF-8 text") and "\n" not in message


def test_a_utf16_env_file_is_read(tmp_path):
    path = tmp_path / ".env"
    path.write_text("# saved by Notepad\nANTHROPIC_MODEL=claude-haiku-4-5\n", encoding="utf-16")
    assert settings.read_env_file(path) == {"ANTHROPIC_MODEL": "claude-haiku-4-5"}


def test_an_unreadable_env_file_is_one_sentence(tmp_path):
    path = tmp_path / ".env"
    path.write_bytes(b"ANTHROPIC_MODEL=caf\xe9\xff\xfe\x00x\n")
    with pytest.raises(ValueError) as info:
        settings.read_env_file(path)
    assert str(info.value) == f"{path} is not UTF-8 or UTF-16 text: save it as UTF-8."


@pytest.mark.parametrize("content, expected", [
    ("ANTHROPIC_API_KEY pasted-value-without-equals\n", "line 1 is not KEY=VALUE"),
    (None, "is not UTF-8 or UTF-16 text"),
])
def test_doctor_reports_a_bad_env_file_instead_of_aborting(tmp_path, content, expected):
    from harness import __main__ as cli_module

    path = tmp_path / ".env"
    if content is None:
        path.write_bytes(b"X=\xff\xfe\xfd\n")
    else:
        path.write_text(content)
    lines = _doctor_with_env(cli_module, path)
    model = [ln for ln in lines if ln.startswith("Model:")]
    assert len(model) == 1 and expected in model[0] and "pasted-value" not in "\n".join(lines)


def _doctor_with_env(cli_module, path: Path) -> list[str]:
    mp = pytest.MonkeyPatch()
    try:
        mp.delenv("ANTHROPIC_API_KEY", raising=False)
        mp.setattr(settings, "env_file", lambda: path)
        return cli_module.doctor_lines()
    finally:
        mp.undo()


def test_a_config_file_with_a_bom_is_read_and_one_that_is_not_utf8_is_named(tmp_path):
    from harness.mcp.config import MCPConfigError

    good = tmp_path / "mcp.json"
    good.write_bytes(b"\xef\xbb\xbf" + json.dumps({"mcpServers": {"local": {"command": "python3"}}}).encode())
    assert [s.name for s in load_config(good)] == ["local"]
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"mcpServers": {"caf\xe9": {"command": "python3"}}}')
    with pytest.raises(MCPConfigError) as info:
        load_config(bad)
    assert str(info.value) == f"The MCP config file '{bad}' is not UTF-8 text (byte 0xe9 at offset 20): save it as UTF-8."


def test_a_websocket_server_in_the_config_is_skipped_and_the_rest_kept():
    config = load_config({"mcpServers": {
        "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}},
        "ws": {"type": "websocket", "url": "wss://example.com/ws"},
        "local": {"command": "python3"},
    }})
    assert [s.name for s in config.enabled] == ["remote", "local"]  # http servers run since issue 43
    assert config.servers["ws"].skipped == (
        "skipped: type 'websocket' servers are not supported here; this harness runs stdio, streamable HTTP and SSE servers")


# --- item 13: a damaged cache --------------------------------------------------------------

class Echo:
    name = model = "echo"

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, *, system, transcript, tools, max_tokens=1024):
        self.calls += 1
        return ModelTurn(Message("assistant", [TextBlock(f"answer to {transcript.messages[-1].text}")]), "end_turn", Usage(1, 1), "echo")


def ask(provider, text: str) -> str:
    t = Transcript()
    t.add_user(text)
    return run(provider.complete(system="", transcript=t, tools=[])).message.text


def test_a_cache_whose_last_line_was_cut_keeps_the_rest_and_names_the_line(tmp_path, caplog):
    path = tmp_path / "cache.jsonl"
    first = CachedProvider(Echo(), path)
    ask(first, "one"), ask(first, "two")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 25])  # the second line cut mid-write
    inner = Echo()
    again = CachedProvider(inner, path)
    assert again.damaged == [f"{path}, line 2: not valid JSON (cut off or edited?); skipped"]
    assert ask(again, "one") == "answer to one" and inner.calls == 0  # the intact line is kept
    assert ask(again, "two") == "answer to two" and inner.calls == 1  # the damaged one is asked again
    third = CachedProvider(Echo(), path)  # the new line was not glued onto the damaged one
    assert len(third._cache) == 2 and len(third.damaged) == 1


# --- one sentence, not a traceback: MCP configs -----------------------------------------------

def _config_error(source) -> str:
    from harness.mcp.config import MCPConfigError

    with pytest.raises(MCPConfigError) as info:
        load_config(source)
    message = str(info.value)
    assert "\n" not in message and message.endswith("."), message
    return message


def test_a_config_nested_absurdly_deep_is_one_sentence(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"mcpServers": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert _config_error(path) == (f"The MCP config file '{path}' is nested too deeply to read: "
                                   "an mcpServers file is a few levels deep, so check it is the right file.")


@pytest.mark.parametrize("value", ["1e400", "-1e400", "NaN", "Infinity", "1e300"])
def test_a_startup_timeout_that_is_not_a_sensible_number_is_refused(value):
    text = '{"mcpServers": {"s": {"command": "python3", "startupTimeout": %s}}}' % value
    assert _config_error(text).startswith("mcpServers.s.startupTimeout must be a positive number of seconds up to 86400")


def test_a_server_named_twice_is_refused_not_silently_replaced(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {"git": {"command": "a"}, "files": {"command": "b"}, "git": {"command": "c"}}}')
    assert _config_error(path) == (f"The MCP config file '{path}' names 'git' twice in one object "
                                   "(JSON keeps only the last): keep one of them.")


def test_a_config_that_is_a_folder_says_so(tmp_path):
    assert _config_error(tmp_path) == (f"The MCP config file '{tmp_path}' is a folder, not a file: "
                                       "pass the mcpServers JSON file itself.")
    out = cli("serve", "--config", str(tmp_path))
    assert out.returncode == 2 and out.stderr.strip().splitlines() == [
        f"error: The MCP config file '{tmp_path}' is a folder, not a file: pass the mcpServers JSON file itself."]


# --- one sentence, not a traceback: tools files, queries that are not valid Unicode -------------

def _tools_file(tmp_path: Path, schema_text: str) -> Path:
    path = tmp_path / "tools.jsonl"
    row = json.dumps({**TOOL, "input_schema": "SCHEMA"}).replace('"SCHEMA"', schema_text)
    path.write_text(row + "\n" + json.dumps({**TOOL, "id": "web/fetch", "name": "fetch"}) + "\n")
    return path


@pytest.mark.parametrize("schema, expected", [
    ('{"type": "object", "properties": ["path", "mode"]}',
     "line 1: field 'input_schema.properties' must be a JSON object of parameters, got list."),
    ('{"type": "object", "properties": {"x": ' + '{"items": ' * 5000 + "{}" + "}" * 5000 + "}}",
     "line 1: nested too deeply to read (a record is a few levels deep): check it is the right file."),
    ('{"type": "object", "properties": {"x": ' + '{"items": ' * 300 + "{}" + "}" * 300 + "}}",
     "line 1: field 'input_schema' is nested more than 100 levels deep; a tool's parameters are a few levels deep."),
])
def test_a_tools_file_with_a_malformed_schema_is_one_sentence(tmp_path, schema, expected):
    path = _tools_file(tmp_path, schema)
    with pytest.raises(ValueError) as info:
        load_tools(path)
    assert str(info.value) == f"{path}, {expected}"
    out = cli("search", "read a file", "--tools", str(path))
    assert out.returncode == 2 and out.stderr.splitlines() == [f"error: {path}, {expected}"]
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"never": {"command": "does-not-start"}}}))
    out = cli("serve", "--measure", "--config", str(config), "--extra-tools", str(path))
    assert out.returncode == 2 and out.stderr.splitlines() == [f"error: {path}, {expected}"]


def test_a_query_that_is_not_valid_unicode_is_searched_not_a_traceback():
    from harness.retrieval.dense import dense_available

    if not dense_available():
        pytest.skip("the embedding extra is not installed")
    from workbook.demo.labels import demo_dataset
    from harness.retrieval.hybrid import HybridRetriever
    from harness.retrieval.records import CatalogTool
    from harness.selection.ranking import DEFAULT_K

    tools, _ = demo_dataset()
    hybrid = HybridRetriever(tools)
    assert hybrid.rank("read a caf\udce9 file \ud800", 3) == hybrid.rank("read a caf\\xe9 file \ufffd", 3)
    odd = [CatalogTool(id="a/read", name="read_file", description="Read a caf\udce9 file \ud800."),
           CatalogTool(id="a/write", name="write_file", description="Write a file.")]
    assert HybridRetriever(odd).rank("read a file", 1) == ["a/read"]  # lone surrogates in a tools file, escaped in JSON
    out = subprocess.run([sys.executable, "-m", "harness", "search", b"read a caf\xe9 file", "--retriever", "hybrid"],
                         capture_output=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0 and out.stdout.count(b"\n") == DEFAULT_K, out.stderr[-300:]  # one line per tool


# --- one sentence, not a traceback: the embedding cache ------------------------------------------

class CountingEncoder(Encoder):
    """An Encoder whose 'model' is a deterministic hash, so cache behaviour is tested without the weights."""

    def __init__(self) -> None:
        super().__init__(remember=0)

    def _model_encode(self, texts: list[str]) -> np.ndarray:
        self.texts_encoded += len(texts)
        rows = np.stack([np.random.default_rng(abs(hash(t)) % 2**32).normal(size=384) for t in texts])
        return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


@pytest.mark.parametrize("damage", ["short", "matrix", "text", "nan", "object"])
def test_cache_entries_of_the_wrong_shape_are_re_embedded(tmp_path, damage):
    import numpy as np
    from workbook.demo.labels import demo_dataset
    from harness.retrieval.dense import DenseRetriever, EmbeddingCache

    tools = demo_dataset()[0][:12]
    cache = EmbeddingCache(tmp_path / "cache")
    first = DenseRetriever(tools, encoder=CountingEncoder(), cache=cache)
    bad = {"short": np.zeros(3, np.float32), "matrix": np.ones((2, 384), np.float32), "text": np.array(["x"] * 384),
           "nan": np.full(384, np.nan, np.float32), "object": None}[damage]
    for path in (tmp_path / "cache").rglob("*.npy"):
        if bad is None:
            np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
        else:
            np.save(path, bad)
    encoder = CountingEncoder()
    again = DenseRetriever(tools, encoder=encoder, cache=cache)
    assert encoder.texts_encoded == len({t.definition_hash() for t in tools})  # every damaged entry embedded anew
    assert again.matrix.shape == first.matrix.shape and np.allclose(again.matrix, first.matrix)
    assert again.rank("read a file", 3) == first.rank("read a file", 3)
    third = CountingEncoder()
    DenseRetriever(tools, encoder=third, cache=cache)
    assert third.texts_encoded == 0  # the repaired entries were written back


def test_an_embedding_cache_that_names_a_file_is_one_sentence(tmp_path, monkeypatch):
    from harness.retrieval.dense import EmbeddingCache

    path = tmp_path / "cache.txt"
    path.write_text("not a folder")
    monkeypatch.setenv("HARNESS_EMBEDDING_CACHE", str(path))
    with pytest.raises(ValueError) as info:
        EmbeddingCache()
    assert str(info.value) == (f"HARNESS_EMBEDDING_CACHE names {path}, which is a file, not a folder: point it at a "
                               "folder (or unset it to use ~/.cache/harness/embeddings).")
    assert path.read_text() == "not a folder"  # nothing lost
    with pytest.raises(ValueError, match=r"^The embedding cache .* is a file, not a folder: pass a folder\.$"):
        EmbeddingCache(path)


# --- one sentence, not a traceback: public data, the benchmark, settings ------------------------

def _queries_file(tmp_path: Path, rows: list[dict]) -> Path:
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "tools.jsonl").write_text("".join(json.dumps({**TOOL, "id": i, "name": i}) + "\n" for i in ("a", "b", "c")))
    (folder / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def test_a_query_id_used_twice_is_refused(tmp_path):
    folder = _queries_file(tmp_path, [{"qid": "q1", "query": "one", "gold": ["a"]}, {"qid": "q2", "query": "two", "gold": ["b"]},
                                      {"qid": "q1", "query": "three", "gold": ["c"]}])
    with pytest.raises(ValueError) as info:
        load_queries(folder)
    assert str(info.value) == (f"{folder / 'queries.jsonl'}, line 3: query id 'q1' is used again (first on line 1): "
                               "give every query its own qid.")


def test_a_gold_id_listed_twice_counts_once_so_recall_and_ndcg_agree(tmp_path):
    from harness.evaluation.metrics import evaluate

    folder = _queries_file(tmp_path, [{"qid": "q1", "query": "one", "gold": ["a", "a"]},
                                      {"qid": "q2", "query": "two", "gold": ["b", "c"], "gold_groups": [["b"], ["b"], ["c", "c"]]}])
    q1, q2 = load_queries(folder)
    assert q1.gold == ("a",) and q1.slots == (("a",),) and q2.slots == (("b",), ("c",))

    class Fixed:
        name = "fixed"

        def rank(self, query, k=None):
            return ["a", "b", "c"][:k]

    m = evaluate(Fixed(), [q1], ks=(1, 10), name="fixed").metrics()
    assert m["R@1"] == 1.0 and m["nDCG@10"] == 1.0


def test_a_malformed_public_queries_file_stops_the_benchmark_before_any_work(tmp_path, monkeypatch, capsys):
    from experiments import bench

    data = tmp_path / "data" / "toollens_train"
    data.mkdir(parents=True)
    (data / "tools.jsonl").write_text(json.dumps({**TOOL, "id": "a", "name": "a"}) + "\n")
    (data / "queries.jsonl").write_text('{"qid": "q1", "query": "one", "gold": ["a"]}\n{"qid": "q2", "query": \n')
    monkeypatch.setenv("HARNESS_DATA", str(tmp_path / "data"))
    monkeypatch.setattr(bench, "demo_dataset", lambda: pytest.fail("work started before the data was checked"))
    monkeypatch.setattr(bench, "Encoder", lambda *a, **k: pytest.fail("the model was loaded before the data was checked"))
    assert bench.main(["--quick", "--out", str(tmp_path / "out.json")]) == 2
    assert capsys.readouterr().err.splitlines() == [f"error: {data / 'queries.jsonl'}, line 2: not valid JSON (Expecting value)."]


@pytest.mark.parametrize("kind", ["folder", "file inside a file"])
def test_bench_out_that_cannot_be_written_is_refused_before_any_work(tmp_path, monkeypatch, capsys, kind):
    from experiments import bench

    monkeypatch.setattr(bench, "run", lambda *a, **k: pytest.fail("ran before checking --out"))
    if kind == "folder":
        out, expected = tmp_path, f"error: --out {tmp_path} is a folder: name the JSON file to write, e.g. {tmp_path / 'results.json'}."
    else:
        (tmp_path / "plain").write_text("keep me")
        out = tmp_path / "plain" / "results.json"
        expected = f"error: --out {out} cannot be written: {tmp_path / 'plain'} is a file, not a folder."
    assert bench.main(["--out", str(out)]) == 2
    assert capsys.readouterr().err.splitlines() == [expected]
    assert kind == "folder" or (tmp_path / "plain").read_text() == "keep me"


@pytest.mark.parametrize("kind", ["file", "missing"])
def test_harness_data_naming_a_file_or_nothing_is_reported_as_such(tmp_path, monkeypatch, kind):
    from harness import __main__ as cli_module
    from harness.evaluation.datasets import missing_data_note

    path = tmp_path / "data"
    if kind == "file":
        path.write_text("not a folder")
    monkeypatch.setenv("HARNESS_DATA", str(path))
    what = "a file, not a folder" if kind == "file" else "does not exist"
    (line,) = [ln for ln in cli_module.doctor_lines() if ln.startswith("Public data:")]
    assert line == f"Public data: absent — HARNESS_DATA names {path}, which {'is ' if kind == 'file' else ''}{what}: point it at the folder holding the public data; chapters use the demo world"
    assert missing_data_note("livemcpbench") == (
        f"Public data 'livemcpbench' not found because HARNESS_DATA names {path}, which {'is ' if kind == 'file' else ''}"
        f"{what} (point it at the folder holding the public data): skipping what needs it.")


def test_an_env_file_that_is_a_folder_is_reported(tmp_path, monkeypatch):
    from harness import __main__ as cli_module

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    folder = tmp_path / ".env"
    folder.mkdir()
    monkeypatch.setenv("HARNESS_ENV_FILE", str(folder))
    with pytest.raises(ValueError) as info:
        settings.setting("ANTHROPIC_API_KEY")
    assert str(info.value) == (f"HARNESS_ENV_FILE names {folder}, which is a folder, not a file: point it at a file "
                               "of KEY=VALUE lines.")
    monkeypatch.delenv("HARNESS_ENV_FILE")
    monkeypatch.chdir(tmp_path)
    with pytest.warns(UserWarning) as caught:
        assert settings.setting("ANTHROPIC_API_KEY") == (None, None)  # a virtualenv called .env is not an error
    assert [str(w.message) for w in caught] == [
        f"{folder} is a folder, not a settings file: it is ignored, so settings come from the environment only."]
    lines = cli_module.doctor_lines()
    assert f"Settings: {folder} is a folder, not a settings file: it is ignored, so settings come from the environment only." in lines
