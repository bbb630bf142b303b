"""The workbook's apparatus: what the chapters and exercises use beside the ``harness`` library, never in its wheel.

* :mod:`~workbook.demo` — the demo tool world the agents act in, its labelled queries and scenarios, and the
  judge of a run's effects (Chapters 0–1);
* :mod:`~workbook.providers` — the offline stand-in model, the real small models run by llama.cpp, and the
  default choice between them and Claude (Chapters 0–1);
* :mod:`~workbook.evaluation` — running and judging scenarios, the tool cliff, prompt caching, the scale curve,
  query time, the public catalogs as tools and their held-out sets (Chapters 1, 3, 5, 6, 8);
* :mod:`~workbook.research` — retrievers the chapters measure that the library does not ship; ``import
  workbook.research`` registers each with :func:`harness.retrieval.named.register` (Chapters 6, 8);
* :mod:`~workbook.servers` and :mod:`~workbook.landscape` — the demo world as MCP servers, and the real
  third-party servers of Chapter 5 in a sandbox;
* :mod:`~workbook.views`, :mod:`~workbook.evidence`, :mod:`~workbook.grading` — the notebooks' tables and
  widgets, their checked figures, and one grader per exercise.

The committed results the chapters show, and the drivers that write them, are in the top-level ``experiments``
package. ``make lab`` and ``make test`` put this checkout on the virtual environment's path
(``scripts/setup.sh``), so ``import workbook`` works from the notebooks.
"""
