"""No API key in anything committed, cached or shown."""
import json
import re
import subprocess
from pathlib import Path

from conftest import run
from harness.core.messages import Transcript
from harness.providers.cached import CachedProvider

ROOT = Path(__file__).resolve().parent.parent
KEY_SHAPE = re.compile(r"sk-ant-[A-Za-z0-9_\-]{16,}")


def tracked_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [ROOT / p for p in out.decode().split("\0") if p]


def test_no_key_shaped_string_in_any_committed_file():
    offenders = []
    for path in tracked_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        if KEY_SHAPE.search(text):
            offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, f"key-shaped strings in: {offenders}"


def test_the_scanner_would_catch_one(tmp_path):
    assert KEY_SHAPE.search("ANTHROPIC_API_KEY=" + "sk-ant-" + "api03-AbCdEfGhIjKlMnOpQrSt")


def test_env_file_is_ignored_and_example_is_committed():
    ignored = subprocess.run(["git", "check-ignore", "-q", ".env"], cwd=ROOT).returncode == 0
    assert ignored, ".env must be git-ignored"
    assert (ROOT / ".env.example").exists()


def test_cached_answers_hold_no_key(tmp_path, small_tools):
    from workbook.providers.fake_anthropic import FakeAnthropicServer
    from harness.providers.anthropic_provider import AnthropicProvider

    key = "sk-ant-" + "cachetest-" + "z" * 30
    with FakeAnthropicServer(api_key=key) as server:
        provider = AnthropicProvider(api_key=key, base_url=server.base_url, max_retries=0)
        cached = CachedProvider(provider, tmp_path / "cache.jsonl")
        t = Transcript()
        t.add_user("read_file {\"path\": \"a.txt\"}")
        run(cached.complete(system="s", transcript=t, tools=small_tools))
        assert server.requests, "the request reached the server"
    text = (tmp_path / "cache.jsonl").read_text()
    assert key not in text and json.loads(text.splitlines()[0])["key"]
    assert key not in repr(cached)


def test_url_credentials_are_redacted_wherever_a_url_appears():
    from harness.core.redaction import redact_url_credentials, url_credentials

    text = "POST http://user:p%40ss@host:8080/v1 failed; retry https://tok@example.com?x=1 or ftp://a@b@c/d"
    assert redact_url_credentials(text) == "POST http://***@host:8080/v1 failed; retry https://***@example.com?x=1 or ftp://***@c/d"
    assert redact_url_credentials("mail me at dev@example.test, see http://host/a@b") == "mail me at dev@example.test, see http://host/a@b"
    assert url_credentials("http://user:pw:x@host") == ["user", "pw:x"] and url_credentials("http://host") == []


def test_any_eight_character_piece_of_a_secret_is_hidden():
    from harness.core.redaction import redact_secrets

    key = "sk-ant-" + "api03-AbCdEfGhIjKlMnOpQrSt"
    for piece in (key, key[-12:], key[5:25], key[:8], key[-8:]):
        shown = redact_secrets(f"the server said {piece}.", [key])
        assert shown == "the server said ***." and piece not in shown
    assert redact_secrets(f"tail {key[-7:]} kept", [key]) == f"tail {key[-7:]} kept"  # shorter than 8: not the key
    assert redact_secrets("token=abc123 and abc123", ["abc123"]) == "token=*** and ***"  # a short secret, whole
    assert redact_secrets("nothing here", ["", "s3cr3t-value"]) == "nothing here"


def test_a_download_address_with_a_login_is_not_shown(tmp_path):
    import pytest

    from workbook.providers.fake_anthropic import unused_port
    from harness.evaluation.datasets import download

    url = f"http://reader:dl-s3cret-pass@127.0.0.1:{unused_port()}/tools.json"
    with pytest.raises(ConnectionError) as info:
        download("mcpzero_catalog", tmp_path, urls={"tools": url}, timeout=2)
    assert "dl-s3cret-pass" not in str(info.value) and "http://***@127.0.0.1" in str(info.value)
