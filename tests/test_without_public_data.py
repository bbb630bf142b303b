"""The chapters that read the public data pass on a learner's machine, which never has it.

CI always has ``../shared/data``, so nbval alone would never see the other path. Here nbval runs
those chapters again in a child pytest with ``HARNESS_DATA`` naming an empty folder: every cell
must run, and every output nbval compares (``# NBVAL_CHECK_OUTPUT``) must match the saved one,
which was saved with the data present — so a compared output may not depend on the data.

On a machine without the data, nbval's own run of ``notebooks/`` already takes that path; only
Chapter 1 runs again there, without the real model, when the model is installed (else nothing
needs a second run, and the test says so).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import run_pytest
from workbook.providers.local_llama import find_install
from harness.evaluation.datasets import DATASETS, dataset_dir

ROOT = Path(__file__).resolve().parents[1]
READ_PUBLIC_DATA = [f"notebooks/{name}.ipynb" for name in
                    ("01_tool_cliff", "02_catalog_and_selector", "05b_mcp_operations",
                     "06a_public_benchmarks", "06b_scale_and_speed", "06c_learned_and_end_to_end",
                     "07_use_it_in_your_agent", "08a_zero_shot_ideas", "08b_embedder_and_query_time")]
USE_REAL_MODEL = ["notebooks/01_tool_cliff.ipynb"]


def asks_for_public_data(path: Path) -> bool:
    """Whether a chapter's code asks where the public data is (``dataset_dir(…)``, ``data_dir(…)``): the chapters
    that have a path to take without it."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return any(re.search(r"\b(dataset_dir|data_dir)\(", "".join(c["source"])) for c in cells if c["cell_type"] == "code")


def test_the_second_run_is_of_the_chapters_that_ask_for_the_public_data():
    """A chapter that no longer reads the data would run twice for nothing (Chapter 3 did); one
    that began to would never run without it."""
    asking = [f"notebooks/{p.name}" for p in sorted((ROOT / "notebooks").glob("*.ipynb")) if asks_for_public_data(p)]
    assert len(asking) > 5, "the chapters' code was not read"
    assert READ_PUBLIC_DATA == asking


def second_run() -> list[str]:
    """The chapters whose no-data, no-model path nbval's own run on this machine does not take."""
    if any(dataset_dir(name) for name in DATASETS):
        return READ_PUBLIC_DATA
    return USE_REAL_MODEL if find_install(ROOT) else []


def test_chapters_that_read_public_data_pass_without_it(tmp_path):
    chapters = second_run()
    if not chapters:
        pytest.skip("neither the public data nor the real model is here: nbval's own run of notebooks/ is the run without them")
    empty = tmp_path / "no-public-data"
    empty.mkdir()
    # and without the real model: nbval's own run of Chapter 1 already checks it when it is installed
    done = run_pytest(["--nbval-lax", "--nbval-current-env", "--nbval-cell-timeout=600", *chapters],
                      tmp_path, HARNESS_DATA=str(empty), HARNESS_REAL_MODEL=str(empty))
    assert done.returncode == 0, done.stdout[-5000:]
    assert "failed" not in done.stdout.splitlines()[-1]
