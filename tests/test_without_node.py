"""The chapters that start the Node MCP servers pass on a machine without Node.js.

The README calls Node.js optional: without it the real-server landscape is the workbook's own and
the pip-installed Python servers. Where the pinned Node servers are installed, nbval's own run only
sees the full landscape, so here nbval runs those chapters again in a child pytest with
``HARNESS_NODE_SERVERS`` naming an empty folder: every cell must run (the chapters' asserts hold
on the smaller landscape) and every output nbval compares must match the saved one.
"""
from __future__ import annotations

import pytest

from conftest import run_pytest
from workbook.landscape import default_node_dir

START_NODE_SERVERS = [f"notebooks/{name}.ipynb" for name in
                      ("00_start_here", "05_mcp_integration", "05b_mcp_operations", "07_use_it_in_your_agent")]


def test_chapters_that_start_node_servers_pass_without_them(tmp_path):
    node_dir = default_node_dir()
    if node_dir is None or not (node_dir / "node_modules").is_dir():
        pytest.skip("the Node servers are not installed here: nbval's own run of notebooks/ is the run without them")
    empty = tmp_path / "no-node-servers"
    empty.mkdir()
    done = run_pytest(["--nbval-lax", "--nbval-current-env", "--nbval-cell-timeout=600", *START_NODE_SERVERS],
                      tmp_path, HARNESS_NODE_SERVERS=str(empty))
    assert done.returncode == 0, done.stdout[-5000:]
    assert "failed" not in done.stdout.splitlines()[-1]
