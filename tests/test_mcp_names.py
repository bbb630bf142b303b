"""Canonical MCP tool names: sanitised, at most 64 characters, collision-proof and order-independent."""
from __future__ import annotations

import hashlib
import itertools
import random
import re

import pytest

from harness.mcp.names import MAX_NAME_LENGTH, NameTable, base_name, identity_hash

VALID = re.compile(r"[A-Za-z0-9_]{1,64}")


def sha1_12(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def test_plain_names_are_namespaced_and_sanitised():
    table = NameTable([("git", "git_status"), ("my.server", "list-files"), ("café", "ß")])
    assert table.name("git", "git_status") == "mcp__git__git_status"
    assert table.name("my.server", "list-files") == "mcp__my_server__list_files"
    assert table.name("café", "ß") == "mcp__caf____"  # é and ß become _
    assert all(VALID.fullmatch(n) for n in table)


def test_the_same_tool_name_on_two_servers_needs_no_suffix():
    table = NameTable([("filesystem", "read_file"), ("misbehave", "read_file")])
    assert set(table) == {"mcp__filesystem__read_file", "mcp__misbehave__read_file"}


def test_identities_that_sanitise_alike_both_get_the_sha1_suffix_of_their_raw_identity():
    table = NameTable([("example-server", "read_file"), ("example_server", "read_file"), ("other", "read_file")])
    dash, underscore = table.name("example-server", "read_file"), table.name("example_server", "read_file")
    assert dash == f"mcp__example_server__read_file_{sha1_12('example-server/read_file')}"
    assert underscore == f"mcp__example_server__read_file_{sha1_12('example_server/read_file')}"
    assert table.name("other", "read_file") == "mcp__other__read_file"  # no collision, no suffix
    assert table.identity(dash) == ("example-server", "read_file")
    assert table.identity(underscore) == ("example_server", "read_file")


def test_over_long_names_are_cut_and_suffixed_and_stay_unique():
    long_tool = "summarize_the_quarterly_revenue_report_for_the_board_" + "x" * 20
    table = NameTable([("finance", long_tool), ("finance", long_tool + "y")])
    names = list(table)
    assert len(base_name("finance", long_tool)) > MAX_NAME_LENGTH
    assert all(len(n) == MAX_NAME_LENGTH and VALID.fullmatch(n) for n in names) and len(set(names)) == 2
    assert table.name("finance", long_tool).endswith("_" + identity_hash("finance", long_tool))


def test_names_do_not_depend_on_the_order_servers_answered_in():
    identities = [("example-server", "read_file"), ("example_server", "read_file"), ("a-b", "c"), ("a_b", "c"),
                  ("git", "git_log"), ("filesystem", "read_file"), ("x", "y" * 80)]
    expected = NameTable(identities).items()
    shuffles = [list(p) for p in itertools.islice(itertools.permutations(identities), 0, 5040, 97)]
    random.Random(7).shuffle(identities)
    for order in [*shuffles, identities]:
        assert sorted(NameTable(order).items()) == sorted(expected)


def test_unknown_names_raise_a_clear_key_error():
    table = NameTable([("git", "git_log")])
    with pytest.raises(KeyError, match="No MCP tool 'git_push' on server 'git'"):
        table.name("git", "git_push")
    with pytest.raises(KeyError, match="No MCP tool is called 'mcp__git__git_push'"):
        table.identity("mcp__git__git_push")
