"""The real-server landscape: third-party MCP servers configured to run offline in a sandbox.

Introduced in Chapter 5 (MCP integration).

The context tax is only convincing on servers nobody wrote for this workbook: mcp-server-git,
-time and -fetch (pip-installed with the workbook) and six Node servers pinned in
``mcp_servers/node`` (filesystem, memory, everything, github, notion, mongodb). Everything they
touch lives in a sandbox folder: a fresh git repository, a files folder, the memory server's file.
Node servers are started as ``node <entry point>`` from the pinned ``node_modules`` — never
``npx``, which would download whatever is newest at run time. What cannot run here (no Node, no
``npm ci`` yet, a missing console script) is skipped with one sentence saying so.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from workbook.servers import WORKBOOK_SERVERS, server_entry
from harness.core.places import located
from harness.core.json_types import JSONObject

#: Environment variable naming the folder where ``npm ci`` installed the pinned Node servers
#: (the workbook's ``mcp_servers/node``, found from the working folder up when it is not set).
NODE_DIR_ENV = "HARNESS_NODE_SERVERS"
#: Seconds each landscape server may take to start: thirteen servers starting at once on two cores
#: take 10–15 s each, and a loaded machine must not report a healthy server as timed out.
STARTUP_TIMEOUT = 60.0

#: server name -> (npm package, arguments after the entry point, env); ``{files}`` and ``{memory}``
#: stand for the sandbox's folders.
NODE_SERVERS: dict[str, tuple[str, tuple[str, ...], dict[str, str]]] = {
    "filesystem": ("@modelcontextprotocol/server-filesystem", ("{files}",), {}),
    "memory": ("@modelcontextprotocol/server-memory", (), {"MEMORY_FILE_PATH": "{memory}/memory.jsonl"}),
    "everything": ("@modelcontextprotocol/server-everything", ("stdio",), {}),
    "github": ("@modelcontextprotocol/server-github", (), {}),
    "notion": ("@notionhq/notion-mcp-server", (), {}),
    "mongodb": ("mongodb-mcp-server", (), {"MDB_MCP_TELEMETRY": "disabled", "DO_NOT_TRACK": "1"}),
}


@dataclass(frozen=True)
class Landscape:
    """A ready-to-use ``{"mcpServers": ...}`` config and what had to be left out, in sentences."""

    config: JSONObject
    sandbox: Path
    skipped: list[str] = field(default_factory=list)

    @property
    def servers(self) -> list[str]:
        return list(self.config["mcpServers"])


def _git(repo: Path, *args: str) -> None:
    identity = ["-c", "user.name=Workbook", "-c", "user.email=workbook@example.test", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", *identity, *args], cwd=repo, check=True, capture_output=True, text=True)


def prepare_sandbox(root: str | Path) -> Path:
    """Create (or reuse) a sandbox: ``repo/`` (a git repository with two commits), ``files/``, ``memory/``."""
    root = Path(root).resolve()
    repo, files = root / "repo", root / "files"
    for folder in (repo, files, root / "memory"):
        folder.mkdir(parents=True, exist_ok=True)
    (files / "welcome.txt").write_text("Files the filesystem server may read and write.\n", encoding="utf-8")
    (files / "todo.md").write_text("- try the MCP landscape\n- count the schema tokens\n", encoding="utf-8")
    if shutil.which("git") and not (repo / ".git").exists():
        _git(repo, "init", "-q")
        _git(repo, "symbolic-ref", "HEAD", "refs/heads/main")  # also on git older than 2.28 (no init -b)
        (repo / "README.md").write_text("# sandbox\n", encoding="utf-8")
        _git(repo, "add", "README.md")
        _git(repo, "commit", "-q", "-m", "Start the sandbox")
        (repo / "app.py").write_text("print('hello')\n", encoding="utf-8")
        _git(repo, "add", "app.py")
        _git(repo, "commit", "-q", "-m", "Add app.py")
    return root


def node_entry_point(node_modules: Path, package: str) -> Path:
    """The script a package's ``bin`` names (what ``npx`` would run), inside the pinned node_modules."""
    pkg_dir = node_modules / package
    meta = json.loads((pkg_dir / "package.json").read_text(encoding="utf-8"))
    binary = meta["bin"] if isinstance(meta["bin"], str) else next(iter(meta["bin"].values()))
    return pkg_dir / binary


def default_node_dir() -> Path | None:
    """The pinned Node servers' folder: ``$HARNESS_NODE_SERVERS``, else ``mcp_servers/node`` here or above."""
    return located(NODE_DIR_ENV, "mcp_servers/node")


def _shown(path: Path) -> str:
    """A path as a skip sentence shows it: relative to the checkout holding it, when there is one (outputs stay portable)."""
    for folder in path.parents:
        if (folder / "mcp_servers").is_dir():
            return str(path.relative_to(folder))
    return str(path)


def _console_script(name: str) -> str | None:
    """A console script installed next to this Python (the venv's bin folder), else on PATH."""
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else shutil.which(name)


def landscape_config(
    sandbox: str | Path,
    *,
    node_dir: Path | None = None,
    include_workbook: bool = True,
) -> Landscape:
    """The config of every real server that can run here, pointed at ``sandbox`` (see :func:`prepare_sandbox`).

    ``node_dir`` is where the Node servers were installed (default: :func:`default_node_dir`).
    """
    root = prepare_sandbox(sandbox)
    servers: JSONObject = {}
    skipped: list[str] = []
    if include_workbook:
        servers.update({name: server_entry(name) for name in WORKBOOK_SERVERS})

    python_servers = {
        "git": ("mcp-server-git", ["--repository", str(root / "repo")]),
        "time": ("mcp-server-time", ["--local-timezone", "UTC"]),
        "fetch": ("mcp-server-fetch", ["--allow-private-ips"]),  # so it can fetch a page served on 127.0.0.1
    }
    for name, (script, args) in python_servers.items():
        command = _console_script(script)
        if command is None:
            skipped.append(f"{script} is skipped: it is not installed here (pip install {script}).")
        elif name == "git" and not (root / "repo" / ".git").exists():
            skipped.append("mcp-server-git is skipped: git is not installed, so the sandbox has no repository.")
        else:
            servers[name] = {"command": command, "args": args}

    node = shutil.which("node")
    node_dir = node_dir or default_node_dir()
    node_modules = node_dir / "node_modules" if node_dir else None
    if node is None:
        skipped.append(f"The {len(NODE_SERVERS)} Node servers are skipped: Node.js is not installed.")
    elif node_dir is None or node_modules is None:
        skipped.append(f"The {len(NODE_SERVERS)} Node servers are skipped: the workbook's mcp_servers/node is not "
                       f"here or above (set {NODE_DIR_ENV} to the folder where `npm ci` installed them).")
    elif not node_modules.is_dir():
        skipped.append(f"The {len(NODE_SERVERS)} Node servers are skipped: {_shown(node_modules)} is missing "
                       f"(run `npm ci` in {_shown(node_dir)}, or scripts/setup.sh full).")
    else:
        for name, (package, node_args, env) in NODE_SERVERS.items():
            if not (node_modules / package / "package.json").exists():
                skipped.append(f"{package} is skipped: it is not in {_shown(node_modules)} (run `npm ci` again).")
                continue
            folders = {"files": root / "files", "memory": root / "memory"}
            servers[name] = {
                "command": node,
                "args": [str(node_entry_point(node_modules, package)), *(a.format(**folders) for a in node_args)],
                "env": {k: v.format(**folders) for k, v in env.items()},
            }
    for entry in servers.values():
        entry.setdefault("startupTimeout", STARTUP_TIMEOUT)
    return Landscape({"mcpServers": servers}, root, skipped)
