"""Temp folders outlive no owner: a killed owner's are removed by the next, and a removed one is not made again."""
from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile

from conftest import run
from harness.core import temp_folders
from harness.mcp.client import MCPHub
from workbook.servers import workbook_servers_config


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_new_hub_removes_the_log_folders_of_processes_that_are_gone(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(temp_folders, "_swept", set())
    stale = tmp_path / f"mcp-logs-{dead_pid()}-x1"  # a proxy killed with SIGKILL left it
    living = tmp_path / f"mcp-logs-{os.getppid()}-x2"  # its owner still runs
    for folder in (stale, living):
        folder.mkdir()
        (folder / "notes.log").touch()
    hub = MCPHub(workbook_servers_config(("notes",)))
    assert hub.log_dir.name.startswith(f"mcp-logs-{os.getpid()}-")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([living.name, hub.log_dir.name])
    shutil.rmtree(living)


def test_a_hub_whose_log_folder_was_removed_before_it_started_does_not_make_it_again(tmp_path, monkeypatch):
    """The proxy's signal handler removes the log folder at once; a start-up that comes after it must not
    bring the folder back (the proxy dies moments later, and no clean-up would remove it)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    async def session():
        hub = MCPHub(workbook_servers_config(("notes",)))
        shutil.rmtree(hub.log_dir)
        async with hub:
            await asyncio.sleep(0)
            return hub.log_dir.exists(), hub.statuses["notes"].state

    exists, state = run(session())
    assert not exists and state == "failed"
    assert list(tmp_path.iterdir()) == []


SANDBOX_CHILD = ("import sys; from workbook.sandbox import chapter_sandbox; s = chapter_sandbox(); "
                 "(s / 'server.log').write_text('x'); print(s, flush=True); sys.stdin.readline()")


def sandbox_child(tmp_path) -> tuple[subprocess.Popen[str], str]:
    """A process that makes a chapter sandbox (as a chapter's kernel does) and waits for a line on stdin."""
    child = subprocess.Popen([sys.executable, "-c", SANDBOX_CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert child.stdout is not None
    return child, child.stdout.readline().strip()


def test_a_chapter_sandbox_goes_when_its_kernel_exits_and_a_killed_kernels_at_the_next_sweep(tmp_path):
    from workbook.sandbox import remove_stale_sandboxes

    ended, ended_folder = sandbox_child(tmp_path)
    ended.communicate("\n", timeout=30)  # a normal exit: the chapter never reached its last cell
    assert not os.path.exists(ended_folder)

    killed, killed_folder = sandbox_child(tmp_path)
    try:
        assert remove_stale_sandboxes(str(tmp_path)) == 0 and os.path.isdir(killed_folder)  # its kernel still runs
    finally:
        killed.kill()  # as nbval stops a kernel
        killed.wait()
    assert os.path.isdir(killed_folder)
    assert remove_stale_sandboxes(str(tmp_path)) == 1 and list(tmp_path.iterdir()) == []
