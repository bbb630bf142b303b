"""A simulated pytest: verdicts read from the sandbox's test files, never by running them.

Introduced in Chapter 1 with :class:`workbook.demo.world.DemoWorld`.

Running code a model wrote, inside the notebook's own process, would be neither safe nor
repeatable; what the chapters need is a runner whose answers follow the files. So each
``test_*`` function is judged from its syntax tree: skipped when decorated with
``pytest.mark.skip``, failed when it calls ``pytest.fail(...)`` or asserts a false constant,
passed otherwise; a file that does not parse is a collection error. Edit a test with
``write_file`` and the next run reflects it. On the seeded project these verdicts agree with
real pytest.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Literal

from workbook.demo.repo import Files

Outcome = Literal["passed", "failed", "skipped", "error"]


@dataclass(frozen=True)
class TestOutcome:
    __test__ = False  # not a pytest test class, despite the name

    test_id: str  # "tests/test_report.py::test_total"
    outcome: Outcome
    message: str = ""
    line: int = 0

    @property
    def name(self) -> str:
        return self.test_id.rsplit("::", 1)[-1]


def is_test_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def find_test_files(files: Files, under: str) -> list[str]:
    """Test files at or below ``under`` (a folder or one file), sorted."""
    under = under.strip("/")
    if under in ("", "."):
        return sorted(p for p in files if is_test_file(p))
    return sorted(p for p in files if is_test_file(p) and (p == under or p.startswith(under + "/")))


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _skip_reason(decorator: ast.expr) -> str | None:
    call = decorator if isinstance(decorator, ast.Call) else None
    if _dotted(call.func if call else decorator) not in ("pytest.mark.skip", "mark.skip"):
        return None
    if call:
        for value in [*call.args, *(k.value for k in call.keywords if k.arg == "reason")]:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                return value.value
    return "skipped"


def _failure(fn: ast.AST) -> tuple[str, int] | None:
    """The failure message and line of a test that cannot pass, or None."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Assert) and isinstance(node.test, ast.Constant) and not node.test.value:
            msg = str(node.msg.value) if isinstance(node.msg, ast.Constant) else f"assert {node.test.value!r}"
            return f"AssertionError: {msg}", node.lineno
        if isinstance(node, ast.Call) and _dotted(node.func) in ("pytest.fail", "fail"):
            arg = node.args[0] if node.args else None
            msg = str(arg.value) if isinstance(arg, ast.Constant) else "pytest.fail() was called"
            return f"Failed: {msg}", node.lineno
    return None


def judge_file(path: str, source: str) -> list[TestOutcome]:
    """Every test function of one file with its verdict."""
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as exc:
        return [TestOutcome(path, "error", f"SyntaxError: {exc.msg} (line {exc.lineno})", exc.lineno or 0)]
    out = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not node.name.startswith("test"):
            continue
        test_id = f"{path}::{node.name}"
        reason = next((r for r in map(_skip_reason, node.decorator_list) if r is not None), None)
        failure = _failure(node)
        if reason is not None:
            out.append(TestOutcome(test_id, "skipped", reason, node.lineno))
        elif failure:
            out.append(TestOutcome(test_id, "failed", failure[0], failure[1]))
        else:
            out.append(TestOutcome(test_id, "passed", "", node.lineno))
    return out


def run(files: Files, under: str = "tests", pattern: str = "") -> list[TestOutcome]:
    """Verdicts for the tests under ``under`` whose name contains ``pattern`` (like ``pytest -k``)."""
    outcomes = [o for p in find_test_files(files, under) for o in judge_file(p, files[p])]
    return [o for o in outcomes if o.outcome == "error" or pattern.lower() in o.name.lower()]


def summarize(outcomes: list[TestOutcome]) -> dict[str, object]:
    counts = {k: sum(o.outcome == k for o in outcomes) for k in ("passed", "failed", "skipped", "error")}
    return {
        **{("errors" if k == "error" else k): v for k, v in counts.items()},
        "problems": [{"test": o.test_id, "outcome": o.outcome, "message": o.message}
                     for o in outcomes if o.outcome in ("failed", "error")],
    }


def _names_used(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.name for a in node.names)
    return names


def coverage(files: Files, source_dir: str = "src") -> dict[str, dict[str, object]]:
    """Per module under ``source_dir``: which top-level functions some test refers to by name."""
    used = set().union(*(_names_used(files[p]) for p in find_test_files(files, ".")))
    prefix = source_dir.strip("/") + "/"
    report = {}
    for path in sorted(p for p in files if p.endswith(".py") and (p.startswith(prefix) or prefix == "./")):
        try:
            tree = ast.parse(files[path])
        except SyntaxError:
            continue
        funcs = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if not funcs:
            continue
        covered = [f for f in funcs if f in used]
        report[path] = {"percent": round(100 * len(covered) / len(funcs)),
                        "covered": covered, "missing": [f for f in funcs if f not in used]}
    return report
