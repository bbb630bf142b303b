"""The demo tool world: working tools in everyday domains, acting on a sandbox, never the host.

Introduced in Chapter 1 (the tool cliff) and used by every chapter after it.

One module per domain builds that domain's tools for a given :class:`DemoWorld`; the tools
are closures over the world, so two worlds never share state and a fresh world is a fresh
start. The order of :func:`demo_tools` is stable (domain by domain, as in :data:`DOMAINS`),
so rankings and token counts are reproducible.
"""
from __future__ import annotations

import weakref
from typing import Iterable

from harness.demo import calendar, chat, data, files, git, issues, mail, notes, packages, testing, web
from harness.demo.effects import failed_checks, world_state
from harness.demo.labels import (CONFUSABLE_PAIRS, SPLITS, LabelledQuery, Scenario, load_demo_queries,
                                 load_demo_scenarios, load_scenarios)
from harness.demo.world import DemoWorld
from harness.core.tools import Tool

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


__all__ = ["CONFUSABLE_PAIRS", "DOMAINS", "SPLITS", "DemoWorld", "LabelledQuery", "Scenario", "demo_tools",
           "failed_checks", "load_demo_queries", "load_demo_scenarios", "load_scenarios", "world_of", "world_state"]
