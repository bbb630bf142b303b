"""The two promises about installing: a library that works outside the checkout, and a workshop
room with no network that installs from a bundle folder alone.

Both install into fresh virtual environments in a temp folder, with every package index made
unreachable (pip and npm are pointed at a closed port on 127.0.0.1), so a hidden download fails
the test instead of passing quietly. The bundle is the one ``make bundle`` writes; where
``make test BUNDLE=DIR`` ran (a room with no network), that bundle is used instead of a new one.
"""
from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLOSED = "http://127.0.0.1:9"  # nothing listens on the discard port: any download attempt fails at once
# (npm's registry is left as it is: its cache is keyed by the lock file's registry URLs; the proxy closes it)

pytestmark = pytest.mark.install


def offline_env(**extra: str) -> dict[str, str]:
    """The environment with every registry unreachable, no local wheel cache, and no PYTHONPATH (a fresh
    environment must not see the checkout's packages through it)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "HARNESS_", "VIRTUAL_ENV")) and k != "PYTHONPATH"}
    # PIP_COMPILE=false: no byte-compiling of every installed module (measured: JupyterLab's 91 wheels install in
    # 39 s instead of 46 s); Python compiles what is imported anyway, and compiling is not what these tests check
    env.update(PIP_INDEX_URL=f"{CLOSED}/simple", PIP_NO_CACHE_DIR="1", PIP_CONFIG_FILE=os.devnull, PIP_COMPILE="false",
               PIP_DISABLE_PIP_VERSION_CHECK="1", npm_config_proxy=CLOSED, npm_config_https_proxy=CLOSED,
               http_proxy=CLOSED, https_proxy=CLOSED, HTTP_PROXY=CLOSED, HTTPS_PROXY=CLOSED, **extra)
    return env


def sh(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(args, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{' '.join(map(str, args))} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    given = os.environ.get("HARNESS_BUNDLE")
    if given:
        return Path(given)
    folder = tmp_path_factory.mktemp("bundle")
    sh(["bash", str(ROOT / "scripts" / "offline_bundle.sh"), str(folder)], env={**os.environ, "PYTHON": sys.executable})
    return folder


@pytest.fixture(scope="module")
def wheel(bundle, tmp_path_factory) -> Path:
    """The library's wheel, built once for the tests that install it and read it."""
    dist = tmp_path_factory.mktemp("dist")
    # built in isolation, its build tools (setuptools, wheel) also from the bundle: a fresh venv has neither
    sh([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-index", "--find-links", str(bundle / "wheels"),
        "-q", "-w", str(dist), str(ROOT)], env=offline_env())
    return next(dist.glob("tool_selection_workbook-*.whl"))


def test_the_library_installs_from_its_wheel_and_works_outside_the_checkout(bundle, wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py, cli = env_dir / "bin" / "python", env_dir / "bin" / "harness"
    sh([str(py), "-m", "pip", "install", "-q", "--no-index", "--find-links", str(bundle / "wheels"), str(wheel)],
       env=offline_env())
    elsewhere = tmp_path / "somewhere-else"
    elsewhere.mkdir()
    # public data in a folder above the working one, as where a temp folder sits below ../shared (issue 40)
    (tmp_path / "shared" / "data" / "livemcpbench").mkdir(parents=True)
    (tmp_path / "shared" / "data" / "livemcpbench" / "tools.jsonl").write_text('{"id": "a", "name": "a"}\n')
    env = offline_env()
    smoke = ("import harness, harness.retrieval.bm25, harness.selection.agent, harness.mcp.client; "
             "from pathlib import Path; print(Path(harness.__file__).resolve())")
    where = sh([str(py), "-c", smoke], cwd=elsewhere, env=env).stdout.strip()
    assert where.startswith(str(env_dir)), f"harness was imported from {where}, not the fresh environment"
    assert (Path(where).parent / "py.typed").is_file()
    doctor = sh([str(cli), "doctor"], cwd=elsewhere, env=env).stdout
    assert "Token counting: real tiktoken cl100k_base, offline" in doctor
    assert "Public data: absent" in doctor  # nothing is found from a folder outside any checkout, whatever is above it
    tools = elsewhere / "tools.jsonl"  # the format `harness search --tools` reads; the wanted tool second, not first
    tools.write_text('{"id": "files/read_file", "name": "read_file", "description": "Read a file.", '
                     '"input_schema": {"type": "object"}}\n'
                     '{"id": "chat/post_channel_message", "name": "post_channel_message", '
                     '"description": "Post a message to a team chat channel.", '
                     '"input_schema": {"type": "object", "properties": {"text": {"type": "string"}}}}\n')
    search = sh([str(cli), "search", "post a message to the team channel", "-k", "1", "--tools", str(tools)],
                cwd=elsewhere, env=env).stdout
    assert "post_channel_message" in search
    alone = subprocess.run([str(cli), "search", "post a message"], cwd=elsewhere, env=env, capture_output=True, text=True)
    assert alone.returncode == 2 and "comes with the workbook" in alone.stderr  # the demo world is not in the wheel


def test_the_wheel_holds_the_library_only(wheel):
    """No run logs, workbook data, demo world, stand-in, local model, experiments or research retrievers."""
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    files = [n for n in names if ".dist-info/" not in n]
    assert files and all(n.startswith("harness/") for n in files), [n for n in files if not n.startswith("harness/")]
    assert not [n for n in files if not n.endswith((".py", "py.typed"))], "only code in the library's wheel"
    for gone in ("harness/demo/", "harness/experiments/", "harness/data/", "harness/providers/offline.py",
                 "harness/providers/local_llama.py", "harness/workbook/", "harness/mcp/servers/"):
        assert not [n for n in files if n.startswith(gone)], gone


def test_the_workbook_installs_from_a_bundle_with_no_network(bundle, tmp_path):
    clone = tmp_path / "workbook"
    sh(["git", "clone", "-q", str(ROOT), str(clone)])
    env = offline_env(BUNDLE=str(bundle))
    sh(["bash", "scripts/setup.sh", "full"], cwd=clone, env=env)
    py = clone / ".venv" / "bin" / "python"
    sh([str(clone / ".venv" / "bin" / "jupyter"), "lab", "--version"], cwd=clone, env=env)
    sh([str(py), "-c", "import ipywidgets, matplotlib, nbval, mcp_server_git; "
        "from harness.retrieval.dense import dense_unavailable_reason as r; assert r() is None, r()"], cwd=clone, env=env)
    if (ROOT / "mcp_servers" / "node" / "node_modules").is_dir():  # npm was there when the bundle was made
        assert (clone / "mcp_servers" / "node" / "node_modules" / "@modelcontextprotocol" / "server-memory").is_dir()
    sh([str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_tokens.py", "tests/test_numpy_minilm.py"],
       cwd=clone, env=env)
