"""The MCP config: the shape people write, and one exact sentence for each mistake."""
from __future__ import annotations

import json
import re

import pytest

from harness.mcp.config import DEFAULT_CALL_TIMEOUT, DEFAULT_STARTUP_TIMEOUT, MCPConfigError, load_config

GOOD = {
    "mcpServers": {
        "git": {"command": "mcp-server-git", "args": ["--repository", "/tmp/repo"], "deferLoading": False,
                "disabledTools": ["git_reset"], "startupTimeout": 5, "callTimeout": 2.5},
        "github": {"command": "node", "args": ["index.js"], "env": {"GITHUB_TOKEN": "${TOKEN_FOR_TEST}", "MODE": "ro"}},
        "off": {"command": "whatever", "enabled": False},
    }
}


def test_a_good_config_loads_from_a_dict_a_json_string_and_a_file(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(GOOD))
    env = {"TOKEN_FOR_TEST": "s3cret"}
    configs = [load_config(GOOD, env), load_config(json.dumps(GOOD), env), load_config(path, env), load_config(str(path), env)]
    assert all(c == configs[0] for c in configs)
    git, github, off = configs[0].servers.values()
    assert git.args == ("--repository", "/tmp/repo") and git.defer_loading is False
    assert git.disabled_tools == frozenset({"git_reset"}) and (git.startup_timeout, git.call_timeout) == (5.0, 2.5)
    assert github.env == {"GITHUB_TOKEN": "s3cret", "MODE": "ro"} and github.defer_loading is None
    assert (github.startup_timeout, github.call_timeout) == (DEFAULT_STARTUP_TIMEOUT, DEFAULT_CALL_TIMEOUT)
    assert not off.enabled and [s.name for s in configs[0].enabled] == ["git", "github"]


@pytest.mark.parametrize("servers, message", [
    ({"git": {"command": "x", "args": "--repository /tmp"}}, "mcpServers.git.args must be a list of strings, got str."),
    ({"git": {"command": "x", "args": ["a", 3]}}, "mcpServers.git.args must be a list of strings, got a list with int."),
    ({"git": {"args": []}}, "mcpServers.git.command must be a non-empty string, got nothing."),
    ({"git": {"command": ""}}, "mcpServers.git.command must be a non-empty string, got str ''."),
    ({"git": {"comand": "x"}}, "mcpServers.git has an unknown field 'comand' (did you mean 'command'?)."),
    ({"git": {"command": "x", "deferLoading": "yes"}}, "mcpServers.git.deferLoading must be true or false, got str 'yes'."),
    ({"git": {"command": "x", "enabled": 1}}, "mcpServers.git.enabled must be true or false, got int 1."),
    ({"git": {"command": "x", "disabledTools": "git_reset"}},
     "mcpServers.git.disabledTools must be a list of strings, got str."),
    ({"git": {"command": "x", "startupTimeout": 0}}, "mcpServers.git.startupTimeout must be a positive number of seconds up to 86400, got 0."),
    ({"git": {"command": "x", "callTimeout": "30"}}, "mcpServers.git.callTimeout must be a positive number of seconds up to 86400, got '30'."),
    ({"git": {"command": "x", "env": ["A=1"]}}, "mcpServers.git.env must be an object of strings, got list."),
    ({"git": {"command": "x", "env": {"PORT": 8080}}}, "mcpServers.git.env.PORT must be a string, got int."),
    ({"git": {"command": "x", "cwd": 3}}, "mcpServers.git.cwd must be a string path, got int."),
    ({"git": {"command": "x", "type": "stdoi"}},
     "mcpServers.git.type must be one of 'stdio', 'http', 'streamable-http', 'streamableHttp', 'sse', got 'stdoi'."),
    ({"git": "mcp-server-git"}, "mcpServers.git must be an object with 'command' (stdio) or 'url' (http), got str."),
    ({"gh": {"command": "x", "env": {"TOKEN": "${UNSET_FOR_TEST}"}}},
     "mcpServers.gh.env.TOKEN refers to ${UNSET_FOR_TEST}, which is not set in the environment."),
    ({"gh": {"command": "x", "args": ["--token", "${input:token}"]}},
     "mcpServers.gh.args[1] uses VS Code's ${input:…}, which only the editor can ask for: "
     "put the value in an environment variable and write ${VAR}."),
    ({"r": {"type": "http"}}, "mcpServers.r.url must be an http:// or https:// address, got nothing."),
    ({"r": {"url": "ftp://example.test/mcp"}}, "mcpServers.r.url must be an http:// or https:// address, got 'ftp://example.test/mcp'."),
    ({"r": {"url": "http://example.test/mcp", "command": "x"}},
     "mcpServers.r has both 'command' and 'url': give it \"type\": \"stdio\" or \"http\"."),
    ({"r": {"type": "http", "url": "http://example.test/mcp", "env": {"A": "1"}}},
     "mcpServers.r.env does not apply to an http server (one with 'url')."),
    ({"r": {"command": "x", "headers": {"A": "1"}}}, "mcpServers.r.headers does not apply to a stdio server (one with 'command')."),
    ({"r": {"url": "http://example.test/mcp", "headers": {"X-Key": 1}}}, "mcpServers.r.headers.X-Key must be a string, got int."),
])
def test_each_mistake_gets_one_sentence_naming_server_and_field(servers, message):
    with pytest.raises(MCPConfigError) as err:
        load_config({"mcpServers": servers}, environ={})
    assert str(err.value) == message


def test_the_top_level_and_the_file_are_checked_too(tmp_path):
    cases = [
        ({"tools": {}}, "The MCP config needs 'mcpServers' (Claude Desktop, Claude Code, Cursor), 'servers' (VS Code's "
                        ".vscode/mcp.json) or [mcp_servers.NAME] tables in a .toml file (Codex); its top-level keys are 'tools'."),
        ("[1, 2]", "The MCP config must be an object with 'mcpServers' (Claude Desktop, Claude Code, Cursor), 'servers' "
                   "(VS Code's .vscode/mcp.json) or [mcp_servers.NAME] tables in a .toml file (Codex), got list."),
        ([1, 2], "The MCP config must be a dict, a JSON string or a path, got list."),
        ('{"mcpServers": []}', "The MCP config needs a top-level object 'mcpServers' mapping names to servers, got list."),
        ('{"mcpServers": {', "The MCP config is not valid JSON: Expecting property name enclosed in double quotes "
                             "at line 1 column 17."),
        (tmp_path / "absent.json", f"The MCP config file '{tmp_path / 'absent.json'}' does not exist."),
    ]
    for source, message in cases:
        with pytest.raises(MCPConfigError) as err:
            load_config(source, environ={})
        assert str(err.value) == message


def test_env_values_expand_from_the_given_environment_only():
    cfg = load_config({"mcpServers": {"s": {"command": "x", "env": {"URL": "https://${HOST}:${PORT}/api"}}}},
                      environ={"HOST": "example.test", "PORT": "8443"})
    assert cfg.servers["s"].env == {"URL": "https://example.test:8443/api"}


# --- issue 43: configs as clients write them -----------------------------------------------

def test_variables_and_defaults_expand_in_every_field_claude_code_expands():
    environ = {"BIN": "/opt/bin/server", "ROOT": "/srv", "TOKEN": "t0k3n-value", "EMPTY": ""}
    cfg = load_config({"mcpServers": {
        "local": {"command": "${BIN}", "args": ["--root", "${ROOT}/data", "--mode", "${MODE:-read-only}"],
                  "env": {"KEY": "${TOKEN}", "LEVEL": "${EMPTY:-info}", "HOME_DIR": "${NOPE:-}"}},
        "remote": {"type": "http", "url": "${HOST:-http://127.0.0.1:9}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
    }}, environ)
    local, remote = cfg.servers["local"], cfg.servers["remote"]
    assert local.command == "/opt/bin/server" and local.args == ("--root", "/srv/data", "--mode", "read-only")
    assert local.env == {"KEY": "t0k3n-value", "LEVEL": "info", "HOME_DIR": ""}  # an empty variable takes the default
    assert (remote.transport, remote.url, remote.headers) == ("http", "http://127.0.0.1:9/mcp", {"Authorization": "Bearer t0k3n-value"})
    for field, spec in [("command", {"command": "${NOPE}"}), ("args[0]", {"command": "x", "args": ["${NOPE}"]}),
                        ("url", {"url": "${NOPE}/mcp"}), ("headers.H", {"url": "http://h/mcp", "headers": {"H": "${NOPE}"}})]:
        with pytest.raises(MCPConfigError, match=rf"^mcpServers\.s\.{re.escape(field)} refers to \$\{{NOPE\}}"):
            load_config({"mcpServers": {"s": spec}}, environ)


@pytest.mark.parametrize("spec, transport", [
    ({"type": "http", "url": "https://example.test/mcp"}, "http"),
    ({"type": "streamable-http", "url": "https://example.test/mcp"}, "http"),
    ({"type": "streamableHttp", "url": "https://example.test/mcp"}, "http"),
    ({"type": "sse", "url": "https://example.test/events"}, "sse"),
    ({"url": "https://example.test/mcp"}, "http"),
    ({"url": "https://example.test/sse"}, "sse"),
])
def test_remote_servers_are_read_with_their_transport(spec, transport):
    server = load_config({"mcpServers": {"r": spec}}, {}).servers["r"]
    assert (server.transport, server.remote, server.enabled, server.command) == (transport, True, True, "")


def test_a_websocket_server_is_skipped_with_its_reason_and_the_rest_kept():
    cfg = load_config({"mcpServers": {"ws": {"type": "ws", "url": "ws://example.test"}, "local": {"command": "x"}}}, {})
    assert [s.name for s in cfg.enabled] == ["local"]
    assert cfg.servers["ws"].skipped == ("skipped: type 'ws' servers are not supported here; "
                                         "this harness runs stdio, streamable HTTP and SSE servers")


def test_claude_desktop_and_claude_code_files_load_as_written(tmp_path):
    desktop = tmp_path / "claude_desktop_config.json"
    desktop.write_text(json.dumps({"mcpServers": {"time": {"command": "mcp-server-time"}}, "globalShortcut": "Ctrl+Space"}))
    code = tmp_path / ".mcp.json"
    code.write_text(json.dumps({"mcpServers": {"api": {"type": "http", "url": "${API:-https://api.test}/mcp"}}}))
    assert load_config(desktop, {}).servers["time"].command == "mcp-server-time"
    assert load_config(code, {}).servers["api"].url == "https://api.test/mcp"


def test_vs_code_files_load_with_workspace_folder_and_env_variables(tmp_path):
    folder = tmp_path / "project"
    (folder / ".vscode").mkdir(parents=True)
    path = folder / ".vscode" / "mcp.json"
    path.write_text(json.dumps({
        "inputs": [{"type": "promptString", "id": "token", "description": "API token", "password": True}],
        "servers": {
            "files": {"type": "stdio", "command": "node", "args": ["${workspaceFolder}/server.js"],
                      "env": {"TOKEN": "${env:MY_TOKEN}"}, "dev": {"watch": "src/**/*.ts"}},
            "api": {"type": "http", "url": "https://api.test/mcp", "headers": {"Authorization": "Bearer ${env:MY_TOKEN}"}},
        }}))
    cfg = load_config(path, {"MY_TOKEN": "abc123"})
    assert cfg.servers["files"].args == (f"{folder}/server.js",) and cfg.servers["files"].env == {"TOKEN": "abc123"}
    assert cfg.servers["api"].headers == {"Authorization": "Bearer abc123"}
    settings = load_config({"mcp": {"servers": {"t": {"command": "mcp-server-time"}}}}, {})  # VS Code's settings.json
    assert settings.servers["t"].command == "mcp-server-time"
    path.write_text(json.dumps({"servers": {"s": {"command": "x", "envFile": "${workspaceFolder}/.env"}}}))
    with pytest.raises(MCPConfigError, match=r"^servers\.s\.envFile is not read by this proxy: put the variables in 'env'"):
        load_config(path, {})
    path.write_text(json.dumps({"servers": {"s": {"command": "x", "env": {"T": "${input:token}"}}}}))
    with pytest.raises(MCPConfigError, match=r"^mcpServers\.s\.env\.T uses VS Code's \$\{input:…\}"):
        load_config(path, {})


CODEX = '''
model = "o4-mini"

[mcp_servers.git]
command = "mcp-server-git"
args = ["--repository", "/srv/repo"]
env = { "GIT_AUTHOR" = "${AUTHOR:-me}" }
env_vars = ["PASSED", "ABSENT"]
startup_timeout_sec = 12
tool_timeout_sec = 30
disabled_tools = ["git_reset"]

[mcp_servers.docs]
url = "https://docs.test/mcp"
bearer_token_env_var = "DOCS_TOKEN"
http_headers = { "X-Team" = "tools" }
startup_timeout_ms = 5000
'''


def test_codex_toml_loads_key_by_key_and_refuses_what_it_cannot_honour(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text(CODEX)
    cfg = load_config(path, {"PASSED": "yes", "DOCS_TOKEN": "d0cs-secret"})
    git, docs = cfg.servers["git"], cfg.servers["docs"]
    assert git.args == ("--repository", "/srv/repo") and git.env == {"PASSED": "yes", "GIT_AUTHOR": "me"}
    assert (git.startup_timeout, git.call_timeout, git.disabled_tools) == (12.0, 30.0, frozenset({"git_reset"}))
    assert docs.transport == "http" and docs.startup_timeout == 5.0
    assert docs.headers == {"Authorization": "Bearer d0cs-secret", "X-Team": "tools"}
    path.write_text('[mcp_servers.git]\ncommand = "x"\nenabled_tools = ["git_status"]\n')
    with pytest.raises(MCPConfigError, match=r"^mcp_servers\.git\.enabled_tools \(an allow-list\) is not read by this proxy: "
                                             r"list the tools to leave out under disabled_tools instead\.$"):
        load_config(path, {})
    path.write_text('[mcp_servers.git]\ncommand = "x"\nsandbox = true\n')
    with pytest.raises(MCPConfigError, match=r"^mcp_servers\.git\.sandbox is not a setting this proxy reads \(it reads command, "):
        load_config(path, {})
    path.write_text('model = "o4-mini"\n')
    with pytest.raises(MCPConfigError, match=r"has no \[mcp_servers\.NAME\] tables \(Codex's format for MCP servers\)\.$"):
        load_config(path, {})
    path.write_text('[mcp_servers.git\n')
    with pytest.raises(MCPConfigError, match=r"is not valid TOML: "):
        load_config(path, {})
