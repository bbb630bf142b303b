"""``harness bench --out FILE`` never loses a file or the results (issue 40: it replaced any existing file, and
``--out /proc/version`` was accepted, then failed after the whole run with a raw traceback, the results lost)."""
from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest

from experiments import bench


@pytest.fixture
def quick_run(monkeypatch):
    """The benchmark's run, replaced by one that returns at once (what is tested is where its results go)."""
    monkeypatch.setattr(bench, "run", lambda quick, k, say: ([], [], ["nothing measured: a test run"]))


def refuse_to_run(monkeypatch):
    monkeypatch.setattr(bench, "run", lambda *a, **k: pytest.fail("the benchmark ran before --out was checked"))


def test_an_existing_file_is_not_replaced_unless_asked(tmp_path, monkeypatch, capsys):
    out = tmp_path / "results.json"
    out.write_text("my earlier results")
    refuse_to_run(monkeypatch)
    assert bench.main(["--out", str(out)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"error: --out {out} already exists: pass --overwrite to replace it, or name another file."]
    assert out.read_text() == "my earlier results"


def test_overwrite_replaces_it(tmp_path, quick_run, capsys):
    out = tmp_path / "results.json"
    out.write_text("my earlier results")
    assert bench.main(["--out", str(out), "--overwrite"]) == 0
    assert json.loads(out.read_text())["skipped"] == ["nothing measured: a test run"]


@pytest.mark.skipif(not Path("/proc/version").is_file(), reason="needs Linux's /proc")
def test_a_path_that_takes_no_file_is_refused_before_the_run(monkeypatch, capsys):
    refuse_to_run(monkeypatch)
    assert bench.main(["--out", "/proc/version", "--overwrite"]) == 2
    error = capsys.readouterr().err.splitlines()
    assert len(error) == 1 and error[0].startswith("error: --out /proc/version cannot be written: /proc ")


def test_results_that_cannot_be_written_after_the_run_are_kept_elsewhere(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / "results.json"

    def run_that_loses_the_folder(quick, k, say):  # the folder goes while the benchmark runs
        shutil.rmtree(folder)
        folder.write_text("now a file")
        return [], [], ["nothing measured: a test run"]

    monkeypatch.setattr(bench, "run", run_that_loses_the_folder)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the results are kept instead
    assert bench.main(["--out", str(out)]) == 1
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith(f"error: could not write --out {out}") and "the results are in " in error
    kept = Path(error.split("the results are in ", 1)[1].rstrip("."))
    assert json.loads(kept.read_text())["skipped"] == ["nothing measured: a test run"]
