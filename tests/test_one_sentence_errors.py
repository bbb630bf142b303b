"""Bad settings and paths are said in one sentence, where they are met (issue 40: unclear and crashes).

HARNESS_ENV_FILE naming a missing file was silently ignored; an unterminated quote in ``.env`` kept the quote;
HARNESS_EMBEDDING_CACHE naming a file passed the doctor and made every hybrid index fall back; HARNESS_REAL_MODEL
naming a file said "not installed"; a gold id missing from the catalog told a CLI user to "pass strict=False";
a CachedProvider whose file is a folder raised a raw IsADirectoryError; ``harness serve --retriever
learned-querylog`` started and broke the client's session at its first request.
"""
from __future__ import annotations

import json

import pytest

from harness.__main__ import doctor_lines
from harness.__main__ import main as cli
from harness.providers.base import ProviderError
from harness.providers.cached import CachedProvider
from harness.providers.scripted import ScriptedProvider
from harness.providers.settings import env_file, read_env_file, setting
from harness.retrieval.dense import dense_unavailable_reason


def one_sentence(text: str) -> bool:
    return "\n" not in text and "Traceback" not in text and text.rstrip().endswith((".", ")"))


def test_harness_env_file_naming_a_missing_file_is_said(tmp_path, monkeypatch):
    missing = tmp_path / "nowhere.env"
    monkeypatch.setenv("HARNESS_ENV_FILE", str(missing))
    with pytest.raises(ValueError) as caught:
        env_file()
    assert str(caught.value).startswith(f"HARNESS_ENV_FILE names {missing}, which does not exist")
    assert one_sentence(str(caught.value))
    with pytest.raises(ValueError):
        setting("ANTHROPIC_API_KEY")


@pytest.mark.parametrize("line", ['ANTHROPIC_API_KEY="sk-ant-123', "ANTHROPIC_API_KEY='sk-ant-123", 'export NAME="x\\"y'])
def test_an_unterminated_quote_in_env_is_one_sentence_that_shows_no_value(tmp_path, line):
    path = tmp_path / ".env"
    path.write_text(f"# settings\n{line}\n")
    with pytest.raises(ValueError) as caught:
        read_env_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path} line 2") and "quote" in message and one_sentence(message)
    assert "sk-ant" not in message and "x\\" not in message


def test_quoted_values_keep_what_they_held(tmp_path):
    path = tmp_path / ".env"
    path.write_text('A="two words" # a comment\nB=\'single\'\nC="with \\" inside"\nD=plain # comment\n')
    assert read_env_file(path) == {"A": "two words", "B": "single", "C": 'with \\" inside', "D": "plain"}


def test_an_embedding_cache_naming_a_file_is_reported_by_the_doctor_and_stops_the_dense_retrievers(tmp_path, monkeypatch):
    pytest.importorskip("safetensors")
    path = tmp_path / "cache.txt"
    path.write_text("not a folder")
    monkeypatch.setenv("HARNESS_EMBEDDING_CACHE", str(path))
    reason = dense_unavailable_reason()
    assert reason and f"HARNESS_EMBEDDING_CACHE names {path}, which is a file" in reason
    assert any(line.startswith("Embeddings (Chapter 6): absent") and str(path) in line for line in doctor_lines())
    from harness.retrieval.named import check_name
    with pytest.raises(ValueError, match="HARNESS_EMBEDDING_CACHE names"):
        check_name("hybrid")  # refused where it is named, not an index that falls back later
    assert path.read_text() == "not a folder"


def test_harness_real_model_naming_a_file_says_so(tmp_path, monkeypatch):
    from workbook.providers.local_llama import find_install

    path = tmp_path / "model.gguf"
    path.write_bytes(b"weights")
    monkeypatch.setenv("HARNESS_REAL_MODEL", str(path))
    with pytest.raises(ProviderError) as caught:
        find_install()
    message = str(caught.value)
    assert message.startswith(f"HARNESS_REAL_MODEL names {path}, which is a file") and "not installed" not in message
    assert one_sentence(message)


def test_a_gold_id_missing_from_the_catalog_tells_a_cli_user_what_to_do(tmp_path, capsys):
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "tools.jsonl").write_text(json.dumps({"id": "a", "name": "a", "description": "Tool a."}) + "\n")
    (folder / "queries.jsonl").write_text(json.dumps({"qid": "q1", "query": "do a", "gold": ["a"], "gold_groups": [["a", "b"]]}) + "\n")
    assert cli(["eval", str(folder), "--retriever", "bm25"]) == 2
    error = capsys.readouterr().err
    assert "gold id 'b' of query 'q1' is not in the catalog" in error and "strict=False" not in error
    assert one_sentence(error.strip())


def test_an_answer_cache_that_is_a_folder_is_one_sentence(tmp_path):
    with pytest.raises(ValueError) as caught:
        CachedProvider(ScriptedProvider([]), tmp_path)
    message = str(caught.value)
    assert message.startswith(f"The answer cache {tmp_path} is a folder") and one_sentence(message)


def test_serve_refuses_a_retriever_that_needs_a_query_log_at_start(tmp_path, capsys):
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {}}))
    assert cli(["serve", "--config", str(config), "--retriever", "learned-querylog"]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("error: The 'learned-querylog' retriever learns from a log of past queries") and one_sentence(error)
