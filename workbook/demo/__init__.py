"""The demo tool world: working tools in everyday domains, acting on a sandbox, never the host.

Introduced in Chapter 1 (the tool cliff) and used by every chapter after it.

One module per domain builds that domain's tools for a given :class:`DemoWorld`; the tools
are closures over the world, so two worlds never share state and a fresh world is a fresh
start. The order of :func:`demo_tools` is stable (domain by domain, as in :data:`DOMAINS`),
so rankings and token counts are reproducible.
"""
from __future__ import annotations

from workbook.demo.effects import failed_checks, world_state
from workbook.demo.labels import (CONFUSABLE_PAIRS, SPLITS, LabelledQuery, Scenario, load_demo_queries,
                                 load_demo_scenarios, load_scenarios)
from workbook.demo.toolset import DOMAINS, demo_tools, world_of
from workbook.demo.world import DemoWorld


__all__ = ["CONFUSABLE_PAIRS", "DOMAINS", "SPLITS", "DemoWorld", "LabelledQuery", "Scenario", "demo_tools",
           "failed_checks", "load_demo_queries", "load_demo_scenarios", "load_scenarios", "world_of", "world_state"]
