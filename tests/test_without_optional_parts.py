"""The chapters pass on a learner's machine, which has none of the optional parts.

CI has the public data (``../shared/data``), the pinned Node MCP servers and, where it could build it, the
real small model, so nbval's own run of ``notebooks/`` takes only the path with them. Here nbval runs again,
in a child pytest, every chapter whose path differs without them, with ``HARNESS_DATA``,
``HARNESS_NODE_SERVERS`` and ``HARNESS_REAL_MODEL`` naming an empty folder: every cell must run (the
chapters' asserts hold on the demo world and the smaller server landscape) and every output nbval compares
(``# NBVAL_CHECK_OUTPUT``) must match the saved one, which was saved with all three present — so a
compared output may depend on none of them. One run without all three, as a learner's machine usually is,
so each chapter runs twice at most.

Only what this machine has is taken away: where a part is missing, nbval's own run already took the path
without it (with nothing to take away, the test says so and skips).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import run_pytest
from harness.evaluation.datasets import DATASETS, dataset_dir
from workbook.landscape import default_node_dir
from workbook.providers.local_llama import find_install

ROOT = Path(__file__).resolve().parents[1]
READ_PUBLIC_DATA = [f"notebooks/{name}.ipynb" for name in
                    ("01_tool_cliff", "02_catalog_and_selector", "05b_mcp_operations",
                     "06a_public_benchmarks", "06b_scale_and_speed", "06c_learned_and_end_to_end",
                     "07_use_it_in_your_agent", "08a_zero_shot_ideas", "08b_embedder_and_query_time")]
START_NODE_SERVERS = [f"notebooks/{name}.ipynb" for name in
                      ("00_start_here", "05_mcp_integration", "05b_mcp_operations", "07_use_it_in_your_agent")]
USE_REAL_MODEL = ["notebooks/01_tool_cliff.ipynb", "notebooks/07_use_it_in_your_agent.ipynb"]


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


def node_servers_installed() -> bool:
    node_dir = default_node_dir()
    return node_dir is not None and (node_dir / "node_modules").is_dir()


def second_run() -> list[str]:
    """The chapters whose path without the optional parts nbval's own run on this machine does not take."""
    chapters = set(READ_PUBLIC_DATA) if any(dataset_dir(name) for name in DATASETS) else set()
    chapters |= set(START_NODE_SERVERS) if node_servers_installed() else set()
    chapters |= set(USE_REAL_MODEL) if find_install(ROOT) else set()
    return sorted(chapters)


def test_chapters_pass_without_the_public_data_the_node_servers_and_the_real_model(tmp_path):
    chapters = second_run()
    if not chapters:
        pytest.skip("neither the public data, the Node servers nor the real model is here: "
                    "nbval's own run of notebooks/ is the run without them")
    empty = tmp_path / "nothing-here"
    empty.mkdir()
    done = run_pytest(["--nbval-lax", "--nbval-current-env", "--nbval-cell-timeout=600", *chapters], tmp_path,
                      HARNESS_DATA=str(empty), HARNESS_NODE_SERVERS=str(empty), HARNESS_REAL_MODEL=str(empty))
    assert done.returncode == 0, done.stdout[-5000:]
    assert "failed" not in done.stdout.splitlines()[-1]
