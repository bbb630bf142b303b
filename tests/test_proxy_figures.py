"""The README's proxy figures are what the measuring code wrote, and ``--measure`` measures configs as users write them
(issue 43).

The tables in the README's proxy section are written by ``python -m experiments.proxy_figures --write README.md``
from ``experiments/data/proxy_figures.json``, which that command measured with ``harness.mcp.proxy.measure``
(what ``harness serve --measure`` prints). Re-measuring takes minutes and its timings vary with the machine,
so the test checks the README against the committed measurement, and the measurement against the code's shape.
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from experiments import proxy_figures
from harness.__main__ import main as cli
from harness.mcp.proxy.measure import QUERIES, REPEATS
from workbook.servers import workbook_servers_config

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def committed() -> dict:
    return json.loads(proxy_figures.RESULTS.read_text(encoding="utf-8"))


def test_the_readme_tables_are_the_committed_measurement():
    body = README[README.index(proxy_figures.START) + len(proxy_figures.START):README.index(proxy_figures.END)]
    assert body.strip() == proxy_figures.table(committed()), \
        "the README's proxy figures drifted: run python -m experiments.proxy_figures --write README.md"


def test_the_committed_measurement_has_every_search_the_measuring_code_makes():
    data = committed()
    assert set(data["runs"]) <= set(proxy_figures.RETRIEVERS) and "bm25-fielded" in data["runs"]
    for run in data["runs"].values():
        for part in (run["latency"], run["catalog"] or run["latency"]):
            assert len(part["new_ms"]) == len(QUERIES) and len(part["repeated_ms"]) == len(QUERIES) * (REPEATS - 1)
        assert run["direct"]["tools"] == run["latency"]["deferred"] and run["proxied"]["tools"] == 2


def test_rewriting_replaces_only_the_section():
    text = f"# T\n\nbefore\n{proxy_figures.START}\nold\n{proxy_figures.END}\nafter\n"
    assert proxy_figures.rewrite(text, committed()) == (
        f"# T\n\nbefore\n{proxy_figures.START}\n{proxy_figures.table(committed())}\n{proxy_figures.END}\nafter\n")
    with pytest.raises(ValueError, match="no proxy-figures section"):
        proxy_figures.rewrite("# no section\n", committed())


@pytest.mark.mcp
def test_measure_accepts_always_load_as_the_readme_example_uses_it(tmp_path, monkeypatch, capsys):
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("HARNESS_DATA", str(tmp_path / "empty"))
    config = workbook_servers_config(("notes", "calendar"))
    config["mcpServers"]["calendar"]["alwaysLoad"] = ["list_events"]
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config))
    assert cli(["serve", "--config", str(path), "--measure", "--retriever", "bm25-fielded"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert "for 14 tools; through the proxy " in first and "for 3 tools" in first  # search, call and list_events


def test_landscape_outside_a_checkout_says_what_to_do_with_the_library_alone(monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "workbook" else real(name, *a))
    assert cli(["serve", "--landscape"]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: --landscape (the workbook's sandboxed real servers) comes with the workbook, not the library: run it "
        "from a checkout of the workbook (make lab), or serve your own servers with --config FILE (your client's MCP config).")
