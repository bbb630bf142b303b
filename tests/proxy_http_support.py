"""Real processes for the proxy's HTTP tests: ``harness serve --http`` on a free port, ended by SIGTERM, and
remote MCP servers on 127.0.0.1."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[1]
REMOTE = str(Path(__file__).parent / "mcp_fixtures" / "http_server.py")


class RemoteServers:
    """Remote MCP servers (tests/mcp_fixtures/http_server.py) started here and killed when the owner ends them."""

    def __init__(self) -> None:
        self.processes: list[subprocess.Popen[str]] = []

    def start(self, *args: str) -> int:
        """Start one (``ok``, ``hang`` or ``garbage``, options after) and return its port on 127.0.0.1."""
        process = subprocess.Popen([sys.executable, REMOTE, *args], stdout=subprocess.PIPE, text=True)
        self.processes.append(process)
        return int(process.stdout.readline()) if process.stdout else 0

    def close(self) -> None:
        for process in self.processes:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def remote() -> Iterator[RemoteServers]:
    """The test module's remote servers, all killed when the module ends (nothing outlives its owner)."""
    servers = RemoteServers()
    yield servers
    servers.close()


class Served:
    """A running ``harness serve --http``: its URL, and everything it wrote to stderr so far."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.lines: list[str] = []
        first = process.stderr.readline() if process.stderr else ""
        self.lines.append(first)
        if "listening on" not in first:
            process.wait(10)
            raise RuntimeError(f"harness serve --http did not start: {first}{process.stderr.read() if process.stderr else ''}")
        self.url = first.split()[-1]
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stderr or ():
            self.lines.append(line)

    @property
    def stderr(self) -> str:
        return "".join(self.lines)


@contextmanager
def served(config: Path, *args: str, listen: str = "127.0.0.1:0") -> Iterator[Served]:
    """``harness serve --config CONFIG --http LISTEN ARGS…`` until the block ends; then SIGTERM, and it must end."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-m", "harness", "serve", "--config", str(config), "--http", listen, *args],
                               stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env, cwd=config.parent)
    try:
        yield Served(process)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
