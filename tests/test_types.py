"""The package type-checks: mypy over ``harness/`` (strict on the core and selection layers) and the test fakes.

The settings live in pyproject.toml (``[tool.mypy]``), so ``python -m mypy`` in the checkout runs the same
check. The cache goes to a fresh temp folder: a cache left by an older checkout could hide an error.
"""
from __future__ import annotations

import ast
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10: pip carries a copy
    from pip._vendor import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
MYPY = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]


def test_the_package_and_the_test_fakes_type_check():
    with tempfile.TemporaryDirectory() as cache:
        done = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", cache], cwd=ROOT,
                              capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"mypy found type errors:\n{done.stdout}{done.stderr}"


def protocol_methods() -> set[str]:
    """The method names of every ``Protocol`` the package defines (what a fake in the tests stands in for)."""
    names = set()
    for path in (ROOT / "harness").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(ast.unparse(b).endswith("Protocol") for b in node.bases):
                names |= {f.name for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return names - {"__init__"}


def test_every_test_file_with_a_fake_of_a_protocol_is_type_checked():
    """A fake that breaks the protocol it stands in for tests something the package never receives."""
    wanted = protocol_methods() | {"encode"}  # + dense.Encoder's method: a class that fakes copy by shape
    assert {"rank", "scores", "complete"} <= wanted, "the package's protocols were not found"
    checked = set(MYPY["files"])
    fakes = set()
    for path in sorted((ROOT / "tests").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and wanted & {f.name for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}:
                fakes.add(path.relative_to(ROOT).as_posix())
    assert fakes, "no fakes found: the search for them is broken"
    assert fakes <= checked, f"test files with fakes that mypy does not check: {sorted(fakes - checked)}"


def test_the_core_and_selection_layers_are_checked_strictly():
    strict = [o for o in MYPY["overrides"] if set(o["module"]) >= {"harness.core.*", "harness.selection.*"}]
    assert strict and all(strict[0].get(flag) for flag in (
        "disallow_untyped_defs", "disallow_incomplete_defs", "disallow_untyped_calls", "disallow_any_generics",
        "warn_return_any", "no_implicit_reexport", "strict_equality")), "the strict flags are missing for core/selection"


def bare_any_lines(path: Path) -> list[int]:
    """Lines of ``path`` that use ``Any`` in code (not an import) without a ``# Any:`` comment saying why."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imports = {n.lineno for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))}
    lines = path.read_text(encoding="utf-8").splitlines()
    used = {n.lineno for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "Any"}
    return sorted(n for n in used - imports if "# Any:" not in lines[n - 1])


def test_a_bare_any_is_found_and_a_reasoned_one_is_not(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("from typing import Any\n\nx: Any = 1\ny: Any = 2  # Any: a reason\n", encoding="utf-8")
    assert bare_any_lines(sample) == [3]


def test_the_package_uses_any_only_for_json_or_says_why():
    """JSON is ``JSON``/``JSONObject`` (harness.core.json_types); any other ``Any`` carries its reason — in the
    library and in the workbook's and the experiments' code beside it."""
    paths = sorted(p for folder in ("harness", "workbook", "experiments") for p in (ROOT / folder).rglob("*.py"))
    assert len(paths) > 100, "the packages' files were not found"
    found = {p.relative_to(ROOT).as_posix(): bare_any_lines(p) for p in paths if p.name != "json_types.py"}
    assert {p: n for p, n in found.items() if n} == {}
