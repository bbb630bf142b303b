"""One canonical callable name per MCP tool, and the table that routes it back.

Introduced in Chapter 5 (MCP integration).

Servers reuse tool names (``read_file``, ``fetch``, ``list_tables``), and model APIs accept only
``[A-Za-z0-9_-]{1,64}``. So every tool is called ``mcp__{server}__{tool}``, sanitised to
``[A-Za-z0-9_]`` and cut to 64 characters — Codex CLI's and Claude Code's convention. Two raw
identities that sanitise to one name (servers ``example-server`` and ``example_server``), and names
over 64 characters, get ``_`` plus the first 12 hex digits of the SHA-1 of the raw ``server/tool``.

The table is built from the *set* of identities at once, never tool by tool as servers answer: a
name then depends only on which tools exist, not on which server happened to reply first.

Only a crafted raw name can land exactly on another tool's hashed name (``t_87550abe05fb``). The
hashed name is kept — it is provably that tool's — and the crafted tool alone is left out, listed
in :attr:`NameTable.skipped` with the reason: one hostile tool cannot take a session down.
"""
from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from typing import Iterable, Iterator

MAX_NAME_LENGTH = 64
HASH_LENGTH = 12
_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def sanitize(text: str) -> str:
    """Every character outside ``[A-Za-z0-9_]`` becomes ``_``."""
    return _UNSAFE.sub("_", text)


def base_name(server: str, tool: str) -> str:
    """``mcp__{server}__{tool}`` sanitised, before any collision or length handling."""
    return sanitize(f"mcp__{server}__{tool}")


def identity_hash(server: str, tool: str) -> str:
    """The first 12 hex digits of the SHA-1 of the raw identity ``server/tool``."""
    return hashlib.sha1(f"{server}/{tool}".encode("utf-8")).hexdigest()[:HASH_LENGTH]


def hashed_name(server: str, tool: str) -> str:
    """The base name cut to fit, plus ``_`` and the identity hash: unique and at most 64 characters."""
    keep = MAX_NAME_LENGTH - HASH_LENGTH - 1
    return f"{base_name(server, tool)[:keep]}_{identity_hash(server, tool)}"


class NameTable:
    """Canonical name ↔ raw (server, tool), for every tool of a session."""

    def __init__(self, identities: Iterable[tuple[str, str]]) -> None:
        by_base: dict[str, set[tuple[str, str]]] = defaultdict(set)
        for server, tool in identities:
            by_base[base_name(server, tool)].add((server, tool))
        self._to_identity: dict[str, tuple[str, str]] = {}
        self._to_name: dict[tuple[str, str], str] = {}
        self.skipped: dict[tuple[str, str], str] = {}  # (server, tool) -> why it has no name
        hashed, plain = [], []
        for base in sorted(by_base):
            group = by_base[base]
            for identity in sorted(group):
                if len(group) > 1 or len(base) > MAX_NAME_LENGTH:
                    hashed.append((hashed_name(*identity), identity))
                else:
                    plain.append((base, identity))
        for name, identity in hashed + plain:  # hashed names first: they are provably their tool's
            self._add(name, identity)

    def _add(self, name: str, identity: tuple[str, str]) -> None:
        if name in self._to_identity:  # only a crafted tool name can land on another's hashed name
            other = self._to_identity[name]
            self.skipped[identity] = f"its name {name!r} is already the name of {other[0]}/{other[1]}"
            return
        self._to_identity[name] = identity
        self._to_name[identity] = name

    def name(self, server: str, tool: str) -> str:
        """The canonical name of raw tool ``tool`` on ``server``."""
        try:
            return self._to_name[(server, tool)]
        except KeyError:
            raise KeyError(f"No MCP tool '{tool}' on server '{server}' in this session.") from None

    def identity(self, name: str) -> tuple[str, str]:
        """The raw (server, tool) behind a canonical name."""
        try:
            return self._to_identity[name]
        except KeyError:
            raise KeyError(f"No MCP tool is called {name!r} in this session.") from None

    def __contains__(self, name: object) -> bool:
        return name in self._to_identity

    def __iter__(self) -> Iterator[str]:
        return iter(self._to_identity)

    def __len__(self) -> int:
        return len(self._to_identity)

    def items(self) -> list[tuple[str, tuple[str, str]]]:
        return list(self._to_identity.items())
