"""Where the library finds the public data: ``HARNESS_DATA``, or ``../shared/data`` beside the checkout it runs
from — never by walking up from the working folder (issue 40: an installed library run in a temp folder under
someone's ``shared/`` found their data, so tests/test_install.py depended on where TMPDIR sits)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ASK = "from harness.evaluation.datasets import data_dir; print(data_dir())"


def layout(tmp_path: Path, checkout: bool) -> tuple[Path, Path, Path]:
    """``outer/shared/data`` with a data set; the library copied to ``outer/lib`` (a checkout when ``checkout``:
    ``pyproject.toml`` and ``workbook/`` beside it); a working folder ``outer/work/deep`` below ``outer``."""
    outer = tmp_path / "outer"
    data = outer / "shared" / "data"
    (data / "livemcpbench").mkdir(parents=True)
    (data / "livemcpbench" / "tools.jsonl").write_text('{"id": "a", "name": "a"}\n')
    lib = outer / "lib"
    shutil.copytree(ROOT / "harness", lib / "harness", ignore=shutil.ignore_patterns("__pycache__"))
    if checkout:
        (lib / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
        (lib / "workbook").mkdir()
    work = outer / "work" / "deep"
    work.mkdir(parents=True)
    return lib, work, data


def found(lib: Path, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    done = subprocess.run([sys.executable, "-c", ASK], cwd=cwd, env={**env, "PYTHONPATH": str(lib)},
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_an_installed_library_finds_no_data_above_its_working_folder(tmp_path):
    lib, work, _ = layout(tmp_path, checkout=False)
    assert found(lib, work) == "None"


def test_a_checkout_finds_the_data_beside_it_from_any_working_folder(tmp_path):
    lib, work, data = layout(tmp_path, checkout=True)
    assert found(lib, work) == str(data)
    assert found(lib, Path("/")) == str(data)
