"""harness: the small tool-selection library this workbook builds, chapter by chapter.

Chapter 0 introduces the core (tools, registry, messages, tokens, providers), Chapter 1 the
cliff sweep, Chapter 2 the BM25 catalog, Chapter 3 queries and the loop, Chapter 4 discovery,
Chapter 5 MCP, Chapter 6 evaluation and retrievers. Each module's docstring names its chapter.
"""
from harness.selection.catalog import ToolCatalog
from harness.core.messages import Message, TextBlock, ToolCall, ToolResult, Transcript
from harness.selection.ranking import Ranker, Selector
from harness.core.registry import DuplicateToolError, ToolRegistry
from harness.core.tokens import ContextAccountant, count_text, tool_tokens, tools_tokens
from harness.core.tools import Tool, tool

__all__ = [
    "ContextAccountant", "DuplicateToolError", "Message", "Ranker", "Selector", "TextBlock", "Tool", "ToolCall",
    "ToolCatalog", "ToolRegistry", "ToolResult", "Transcript", "count_text", "tool", "tool_tokens", "tools_tokens",
]
