"""A chapter's scratch folder: where Chapters 5, 5b and 7 keep their servers' files and logs.

A chapter removes its folder in its last cell, but a kernel often stops before that: nbval ends each
kernel with SIGKILL, the browser test stops a chapter at its last widget, a learner closes the tab.
So the folder is named after the kernel's process (:func:`harness.core.temp_folders.owned_temp_folder`):
it goes when the kernel exits normally; a killed kernel's is removed by the next chapter that makes
one, and by the test session's end (tests/conftest.py).
"""
from __future__ import annotations

import atexit
import shutil
from pathlib import Path

from harness.core.temp_folders import owned_temp_folder, remove_stale_folders

PREFIX = "workbook-chapter-"


def chapter_sandbox() -> Path:
    """A new temp folder for this kernel's chapter, removed at the kernel's exit if the chapter has not."""
    folder = owned_temp_folder(PREFIX)
    atexit.register(shutil.rmtree, folder, True)
    return folder


def remove_stale_sandboxes(folder: str | None = None) -> int:
    """Remove the sandboxes of kernels that are gone; return how many."""
    return remove_stale_folders(PREFIX, folder)
