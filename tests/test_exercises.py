"""The exercises check themselves: every grader fails on the untouched starter, passes on the solution, and
refuses the package's own implementation and the chapter's one-liner.

The learner's code is taken from the notebooks themselves: the code cells marked ``# YOUR CODE HERE``
are executed in order in one namespace (seeded with the few values a given cell computes before
them), and that namespace's functions and answers go to the exercise's grader — the same call the
notebook's grader cell makes. So a test here fails when a notebook and its grader drift apart.
Each grader also gets the shortcuts a learner could take instead of writing the idea (the package's
implementation, the chapter's one-liner: ``SHORTCUTS``) and wrong answers of the kinds learners write,
and must refuse them in a sentence that says what is wrong without giving the answer away.
Structure, committed outputs and stated times are checked statically; nbval (``make test``) runs the notebooks.
"""
from __future__ import annotations

import asyncio
import dataclasses
import re
from pathlib import Path

import nbformat
import pytest

from harness.evaluation.metrics import evaluate
from harness.mcp.names import NameTable, sanitize
from harness.retrieval.hybrid import HybridRetriever, rrf as reference_rrf
from harness.selection.catalog import ToolCatalog
from harness.selection.discovery import DEFAULT_LIMIT, ToolSearch, discovery_tool
from harness.selection.queries import query_from_user_message
from harness.selection.ranking import DEFAULT_K
from workbook.demo import demo_tools, load_demo_queries
from workbook.evaluation.cliff import first_separated_drop
from workbook.research.expansion import rule_questions
from workbook.views.reading_time import measured_seconds, within
from workbook.grading import (deferral_threshold, degraded_descriptions, design_must_include, fused_ranker,
                             name_collisions, proxy_budget, query_classifier, question_expansion, tool_count_sweep,
                             tune_tools_per_turn)
from workbook.grading.learner import Passed, call
from workbook.grading.pareto import Point, beats, dominator, front
from harness.retrieval.dense import Encoder
from harness.retrieval.named import make_retriever

ROOT = Path(__file__).resolve().parents[1]
STARTERS = sorted((ROOT / "exercises").glob("[0-9][0-9]_*.ipynb"))
MARKER = "# YOUR CODE HERE"
RAISES = "# NBVAL_RAISES_EXCEPTION"
GRADERS = {
    "01_degraded_descriptions": "degraded_descriptions", "02_tool_count_sweep": "tool_count_sweep",
    "03_tune_tools_per_turn": "tune_tools_per_turn", "04_design_must_include": "design_must_include",
    "05_query_classifier": "query_classifier", "06_name_collisions": "name_collisions",
    "07_deferral_threshold": "deferral_threshold", "08_fused_ranker": "fused_ranker",
    "09_question_expansion": "question_expansion", "10_proxy_budget": "proxy_budget",
}


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(str(path), as_version=4)


def solution_of(starter: Path) -> Path:
    return starter.parent / "solutions" / starter.name


def learner_sources(path: Path) -> list[str]:
    return [c.source for c in read(path).cells if c.cell_type == "code" and MARKER in c.source]


def learner_namespace(path: Path, cells: slice = slice(None), namespace: dict | None = None) -> dict:
    """Execute the notebook's learner cells (those in ``cells``) in order, in ``namespace``."""
    namespace = {} if namespace is None else namespace
    for source in learner_sources(path)[cells]:
        exec(compile(source, f"{path.name}:learner-cell", "exec"), namespace)  # noqa: S102 - the notebook's own code
    return namespace


def both(name: str) -> list:
    """The starter, whose grader must fail with a sentence, and the solution, whose grader must pass."""
    starter = ROOT / "exercises" / f"{name}.ipynb"
    return [pytest.param(starter, False, id="starter"), pytest.param(solution_of(starter), True, id="solution")]


def run(coro):
    return asyncio.run(coro)


def expect(passes: bool, grade) -> None:
    """The grader passes with a ✓ verdict, or fails with an AssertionError sentence."""
    if passes:
        verdict = grade()
        assert isinstance(verdict, Passed) and verdict.startswith("✓"), verdict
    else:
        with pytest.raises(AssertionError) as failure:
            grade()
        assert str(failure.value).strip(), "a failing grader must say what is wrong"


# --- structure and committed outputs ----------------------------------------------------------

def test_every_exercise_has_a_solution_and_a_grader():
    assert [p.stem for p in STARTERS] == list(GRADERS)
    assert all(solution_of(p).is_file() for p in STARTERS)


@pytest.mark.parametrize("starter", STARTERS, ids=lambda p: p.stem)
def test_starter_and_solution_share_every_cell_but_the_learners(starter):
    a, b = read(starter), read(solution_of(starter))
    assert [c.cell_type for c in a.cells] == [c.cell_type for c in b.cells]
    assert a.cells[0].source.startswith("# Exercise") and "solution" in b.cells[0].source.splitlines()[0]
    for x, y in zip(a.cells[1:], b.cells[1:]):
        if x.cell_type == "markdown":
            assert x.source == y.source
        elif MARKER in x.source:
            assert MARKER in y.source
        else:
            assert x.source.removeprefix(RAISES + "\n") == y.source, x.source[:80]
    assert learner_sources(starter) and any("<summary><b>Hint" in c.source for c in a.cells)
    grader_cell = [c for c in a.cells if c.cell_type == "code"][-1]
    assert f"{GRADERS[starter.stem]}.check(" in grader_cell.source and grader_cell.source.startswith(RAISES)
    assert not any(RAISES in c.source for c in b.cells)


@pytest.mark.parametrize("starter", STARTERS, ids=lambda p: p.stem)
def test_committed_starters_fail_where_marked_and_solutions_pass(starter):
    """What a learner sees before running anything (tests/test_notebooks_clean.py checks the rest of a clean run)."""
    for path, is_solution in ((starter, False), (solution_of(starter), True)):
        code = [c for c in read(path).cells if c.cell_type == "code"]
        for c in code:
            errors = [o for o in c.outputs if o.output_type == "error"]
            assert bool(errors) == c.source.startswith(RAISES), \
                f"{path.name}: a cell must raise exactly when it is marked to: {c.source[:60]!r}"
        verdict = "".join(o.get("data", {}).get("text/plain", "") for o in code[-1].outputs)
        assert verdict.startswith("✓") if is_solution else not verdict, f"{path.name}: {verdict[:80]!r}"
        if not is_solution:
            assert code[-1].outputs[0].ename == "AssertionError", f"{path.name}: the grader should fail with a sentence"


# --- each grader: fails on the starter, passes on the solution --------------------------------

@pytest.mark.parametrize("path, passes", both("01_degraded_descriptions"))
def test_degraded_descriptions_grader(path, passes):
    ns = learner_namespace(path)
    expect(passes, lambda: run(degraded_descriptions.check(
        ns["degrade"], ns["restore"], ns["MOST_IMPORTANT_FOR_BM25"], ns["MOST_IMPORTANT_FOR_MODEL"])))


@pytest.mark.parametrize("path, passes", both("02_tool_count_sweep"))
def test_tool_count_sweep_grader(path, passes):
    ns = learner_namespace(path)
    expect(passes, lambda: run(tool_count_sweep.check(ns["subset_sweep"], ns["MY_DOMAINS"], ns["NS"], ns["first_fall"])))


@pytest.mark.parametrize("path, passes", both("03_tune_tools_per_turn"))
def test_tune_tools_per_turn_grader(path, passes):
    given = {"tasks": tune_tools_per_turn.task_scenarios()}
    ns = learner_namespace(path, slice(0, 1), given)
    try:  # the notebook's own cell: curve = {k: await measure(k) for k in GRID}
        ns["curve"] = {k: run(ns["measure"](k)) for k in tune_tools_per_turn.GRID}
    except NotImplementedError:
        ns["curve"] = {}
    learner_namespace(path, slice(1, None), ns)
    expect(passes, lambda: run(tune_tools_per_turn.check(ns["measure"], ns["curve"], ns["PICK"], ns["REASON"])))


@pytest.mark.parametrize("path, passes", both("04_design_must_include"))
def test_design_must_include_grader(path, passes):
    ns = learner_namespace(path)
    expect(passes, lambda: run(design_must_include.check(ns["pins"])))


@pytest.mark.parametrize("path, passes", both("05_query_classifier"))
def test_query_classifier_grader(path, passes):
    ns = learner_namespace(path)
    expect(passes, lambda: query_classifier.check(ns["classify"], ns["classified_query"]))


@pytest.mark.parametrize("path, passes", both("06_name_collisions"))
def test_name_collisions_grader(path, passes):
    ns = learner_namespace(path)
    expect(passes, lambda: name_collisions.check(ns["canonical_name"]))


@pytest.mark.parametrize("path, passes", both("07_deferral_threshold"))
def test_deferral_threshold_grader(path, passes):
    ns = learner_namespace(path)
    expect(passes, lambda: run(deferral_threshold.check(ns["deferral_for"], ns["choose_setting"])))


@pytest.mark.parametrize("path, passes", both("08_fused_ranker"))
def test_fused_ranker_grader(path, passes):
    tools, dev = fused_ranker.development()
    encoder = Encoder()
    encoder.encode([q.query for q in dev])  # as the notebook's setup cell does
    ns = {"tools": tools, "dev": dev, "make_retriever": make_retriever, "encoder": encoder,
          "settings": fused_ranker.settings, "METRIC": fused_ranker.METRIC}
    learner_namespace(path, slice(0, 2), ns)  # rrf, make_fused
    if passes:  # the notebook's own grid cell (the starter's raises there): each setting on the development queries
        ns["dev_scores"] = {tuple(s.values()): evaluate(ns["make_fused"](tools, encoder=ns["encoder"], **s), dev
                                                        ).metrics()[fused_ranker.METRIC] for s in fused_ranker.settings()}
    learner_namespace(path, slice(2, None), ns)  # CHOICE
    expect(passes, lambda: fused_ranker.check(ns["rrf"], ns["make_fused"], ns["CHOICE"]))


@pytest.mark.parametrize("path, passes", both("09_question_expansion"))
def test_question_expansion_grader(path, passes):
    ns = learner_namespace(path)
    expect(passes, lambda: question_expansion.check(ns["my_questions"]))


@pytest.mark.parametrize("path, passes", both("10_proxy_budget"))
def test_proxy_budget_grader(path, passes):
    ns = learner_namespace(path)
    expect(passes, lambda: run(proxy_budget.check(ns["configure"])))


# --- the graders name what is wrong ------------------------------------------------------------

#: Solutions whose later learner cells read what a notebook cell computes in between: only their functions are taken.
PARTIAL = {"03_tune_tools_per_turn": (slice(0, 1), lambda: {"tasks": tune_tools_per_turn.task_scenarios()}),
           "08_fused_ranker": (slice(0, 2), lambda: {"make_retriever": make_retriever})}


def solution(name: str) -> dict:
    """The solution's learner code for exercise ``name``, executed in one namespace."""
    cells, given = PARTIAL.get(name, (slice(None), dict))
    return learner_namespace(solution_of(ROOT / "exercises" / f"{name}.ipynb"), cells, given())


# --- shortcuts: the package's own implementation and the chapter's one-liner are refused -------

def _rename_only(tools):
    """Chapter 2's first thought, one line: rename the tools and keep everything else."""
    return [dataclasses.replace(t, name=f"tool_{i}") for i, t in enumerate(tools, 1)]


def _bm25_domain(text):
    """The package's routing in one line: the domain of BM25's best tool."""
    catalog = ToolCatalog(demo_tools())
    top = catalog.rank(text, 1)
    return catalog.get(top[0]).domain if top else None


def _dense_alone(tools, *, lexical="bm25", k=60.0, weight=1.0, encoder=None):
    """What passed exercise 8 before: the dense ranker, which already beats BM25 here, called a fusion."""
    return make_retriever("dense-minilm", tools, encoder=encoder)


def _package_hybrid(tools, *, lexical="bm25", k=60.0, weight=1.0, encoder=None):
    return HybridRetriever(tools, dense=make_retriever("dense-minilm", tools, encoder=encoder))


CURVE = {k: (0.5, 1000.0 * k) for k in tune_tools_per_turn.GRID}
FUSION = {"lexical": "bm25", "k": 5.0, "weight": 2.0}

#: (exercise, what the shortcut is, the grader called with it in place of the learner's answer, the refusal expected).
#: Exercises 1 and 10 have no implementation in the package to borrow; their shortcuts are the chapters' one-liners.
SHORTCUTS = [
    ("01_degraded_descriptions", "one-liner: rename the tools only",
     lambda ns: run(degraded_descriptions.check(_rename_only, ns["restore"], "description", "name")),
     r"tool_1's description still gives read_file away"),
    ("01_degraded_descriptions", "one-liner: answer the chapter's claim, not the table",
     lambda ns: run(degraded_descriptions.check(ns["degrade"], ns["restore"], "description", "description")),
     r"You say 'description' matters most to the offline stand-in, but restoring another field"),
    ("02_tool_count_sweep", "package: first_separated_drop as the reading rule",
     lambda ns: run(tool_count_sweep.check(ns["subset_sweep"], ns["MY_DOMAINS"], ns["NS"], first_separated_drop)),
     r"first_fall uses workbook.evaluation.cliff.first_separated_drop \(Chapter 1's one-liner\)"),
    ("02_tool_count_sweep", "one-liner: a wrapper around first_separated_drop",
     lambda ns: run(tool_count_sweep.check(ns["subset_sweep"], ns["MY_DOMAINS"], ns["NS"],
                                           lambda points: first_separated_drop(points))),
     r"first_fall uses workbook.evaluation.cliff.first_separated_drop"),
    ("02_tool_count_sweep", "package: the grader's own sweep",
     lambda ns: run(tool_count_sweep.check(tool_count_sweep.reference_sweep, ns["MY_DOMAINS"], ns["NS"], ns["first_fall"])),
     r"subset_sweep uses the grader's own reference_sweep"),
    ("03_tune_tools_per_turn", "package: the grader's own measurement",
     lambda ns: run(tune_tools_per_turn.check(lambda k: tune_tools_per_turn.reference_point(k), CURVE, 10, "0.50 for 10,000")),
     r"measure uses the grader's own reference_point"),
    ("03_tune_tools_per_turn", "one-liner: the package's default, unmeasured",
     lambda ns: run(tune_tools_per_turn.check(ns["measure"], CURVE, DEFAULT_K, "DEFAULT_K is the package's default")),
     r"REASON should justify the pick with the numbers you measured; it has none"),
    ("04_design_must_include", "one-liner: Chapter 4's list_available_tools",
     lambda ns: run(design_must_include.check(lambda catalog: [discovery_tool(catalog)])),
     r"pins uses harness.selection.discovery.discovery_tool \(Chapter 4's one-liner\)"),
    ("04_design_must_include", "package: search_tools",
     lambda ns: run(design_must_include.check(lambda catalog: [ToolSearch([], catalog.tools).tool])),
     r"pins uses harness.selection.discovery.ToolSearch \(search_tools\)"),
    ("05_query_classifier", "package: the domain of BM25's best tool",
     lambda ns: query_classifier.check(_bm25_domain, ns["classified_query"]),
     r"classify uses demo_tools \(a lookup in the tools' own text\)|classify uses ToolCatalog"),
    ("05_query_classifier", "one-liner: the latest user message as the query",
     lambda ns: query_classifier.check(ns["classify"], query_from_user_message),
     r"is not wholly above zero\. Route the step that comes next"),
    ("06_name_collisions", "package: NameTable",
     lambda ns: name_collisions.check(lambda s, t, ids: NameTable(ids).name(s, t)),
     r"canonical_name uses harness.mcp.names.NameTable"),
    ("06_name_collisions", "package: its sanitiser, one line",
     lambda ns: name_collisions.check(lambda s, t, ids: "mcp__" + sanitize(s) + "__" + sanitize(t)),
     r"canonical_name uses harness.mcp.names.sanitize"),
    ("07_deferral_threshold", "package: the grader's own loading",
     lambda ns: run(deferral_threshold.check(deferral_threshold.reference_deferral_for, ns["choose_setting"])),
     r"deferral_for uses the grader's own reference_deferral_for"),
    ("07_deferral_threshold", "one-liner: Claude Code's default threshold and limit",
     lambda ns: run(deferral_threshold.check(ns["deferral_for"], lambda runs: (20_000, DEFAULT_LIMIT))),
     r"Threshold 20,000 defers nothing here"),
    ("08_fused_ranker", "package: rrf",
     lambda ns: fused_ranker.check(reference_rrf, ns["make_fused"], FUSION),
     r"rrf uses harness.retrieval.hybrid.rrf"),
    ("08_fused_ranker", "package: HybridRetriever",
     lambda ns: fused_ranker.check(ns["rrf"], _package_hybrid, FUSION),
     r"make_fused uses harness.retrieval.hybrid.HybridRetriever"),
    ("08_fused_ranker", "one-liner: the dense ranker alone",
     lambda ns: fused_ranker.check(ns["rrf"], _dense_alone, FUSION),
     r"ranks .* in the dense ranker's order alone"),
    ("09_question_expansion", "package: rule_questions, with a word added",
     lambda ns: question_expansion.check(lambda tool: rule_questions(tool) + ["tool"]),
     r"my_questions uses Chapter 8's own rule_questions"),
    ("09_question_expansion", "one-liner: the name in words",
     lambda ns: question_expansion.check(question_expansion.name_in_words),
     r"the interval is not wholly above zero"),
    ("10_proxy_budget", "one-liner: the file as given",
     lambda ns: run(proxy_budget.check(lambda config: config)),
     r"must be listed at connection"),
    ("10_proxy_budget", "one-liner: alwaysLoad the whole server",
     lambda ns: run(proxy_budget.check(_listing(True))),
     r"over the budget of 600"),
]


def test_every_exercise_has_shortcuts_to_refuse():
    assert {name for name, *_ in SHORTCUTS} == set(GRADERS)


@pytest.mark.parametrize("name, what, grade, message", SHORTCUTS, ids=[f"{n[:2]}-{w.split(':')[0]}-{i}" for i, (n, w, *_) in enumerate(SHORTCUTS)])
def test_graders_refuse_the_packages_implementation_and_the_chapters_one_liner(name, what, grade, message):
    """Each shortcut is refused in a sentence; the learner writes the idea."""
    with pytest.raises(AssertionError, match=message):
        grade(solution(name))


# --- stated times ------------------------------------------------------------------------------

TIMES = re.compile(r"\*Run: about (\d+) (s|min) on 2 cores \(measured\) · Solving: about (\d+) min \(an estimate\)\*")


@pytest.mark.parametrize("starter", STARTERS, ids=lambda p: p.stem)
def test_each_exercise_states_its_measured_run_time_and_an_estimated_solving_time(starter):
    """The run time is the solution's measured run (notebooks/run_times.json), within 2×; the solving time says it is an estimate."""
    stated = [TIMES.search(read(path).cells[0].source) for path in (starter, solution_of(starter))]
    assert all(stated) and stated[0].groups() == stated[1].groups(), f"{starter.name}: no '*Run: … · Solving: …*' line"
    run_seconds = int(stated[0][1]) * (60 if stated[0][2] == "min" else 1)
    measured = measured_seconds(ROOT)[solution_of(starter).relative_to(ROOT).as_posix()]
    assert within(run_seconds, measured), f"{starter.name} states {run_seconds} s; measured {measured} s"
    assert 10 <= int(stated[0][3]) <= 120


def test_learner_failures_become_one_sentence_about_the_learners_function():
    def unwritten():
        raise NotImplementedError("write me")

    with pytest.raises(AssertionError, match=r"^unwritten\(\) is not written yet: it still raises NotImplementedError \(write me\)"):
        call("unwritten", unwritten)
    with pytest.raises(AssertionError, match=r"^broken\(\) raised KeyError: 'x'"):
        call("broken", lambda: {}["x"])
    with pytest.raises(AssertionError, match="should be a function"):
        call("measure", None)


def test_pareto_front_and_the_setting_that_beats_a_pick():
    a, b, c, d = Point("a", 10, 0.5), Point("b", 20, 0.5), Point("c", 30, 0.9), Point("d", 5, 0.1)
    assert beats(a, b) and not beats(a, a) and not beats(c, a)
    assert dominator(b, [a, b, c, d]) is a and dominator(c, [a, b, c, d]) is None
    assert [p.label for p in front([a, b, c, d])] == ["d", "a", "c"]


def test_degraded_descriptions_names_the_tool_and_field_at_fault():
    ns = solution("01_degraded_descriptions")
    tools = demo_tools()
    with pytest.raises(AssertionError, match=r"tool_1 still has its original name 'read_file'"):
        degraded_descriptions.check_degraded(tools, list(tools))
    degraded = ns["degrade"](tools)
    telling = [degraded[0].__class__(degraded[0].name, "Read a file.", degraded[0].input_schema)] + degraded[1:]
    with pytest.raises(AssertionError, match=r"tool_1's description still gives read_file away: it says 'file', 'read'"):
        degraded_descriptions.check_degraded(tools, telling)

    def restores_everything(original, degraded, field):
        if field not in degraded_descriptions.FIELDS:
            raise ValueError(field)
        return list(original)

    with pytest.raises(AssertionError, match=r"restore\(original, degraded, 'name'\) also changed the description of tool_1"):
        degraded_descriptions.check_restored(tools, degraded, restores_everything)
    with pytest.raises(AssertionError, match=r"You say 'parameter names' matters most to BM25, but restoring another field "
                                             r"brings recall@10 back measurably further") as wrong:
        run(degraded_descriptions.check(ns["degrade"], ns["restore"], "parameter names", "name"))
    assert not any(f"the {field}" in str(wrong.value) for field in ("name", "description")), "the message names no answer"


def test_degraded_descriptions_accepts_fields_it_cannot_tell_apart_and_says_so():
    """By paired intervals, restoring the name and the description bring BM25's recall back alike: either answer passes."""
    ns = solution("01_degraded_descriptions")
    verdict = run(degraded_descriptions.check(ns["degrade"], ns["restore"], "name", "name"))
    assert "restoring the name brings recall back to" in verdict and "(not measurably ahead of the description)" in verdict


def test_tool_count_sweep_names_the_trial_that_differs():
    ns = solution("02_tool_count_sweep")
    domains, n_values, rule = ns["MY_DOMAINS"], ns["NS"], ns["first_fall"]
    with pytest.raises(AssertionError, match="at least two domains"):
        run(tool_count_sweep.check(ns["subset_sweep"], ("git",), n_values, rule))
    with pytest.raises(AssertionError, match=r"Every N must be from 1 to 9"):
        run(tool_count_sweep.check(ns["subset_sweep"], ("email", "data"), (1, 2, 4, 30), rule))

    async def whole_world(domains, n_values):  # the subset's queries, but every demo tool offered
        from workbook.evaluation.cliff import fixed_list_sweep, provider_chooser
        from workbook.demo import CONFUSABLE_PAIRS
        from workbook.providers.offline import OfflineModel

        queries = [q for q in load_demo_queries() if q.domain in domains]
        return await fixed_list_sweep(provider_chooser(OfflineModel()), demo_tools(), queries, n_values,
                                      confusable_pairs=CONFUSABLE_PAIRS)

    with pytest.raises(AssertionError, match=r"your sweep showed [\d,]+ schema tokens; the reference shows"):
        run(tool_count_sweep.check(whole_world, domains, n_values, rule))


def test_tool_count_sweep_needs_a_slice_past_the_reading_budget():
    ns = solution("02_tool_count_sweep")
    with pytest.raises(AssertionError, match=r"within the stand-in's reading budget of 3,000: add domains"):
        run(tool_count_sweep.check(ns["subset_sweep"], ("git", "issues", "chat"), (2, 4, 8, 24), ns["first_fall"]))


def test_tool_count_sweep_test_curves_each_need_the_rule_and_get_it_from_the_package():
    """The test curves are built so that each misreading fails on one of them; the package's rule passes them all."""
    from workbook.evaluation.cliff import first_separated_drop

    answers = [first_separated_drop(points) for _, points in tool_count_sweep.CURVES]
    assert None in answers and len(set(answers)) >= 3
    for _, points in tool_count_sweep.CURVES:
        assert tool_count_sweep.judge_first_fall(points, first_separated_drop(points)) == first_separated_drop(points)


def steepest(points):  # where the point estimates fall fastest per added tool
    return max(zip(points, points[1:]), key=lambda ab: (ab[0].rate - ab[1].rate) / (ab[1].n - ab[0].n))[1].n


def neighbours(points):  # the first N separated from the N before it, not from the smallest N
    return next((b.n for a, b in zip(points, points[1:]) if b.high < a.low), None)


def touching(points):  # an interval that only touches the first one counted as below it
    return next((p.n for p in points[1:] if p.high <= points[0].low), None)


def last_below(points):  # the last N below the smallest N's interval, not the first
    return next((p.n for p in reversed(points[1:]) if p.high < points[0].low), None)


@pytest.mark.parametrize("rule, message", [
    (steepest, r"first_fall says N=10, whose interval .* overlaps N=5's .*: a fall counts only where the intervals separate"),
    (neighbours, r"first_fall says no N falls, but at least one N's interval lies wholly below N=5's"),
    (touching, r"'an interval touching the first one' .* first_fall says N=10, whose interval 0.600 \[0.500, 0.700\] overlaps"),
    (last_below, r"first_fall says N=40, which is separated from N=5, but an earlier N already is: return the first"),
    (lambda points: None, r"first_fall says no N falls"),
])
def test_tool_count_sweep_refuses_misreadings_without_naming_the_fall(rule, message):
    """The usual misreadings of a curve each fail on a test curve, and no message names the N that falls on the slice."""
    ns = solution("02_tool_count_sweep")
    with pytest.raises(AssertionError, match=message) as refused:
        run(tool_count_sweep.check(ns["subset_sweep"], ns["MY_DOMAINS"], ns["NS"], rule))
    assert "your slice" not in str(refused.value)


def test_tool_count_sweep_on_the_slice_says_what_is_wrong_without_the_answer():
    """On the learner's own slice a wrong N or None is refused, and the message does not say where it falls."""
    from workbook.evaluation.cliff import accuracy_with_interval, first_separated_drop

    ns = solution("02_tool_count_sweep")
    points = accuracy_with_interval(run(tool_count_sweep.reference_sweep(ns["MY_DOMAINS"], ns["NS"])))
    truth = first_separated_drop(points)
    assert truth is not None and truth != points[-1].n
    with pytest.raises(AssertionError, match=r"On your slice's curve, first_fall says no N falls") as none:
        tool_count_sweep.judge_first_fall(points, None)
    with pytest.raises(AssertionError, match=r"but an earlier N already is") as late:
        tool_count_sweep.judge_first_fall(points, points[-1].n)
    for refused in (none, late):
        assert f"N={truth}" not in str(refused.value)


def test_tune_tools_per_turn_judges_picks_by_the_stated_rule():
    """Per-task successes over the same 20 tasks: differences are called by a paired interval, as in the chapters."""
    wins = {3: [1.0] * 1 + [0.0] * 19, 10: [1.0] * 13 + [0.0] * 7, 15: [1.0] * 13 + [0.0] * 7,
            20: [1.0] * 15 + [0.0] * 5, 30: [1.0] * 14 + [0.0] * 6}
    points = [Point(k, cost, sum(wins[k]) / 20) for k, cost in ((3, 800), (10, 3400), (15, 5100), (20, 6800), (30, 9999))]
    with pytest.raises(AssertionError, match=r"tools_per_turn=15 pays for nothing: a setting that costs fewer") as beaten:
        tune_tools_per_turn.judge_pick(points, 15, wins)
    assert "10" not in str(beaten.value).split(":", 1)[1], "the message does not name the setting that beats the pick"
    with pytest.raises(AssertionError, match=r"tools_per_turn=3 solves 0.05 of the tasks, measurably fewer than the best"):
        tune_tools_per_turn.judge_pick(points, 3, wins)
    assert "not measurably below the best success" in tune_tools_per_turn.judge_pick(points, 10, wins)
    thrifty = {5: [1.0] * 6 + [0.0] * 14, 20: [1.0] * 18 + [0.0] * 2}
    assert "best success per 1,000 tokens" in tune_tools_per_turn.judge_pick([Point(5, 1000, 0.3), Point(20, 9000, 0.9)], 5, thrifty)
    ns = solution("03_tune_tools_per_turn")
    with pytest.raises(AssertionError, match="curve is empty"):
        run(tune_tools_per_turn.check(ns["measure"], {}, 10, "10"))
    with pytest.raises(AssertionError, match="REASON should justify"):
        run(tune_tools_per_turn.check(ns["measure"], {k: (0.5, 100.0) for k in tune_tools_per_turn.GRID}, 10, "it felt right"))


@pytest.mark.parametrize("reason", ["10", "k=10 is best, 3 times better than k=3", "it solves 0.62 of the tasks"])
def test_tune_tools_per_turn_wants_the_picks_own_numbers_in_the_reason(reason):
    """The trivial REASON (a digit, or the pick's number alone) fails, and says which numbers to quote."""
    curve = {k: (0.1, 1000.0 * k) for k in tune_tools_per_turn.GRID} | {10: (16 / 26, 3365.4)}
    measure = solution("03_tune_tools_per_turn")["measure"]
    with pytest.raises(AssertionError, match=r"REASON should justify tools_per_turn=10 with what you measured there: its "
                                             r"task success \(0.62\) and its schema tokens per task \(3,365\); it quotes"):
        run(tune_tools_per_turn.check(measure, curve, 10, reason))
    assert tune_tools_per_turn.quoted(curve, 10, "0.62 of the tasks for 3,365 tokens") == (True, True)
    assert tune_tools_per_turn.quoted(curve, 10, "62 % at 3365 tokens") == (True, True)


def test_tune_tools_per_turn_rechecks_the_curve_against_its_own_runs():
    curve = {k: (0.9 if k == 5 else 0.1, 1000.0 * k) for k in tune_tools_per_turn.GRID}  # an invented curve
    measure = solution("03_tune_tools_per_turn")["measure"]
    with pytest.raises(AssertionError, match=r"Your curve has success 0.100 and 3,000 schema tokens at tools_per_turn=3; the reference"):
        run(tune_tools_per_turn.check(measure, curve, 5, "5 is best: 0.90 for 5,000 tokens"))


def test_design_must_include_holds_pins_to_the_budget_and_the_bar():
    with pytest.raises(AssertionError, match=r"Your pins cost 5,938 schema tokens on every turn, more than 10%"):
        run(design_must_include.check(lambda catalog: catalog.all_names()))
    with pytest.raises(AssertionError, match="names 'read_files', which is not a tool"):
        run(design_must_include.check(lambda catalog: ["read_files"]))
    with pytest.raises(AssertionError, match=r"Your pins solve \d+ of the 12 openers and pivots, none of them one that pinning "
                                             r"nothing misses .*: they change nothing for the better"):
        run(design_must_include.check(lambda catalog: ["calculate"]))  # a pin no opener or pivot needs


def test_design_must_include_reports_differences_it_cannot_call_as_not_separated():
    """Twelve scenarios: the solution's pin is ahead of list_available_tools by a point estimate only, and the verdict says so."""
    verdict = run(design_must_include.check(solution("04_design_must_include")["pins"]))
    assert re.search(r"against list_available_tools alone \+0\.\d\d \[[+-]0\.\d\d, \+0\.\d\d\], not separated", verdict), verdict


def test_query_classifier_names_misroutes_and_the_baseline_to_beat():
    ns = solution("05_query_classifier")
    with pytest.raises(AssertionError, match=r"it routed \"What's the git status\?\" to files \(expected git\)"):
        query_classifier.check(lambda text: "files", ns["classified_query"])
    with pytest.raises(AssertionError, match="returned 'code'; return one of files"):
        query_classifier.check(lambda text: "code", ns["classified_query"])
    from harness.selection.queries import query_from_transcript

    with pytest.raises(AssertionError, match=r"the transcript query of Chapter 3 at 0.\d+ \(pivots 0.\d+\): beat it on both"):
        query_classifier.check(ns["classify"], query_from_transcript)


def test_query_classifier_fails_the_latest_user_message_alone():
    """The trivial query — the latest user message, no routing — ties itself, and the grader says what to beat and how."""
    from harness.selection.queries import query_from_user_message

    ns = solution("05_query_classifier")
    with pytest.raises(AssertionError, match=r"Your query finds the needed tool among 3 at 0.605 of the 86 steps; the latest "
                                             r"user message alone at 0.605: the difference, \+0.000 \[\+0.000, \+0.000\], "
                                             r"is not wholly above zero\. Route the step that comes next"):
        query_classifier.check(ns["classify"], query_from_user_message)


SAFE = r"[^A-Za-z0-9_]"


def _stamped(s, t, ids):
    """The solution's names with the session's size in front: unique and safe, but a newcomer renames every tool."""
    return f"n{len(ids)}_" + solution("06_name_collisions")["canonical_name"](s, t, ids).removeprefix("mcp__")


@pytest.mark.parametrize("scheme, message", [
    (lambda s, t, ids: f"{s}__{t}", r"'example-server__fetch' \(for example-server/fetch\) has characters outside"),
    (lambda s, t, ids: re.sub(SAFE, "_", f"{s}__{t}"), r"is 88 characters long; the limit is 64"),
    (lambda s, t, ids: re.sub(SAFE, "_", t), r"'read_file' names both filesystem/read_file and workspace/read_file"),
    (lambda s, t, ids: f"t{sorted(ids).index((s, t))}", r"does not show the tool's own name 'read_file'"),
    (lambda s, t, ids: re.sub(SAFE, "_", f"{s}__{t}")[:50] + f"_{ids.index((s, t))}",
     r"for one order of the identities and .* for another"),
    (_stamped, r"Adding calendar/create_event, which collides with nothing, renamed filesystem/read_file"),
])
def test_name_collisions_names_the_property_broken(scheme, message):
    with pytest.raises(AssertionError, match=message):
        name_collisions.check(scheme)


def test_name_collisions_compares_the_learners_names_with_the_package():
    verdict = name_collisions.check(solution("06_name_collisions")["canonical_name"])
    assert re.search(rf"\d+ of {len(name_collisions.IDENTITIES)} equal harness.mcp.names.NameTable's\.$", verdict)


def test_deferral_threshold_refuses_the_default_that_defers_nothing():
    """The trivial answer, Claude Code's 10 % threshold and the search's default limit, defers no session here."""
    with pytest.raises(AssertionError, match=r"Threshold 20,000 defers nothing here .* measurably fewer than the best setting: "
                                             r"choose from the results rather than a default"):
        run(deferral_threshold.check(solution("07_deferral_threshold")["deferral_for"], lambda runs: (20_000, DEFAULT_LIMIT)))


def _runs(*outcomes: tuple[int, int]) -> list:
    """Fake scenario runs: (solved, schema tokens) each."""
    from types import SimpleNamespace

    return [SimpleNamespace(success=bool(solved), schema_tokens=tokens) for solved, tokens in outcomes]


def test_deferral_threshold_checks_the_loading_on_effects_and_the_pick():
    ns = solution("07_deferral_threshold")

    def never_defers(threshold, limit):
        return ns["deferral_for"](10**9, limit)

    with pytest.raises(AssertionError, match=r"deferral_for\(1,000, 1\) on the session 'code' \(which it defers\) runs \d+ of "
                                             r"\d+ scenarios differently"):
        run(deferral_threshold.check(never_defers, lambda runs: (1_000, 8)))
    with pytest.raises(AssertionError, match=r"solves \d+ development scenarios, measurably fewer than the best setting's \d+"):
        run(deferral_threshold.check(ns["deferral_for"], lambda runs: (1_000, 1)))
    cheap, dear = _runs(*[(1, 10)] * 9, (0, 10)), _runs(*[(1, 40)] * 10)
    none = _runs(*[(0, 5)] * 10)
    with pytest.raises(AssertionError, match=r"costs 400 schema tokens for 10 solved, more than 1.5× what the cheapest setting") as dearer:
        deferral_threshold.judge({(1, 1): cheap, (2, 1): dear, (1, 2): none}, (2, 1))
    assert "threshold 1" not in str(dearer.value) and "100" not in str(dearer.value), "the message names no setting"
    assert deferral_threshold.judge({(1, 1): cheap, (2, 1): dear, (1, 2): none}, (1, 1)).benefit == 9


def test_every_grader_module_names_its_exercise_and_chapter():
    import workbook.grading as grading

    for module in (degraded_descriptions, tool_count_sweep, tune_tools_per_turn, design_must_include,
                   query_classifier, name_collisions, deferral_threshold, fused_ranker, question_expansion, proxy_budget):
        doc = module.__doc__ or ""
        name = next(n for n, m in GRADERS.items() if m == module.__name__.rsplit(".", 1)[1])
        assert f"exercises/{name}.ipynb" in doc and re.search(r"Chapter \d", doc), module.__name__
    assert all(m in grading.__doc__ for m in GRADERS.values())


@pytest.mark.parametrize("answer, message", [
    (lambda tool: [], r"0.\d+ with your questions against 0.\d+ with the name in words alone, a paired difference of "
                      r"-0.\d+ \[.*\]: the interval is not wholly above zero. Read the development queries"),
    (lambda tool: [tool.name], r"a paired difference of [+-]0.0\d+ \[-0.\d+, \+0.\d+\]: the interval is not wholly above zero"),
    ("rule_questions", r"my_questions uses Chapter 8's own rule_questions, which is the answer already written: write rules of your own"),
    (lambda tool: [q.query for q in question_expansion.split()[1].test if q.gold[0] == tool.id][:8],
     r"my_questions\(\w+\) writes .*, which contains the labelled query"),
    (lambda tool: "read file", r"should return a list of question strings, got 'read file'"),
])
def test_question_expansion_fails_trivial_and_leaking_answers(answer, message):
    """Nothing, the name alone, Chapter 8's own writer and the test queries themselves all fail, each saying why."""
    from workbook.research.expansion import rule_questions

    with pytest.raises(AssertionError, match=message):
        question_expansion.check(rule_questions if answer == "rule_questions" else answer)


def test_proxy_budget_never_callable_is_every_tool_that_cancels_or_closes():
    """The rule the exercise states, applied to the tools behind the workbook's four servers."""
    servers = {"notes": "notes", "tickets": "issues", "calendar": "calendar", "team_chat": "chat"}
    assert set(proxy_budget.team_config()["mcpServers"]) == set(servers)
    undoing = {f"{server}__{t.name}" for server, domain in servers.items() for t in demo_tools()
               if t.domain == domain and t.name.split("_")[0] in {"cancel", "close", "delete", "remove"}}
    assert undoing == set(proxy_budget.NEVER_CALLABLE)


def _listing(tools):
    def configure(config):
        config["mcpServers"]["calendar"]["alwaysLoad"] = tools
        config["mcpServers"]["calendar"]["disabledTools"] = ["cancel_event"]
        config["mcpServers"]["tickets"]["disabledTools"] = ["close_issue"]
        return config
    return configure


def _also(server, disabled):
    def configure(config):
        config = _listing(["list_events", "create_event"])(config)
        config["mcpServers"][server]["disabledTools"] = disabled
        return config
    return configure


@pytest.mark.parametrize("configure, message", [
    (lambda config: config, r"calendar__list_events, calendar__create_event must be listed at connection .* the client is "
                            r"given only search_tools, call_tool: use alwaysLoad with tool names"),
    (_listing(True), r"A client is given \d{3,} tokens of tool definitions at connection, over the budget of 600: .* "
                     r"List single tools, not whole servers"),
    (_also("tickets", []), r"tickets__close_issue can still be run through the proxy"),
    (_also("notes", ["create_note"]), r"The task \"Create a note titled 'groceries'.*\" did not take effect: the stand-in "
                                      r"called search_tools \(ok\).*and notes__read_note shows no 'milk and eggs'"),
    (lambda config: {"mcpServers": {"notes": config["mcpServers"]["notes"]}}, r"Your config drops the server\(s\) calendar"),
    (_listing("calendar"), r"The proxy cannot read your config: "),
])
def test_proxy_budget_names_the_rule_broken(configure, message):
    """The file as given (the trivial answer), a whole server listed, a destructive tool left, a needed tool disabled."""
    with pytest.raises(AssertionError, match=message):
        run(proxy_budget.check(configure))
