"""Nothing the workbook or its tests create outlives them.

The suite's heavy parts — demo worlds, real MCP sessions and a chapter run under nbval, which
stops its kernel with SIGKILL — run in a child pytest whose temp folder is a fresh, empty one.
Afterwards that folder must be empty again: every demo sandbox, MCP log folder and scratch file
was removed by its owner (a context manager, a finalizer at exit, or the session's sweep of
what killed kernels left).
"""
from __future__ import annotations

import pytest

from conftest import run_pytest

HEAVY = ["tests/test_demo_world.py", "tests/test_mcp_hub.py", "tests/test_scenarios.py", "notebooks/00_start_here.ipynb"]


@pytest.mark.mcp
def test_heavy_parts_of_the_suite_leave_the_temp_folder_as_they_found_it(tmp_path):
    temp = tmp_path / "tmp"
    temp.mkdir()
    done = run_pytest(["--nbval-lax", "--nbval-current-env", *HEAVY], tmp_path, TMPDIR=str(temp))
    assert done.returncode == 0, done.stdout[-3000:]
    assert "passed" in done.stdout.splitlines()[-1]
    assert sorted(p.name for p in temp.iterdir()) == []
