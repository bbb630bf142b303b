"""harness: a small tool-selection library — the one the workbook builds, chapter by chapter — for your own agents.

* ``core/`` — tools, the registry, messages, tokens, text, rates: :class:`Tool`, :func:`tool`, :class:`ToolRegistry`,
  :class:`Transcript`, :class:`ContextAccountant`, :func:`bootstrap_interval` (Chapter 0).
* ``selection/`` — Chapter 2's BM25 :class:`ToolCatalog`, the :class:`Ranker` contract and the :class:`Selector`;
  Chapter 3's queries from the transcript and the per-turn loop, :func:`arun`; Chapter 4's :class:`ToolSearch`
  (``search_tools``), put into the loop by :meth:`ToolSearch.deferral`.
* ``retrieval/`` — the retrievers a user would pick, by name: :func:`make_retriever`, :func:`maker` (Chapter 6a).
* ``evaluation/`` — retrieval metrics on labelled data, :func:`evaluate` (Chapter 6a).
* ``mcp/`` — real MCP servers through :class:`MCPHub`, deferred loading, tool search (Chapter 5); ``mcp/proxy/`` —
  ``harness serve``, the :class:`ToolProxy` (Chapter 7).
* ``providers/`` — Claude (:class:`AnthropicProvider`), any OpenAI-compatible chat endpoint
  (:class:`OpenAICompatProvider`: Ollama, LM Studio, vLLM, llama-server, OpenAI) and a scripted model for tests.

The workbook's apparatus (the demo world, the offline stand-in, the real small models, scenario runs, views,
graders, research retrievers) is the ``workbook`` package beside this one, and the experiments that wrote the
committed figures are ``experiments``; neither is in the library's wheel. Each module's docstring names its
chapter; the README's "How the package is built" shows the layers. Every name here loads on first use
(PEP 562), so ``import harness`` — which every ``python -m harness.…`` process does first — costs nothing.
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
    "AnthropicProvider": "harness.providers.anthropic_provider",
    "OpenAICompatProvider": "harness.providers.openai_compat",
    "ToolCatalog": "harness.selection.catalog",
    **dict.fromkeys(("Ranker", "Selector"), "harness.selection.ranking"),
    "arun": "harness.selection.agent",
    **dict.fromkeys(("ToolSearch", "Deferral"), "harness.selection.discovery"),
    "MCPHub": "harness.mcp.client",
    **dict.fromkeys(("make_retriever", "maker", "register"), "harness.retrieval.named"),
    "evaluate": "harness.evaluation.metrics",
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
