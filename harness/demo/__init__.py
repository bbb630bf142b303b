"""The demo tool world: working tools in everyday domains, acting on a sandbox, never the host.

Introduced in Chapter 1 (the tool cliff) and used by every chapter after it.

One module per domain builds that domain's tools for a given :class:`DemoWorld`; the tools
are closures over the world, so two worlds never share state and a fresh world is a fresh
start. The order of :func:`demo_tools` is stable (domain by domain, as in :data:`DOMAINS`),
so rankings and token counts are reproducible.
"""
from __future__ import annotations

from harness.demo import calendar, chat, data, files, git, issues, mail, notes, packages, testing, web
from harness.demo.labels import CONFUSABLE_PAIRS, LabelledQuery, Scenario, load_demo_queries, load_demo_scenarios
from harness.demo.world import DemoWorld
from harness.tools import Tool

_DOMAIN_MODULES = (files, git, testing, web, packages, notes, chat, issues, calendar, data, mail)
DOMAINS: list[str] = [m.DOMAIN for m in _DOMAIN_MODULES]


def demo_tools(world: DemoWorld | None = None) -> list[Tool]:
    """Every demo tool, bound to ``world`` (a fresh one when None), in a stable order."""
    world = world if world is not None else DemoWorld()
    return [t for m in _DOMAIN_MODULES for t in m.make_tools(world)]


__all__ = ["CONFUSABLE_PAIRS", "DOMAINS", "DemoWorld", "LabelledQuery", "Scenario", "demo_tools",
           "load_demo_queries", "load_demo_scenarios"]
