"""default_provider: Claude with a key (environment or .env), else a named OpenAI-compatible model, else the offline
model; one line, never the key."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import harness.providers
from harness.providers import settings
from workbook.providers import default
from harness.providers.anthropic_provider import AnthropicProvider
from harness.providers.scripted import ScriptedProvider

KEY = "sk-ant-api03-" + "k" * 40 + "Ab12"


@pytest.fixture
def repo(no_settings) -> Path:
    """A fake checkout with no .env yet, and no ANTHROPIC_* settings in the environment."""
    return no_settings


@pytest.fixture
def offline(monkeypatch) -> ScriptedProvider:
    """Stands in for workbook.providers.offline.OfflineModel, so the choice is tested on its own."""
    stand_in = ScriptedProvider([], name="offline stand-in")
    monkeypatch.setattr(default, "offline_model", lambda: stand_in)
    return stand_in


def printed_line(capsys) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out
    return out.strip()


def test_no_key_means_offline(repo, offline, capsys):
    assert default.default_provider() is offline
    assert printed_line(capsys) == "Model: offline stand-in (no ANTHROPIC_API_KEY set) — deterministic, no network."
    assert default.key_source() is None and not default.online()


def test_a_key_in_the_environment_means_claude(repo, offline, monkeypatch, capsys):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    provider = default.default_provider()
    line = printed_line(capsys)
    assert isinstance(provider, AnthropicProvider) and provider.model == "claude-haiku-4-5"
    assert line.startswith("Model: Claude claude-haiku-4-5 via the Anthropic API (key from ANTHROPIC_API_KEY in the environment)")
    assert KEY not in line and KEY not in repr(provider)
    assert default.key_source() == "environment" and default.online()


def test_a_key_in_dotenv_means_claude(repo, offline, capsys):
    (repo / ".env").write_text(
        "# my settings\n\nexport ANTHROPIC_API_KEY='" + KEY + "'\nANTHROPIC_MODEL=\"claude-sonnet-4-5\"  \n"
    )
    provider = default.default_provider()
    line = printed_line(capsys)
    assert isinstance(provider, AnthropicProvider) and provider.model == "claude-sonnet-4-5"
    assert "(key from ANTHROPIC_API_KEY in .env)" in line and KEY not in line
    assert provider._api_key == KEY and default.key_source() == ".env"


def test_the_environment_wins_over_dotenv(repo, offline, monkeypatch, capsys):
    (repo / ".env").write_text(f"ANTHROPIC_API_KEY={KEY}\nANTHROPIC_MODEL=claude-opus-4-6\n")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY.replace("Ab12", "Zz99"))
    monkeypatch.setenv("ANTHROPIC_MODEL", "claude-sonnet-4-5")
    provider = default.default_provider(verbose=False)
    assert capsys.readouterr().out == ""
    assert provider._api_key.endswith("Zz99") and provider.model == "claude-sonnet-4-5"


def test_a_model_server_named_in_dotenv_means_that_server_and_claude_comes_first(repo, offline, capsys, monkeypatch):
    from harness.providers.openai_compat import OpenAICompatProvider

    secret = "sk-local-" + "q" * 30
    (repo / ".env").write_text(f"OPENAI_BASE_URL=http://127.0.0.1:9/v1\nOPENAI_MODEL=qwen2.5-coder\nOPENAI_API_KEY={secret}\n")
    provider = default.default_provider()
    line = printed_line(capsys)
    assert isinstance(provider, OpenAICompatProvider)
    assert line.startswith("Model: qwen2.5-coder at an OpenAI-compatible endpoint (OPENAI_MODEL in .env; ")
    assert secret not in line and secret not in repr(provider)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    assert isinstance(default.default_provider(verbose=False), AnthropicProvider)


def test_an_empty_key_copied_from_the_example_stays_offline(repo, offline, monkeypatch):
    example = Path(default.__file__).resolve().parents[2] / ".env.example"
    (repo / ".env").write_text(example.read_text())
    monkeypatch.setenv("ANTHROPIC_API_KEY", "  ")
    assert default.default_provider(verbose=False) is offline


def test_dotenv_values(tmp_path):
    env = tmp_path / ".env"
    env.write_text('A=plain # a comment\nB="keeps # inside quotes"\nC = spaced \nexport D=\'single\'\nE=\n')
    assert settings.read_env_file(env) == {"A": "plain", "B": "keeps # inside quotes", "C": "spaced", "D": "single", "E": ""}


def test_a_malformed_dotenv_line_is_named_but_not_shown(repo, offline):
    (repo / ".env").write_text(f"# settings\n{KEY}\n")  # a key pasted without its name
    with pytest.raises(ValueError) as caught:
        default.default_provider()
    message = str(caught.value)
    assert "line 2 is not KEY=VALUE" in message and KEY not in message


def test_the_env_file_is_found_from_a_folder_below_it(repo, monkeypatch):
    (repo / ".env").write_text("ANTHROPIC_MODEL=claude-from-env-file\n", encoding="utf-8")
    (repo / "notebooks").mkdir()
    monkeypatch.chdir(repo / "notebooks")  # where a chapter's kernel runs
    assert settings.env_file() == repo / ".env"
    assert settings.setting("ANTHROPIC_MODEL") == ("claude-from-env-file", ".env")
    monkeypatch.setenv("HARNESS_ENV_FILE", str(repo / "nowhere.env"))
    with pytest.raises(ValueError, match="HARNESS_ENV_FILE names .*nowhere.env, which does not exist"):
        settings.env_file()  # named but missing is said, not ignored (tests/test_one_sentence_errors.py)


def test_the_package_exports_the_providers():
    assert harness.providers.AnthropicProvider is AnthropicProvider  # loaded lazily, same class
    for name in ("Provider", "ProviderError", "ModelTurn", "Usage", "ScriptedProvider"):
        assert hasattr(harness.providers, name)
    with pytest.raises(AttributeError):
        harness.providers.NoSuchProvider


def test_offline_runs_do_not_import_the_sdk(repo):
    code = "import sys, harness.providers; print('anthropic' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


@pytest.mark.skipif(importlib.util.find_spec("workbook.providers.offline") is None,
                    reason="workbook/providers/offline.py is not written yet")
def test_no_key_gives_the_real_offline_model(repo):
    from workbook.providers.offline import OfflineModel

    assert isinstance(default.default_provider(verbose=False), OfflineModel)
