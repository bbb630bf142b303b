"""Files tools: read, write, find and compare files in the demo world's sandbox.

Introduced in Chapter 1 as part of the demo world.

Every path goes through :meth:`DemoWorld.resolve`, so no tool can reach outside the sandbox.
Results are short strings and small lists: a model reads them, and a long listing costs
context just like a long schema does. Docstrings keep one sentence per line because a tool's
one-line summary is its description's first line.
"""
from __future__ import annotations

import difflib
import fnmatch
import re
from datetime import datetime
from typing import TYPE_CHECKING

from harness.core.tools import Tool, tool

if TYPE_CHECKING:
    from workbook.demo.world import DemoWorld

DOMAIN = "files"


def make_tools(world: DemoWorld) -> list[Tool]:
    @tool(domain=DOMAIN, tags={"read"})
    def read_file(path: str, offset: int = 1, limit: int = 200) -> str:
        """Read a text file from the project workspace and return its lines, numbered.
        Use offset and limit to page through long files.
        Notes saved with the notes tools are not files: read those with read_note.

        Args:
            path: File path relative to the project root, e.g. 'src/app.py'.
            offset: Number of the first line to return (1-based).
            limit: Maximum number of lines to return.
        """
        if offset < 1 or limit < 1:
            raise ValueError("offset and limit must both be at least 1.")
        lines = world.read(path).splitlines()
        chunk = lines[offset - 1: offset - 1 + limit]
        if not chunk:
            return f"{path} has {len(lines)} lines, none from line {offset} on."
        head = f"{path} (lines {offset}-{offset + len(chunk) - 1} of {len(lines)})"
        return "\n".join([head, *(f"{n:>4}| {line}" for n, line in enumerate(chunk, offset))])

    @tool(domain=DOMAIN, tags={"write"})
    def write_file(path: str, content: str, overwrite: bool = True) -> str:
        """Create a text file in the project workspace, or replace an existing one, with the given content.
        Missing parent folders are created; set overwrite to false to refuse replacing an existing file.

        Args:
            path: File path relative to the project root.
            content: The full text to write.
            overwrite: Whether an existing file may be replaced.
        """
        target = world.resolve(path)
        if target.is_dir():
            raise ValueError(f"'{path}' is a folder, not a file.")
        if target.exists() and not overwrite:
            raise ValueError(f"'{path}' already exists and overwrite is false.")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return f"Wrote {len(content)} characters to {world.rel(target)}."

    @tool(domain=DOMAIN, tags={"write"})
    def append_to_file(path: str, content: str) -> str:
        """Append text to the end of an existing file in the workspace, leaving its current content untouched.
        A newline is added first when the file does not end with one.

        Args:
            path: File path relative to the project root; the file must exist.
            content: The text to add at the end.
        """
        target = world.file(path)
        old = target.read_text(encoding="utf-8")
        glue = "" if not old or old.endswith("\n") else "\n"
        target.write_text(old + glue + content, encoding="utf-8")
        return f"Appended {len(content)} characters to {world.rel(target)}."

    @tool(domain=DOMAIN, tags={"read"})
    def list_directory(path: str = ".") -> list[str]:
        """List the files and subfolders directly inside one workspace folder, with file sizes in bytes.
        Not recursive: to find files by name anywhere below a folder use find_files.

        Args:
            path: Folder relative to the project root; '.' is the root itself.
        """
        folder = world.resolve(path)
        if not folder.is_dir():
            raise ValueError(f"'{path}' is not a folder in the sandbox.")
        entries = sorted(folder.iterdir(), key=lambda p: (p.is_file(), p.name))
        return [f"{p.name}/" if p.is_dir() else f"{p.name} ({p.stat().st_size} bytes)"
                for p in entries if not p.name.startswith(".") and p.name != "__pycache__"]

    @tool(domain=DOMAIN, tags={"read"})
    def find_files(pattern: str, path: str = ".") -> list[str]:
        """Find files anywhere below a folder whose names match a glob pattern such as '*.csv' or 'test_*.py'.
        Returns matching relative paths only, not their contents.

        Args:
            pattern: Glob pattern matched against file names (or against relative paths when it contains '/').
            path: Folder to search below; '.' is the project root.
        """
        base = world.rel(world.resolve(path))
        return [p for p in sorted(world.worktree())
                if (base == "." or p.startswith(base + "/"))
                and fnmatch.fnmatch(p if "/" in pattern else p.rsplit("/", 1)[-1], pattern)]

    @tool(domain=DOMAIN, tags={"read"})
    def search_code(query: str, path: str = ".", limit: int = 20) -> list[str]:
        """Search inside the project's source files for a text or regular expression and return each matching line with its file and line number.
        Searches the workspace only; to search the documentation website use search_docs.

        Args:
            query: Text or regular expression to look for (case-insensitive).
            path: Folder or file to search in; '.' is the whole project.
            limit: Maximum number of matching lines to return.
        """
        try:
            rx = re.compile(query, re.IGNORECASE)
        except re.error:
            rx = re.compile(re.escape(query), re.IGNORECASE)
        base = world.rel(world.resolve(path))
        hits = []
        for rel, text in world.worktree().items():
            if base == "." or rel == base or rel.startswith(base + "/"):
                hits += [f"{rel}:{n}: {line.strip()}" for n, line in enumerate(text.splitlines(), 1) if rx.search(line)]
        return hits[:limit] if hits else [f"No matches for {query!r}."]

    @tool(domain=DOMAIN, tags={"write"})
    def move_file(path: str, destination: str) -> str:
        """Move or rename a file within the workspace.
        Fails if the destination already exists, so nothing is overwritten.

        Args:
            path: The file to move, relative to the project root.
            destination: Its new path, relative to the project root.
        """
        source, target = world.file(path), world.resolve(destination)
        if target.exists():
            raise ValueError(f"'{destination}' already exists; choose another destination.")
        target.parent.mkdir(parents=True, exist_ok=True)
        source.rename(target)
        return f"Moved {world.rel(source)} to {world.rel(target)}."

    @tool(domain=DOMAIN, tags={"destructive"})
    def delete_file(path: str) -> str:
        """Permanently delete one file from the workspace.
        This cannot be undone, and folders are never removed.

        Args:
            path: The file to delete, relative to the project root.
        """
        target = world.file(path)
        target.unlink()
        return f"Deleted {world.rel(target)}."

    @tool(domain=DOMAIN, tags={"read"})
    def diff_files(path: str, other_path: str) -> str:
        """Compare any two files in the workspace line by line and return a unified diff.
        For uncommitted changes against the last commit use git_diff instead.

        Args:
            path: The first (old) file.
            other_path: The second (new) file.
        """
        a, b = world.read(path).splitlines(keepends=True), world.read(other_path).splitlines(keepends=True)
        diff = "".join(difflib.unified_diff(a, b, fromfile=path, tofile=other_path))
        return diff or f"{path} and {other_path} are identical."

    @tool(domain=DOMAIN, tags={"read"})
    def file_info(path: str) -> dict[str, object]:
        """Report a file's size in bytes, number of lines, last modification time and git state (tracked, modified or untracked) without returning its content.

        Args:
            path: File path relative to the project root.
        """
        target = world.file(path)
        rel, text = world.rel(target), target.read_text(encoding="utf-8", errors="replace")
        index = world.repo.index()
        state = "untracked" if rel not in index else "modified" if index[rel] != text else "tracked"
        return {"path": rel, "bytes": target.stat().st_size, "lines": len(text.splitlines()),
                "modified": datetime.fromtimestamp(target.stat().st_mtime).strftime("%Y-%m-%d %H:%M"),
                "git": state}

    return [read_file, write_file, append_to_file, list_directory, find_files, search_code,
            move_file, delete_file, diff_files, file_info]
