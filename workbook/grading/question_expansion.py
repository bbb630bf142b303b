"""Grader for exercise 9, document expansion with questions of your own (``exercises/09_question_expansion.ipynb``).

The exercise follows Chapter 8 (zero-shot retrieval): write rules that append to each tool the
questions a user might ask for it (:func:`workbook.research.expansion.expanded` takes any writer),
tune them on the demo world's development rows, and show on its test rows — which the learner's
choices never saw — that fielded BM25 over the expanded tools ranks the needed tool higher.

The bar is Chapter 8's way of calling a difference: a paired 95 % bootstrap interval of the per-query
difference in MRR, on the same test queries, whose lower end is above zero — against fielded BM25
over the tools expanded with nothing but their name in words (:func:`name_in_words`). That
zero-effort expansion already gains over the plain tools, so appending the name, or nothing, fails. It runs
on the demo world alone (it ships with the workbook), so it needs neither the public data nor the
embedding extra; Chapter 8's hybrid baseline and its public test sets are left to "Think further".

Two guards keep the measurement honest: the questions may not contain a labelled demo query (that
would be learning from the test), and Chapter 8's own writer is not an answer — neither as it is nor
inside the learner's function (:func:`~workbook.grading.learner.refuse_borrowed` reads the code).
"""
from __future__ import annotations

import statistics
from typing import Callable

from harness.evaluation.metrics import evaluate
from workbook.grading.learner import Passed, call, refuse_borrowed
from harness.core.rates import paired_difference_interval
from workbook.demo.labels import demo_dataset
from workbook.research.expansion import QuestionCache, expanded, rule_questions
from harness.retrieval.named import make_retriever
from harness.retrieval.records import CatalogTool
from harness.evaluation.splits import Split, development_split
from harness.core.text import split_identifier

BASELINE = "bm25-fielded"
METRIC = "MRR"
MAX_QUESTIONS = 8


def name_in_words(tool: CatalogTool) -> list[str]:
    """The zero-effort expansion to beat: the tool's name in words (``read_file`` → "read file")."""
    return [" ".join(split_identifier(tool.name))]


def split() -> tuple[list[CatalogTool], Split]:
    """The demo world's tools and its labelled queries split into development and test rows (Chapter 6's split)."""
    tools, queries = demo_dataset()
    return tools, development_split(queries)


def checked_writer(questions: Callable[[CatalogTool], object]) -> Callable[[CatalogTool], list[str]]:
    """``questions`` with its failures, wrong types and overlong lists reported in the grader's words."""
    def write(tool: CatalogTool) -> list[str]:
        got = call("my_questions", questions, tool)
        if not isinstance(got, (list, tuple)) or not all(isinstance(q, str) for q in got):
            raise AssertionError(f"my_questions({tool.name}) should return a list of question strings, got {got!r}.")
        if len(got) > MAX_QUESTIONS:
            raise AssertionError(f"my_questions({tool.name}) wrote {len(got)} questions; at most {MAX_QUESTIONS} a tool.")
        return list(got)
    return write


def scores(tools: list[CatalogTool], queries: list, writer: Callable[[CatalogTool], list[str]] | None) -> list[float]:
    """Per-query MRR of fielded BM25 over the tools expanded by ``writer`` (None: as they are)."""
    indexed = expanded(tools, writer, QuestionCache()) if writer else tools
    return evaluate(make_retriever(BASELINE, indexed), queries).values(METRIC)


def check_no_leak(tools: list[CatalogTool], write: Callable[[CatalogTool], list[str]], queries: list) -> None:
    """No question contains a labelled demo query: the rules must come from the tools, not the answers."""
    asked = {q.query.lower().rstrip(".?!") for q in queries}
    for tool in tools:
        for question in write(tool):
            text = question.lower()
            leaked = next((a for a in asked if a and a in text), None)
            if leaked:
                raise AssertionError(f"my_questions({tool.name}) writes {question!r}, which contains the labelled query "
                                     f"{leaked!r}: write questions from the tool's name, description and parameters.")


def check(my_questions: Callable[[CatalogTool], object]) -> Passed:
    """Grade exercise 9: your questions raise fielded BM25's MRR on the test rows by a separated paired interval."""
    refuse_borrowed("my_questions", my_questions, {rule_questions: "Chapter 8's own rule_questions"},
                    "write rules of your own (borrow its ideas, then add what your development rows show is missing).")
    tools, rows = split()
    write = checked_writer(my_questions)
    check_no_leak(tools, write, [*rows.development, *rows.test])
    if all(write(t) == rule_questions(t) for t in tools):
        raise AssertionError("my_questions writes exactly what Chapter 8's rule_questions does for every tool; "
                             "write rules of your own.")
    base, mine = scores(tools, rows.test, name_in_words), scores(tools, rows.test, write)
    low, high = paired_difference_interval(mine, base)
    gain = statistics.fmean(mine) - statistics.fmean(base)
    said = (f"{METRIC} on the {len(base)} test queries: {statistics.fmean(mine):.3f} with your questions against "
            f"{statistics.fmean(base):.3f} with the name in words alone, a paired difference of {gain:+.3f} "
            f"[{low:+.3f}, {high:+.3f}]")
    if low <= 0:
        raise AssertionError(f"{said}: the interval is not wholly above zero. Read the development queries your questions still "
                             "miss (the failures cell) and add the words users say for those tools.")
    return Passed(f"✓ {said}: better, by an interval wholly above zero.")
