"""Graders for the self-checking exercises in ``exercises/``: one module per exercise.

Introduced with the exercises (``exercises/*.ipynb``); each module's docstring names its exercise
and the chapter it follows.

Every grader has one entry point, ``check(...)``, that takes the learner's functions and values,
runs them, measures the reference numbers itself with the harness (never a stored answer), and
either raises ``AssertionError`` with one sentence saying specifically what is wrong or returns a
one-line ✓ verdict carrying the measured number. Graders whose measurement runs the async agent
loop are ``async`` (``await check(...)`` in a notebook cell, ``asyncio.run`` in a test).

* :mod:`~workbook.grading.degraded_descriptions` — exercise 1 (after Chapter 2)
* :mod:`~workbook.grading.tool_count_sweep` — exercise 2 (after Chapter 1)
* :mod:`~workbook.grading.tune_tools_per_turn` — exercise 3 (after Chapter 3)
* :mod:`~workbook.grading.design_must_include` — exercise 4 (after Chapter 4)
* :mod:`~workbook.grading.query_classifier` — exercise 5 (after Chapter 3)
* :mod:`~workbook.grading.name_collisions` — exercise 6 (after Chapter 5)
* :mod:`~workbook.grading.deferral_threshold` — exercise 7 (after Chapter 5)
* :mod:`~workbook.grading.fused_ranker` — exercise 8 (after Chapter 6)
* :mod:`~workbook.grading.question_expansion` — exercise 9 (after Chapter 8)
* :mod:`~workbook.grading.proxy_budget` — exercise 10 (after Chapter 7)

Shared by several: :mod:`~workbook.grading.learner` (calling the learner's code, the verdict) and
:mod:`~workbook.grading.pareto` (a fair check of a cost/benefit pick).
"""
