"""``make lab`` installs the pinned Node MCP servers once npm is there, even when Node.js came after the first set-up.

The Makefile is checked with ``make -n`` (what it would run) in a copy of the files it looks at;
``scripts/setup.sh node`` runs with a stand-in ``npm`` that records its calls, so nothing is downloaded.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LOCK = Path("mcp_servers/node/package-lock.json")
STAMP = Path("mcp_servers/node/node_modules/.installed")
FAKE_NPM = """#!/bin/sh
echo "$@" >> "$NPM_CALLS"
mkdir -p node_modules/@modelcontextprotocol/server-memory
"""

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def checkout(tmp_path: Path) -> Path:
    """The files the Makefile's rules name, with a set-up done before (``.venv/.core`` newest)."""
    for rel in ("Makefile", "pyproject.toml", "scripts/setup.sh", "requirements/minilm-weights.txt", str(LOCK)):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, tmp_path / rel)
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / ".core").touch()
    return tmp_path


def planned(folder: Path) -> str:
    done = subprocess.run(["make", "-n", "lab"], cwd=folder, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def age(path: Path, seconds: float) -> None:
    """Set ``path``'s modification time ``seconds`` into the past."""
    stamp = path.stat().st_mtime - seconds
    os.utime(path, (stamp, stamp))


def test_make_lab_installs_the_node_servers_until_an_install_has_succeeded(tmp_path):
    folder = checkout(tmp_path)
    assert "setup.sh node" in planned(folder)  # never installed (Node.js was missing at the first set-up)
    (folder / STAMP).parent.mkdir(parents=True)
    (folder / STAMP).touch()
    assert "setup.sh" not in planned(folder)  # installed: nothing to do, no network
    (folder / LOCK).touch()
    age(folder / STAMP, 60)
    assert "setup.sh node" in planned(folder)  # the lock file changed since


def fake_npm(tmp_path: Path) -> tuple[dict[str, str], Path]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npm").write_text(FAKE_NPM)
    (bin_dir / "npm").chmod(0o755)
    calls = tmp_path / "npm-calls.txt"
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "NPM_CALLS": str(calls)}, calls


def test_setup_node_installs_once_npm_is_there_and_then_not_again(tmp_path):
    folder = checkout(tmp_path / "checkout")
    script = ["bash", "scripts/setup.sh", "node"]
    tools = tmp_path / "tools"  # what the script needs, and no npm
    tools.mkdir()
    for tool in ("bash", "dirname", "touch"):
        (tools / tool).symlink_to(shutil.which(tool))
    no_npm = {**os.environ, "PATH": str(tools)}
    done = subprocess.run(script, cwd=folder, env=no_npm, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Node.js not found" in done.stdout and not (folder / STAMP).exists()

    env, calls = fake_npm(tmp_path)
    for _ in range(2):
        done = subprocess.run(script, cwd=folder, env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
    assert calls.read_text().splitlines() == ["ci --no-audit --no-fund --loglevel=error"]  # the second run needed nothing
    assert (folder / STAMP).exists() and not (folder / ".venv" / "bin").exists()  # only the Node servers were touched
