"""Choosing the tools of a turn: the BM25 catalog, the ranking contract and the Selector, queries
from the transcript, the agent loop and the pinned discovery tool.

Introduced in Chapters 2-4. Imports only ``harness.core`` and ``harness.providers``.
"""
