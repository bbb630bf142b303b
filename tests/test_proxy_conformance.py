"""The official MCP conformance suite against ``harness serve --http`` (issue 43).

``@modelcontextprotocol/conformance`` is pinned in mcp_servers/node (0.1.13, the newest that starts on
Node 20) and tests servers over HTTP. Its server scenarios call fixtures by fixed names
(``test_simple_text``, ``test://static-text``, ``test_simple_prompt``…); behind the proxy sits a server
with exactly those fixtures (tests/mcp_fixtures/conformance_server.py), so each scenario checks what
the proxy passes on. Every scenario for a capability the proxy declares must pass; the others are
listed below with the reason, and a scenario in neither list (a new suite version) fails the test.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from proxy_http_support import served
from workbook.landscape import default_node_dir

pytestmark = pytest.mark.mcp
FIXTURES = Path(__file__).parent / "mcp_fixtures" / "conformance_server.py"

#: The proxy declares tools (listChanged), resources and prompts; these scenarios test them or the transport.
APPLICABLE = (
    "server-initialize", "ping", "tools-list", "tools-call-simple-text", "tools-call-image", "tools-call-audio",
    "tools-call-embedded-resource", "tools-call-mixed-content", "tools-call-error", "tools-call-with-progress",
    "server-sse-multiple-streams", "resources-list", "resources-read-text", "resources-read-binary",
    "resources-templates-read", "prompts-list", "prompts-get-simple", "prompts-get-with-args",
    "prompts-get-embedded-resource", "prompts-get-with-image", "dns-rebinding-protection",
)
_NO_LOGGING = ("the proxy declares no logging capability: it does not pass upstream log messages on "
               "(and SEP-2577 deprecates the capability)")
_NO_CLIENT_REQUESTS = ("the fixture tool asks the client for {what} in the middle of a call; the proxy does not relay "
                       "requests from its upstream servers to its clients and declares no {what} capability to them")
NOT_APPLICABLE = {
    "logging-set-level": _NO_LOGGING,
    "tools-call-with-logging": _NO_LOGGING,
    "completion-complete": "the proxy declares no completions capability (argument completion is not passed on)",
    "resources-subscribe": "the proxy declares resources without subscribe: upstream resource updates are not passed on",
    "resources-unsubscribe": "the proxy declares resources without subscribe: upstream resource updates are not passed on",
    "tools-call-sampling": _NO_CLIENT_REQUESTS.format(what="sampling"),
    "tools-call-elicitation": _NO_CLIENT_REQUESTS.format(what="elicitation"),
    "elicitation-sep1034-defaults": _NO_CLIENT_REQUESTS.format(what="elicitation"),
    "elicitation-sep1330-enums": _NO_CLIENT_REQUESTS.format(what="elicitation"),
}


def test_the_readme_counts_the_scenarios_this_test_holds():
    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8").split())
    assert f"the {len(APPLICABLE)} scenarios for what it declares pass, and the {len(NOT_APPLICABLE)} for what it does not" in readme


def suite() -> Path | None:
    folder = default_node_dir()
    cli = folder / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js" if folder else None
    return cli if cli and cli.is_file() else None


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed, so the conformance suite cannot run")
@pytest.mark.skipif(suite() is None, reason="@modelcontextprotocol/conformance is not installed (make test installs "
                                            "mcp_servers/node's pinned packages)")
def test_every_scenario_for_a_declared_capability_passes(tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"fixtures": {"command": sys.executable, "args": [str(FIXTURES)]}}}))
    with served(config, "--retriever", "bm25-fielded") as proxy:
        done = subprocess.run(["node", str(suite()), "server", "--url", proxy.url, "-o", str(tmp_path / "out")],
                              capture_output=True, text=True, timeout=600)
    checks: dict[str, list[dict]] = {}
    for result in (tmp_path / "out").glob("server-*/checks.json"):
        scenario = result.parent.name.removeprefix("server-").rsplit("-", 6)[0]  # the folder ends in a timestamp: 2026-12-07T19-41-43-542Z
        checks[scenario] = json.loads(result.read_text())
    assert set(checks) == set(APPLICABLE) | set(NOT_APPLICABLE), (
        f"the suite ran other scenarios than this test knows: {sorted(set(checks) ^ (set(APPLICABLE) | set(NOT_APPLICABLE)))}\n"
        f"{done.stdout[-3000:]}")
    failed = {name: [c.get("errorMessage") for c in checks[name] if c["status"] not in ("SUCCESS", "INFO")]
              for name in APPLICABLE}
    assert not any(failed.values()), {k: v for k, v in failed.items() if v}
    assert all(checks[name] for name in APPLICABLE)  # each ran at least one check
    assert "Invalid Host header: evil.example.com" in proxy.stderr  # the DNS-rebinding request was refused, and said so
