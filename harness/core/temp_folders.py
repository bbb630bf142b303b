"""Temp folders named after the process that owns them, so what a killed owner left is removed by the next.

Introduced in Chapter 1 with the demo world's sandbox; Chapter 5's MCP hub keeps its servers' logs,
and Chapter 7's ``harness serve`` its scratch folder, the same way.

An owner removes its folder when it closes, is collected or exits normally, but a process killed
with SIGKILL (a notebook kernel stopped by nbval, a proxy its client gave up on) runs no clean-up.
Each folder carries its owner's process id in its name (``<prefix><pid>-<random>``), so whoever
makes the next one — and the test session, at its end — removes the folders of processes that no
longer exist.
"""
from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

_swept: set[str] = set()  # prefixes this process has swept already


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, but another user's
        return True
    return True


def remove_stale_folders(prefix: str, folder: str | None = None) -> int:
    """Remove the temp folders named ``<prefix><pid>-…`` whose process is gone; return how many."""
    folder = folder or tempfile.gettempdir()
    removed = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        pid = name[len(prefix):].split("-", 1)[0]
        if name.startswith(prefix) and pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(os.path.join(folder, name), ignore_errors=True)
            removed += 1
    return removed


def owned_temp_folder(prefix: str) -> Path:
    """A new temp folder named after this process; the first one per prefix sweeps what dead owners left."""
    if prefix not in _swept:
        _swept.add(prefix)
        remove_stale_folders(prefix)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-")).resolve()


@contextmanager
def owned_temp_dir(prefix: str) -> Iterator[Path]:
    """:func:`owned_temp_folder` for a ``with`` block: removed at its end, or by the next owner if this one is killed."""
    folder = owned_temp_folder(prefix)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def exit_cleanly_on_sigterm() -> None:
    """Turn SIGTERM into a normal exit, so ``with`` blocks (temp folders, servers) clean up as they unwind.

    For the long command-line runs (hours on the real model) that a person stops with ``kill``: by
    default SIGTERM ends Python with no clean-up, leaving the run's demo world for the next start to sweep.
    """
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
