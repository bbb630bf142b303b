"""The demo world: a sandboxed project plus the team services an agent works with.

Introduced in Chapter 1 (the tool cliff), and the world every later chapter's agent acts in.

A tool-selection workbook needs tools that really do something, or a wrong pick costs
nothing visible. Yet nothing here may touch the host: files live in a sandbox folder (a fresh
temp dir by default) and every path is checked to stay inside it; git history, the web, the
package index, chat, issues, calendar and mail live in memory, seeded from
:mod:`workbook.demo.seed`, so a fresh world always starts in the same state.
"""
from __future__ import annotations

import copy
import os
import re
import shutil
import weakref
from datetime import date, datetime, timedelta
from pathlib import Path

from workbook.demo import seed
from workbook.demo.repo import Files, InMemoryRepo
from workbook.demo import testrunner
from workbook.demo.testrunner import TestOutcome
from harness.core.temp_folders import owned_temp_folder, remove_stale_folders
from harness.core.json_types import JSONObject

_SKIP_DIRS = {"__pycache__", ".pytest_cache", ".git"}
#: How :meth:`DemoWorld.snapshot` shows an empty folder (under its path with a trailing slash).
EMPTY_FOLDER = "<empty folder>"
_PREFIX = "demo-world-"


def remove_stale_worlds(folder: str | None = None) -> int:
    """Remove temp sandboxes whose process is gone (a killed kernel's); return how many."""
    return remove_stale_folders(_PREFIX, folder)


class DemoWorld:
    """State behind the demo tools. ``root`` must be a new or empty folder; None makes a temp dir.

    A temp sandbox is removed by :meth:`close` (or ``with DemoWorld() as world:``), else when the
    world is garbage-collected or the process exits; a folder you pass in is yours and is kept.
    """

    def __init__(self, root: Path | str | None = None) -> None:
        if root is None:
            self.root = owned_temp_folder(_PREFIX)  # the first one sweeps what killed processes left
            self._cleanup: weakref.finalize | None = weakref.finalize(self, shutil.rmtree, str(self.root), True)
        else:
            root = Path(root)
            if root.exists() and (not root.is_dir() or any(root.iterdir())):
                raise ValueError(f"DemoWorld needs a new or empty folder to seed, and {root} is not one.")
            root.mkdir(parents=True, exist_ok=True)
            self.root = root.resolve()
            self._cleanup = None
        self.today = seed.TODAY
        self.user = seed.USER
        self.people = dict(seed.PEOPLE)
        self.repo = self._seed_repo()
        files = self._seed_sandbox()
        for rel in seed.STAGED:
            self.repo.stage(rel, files)
        self.web: dict[str, JSONObject] = copy.deepcopy(seed.WEB)
        self.packages: dict[str, JSONObject] = copy.deepcopy(seed.PACKAGES)
        self.notes: dict[str, JSONObject] = copy.deepcopy(seed.NOTES)
        self.scratchpad: dict[str, str] = dict(seed.SCRATCHPAD)
        self.channels = {name: {"topic": c["topic"], "members": list(c["members"]),
                                "messages": [self.chat_message(*m) for m in c["messages"]]}
                         for name, c in seed.CHANNELS.items()}
        self.direct_messages = {p: [self.chat_message(*m) for m in msgs] for p, msgs in seed.DIRECT_MESSAGES.items()}
        self.issues = {i: {"id": i, **copy.deepcopy(x), "comments": [{"author": a, "text": t} for a, t in x.get("comments", [])]}
                       for i, x in enumerate(seed.ISSUES, 1)}
        self.events = {i: {"id": i, **copy.deepcopy(e)} for i, e in enumerate(seed.EVENTS, 1)}
        self.reminders = {i: {"id": i, **r} for i, r in enumerate(seed.REMINDERS, 1)}
        self.inbox = {i: {"id": i, **m} for i, m in enumerate(seed.EMAILS, 1)}
        self.sent: list[dict[str, str]] = []
        # requests that would leave the sandbox: every POST, and every request to a URL the world does not serve
        self.requests: list[dict[str, str]] = []
        # the CI run that failed this morning (see the inbox): "rerun what failed" works from the start
        self.last_test_run: list[TestOutcome] = testrunner.run(files)
        self._minutes = 0

    def close(self) -> None:
        """Remove the temp sandbox now (a folder passed in is kept)."""
        if self._cleanup is not None:
            self._cleanup()

    def __enter__(self) -> "DemoWorld":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def clone(self) -> "DemoWorld":
        """A new world in a temp sandbox of its own, in exactly this world's state (files and everything in
        memory): the judge plays a scenario's labelled calls on it to build the world a run must end in."""
        twin = DemoWorld.__new__(DemoWorld)
        twin.root = owned_temp_folder(_PREFIX)
        twin._cleanup = weakref.finalize(twin, shutil.rmtree, str(twin.root), True)
        shutil.copytree(self.root, twin.root, symlinks=True, dirs_exist_ok=True)
        for name, value in vars(self).items():
            if name not in ("root", "_cleanup"):
                setattr(twin, name, copy.deepcopy(value))
        return twin

    # --- seeding ------------------------------------------------------------------------

    @staticmethod
    def _seed_repo() -> InMemoryRepo:
        repo = InMemoryRepo()
        for branch, author, day, message, changes in seed.HISTORY:
            if branch not in repo.branches and "main" in repo.branches:
                repo.branches[branch] = repo.branches["main"]  # a new branch starts at main's tip
            repo.add_commit(branch, author, day, message, changes)
        repo.head = seed.CHECKED_OUT
        return repo

    def _seed_sandbox(self) -> Files:
        """Write main's files plus the uncommitted work into the sandbox; returns what was written."""
        files = {**self.repo.head_commit().files, **seed.WORKING_CHANGES}
        stamp = datetime.fromisoformat(f"{self.today}T08:00:00").timestamp()
        for rel, content in files.items():
            target = self.root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
            os.utime(target, (stamp, stamp))
        return files

    @staticmethod
    def chat_message(author: str, time: str, text: str) -> dict[str, str]:
        return {"author": author, "time": time, "text": text}

    # --- the sandbox ----------------------------------------------------------------------

    def resolve(self, path: str) -> Path:
        """``path`` (relative to the project root) as an absolute path that stays inside the sandbox."""
        if not isinstance(path, str) or "\0" in path:
            raise ValueError(f"{path!r} is not a usable path.")
        target = (self.root / path.strip()).resolve()
        if target != self.root and not target.is_relative_to(self.root):
            raise ValueError(f"Path '{path}' is outside the sandbox; use a path inside the project, such as 'src/app.py'.")
        return target

    def rel(self, target: Path) -> str:
        return target.relative_to(self.root).as_posix() or "."

    def file(self, path: str) -> Path:
        """An existing file in the sandbox, or one clear error saying why not."""
        target = self.resolve(path)
        if target.is_dir():
            raise ValueError(f"'{path}' is a folder, not a file.")
        if not target.exists():
            raise ValueError(f"No file '{path}' in the sandbox.")
        return target

    def read(self, path: str) -> str:
        return self.file(path).read_text(encoding="utf-8", errors="replace")

    def worktree(self) -> Files:
        """Every file in the sandbox by relative path (caches and hidden folders skipped)."""
        files: Files = {}
        for folder, dirs, names in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
            for name in names:
                p = Path(folder, name)
                if p.is_symlink() and not p.resolve().is_relative_to(self.root):
                    continue  # a link out of the sandbox is not followed (a walk must not read /etc/passwd)
                files[self.rel(p)] = p.read_text(encoding="utf-8", errors="replace")
        return files

    def snapshot(self) -> Files:
        """Every file under the sandbox, hidden folders and caches included: what a judge compares.

        :meth:`worktree` is the project as the tools see it; damage can hide where they do not
        look (``.git/config``, ``__pycache__``), so the judge reads everything. A link is kept as
        its target, never followed.
        """
        files: Files = {}
        for folder, dirs, names in os.walk(self.root):
            dirs.sort()
            if not names and not dirs and Path(folder) != self.root:
                files[self.rel(Path(folder)) + "/"] = EMPTY_FOLDER  # an empty folder is a change too
            for name in sorted(names) + [d for d in dirs if Path(folder, d).is_symlink()]:
                p = Path(folder, name)
                files[self.rel(p)] = f"-> {os.readlink(p)}" if p.is_symlink() else p.read_bytes().decode("utf-8", "replace")
        return files

    # --- names, dates and times shared by the service tools -------------------------------------

    def now(self) -> str:
        """A deterministic clock: each new message or commit is one minute after the last."""
        self._minutes += 1
        return (datetime.fromisoformat(f"{self.today}T10:00") + timedelta(minutes=self._minutes)).strftime("%Y-%m-%d %H:%M")

    def person(self, handle: str) -> str:
        name = handle.strip().lstrip("@").lower()
        if name not in self.people:
            raise ValueError(f"Unknown person {handle!r}; people: {', '.join('@' + p for p in self.people)}.")
        return name

    def channel(self, name: str) -> JSONObject:
        key = name.strip().lstrip("#").lower()
        if key not in self.channels:
            raise ValueError(f"No channel {name!r}; channels: {', '.join('#' + c for c in self.channels)}.")
        return self.channels[key]


def check_date(value: str) -> str:
    """A YYYY-MM-DD date, or one error sentence."""
    try:
        return date.fromisoformat(value.strip()).isoformat()
    except (ValueError, AttributeError):
        raise ValueError(f"Dates are written YYYY-MM-DD, got {value!r}.") from None


def check_time(value: str) -> str:
    """An HH:MM 24-hour time, or one error sentence."""
    m = re.fullmatch(r"([01]?\d|2[0-3]):([0-5]\d)", value.strip()) if isinstance(value, str) else None
    if not m:
        raise ValueError(f"Times are written HH:MM (24-hour), got {value!r}.")
    return f"{int(m.group(1)):02d}:{m.group(2)}"
