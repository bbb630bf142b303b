"""Sentence-transformers' own all-MiniLM-L6-v2 vectors for a few texts: what the NumPy embedder is checked against.

Introduced in Chapter 6b. ``scripts/minilm_reference.py`` wrote ``workbook/data/minilm_reference.json`` with
sentence-transformers itself (it needs PyTorch, which the workbook never installs).
"""
from __future__ import annotations

import json
from importlib import resources
from typing import Any


def reference() -> dict[str, Any]:  # Any: texts, vectors and who made them, as the JSON holds them
    """Texts and the vectors sentence-transformers gave them (``texts``, ``vectors``, ``made_by``)."""
    return json.loads(resources.files("workbook").joinpath("data").joinpath("minilm_reference.json").read_text(encoding="utf-8"))
