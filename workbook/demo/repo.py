"""An in-memory git history over the sandbox's files: commits, branches, a staging area.

Introduced in Chapter 1 with :class:`workbook.demo.world.DemoWorld`.

The demo's git tools must never touch the host's git, and they must answer the same way on
every run. So history lives in memory (each commit keeps a full snapshot: the project has a
dozen small files), while status and diffs compare it with the real files in the sandbox:
edit a file with ``write_file`` and ``git_status`` sees it.
"""
from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass, field
from typing import Mapping

Files = dict[str, str]


@dataclass(frozen=True)
class Commit:
    id: str
    parent: str | None
    author: str
    date: str
    message: str
    files: Files = field(repr=False)

    @property
    def short(self) -> str:
        return self.id[:7]


def commit_id(parent: str | None, author: str, date: str, message: str, files: Files) -> str:
    """A content hash, like git's: the same history always gets the same ids."""
    h = hashlib.sha1(f"{parent}\n{author}\n{date}\n{message}\n".encode())
    for path in sorted(files):
        h.update(f"{path}\0{files[path]}\0".encode())
    return h.hexdigest()


def unified_diff(old: Files, new: Files, paths: list[str] | None = None) -> str:
    """A unified diff between two snapshots ('' when they agree on every path asked about)."""
    chunks: list[str] = []
    for path in sorted(paths if paths is not None else set(old) | set(new)):
        a, b = old.get(path), new.get(path)
        if a == b:
            continue
        chunks.extend(difflib.unified_diff(
            (a or "").splitlines(keepends=True), (b or "").splitlines(keepends=True),
            fromfile=f"a/{path}" if a is not None else "/dev/null",
            tofile=f"b/{path}" if b is not None else "/dev/null",
        ))
    return "".join(line if line.endswith("\n") else line + "\n" for line in chunks)


class InMemoryRepo:
    """Commits, branches and an index; the working tree is passed in by the caller."""

    def __init__(self) -> None:
        self.commits: dict[str, Commit] = {}
        self.branches: dict[str, str] = {}
        self.head = "main"
        self.staged: dict[str, str | None] = {}  # path -> staged content, None = staged deletion

    # --- history ------------------------------------------------------------------------

    def add_commit(self, branch: str, author: str, date: str, message: str, changes: Mapping[str, str | None]) -> Commit:
        parent = self.branches.get(branch)
        files = dict(self.commits[parent].files) if parent else {}
        for path, content in changes.items():
            if content is None:
                files.pop(path, None)
            else:
                files[path] = content
        c = Commit(commit_id(parent, author, date, message, files), parent, author, date, message, files)
        self.commits[c.id] = c
        self.branches[branch] = c.id
        return c

    def head_commit(self) -> Commit:
        return self.commits[self.branches[self.head]]

    def resolve(self, ref: str) -> Commit:
        """A commit from 'HEAD', 'HEAD~N', a branch name or a (short) commit id."""
        ref = ref.strip()
        m = re.fullmatch(r"(.+?)~(\d+)", ref)
        steps = int(m.group(2)) if m else 0
        base = m.group(1) if m else ref
        if base == "HEAD":
            c = self.head_commit()
        elif base in self.branches:
            c = self.commits[self.branches[base]]
        else:
            found = [cid for cid in self.commits if len(base) >= 4 and cid.startswith(base.lower())]
            if len(found) != 1:
                raise ValueError(f"No commit matches {ref!r}; use HEAD, HEAD~N, a branch ({', '.join(self.branches)}) "
                                 "or a commit id of at least 4 hex digits.")
            c = self.commits[found[0]]
        for _ in range(steps):
            if c.parent is None:
                raise ValueError(f"{ref!r} goes back past the first commit.")
            c = self.commits[c.parent]
        return c

    def history(self, start: Commit | None = None) -> list[Commit]:
        """Commits from ``start`` (HEAD by default) back to the first, newest first."""
        out: list[Commit] = []
        c: Commit | None = start or self.head_commit()
        while c is not None:
            out.append(c)
            c = self.commits[c.parent] if c.parent else None
        return out

    # --- index and working tree ----------------------------------------------------------

    def index(self) -> Files:
        """What the next commit would contain."""
        files = dict(self.head_commit().files)
        for path, content in self.staged.items():
            if content is None:
                files.pop(path, None)
            else:
                files[path] = content
        return files

    def staged_paths(self) -> list[str]:
        head, index = self.head_commit().files, self.index()
        return sorted(p for p in set(head) | set(index) if head.get(p) != index.get(p))

    def status(self, worktree: Files) -> dict[str, list[str]]:
        index = self.index()
        return {
            "staged": self.staged_paths(),
            "modified": sorted(p for p in index if p in worktree and worktree[p] != index[p]),
            "deleted": sorted(p for p in index if p not in worktree),
            "untracked": sorted(p for p in worktree if p not in index),
        }

    def stage(self, path: str, worktree: Files) -> list[str]:
        """Stage ``path`` ('.' for every change); returns the paths whose staged content changed."""
        index = self.index()
        if path in (".", ""):
            paths = sorted(p for p in set(index) | set(worktree) if index.get(p) != worktree.get(p))
        elif path in worktree or path in index:
            paths = [path] if index.get(path) != worktree.get(path) else []
        else:
            raise ValueError(f"'{path}' is neither a file in the sandbox nor tracked by git.")
        for p in paths:
            self.staged[p] = worktree.get(p)
        return paths

    def commit(self, message: str, author: str, date: str) -> Commit:
        if not message.strip():
            raise ValueError("A commit needs a non-empty message.")
        if not self.staged_paths():
            raise ValueError("Nothing is staged; stage files with git_stage before committing.")
        changes = dict(self.staged)
        self.staged.clear()
        return self.add_commit(self.head, author, date, message.strip(), changes)

    def create_branch(self, name: str, start: str = "HEAD") -> Commit:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._/-]*", name) or ".." in name or name.endswith("/"):
            raise ValueError(f"{name!r} is not a valid branch name; use letters, digits, '.', '_', '-' and '/'.")
        if name in self.branches:
            raise ValueError(f"A branch named {name!r} already exists.")
        c = self.resolve(start)
        self.branches[name] = c.id
        return c

    def checkout(self, name: str, worktree: Files) -> dict[str, str | None]:
        """Switch HEAD to branch ``name``; returns the file writes (None = delete) the sandbox needs."""
        if name not in self.branches:
            raise ValueError(f"No branch named {name!r}; branches: {', '.join(sorted(self.branches))}.")
        old, new = self.head_commit().files, self.commits[self.branches[name]].files
        changing = [p for p in set(old) | set(new) if old.get(p) != new.get(p)]
        index = self.index()
        dirty = sorted(p for p in changing if worktree.get(p) != old.get(p) or index.get(p) != old.get(p))
        if dirty:
            raise ValueError(f"Switching to {name!r} would overwrite uncommitted changes in {', '.join(dirty)}; "
                             "commit them first.")
        self.head = name
        return {p: new.get(p) for p in changing}

    def blame(self, path: str) -> list[tuple[Commit, str]]:
        """For each line of ``path`` at HEAD, the oldest commit since which it has been unchanged."""
        chain = self.history()
        if path not in chain[0].files:
            raise ValueError(f"'{path}' is not tracked at HEAD, so it has no history to blame.")
        out = []
        for line in chain[0].files[path].splitlines():
            origin = chain[0]
            for older in chain[1:]:
                if line not in older.files.get(path, "").splitlines():
                    break
                origin = older
            out.append((origin, line))
        return out
