"""Chapter 6 runs top to bottom where a learner's environment lacks the embedding extra.

nbval runs the chapter with the extra installed, as ``make lab`` and ``make test`` install it; a
library user may not have it, and the chapter must then say in one sentence what it skips and
still run every cell. Here it runs once more with the extra reported missing (a first cell adds a
module that does not exist to the extra's list, which is exactly what ``dense_unavailable_reason``
checks). The run without the public data is in ``tests/test_without_public_data.py``.
"""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from harness.retrieval.datasets import dataset_dir
from harness.retrieval.dense import dense_available

CHAPTER = Path(__file__).resolve().parents[1] / "notebooks" / "06_beyond_bm25.ipynb"


def run(nb: nbformat.NotebookNode) -> str:
    """Execute every cell (an error fails the test) and return all printed text."""
    NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(CHAPTER.parent)}}).execute()
    return "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)


def test_chapter_6_without_the_embedding_extra():
    if not dense_available():
        pytest.skip("the extra is really missing here; nbval already runs this path")
    nb = nbformat.read(str(CHAPTER), as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(
        "import harness.retrieval.dense as dense\n"
        "dense._EXTRA = (*dense._EXTRA, 'a_module_that_is_not_installed')"))
    printed = run(nb)
    assert "The embedding extra is not installed" in printed
    assert "hybrid-rrf" not in printed
    if dataset_dir("livemcpbench"):  # the usage prior is learned from LiveMCPBench's log
        assert "bm25-fielded+usage" in printed
