"""The core every chapter stands on: tools, messages, the registry, schema checks, tokens, text,
safety of shown text, places, and rates with their intervals.

Introduced in Chapter 0 (``notebooks/00_start_here.ipynb``). Imports nothing else of ``harness``.
"""
