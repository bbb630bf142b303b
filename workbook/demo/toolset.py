"""The demo tools themselves: every domain's tools bound to one world, in a stable order, and the world a tool acts on.

Introduced in Chapter 1 with the demo world; :mod:`workbook.demo` re-exports it. A module of its own so that
:mod:`workbook.demo.effects` (which names the domains an answer offers) imports it without a loop through the package.
"""
from __future__ import annotations

import weakref
from typing import Iterable

from harness.core.tools import Tool
from workbook.demo import calendar, chat, data, files, git, issues, mail, notes, packages, testing, web
from workbook.demo.world import DemoWorld

_DOMAIN_MODULES = (files, git, testing, web, packages, notes, chat, issues, calendar, data, mail)
DOMAINS: list[str] = [m.DOMAIN for m in _DOMAIN_MODULES]
#: Which world each demo tool's function acts on, so a judge can check that world's state afterwards.
_WORLD_OF: "weakref.WeakKeyDictionary[object, DemoWorld]" = weakref.WeakKeyDictionary()


def demo_tools(world: DemoWorld | None = None) -> list[Tool]:
    """Every demo tool, bound to ``world`` (a fresh one when None), in a stable order."""
    world = world if world is not None else DemoWorld()
    tools = [t for m in _DOMAIN_MODULES for t in m.make_tools(world)]
    for t in tools:
        _WORLD_OF[t.fn] = world
    return tools


def world_of(tools: Iterable[Tool]) -> DemoWorld | None:
    """The demo world these tools act on (the first demo tool's), or None when none is a demo tool."""
    for t in tools:
        try:
            return _WORLD_OF[t.fn]
        except (KeyError, TypeError):  # not a demo tool (TypeError: a function that takes no weak reference)
            continue
    return None
