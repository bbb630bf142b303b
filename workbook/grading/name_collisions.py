"""Grader for exercise 6, MCP tool-name collisions (``exercises/06_name_collisions.ipynb``).

The exercise follows Chapter 5 (MCP integration): the learner writes
``canonical_name(server, tool, all_identities)``, the callable name a harness gives the tool
``tool`` of MCP server ``server`` when the session holds ``all_identities``. The grader holds it
to what a model API and a harness need, one property at a time, on identities that break naive
schemes: two servers that both expose ``read_file``, two server names that sanitise alike
(``example-server`` and ``example_server``), names too long for 64 characters, and characters a
model API refuses. The scheme is the learner's to write: the package's own (:mod:`harness.mcp.names`, the
``NameTable`` every hub keeps) is refused. Then it compares the names with ``NameTable``'s.
"""
from __future__ import annotations

import random
import re
from typing import Callable, Sequence

from harness.mcp import names as package_names
from workbook.grading.learner import Passed, call, refuse_borrowed
from harness.mcp.names import MAX_NAME_LENGTH, NameTable, sanitize

Identity = tuple[str, str]

#: (server, tool) pairs as MCP servers really name them, collisions included.
IDENTITIES: list[Identity] = [
    ("filesystem", "read_file"),
    ("workspace", "read_file"),
    ("filesystem", "list_directory"),
    ("example-server", "fetch"),
    ("example_server", "fetch"),
    ("fetch", "fetch"),
    ("notion", "API-retrieve-a-page"),
    ("github", "create_or_update_file"),
    ("acme-enterprise-document-management-platform", "create_or_update_document_with_attachments"),
    ("acme-enterprise-document-management-platform", "create_or_update_document_with_attachments_v2"),
    ("météo", "prévision.du.jour"),
    ("sqlite", "list_tables"),
    ("mongodb", "list_tables"),
]
#: A server added later that collides with nothing already there.
NEWCOMER: Identity = ("calendar", "create_event")
_SAFE = re.compile(r"[A-Za-z0-9_]+")
#: The package's naming scheme, which the learner's canonical_name may not use.
PACKAGE_NAMING: dict[object, str] = {
    NameTable: "harness.mcp.names.NameTable", package_names.sanitize: "harness.mcp.names.sanitize",
    package_names.base_name: "harness.mcp.names.base_name", package_names.identity_hash: "harness.mcp.names.identity_hash",
    package_names.hashed_name: "harness.mcp.names.hashed_name"}


def names_for(canonical_name: Callable[..., object], identities: Sequence[Identity]) -> dict[Identity, str]:
    """The learner's name for every identity, given the whole (ordered) list."""
    out = {}
    for server, tool in identities:
        name = call("canonical_name", canonical_name, server, tool, list(identities))
        if not isinstance(name, str):
            raise AssertionError(f"canonical_name({server!r}, {tool!r}, …) returned {type(name).__name__}; return the name as a str.")
        out[(server, tool)] = name
    return out


def check_names(names: dict[Identity, str]) -> None:
    """Safe characters, at most 64 of them, one identity per name, the tool's own name visible when there is room."""
    for (server, tool), name in names.items():
        if not _SAFE.fullmatch(name):
            bad = sorted(set(re.sub(r"[A-Za-z0-9_]", "", name))) or ["(empty)"]
            raise AssertionError(f"{name!r} (for {server}/{tool}) has characters outside [A-Za-z0-9_]: {' '.join(map(repr, bad))}.")
        if len(name) > MAX_NAME_LENGTH:
            raise AssertionError(f"{name!r} (for {server}/{tool}) is {len(name)} characters long; the limit is {MAX_NAME_LENGTH}.")
    owners: dict[str, Identity] = {}
    for identity, name in names.items():
        if name in owners:
            a, b = owners[name], identity
            raise AssertionError(f"{name!r} names both {a[0]}/{a[1]} and {b[0]}/{b[1]}: a call could not be routed back.")
        owners[name] = identity
    for (server, tool), name in names.items():
        if len(f"mcp__{sanitize(server)}__{sanitize(tool)}") <= MAX_NAME_LENGTH and sanitize(tool) not in name:
            raise AssertionError(f"{name!r} (for {server}/{tool}) does not show the tool's own name {sanitize(tool)!r}, "
                                 "though there is room: a model reading it (and a person reading a log) should see it.")


def check_stable(canonical_name: Callable[..., object], names: dict[Identity, str]) -> int:
    """The same names whatever order the servers answered in, and none changed by an unrelated newcomer."""
    orders = [list(reversed(IDENTITIES))] + [random.Random(seed).sample(IDENTITIES, len(IDENTITIES)) for seed in range(3)]
    for order in orders:
        for identity, name in names_for(canonical_name, order).items():
            if name != names[identity]:
                raise AssertionError(f"canonical_name({identity[0]!r}, {identity[1]!r}, …) gives {names[identity]!r} for one "
                                     f"order of the identities and {name!r} for another: names must not depend on the order.")
    grown = names_for(canonical_name, IDENTITIES + [NEWCOMER])
    for identity in IDENTITIES:
        if grown[identity] != names[identity]:
            raise AssertionError(f"Adding {NEWCOMER[0]}/{NEWCOMER[1]}, which collides with nothing, renamed "
                                 f"{identity[0]}/{identity[1]} from {names[identity]!r} to {grown[identity]!r}.")
    return len(orders) + 1


def check(canonical_name: Callable[..., object]) -> Passed:
    """Grade exercise 6: unique, safe, ≤ 64 characters, stable, routable names; compared with NameTable."""
    refuse_borrowed("canonical_name", canonical_name, PACKAGE_NAMING,
                    "write the scheme yourself (sanitise, detect collisions from the whole set, add a stable suffix).")
    names = names_for(canonical_name, IDENTITIES)
    check_names(names)
    orders = check_stable(canonical_name, names)
    table = NameTable(IDENTITIES)
    same = sum(table.name(*identity) == name for identity, name in names.items())
    return Passed(f"✓ {len(names)} identities get unique names of [A-Za-z0-9_], at most {max(map(len, names.values()))} "
                  f"characters, unchanged across {orders} orderings and a newcomer, each routing back to its server and "
                  f"tool; {same} of {len(names)} equal harness.mcp.names.NameTable's.")
