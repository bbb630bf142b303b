"""The ``python -m`` drivers that write the committed artefacts: the benchmark, tuning, the
zero-shot measurement and the embedders, the real-model sweeps and the README's verdict table.

Introduced in Chapters 1, 3-6 and 8. Nothing in ``harness`` imports them but the CLI.
"""
