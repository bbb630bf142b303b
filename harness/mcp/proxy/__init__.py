"""``harness serve``: the workbook's tool search as one MCP server in front of many, an agent
through it, and what it saves and costs.

Introduced in Chapter 7 (``notebooks/07_use_it_in_your_agent.ipynb``).
"""
