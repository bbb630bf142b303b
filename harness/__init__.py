"""harness: the small tool-selection library this workbook builds, chapter by chapter, in folders by layer.

* Chapter 0 — ``core/`` (tools, registry, messages, tokens, text, rates) and ``providers/`` (the offline
  stand-in, Anthropic, the local model): :class:`Tool`, :func:`tool`, :class:`ToolRegistry`,
  :class:`Transcript`, :class:`ContextAccountant`, :func:`default_provider`, :class:`OfflineModel`.
* Chapter 1 — ``demo/`` (the demo tool world) and ``evaluation/`` (the tool cliff): :class:`DemoWorld`,
  :func:`demo_tools`, :func:`bootstrap_interval` and :func:`paired_difference_interval` for every rate.
* Chapter 2 — ``selection/``: the BM25 :class:`ToolCatalog`, the :class:`Ranker` contract, the :class:`Selector`.
* Chapter 3 — ``selection/``: queries from the transcript and the per-turn loop, :func:`arun`; ``demo/`` and
  ``evaluation/``: :func:`load_scenarios`, :func:`run_scenarios` (task success).
* Chapter 4 — ``selection/``: the pinned discovery tool and :class:`ToolSearch` behind a :class:`Deferral`.
* Chapter 5 — ``mcp/``: real MCP servers through :class:`MCPHub`, deferred loading, tool search.
* Chapter 6 — ``retrieval/`` and ``evaluation/``: :func:`make_retriever` (and :func:`maker` for a search),
  :func:`evaluate` on labelled data.
* Chapter 7 — ``mcp/proxy/``: ``harness serve``, the :class:`ToolProxy` with :func:`best_retriever`.
* Chapter 8 — ``retrieval/`` (zero-shot rankers) and ``experiments/`` (the drivers that write committed results).

``workbook/`` holds the exercises' graders and the notebooks' views. Each module's docstring names its chapter;
the README's "How the package is built" shows the layers. Every name here loads on first use (PEP 562), so
``import harness`` — which every ``python -m harness.…`` process, an MCP server's too, does first — costs nothing.
"""
from __future__ import annotations

import importlib
from typing import Any

#: Exported name -> the module that defines it.
_EXPORTS = {
    **dict.fromkeys(("Tool", "tool"), "harness.core.tools"),
    **dict.fromkeys(("ToolRegistry", "DuplicateToolError"), "harness.core.registry"),
    **dict.fromkeys(("Message", "TextBlock", "ToolCall", "ToolResult", "Transcript"), "harness.core.messages"),
    **dict.fromkeys(("ContextAccountant", "count_text", "tool_tokens", "tools_tokens"), "harness.core.tokens"),
    **dict.fromkeys(("bootstrap_interval", "paired_difference_interval"), "harness.core.rates"),
    **dict.fromkeys(("default_provider", "online"), "harness.providers.default"),
    "OfflineModel": "harness.providers.offline",
    "AnthropicProvider": "harness.providers.anthropic_provider",
    "DemoWorld": "harness.demo.world",
    "demo_tools": "harness.demo.toolset",
    "load_scenarios": "harness.demo.labels",
    "ToolCatalog": "harness.selection.catalog",
    **dict.fromkeys(("Ranker", "Selector"), "harness.selection.ranking"),
    **dict.fromkeys(("arun", "Deferral"), "harness.selection.agent"),
    "ToolSearch": "harness.selection.discovery",
    "MCPHub": "harness.mcp.client",
    **dict.fromkeys(("make_retriever", "maker"), "harness.retrieval.named"),
    "evaluate": "harness.evaluation.metrics",
    "run_scenarios": "harness.evaluation.scenarios",
    **dict.fromkeys(("ToolProxy", "best_retriever"), "harness.mcp.proxy.server"),
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:  # Any: lazily loads a module attribute; each has its own type
    if name not in _EXPORTS:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value  # the next lookup is an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
