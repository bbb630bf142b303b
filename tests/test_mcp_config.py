"""The MCP config: the shape people write, and one exact sentence for each mistake."""
from __future__ import annotations

import json

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
     "mcpServers.git.type must be 'stdio' (the only transport this harness runs), got 'stdoi'."),
    ({"git": "mcp-server-git"}, "mcpServers.git must be an object with at least 'command', got str."),
    ({"gh": {"command": "x", "env": {"TOKEN": "${UNSET_FOR_TEST}"}}},
     "mcpServers.gh.env.TOKEN refers to ${UNSET_FOR_TEST}, which is not set in the environment."),
])
def test_each_mistake_gets_one_sentence_naming_server_and_field(servers, message):
    with pytest.raises(MCPConfigError) as err:
        load_config({"mcpServers": servers}, environ={})
    assert str(err.value) == message


def test_the_top_level_and_the_file_are_checked_too(tmp_path):
    cases = [
        ({"servers": {}}, "The MCP config needs a top-level object 'mcpServers' mapping names to servers, got null."),
        ("[1, 2]", "The MCP config needs a top-level object 'mcpServers' mapping names to servers, got list."),
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
