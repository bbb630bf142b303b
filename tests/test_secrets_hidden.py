"""No secret an upstream server was given reaches what the hub and the proxy show (issue 40, leaks): not a token
it prints on stdout during a call (error result, status, the proxy's stderr), not a token passed in its ``args``,
not the password of a DSN without a scheme, not a value inside a base64 Basic-auth header."""
from __future__ import annotations

import base64
import json

import pytest

from conftest import run
from harness.core.redaction import hide_values, secrets_in_args
from harness.mcp.client import MCPHub
from harness.mcp.proxy.server import ToolProxy, proxy_policy
from test_proxy_hardening import RawProxy, write_config
from workbook.servers import server_entry

TOKEN = "tok-9f8e7d6c5b4a3210zz"
LISTING = json.dumps([{"name": "fetch_page", "description": "Fetch a page.", "inputSchema": {"type": "object", "properties": {}}}])


def pieces(secret: str, size: int = 8) -> list[str]:
    return [secret[i:i + size] for i in range(len(secret) - size + 1)]


def shows_none_of(text: str, secret: str) -> bool:
    return not any(p in text for p in pieces(secret))


def test_a_dsn_without_a_scheme_shows_no_password():
    shown = hide_values("could not connect to admin:Sup3rPw@db.internal:5432/app (timeout)", [])
    assert "Sup3rPw" not in shown and "db.internal:5432/app" in shown
    assert hide_values("mail git@github.com:org/repo.git at 10:30", []) == "mail git@github.com:org/repo.git at 10:30"


def test_a_value_inside_a_base64_basic_auth_header_is_hidden():
    secret = "s3cr3t-Passw0rd"
    for user in ("ana", "al", "bobby"):  # the value starts at each of base64's three offsets
        header = "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()
        shown = hide_values(f"sent Authorization: {header} and got 401", [secret])
        assert header.split()[1] not in shown and "got 401" in shown, shown
    other = base64.b64encode(b"nothing to see here at all").decode()
    assert hide_values(f"etag {other}", [secret]) == f"etag {other}"


def test_secret_arguments_are_found_by_flag_name_value_and_shape():
    args = ["--repository", "/srv/repo", "--token", "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "--api-key=abc123def456",
            "PASSWORD=hunter2hunter2", "postgresql://ana:pw123456@db/x", "admin:Sup3rPw@db.internal/app",
            "mcp-server-postgres-2024", "tok-9f8e7d6c5b4a3210zz", "--verbose"]
    found = secrets_in_args(args)
    assert set(found) >= {"ghp_16C7e42F292c6912E7710c838347Ae178B4a", "abc123def456", "hunter2hunter2", "pw123456",
                          "Sup3rPw", "tok-9f8e7d6c5b4a3210zz"}
    assert not {"/srv/repo", "--repository", "mcp-server-postgres-2024", "--verbose"} & set(found)


@pytest.mark.mcp
def test_a_token_printed_on_stdout_during_a_call_is_never_quoted(tmp_path):
    servers = {"leaky": server_entry("faulty", "raw", "--listing", LISTING, "--reply", "leak", env={"TOKEN": "${LEAKY}"})}

    async def session_run():
        async with MCPHub({"mcpServers": servers}, log_dir=tmp_path / "logs", policy=proxy_policy(),
                          environ={"LEAKY": TOKEN}) as hub:
            proxy = ToolProxy(hub, retriever="bm25-fielded")
            via_proxy, is_error = await proxy.call_tool("leaky__fetch_page", {})
            direct = await hub.call_tool("mcp__leaky__fetch_page", {})
            return via_proxy, is_error, direct, json.dumps(proxy.status())

    via_proxy, is_error, direct, status = run(session_run())
    assert is_error and direct.is_error and "auth failed with token ***" in via_proxy
    for shown in (via_proxy, direct.content, status):
        assert shows_none_of(shown, TOKEN), shown


@pytest.mark.mcp
def test_the_proxy_s_stderr_never_quotes_what_an_upstream_printed_on_stdout(tmp_path):
    config = write_config(tmp_path, {"leaky": server_entry("faulty", "raw", "--listing", LISTING, "--reply", "leak",
                                                           env={"TOKEN": TOKEN})})
    proxy = RawProxy(config, tmp_path / "proxy.log")
    try:
        proxy.handshake()
        proxy.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                    "params": {"name": "call_tool", "arguments": {"name": "leaky__fetch_page"}}})
        reply = proxy.reply(3, 30)
        assert reply and reply["result"]["isError"]
        assert shows_none_of(json.dumps(reply), TOKEN)
    finally:
        proxy.close()
    assert shows_none_of((tmp_path / "proxy.log").read_text(), TOKEN)  # no 8 characters of it, its 13-character tail included


@pytest.mark.mcp
def test_the_status_hides_tokens_in_args_dsn_passwords_and_basic_auth(tmp_path):
    secret = "Sup3rPw-77aa"
    basic = base64.b64encode(f"admin:{secret}".encode()).decode()
    says = 'echo "refused $1 $2; tried admin:Sup3rPw-77aa@db.internal/app with Authorization: Basic $3" >&2; exit 1'
    config = {"mcpServers": {
        "db": {"command": "sh", "args": ["-c", says, "sh", "--token", "ghp_16C7e42F292c6912E7710c838347Ae178B4a", basic]},
        "env": {"command": "sh", "args": ["-c", f'echo "header Basic {basic}" >&2; exit 1'], "env": {"DB_PASSWORD": secret}},
    }}

    async def session_run():
        async with MCPHub(config, log_dir=tmp_path / "logs", policy=proxy_policy()) as hub:
            return json.dumps(ToolProxy(hub, retriever="bm25-fielded").status())

    status = run(session_run())
    assert "refused --token" in status and "db.internal/app" in status and "header Basic" in status
    for secret_text in ("ghp_16C7e42F292c6912E7710c838347Ae178B4a", secret, basic):
        assert shows_none_of(status, secret_text), (secret_text, status)
