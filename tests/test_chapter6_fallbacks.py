"""Chapters 6 and 8 (every part) run top to bottom where a learner's environment lacks the embedding extra.

nbval runs the parts with the extra installed, as ``make lab`` and ``make test`` install it; a
library user may not have it, and each part must then say in one sentence what it skips and
still run every cell. Here each runs once more with the extra reported missing (a first cell adds a
module that does not exist to the extra's list, which is exactly what ``dense_unavailable_reason``
checks). The run without the public data is in ``tests/test_without_optional_parts.py``.
"""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from harness.evaluation.datasets import dataset_dir
from harness.retrieval.dense import dense_available

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
PARTS = ("06a_public_benchmarks", "06b_scale_and_speed", "06c_learned_and_end_to_end",
         "08a_zero_shot_ideas", "08b_embedder_and_query_time")
#: What each part prints when the extra is missing: the sentence that says so, or what it falls back to.
SAYS = {"06a_public_benchmarks": "The embedding extra is not installed",
        "06b_scale_and_speed": "The embedding extra is not installed",
        "06c_learned_and_end_to_end": "The embedding extra is not installed",
        "08a_zero_shot_ideas": "skipped (needs the embedding extra)",
        "08b_embedder_and_query_time": "skipped (needs the embedding extra)"}


def run(nb: nbformat.NotebookNode) -> str:
    """Execute every cell (an error fails the test) and return all printed text."""
    NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    return "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)


@pytest.mark.parametrize("part", PARTS)
def test_a_part_runs_without_the_embedding_extra(part):
    if not dense_available():
        pytest.skip("the extra is really missing here; nbval already runs this path")
    nb = nbformat.read(str(NOTEBOOKS / f"{part}.ipynb"), as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(
        "import harness.retrieval.embedders as embedders\n"
        "embedders._EXTRA = (*embedders._EXTRA, 'a_module_that_is_not_installed')"))
    printed = run(nb)
    assert SAYS[part] in printed
    if part.startswith("06"):
        assert "hybrid-rrf" not in printed
    if part == "06c_learned_and_end_to_end" and dataset_dir("livemcpbench"):  # the prior is learned from its log
        assert "bm25-fielded+usage" in printed
