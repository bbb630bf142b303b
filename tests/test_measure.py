"""``harness measure``: end to end on the real 0.5B through llama-server's OpenAI endpoint (a smoke subset: two
greetings, one of each split, under one way, two at a time), its concurrency limit and bad input against a small fake
endpoint, and the one sentence it says where the workbook is absent.

The real-model test skips, saying why, where ``make real-model`` has not installed the model.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from workbook.providers.fake_openai import FakeOpenAIServer
from real_model_support import needs_model, openai_endpoint
from experiments import measure
from experiments.real_tasks import TaskRow, load, read_rows

ROOT = Path(__file__).resolve().parents[1]
WAY = "deferred search, keep loaded"
SMOKE = ("opener-01", "h-opener-01")
THREE = ("opener-01", "opener-03", "h-opener-01")  # one more than the concurrency limit of 2


def harness_measure(*args: str, timeout: float = 600, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    return subprocess.run([sys.executable, "-m", "harness", "measure", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**clean, "HARNESS_ENV_FILE": os.devnull, **env})


def committed_cell(scenarios: tuple[str, ...], way: str = WAY) -> str:
    """What the table must show for the 0.5B: its committed rows on these scenarios, counted here."""
    mine = [r for r in load(model="0.5b") if r.config == way and r.scenario in scenarios]
    return f"({sum(r.success for r in mine)}/{len(mine)})"


def row_of(stdout: str, way: str = WAY) -> str:
    return next(line for line in stdout.splitlines() if line.startswith(way))


@needs_model
def test_measure_runs_end_to_end_on_the_real_model_through_llama_servers_openai_endpoint(tmp_path):
    out = tmp_path / "rows.jsonl"
    with openai_endpoint(slots=2) as url:
        done = harness_measure("--scenarios", *SMOKE, "--ways", WAY, "--concurrency", "2", "--out", str(out),
                               OPENAI_BASE_URL=url, OPENAI_MODEL="qwen2.5-coder-0.5b")
    assert done.returncode == 0, done.stderr
    rows: list[TaskRow] = read_rows(out)
    assert sorted(r.scenario for r in rows) == sorted(SMOKE) and {r.config for r in rows} == {WAY}
    assert all(r.model == "qwen2.5-coder-0.5b" and r.trace and r.turns >= 1 for r in rows)
    yours, theirs = re.findall(r"\(\d+/\d+\)", row_of(done.stdout))[:2]
    assert yours == f"({sum(r.success for r in rows)}/2)" and theirs == committed_cell(SMOKE)
    assert "2 runs in" in done.stdout and "2 at a time" in done.stdout


def test_requests_run_concurrently_up_to_the_limit_and_the_table_sits_beside_the_committed_rows(tmp_path):
    with FakeOpenAIServer(delay=0.5) as server:
        done = harness_measure("--scenarios", *THREE, "--ways", WAY, "--concurrency", "2", "--out", str(tmp_path / "r.jsonl"),
                               OPENAI_BASE_URL=server.base_url, OPENAI_MODEL="m")
    assert done.returncode == 0, done.stderr
    assert server.most_in_flight == 2 and len(server.requests) == 3  # the greetings take one request each
    assert [json.loads(line)["model"] for line in (tmp_path / "r.jsonl").read_text().splitlines()] == ["m"] * 3
    header, row = done.stdout.splitlines()[1], row_of(done.stdout)
    assert "your model" in header and "0.5b (committed)" in header and "1.5b (committed)" in header
    assert re.findall(r"\(\d+/\d+\)", row)[1] == committed_cell(THREE)
    assert all(r.body["temperature"] == 0 and r.body["max_tokens"] == 256 for r in server.requests)


@pytest.mark.parametrize("args, env, says", [
    (["--scenarios", "nope-01"], {}, "There is no scenario nope-01"),
    (["--concurrency", "0"], {}, "--concurrency must be 1 or more"),
    (["--scenarios", "opener-01"], {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, "No model named: set OPENAI_MODEL"),
    (["--scenarios", "opener-01", "--provider", "local", "--model", "7b"], {}, "There is no real model '7b'"),
])
def test_bad_input_is_one_sentence_before_any_run(args, env, says):
    done = harness_measure(*args, timeout=120, **env)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: ") and says in done.stderr, done.stderr


def test_a_model_that_fails_mid_run_is_one_sentence(tmp_path):
    with FakeOpenAIServer(api_key="the-right-key") as server:
        done = harness_measure("--scenarios", "opener-01", "--ways", WAY, OPENAI_BASE_URL=server.base_url,
                               OPENAI_MODEL="m", OPENAI_API_KEY="sk-wrong-key-0123456789")
    assert done.returncode == 2 and "rejected the API key (401)" in done.stderr and "0123456789" not in done.stderr


def test_without_the_workbook_measure_is_one_sentence(monkeypatch, capsys):
    from harness import __main__ as cli

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "experiments" else real(name, *a))
    assert cli.main(["measure", "--model", "m"]) == 2
    assert "harness measure comes with the workbook, not the library" in capsys.readouterr().err


def test_the_default_set_is_the_first_eight_development_tasks_under_the_four_ways():
    options, _ = measure.SETS["small"]
    assert options["ids"] == tuple(f"task-{n:02d}" for n in range(1, 9)) and options["splits"] == ("dev",)
    assert set(measure.parser().parse_args([]).ways) == set(measure.CONFIGS) and len(measure.CONFIGS) == 4
