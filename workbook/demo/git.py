"""Git tools: status, diffs, history and branches of the sandbox project, without the host's git.

Introduced in Chapter 1 as part of the demo world.

The history is :class:`workbook.demo.repo.InMemoryRepo`; the working tree is the sandbox's
real files, so file edits show up in ``git_status`` and ``git_diff`` the way they would in a
real repository. Nothing here spawns git or reads the host's repositories.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from workbook.demo.repo import unified_diff
from harness.core.tools import Tool, tool

if TYPE_CHECKING:
    from workbook.demo.world import DemoWorld

DOMAIN = "git"


def make_tools(world: DemoWorld) -> list[Tool]:
    repo = world.repo

    @tool(domain=DOMAIN, tags={"read"})
    def git_status() -> dict[str, object]:
        """Show the repository's working-tree status: the current branch, staged changes, unstaged modifications, deleted and untracked files."""
        return {"branch": repo.head, **repo.status(world.worktree())}

    @tool(domain=DOMAIN, tags={"read"})
    def git_diff(path: str | None = None, staged: bool = False) -> str:
        """Show uncommitted changes in the repository as a unified diff.
        By default compares the working tree with the staging area; set staged to see what the next commit will record.

        Args:
            path: Only show changes to this file.
            staged: Show staged changes instead of unstaged ones.
        """
        old = repo.head_commit().files if staged else repo.index()
        new = repo.index() if staged else world.worktree()
        if not staged:  # untracked files are not part of an unstaged diff, as in git
            new = {p: c for p, c in new.items() if p in old}
        paths = [world.rel(world.resolve(path))] if path else None
        diff = unified_diff(old, new, paths)
        return diff or f"No {'staged' if staged else 'unstaged'} changes{f' in {path}' if path else ''}."

    @tool(domain=DOMAIN, tags={"read"})
    def git_log(limit: int = 10, path: str | None = None) -> list[str]:
        """List commits on the current branch, newest first, with short hash, author, date and message.
        Give a path to see only the commits that changed that file.

        Args:
            limit: Maximum number of commits to list.
            path: Only list commits that changed this file.
        """
        history = repo.history()
        if path:
            history = [c for c in history
                       if c.files.get(path) != (repo.commits[c.parent].files.get(path) if c.parent else None)]
        return [f"{c.short} {c.date} {c.author}: {c.message}" for c in history[:limit]]

    @tool(domain=DOMAIN, tags={"read"})
    def git_show(commit: str = "HEAD") -> str:
        """Show one commit in full: author, date, message and the patch it introduced.
        Accepts a commit hash (7 characters are enough), a branch name, HEAD or HEAD~N.

        Args:
            commit: The commit to show.
        """
        c = repo.resolve(commit)
        before = repo.commits[c.parent].files if c.parent else {}
        return f"commit {c.id}\nAuthor: {c.author}\nDate:   {c.date}\n\n    {c.message}\n\n{unified_diff(before, c.files)}"

    @tool(domain=DOMAIN, tags={"write"})
    def git_stage(path: str) -> str:
        """Stage a file's current content so the next commit includes it (git add).
        Use '.' to stage every change, including new and deleted files.

        Args:
            path: The file to stage, relative to the project root, or '.' for everything.
        """
        rel = "." if path.strip() in (".", "") else world.rel(world.resolve(path))
        changed = repo.stage(rel, world.worktree())
        return f"Staged {', '.join(changed)}." if changed else f"Nothing new to stage in {path}."

    @tool(domain=DOMAIN, tags={"write"})
    def git_commit(message: str) -> str:
        """Record the staged changes as a new commit on the current branch, with the given commit message.
        Fails when nothing is staged.

        Args:
            message: The commit message.
        """
        files = repo.staged_paths()
        c = repo.commit(message, world.user, world.now()[:10])
        return f"[{repo.head} {c.short}] {c.message} ({len(files)} file{'s' if len(files) != 1 else ''} changed)"

    @tool(domain=DOMAIN, tags={"read"})
    def git_list_branches() -> list[dict[str, object]]:
        """List the repository's branches with the commit each points to, marking the one currently checked out."""
        return [{"branch": b, "commit": cid[:7], "current": b == repo.head} for b, cid in sorted(repo.branches.items())]

    @tool(domain=DOMAIN, tags={"write"})
    def git_create_branch(branch: str, start: str = "HEAD") -> str:
        """Create a new branch at a commit (HEAD by default) without switching to it; use git_checkout to switch.

        Args:
            branch: Name of the new branch, e.g. 'fix/rounding'.
            start: Commit, branch or HEAD the new branch starts from.
        """
        c = repo.create_branch(branch.strip(), start)
        return f"Created branch {branch.strip()} at {c.short}."

    @tool(domain=DOMAIN, tags={"write"})
    def git_checkout(branch: str) -> str:
        """Switch the working tree to another branch, updating project files to match it.
        Refuses when that would overwrite uncommitted changes.

        Args:
            branch: The branch to switch to.
        """
        writes = repo.checkout(branch.strip(), world.worktree())
        for rel, content in writes.items():
            target = world.resolve(rel)
            if content is None:
                target.unlink(missing_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(content, encoding="utf-8")
        return f"Switched to branch {repo.head} ({len(writes)} file{'s' if len(writes) != 1 else ''} updated)."

    @tool(domain=DOMAIN, tags={"read"})
    def git_blame(path: str) -> list[str]:
        """Show, for every line of a file as of the latest commit, which commit, author and date last changed it.

        Args:
            path: The file to annotate, relative to the project root.
        """
        rel = world.rel(world.resolve(path))
        return [f"{c.short} {c.author:<6} {c.date} {n:>3}| {line}" for n, (c, line) in enumerate(repo.blame(rel), 1)]

    return [git_status, git_diff, git_log, git_show, git_stage, git_commit,
            git_list_branches, git_create_branch, git_checkout, git_blame]
