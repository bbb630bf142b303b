"""Tests tools: list, run and inspect the sandbox project's test suite.

Introduced in Chapter 1 as part of the demo world.

The verdicts come from :mod:`workbook.demo.testrunner`, which reads the test files instead of
executing them; the last run is kept on the world so "rerun what failed" and "why did it fail"
have something to refer to, as they would after a real pytest run.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from workbook.demo import testrunner
from harness.core.tools import Tool, tool

if TYPE_CHECKING:
    from workbook.demo.world import DemoWorld

DOMAIN = "tests"


def make_tools(world: DemoWorld) -> list[Tool]:
    def run(path: str, pattern: str = "") -> list[testrunner.TestOutcome]:
        world.resolve(path)  # refuses paths outside the sandbox
        outcomes = testrunner.run(world.worktree(), path, pattern)
        if not outcomes:
            raise ValueError(f"No tests found in '{path}'{f' matching {pattern!r}' if pattern else ''}.")
        world.last_test_run = outcomes
        return outcomes

    @tool(domain=DOMAIN, tags={"read"})
    def list_tests(path: str = "tests") -> dict[str, list[str]]:
        """List the test functions in the project's test suite, grouped by test file, without running them.

        Args:
            path: Test folder or test file to list.
        """
        world.resolve(path)
        grouped: dict[str, list[str]] = {}
        for o in testrunner.run(world.worktree(), path):
            grouped.setdefault(o.test_id.split("::")[0], []).append(o.name if "::" in o.test_id else "(collection error)")
        return grouped

    @tool(domain=DOMAIN, tags={"read"})
    def run_tests(path: str = "tests", pattern: str = "") -> dict[str, object]:
        """Run the project's test suite, one test folder or one test file, and report how many tests passed, failed or were skipped, with failure messages.
        Pattern keeps only tests whose name contains it, like pytest -k.

        Args:
            path: Test folder or test file to run.
            pattern: Only run tests whose name contains this text.
        """
        return testrunner.summarize(run(path, pattern))

    @tool(domain=DOMAIN, tags={"read"})
    def rerun_failed_tests() -> dict[str, object]:
        """Run again only the tests that failed or errored in the previous test run."""
        if not world.last_test_run:
            raise ValueError("There is no previous test run; run the tests first with run_tests.")
        wanted = {o.test_id for o in world.last_test_run if o.outcome in ("failed", "error")}
        if not wanted:
            return {"message": "Nothing to rerun: the previous run had no failures."}
        files = world.worktree()
        # a failed test is rerun by its id; a file that failed to collect is rerun whole
        outcomes = [o for p in sorted({t.split("::")[0] for t in wanted}) if p in files
                    for o in testrunner.judge_file(p, files[p]) if o.test_id in wanted or p in wanted]
        world.last_test_run = outcomes
        return testrunner.summarize(outcomes)

    @tool(domain=DOMAIN, tags={"read"})
    def get_test_failure(name: str) -> dict[str, object]:
        """Show the full failure report of one failing test: the assertion message, file and line.
        Runs that test first if it has no recorded result.

        Args:
            name: Test function name, e.g. 'test_total', or its full id 'tests/test_report.py::test_total'.
        """
        def match(outcomes: list[testrunner.TestOutcome]) -> list[testrunner.TestOutcome]:
            return [o for o in outcomes if name in (o.test_id, o.name)]
        found = match(world.last_test_run) or match(testrunner.run(world.worktree(), "."))
        if not found:
            raise ValueError(f"No test named {name!r} in the project; list them with list_tests.")
        o = found[0]
        if o.outcome not in ("failed", "error"):
            return {"test": o.test_id, "outcome": o.outcome, "message": o.message or "This test did not fail."}
        return {"test": o.test_id, "outcome": o.outcome, "file": o.test_id.split("::")[0],
                "line": o.line, "message": o.message}

    @tool(domain=DOMAIN, tags={"read"})
    def coverage_report(path: str = "src") -> dict[str, dict[str, object]]:
        """Report which functions in a source folder are exercised by the tests, with a coverage percentage per module and the functions no test touches.

        Args:
            path: Source folder to measure.
        """
        world.resolve(path)
        report = testrunner.coverage(world.worktree(), path)
        if not report:
            raise ValueError(f"No Python functions found under '{path}'.")
        return report

    return [list_tests, run_tests, rerun_failed_tests, get_test_failure, coverage_report]
