"""Names that once meant two things: each is now defined in at most one harness module (or class),
and the "first sentence" rule is written once (:func:`harness.core.text.first_sentence`)."""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[1] / "harness"
WATCHED = {"DEFAULT_SYSTEM", "Row", "table", "tune", "clauses", "fresh_catalog", "fresh_demo_catalog", "first_sentence"}


def _definitions() -> dict[str, list[str]]:
    """Name → where it is defined (module top level or a class body), over every harness module."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(HARNESS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        scopes = [(path.relative_to(HARNESS).as_posix(), tree.body)]
        scopes += [(f"{path.relative_to(HARNESS).as_posix()}:{c.name}", c.body) for c in tree.body if isinstance(c, ast.ClassDef)]
        for where, body in scopes:
            for node in body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    found[node.name].append(where)
                elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for t in targets:
                        if isinstance(t, ast.Name):
                            found[t.id].append(where)
    return found


def test_no_name_is_defined_twice_with_two_meanings():
    defined = _definitions()
    twice = {name: places for name, places in defined.items() if name in WATCHED and len(places) > 1}
    assert not twice, f"one name, several definitions: {twice}"


def test_the_first_sentence_rule_is_written_once():
    pattern = r'(?<=[.!?])\s"'  # split once at the first sentence end (mcp/suspicious splits every sentence: another rule)
    holders = sorted(p.relative_to(HARNESS).as_posix() for p in HARNESS.rglob("*.py") if pattern in p.read_text(encoding="utf-8"))
    assert holders == ["core/text.py"], f"the sentence-end rule is written in {holders}"
