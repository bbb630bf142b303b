"""Chapter 6 runs top to bottom where a learner's machine differs from CI's.

nbval runs the chapter with the public data and the embedding extra, as CI has them. A learner
usually has neither ``../shared/data`` nor, sometimes, torch: the chapter must then say in one
sentence what it skips and still run every cell. Here it runs twice more: with ``HARNESS_DATA``
naming an empty place, and with the extra reported missing (a first cell adds a module that does
not exist to the extra's list, which is exactly what ``dense_unavailable_reason`` checks).
"""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from harness.retrieval.dense import dense_available

CHAPTER = Path(__file__).resolve().parents[1] / "notebooks" / "06_beyond_bm25.ipynb"


def run(nb: nbformat.NotebookNode) -> str:
    """Execute every cell (an error fails the test) and return all printed text."""
    NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(CHAPTER.parent)}}).execute()
    return "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)


def test_chapter_6_without_public_data(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_DATA", str(tmp_path / "no-data-here"))
    printed = run(nbformat.read(str(CHAPTER), as_version=4))
    for name in ("livemcpbench", "toollens_train", "mcpzero_catalog"):
        assert f"Public data '{name}' not found" in printed
    assert "demo              bm25" in printed  # the table still has the demo world's rows


def test_chapter_6_without_the_embedding_extra():
    if not dense_available():
        pytest.skip("the extra is really missing here; nbval already runs this path")
    nb = nbformat.read(str(CHAPTER), as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(
        "import harness.retrieval.dense as dense\n"
        "dense._EXTRA = (*dense._EXTRA, 'a_module_that_is_not_installed')"))
    printed = run(nb)
    assert "The embedding extra is not installed" in printed
    assert "hybrid-rrf" not in printed and "bm25-fielded+usage" in printed
