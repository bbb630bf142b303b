"""Committed notebooks are what a clean top-to-bottom run produced, and hold nothing private."""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(ROOT.glob("notebooks/*.ipynb")) + sorted(ROOT.glob("exercises/**/*.ipynb"))
PRIVATE = {
    "an absolute path": re.compile(r"(/work/|/tmp/[A-Za-z0-9_]|/root/|/home/[a-z]|[A-Z]:\\\\Users)"),
    "a memory address": re.compile(r" at 0x[0-9a-fA-F]{6,}"),
    "a timestamp": re.compile(r"\b20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d"),
    "an API key": re.compile(r"sk-ant-[A-Za-z0-9_\-]{16,}"),
}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_notebook_is_clean(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    code = [c for c in nb["cells"] if c["cell_type"] == "code" and "".join(c["source"]).strip()]
    counts = [c["execution_count"] for c in code]
    assert None not in counts, "every code cell was run"
    assert counts == list(range(1, len(code) + 1)), "run once, top to bottom, in order"
    raises = [c for c in code if "NBVAL_RAISES_EXCEPTION" in "".join(c["source"])]
    errors = [c for c in code if c not in raises and any(o.get("output_type") == "error" for o in c.get("outputs", []))]
    assert not errors, "no cell (other than those marked to raise) ends in an error"
    for c in code:
        assert "execution" not in c.get("metadata", {}), "no execution timings in cell metadata"
    text = json.dumps([c.get("outputs", []) for c in code])
    for what, pattern in PRIVATE.items():
        m = pattern.search(text)
        assert not m, f"{what} in an output: {m.group(0)!r}"
