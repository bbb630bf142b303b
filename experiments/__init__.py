"""The ``python -m`` drivers that write the committed artefacts: the benchmark, tuning, the
zero-shot measurement and the embedders, the real-model sweeps and the README's verdict table.

Introduced in Chapters 1, 3-6 and 8. Nothing in ``harness`` imports them but the CLI.
"""
from importlib import resources

#: The committed results, beside the drivers that write them (each driver's module names its command).
DATA = resources.files("experiments").joinpath("data")

import workbook.research  # noqa: F401,E402  (the research retrievers, registered by name: every driver names them)
