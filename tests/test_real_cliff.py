"""The committed real-model sweep: complete, traceable to its command and model, and consistent with its design."""
from __future__ import annotations

from collections import Counter

from workbook.evaluation.cliff import Trial, fixed_lists
from workbook.demo import CONFUSABLE_PAIRS, demo_tools, load_demo_queries
from workbook.providers.local_llama import MODEL_SHA256
from experiments.real_cliff import COMMAND, SWEEP_NS, SweepResult, agreement, load, sample_queries, save, sweep_pool


def test_committed_results_cover_every_request_at_every_n():
    result = load()
    queries = load_demo_queries()
    ns = result.meta["ns"]
    assert set(ns) <= set(SWEEP_NS) and len(ns) >= 4
    assert Counter(t.n for t in result.trials) == {n: len(queries) for n in ns}
    assert len(queries) >= 50
    assert result.meta["command"] == (COMMAND if ns == list(SWEEP_NS) else f"{COMMAND} --ns {' '.join(map(str, ns))}")
    assert result.meta["model_sha256"] == MODEL_SHA256
    assert "anonymous packager" in result.meta["provenance"]


def test_committed_choices_were_among_the_tools_shown():
    """Rebuilt lists: every N up to the demo world's size, and the larger ones when the public data is here."""
    result = load()
    queries = load_demo_queries()
    pool, _ = sweep_pool(max(result.meta["ns"]))
    ns = [n for n in result.meta["ns"] if n <= len(pool)]
    assert ns == sorted(ns) and ns[0] == SWEEP_NS[0]
    shown = {}
    for n in ns:
        for tl in fixed_lists(pool, queries, n, confusable_pairs=CONFUSABLE_PAIRS):
            for q in tl.queries:
                shown[(q.qid, n)] = {t.name for t in tl.tools}
    for t in (t for t in result.trials if t.n in ns):
        assert t.chosen in shown[(t.qid, t.n)], (t.qid, t.n, t.chosen)
        assert t.gold in shown[(t.qid, t.n)]


def test_save_and_load_round_trip(tmp_path):
    trials = [Trial("demo-001", 5, 0, "read_file", "read_note", {"path": "notes/todo.md"}, {}, 400, True, 0.25, "read_file")]
    save(SweepResult({"ns": [5]}, trials), tmp_path / "r.json")
    assert load(tmp_path / "r.json").trials == trials


def test_agreement_counts_matching_choices_of_the_same_trials():
    a = [Trial("q1", 5, 0, "x", "x", None, {}, 1, False), Trial("q2", 5, 0, "x", "y", None, {}, 1, False)]
    b = [Trial("q1", 5, 0, "x", "x", None, {}, 1, False), Trial("q2", 5, 0, "x", "x", None, {}, 1, False),
         Trial("q3", 5, 0, "x", "x", None, {}, 1, False)]
    assert agreement(a, b) == (1, 2)


def test_sample_spreads_the_requests():
    sample = sample_queries(10)
    assert len(sample) == len({q.qid for q in sample}) == 10
    assert {q.kind for q in sample} == {"literal", "paraphrase"}


def test_the_sweep_asks_the_forced_choice_the_committed_file_was_made_with():
    """The sweep calls ``choose`` (a shown tool, always), never the free step that may answer instead."""
    from conftest import run
    from workbook.providers.local_llama import ToolChoice
    from experiments.real_cliff import run_sweep

    class ForcedOnly:
        def choose(self, request, tools, system=None):
            return ToolChoice(tools[0].name, 1.0, tools[-1].name)

        def next_step(self, *args):
            raise AssertionError("the cliff sweep must not let the model answer")

    result = run(run_sweep(ForcedOnly(), (5,), limit=3))
    assert len(result.trials) == 3 and all(t.chosen and t.margin == 1.0 for t in result.trials)


def test_a_resumed_sweep_keeps_what_was_saved_and_names_every_n_in_its_command():
    from experiments.real_cliff import COMMAND, merged

    first = SweepResult({"ns": [5], "seconds_per_n": {"5": 1.0}, "pool": "74 demo tools"},
                        [Trial("q1", 5, 0, "x", "x", None, {}, 1, False)])
    part = SweepResult({"ns": [150], "seconds_per_n": {"150": 2.0}, "pool": "74 demo tools + 76 real MCP tools (LiveMCPBench)"},
                       [Trial("q1", 150, 0, "x", "y", None, {}, 9, False)])
    both = merged(first, part)
    assert both.meta["ns"] == [5, 150] and both.meta["seconds_per_n"] == {"5": 1.0, "150": 2.0}
    assert both.meta["pool"].endswith("(LiveMCPBench)") and both.meta["command"] == f"{COMMAND} --ns 5 150"
    assert [t.n for t in both.trials] == [5, 150]
    smaller = SweepResult({"ns": [120], "seconds_per_n": {"120": 3.0}, "pool": "74 demo tools + 46 real MCP tools (LiveMCPBench)"}, [])
    assert merged(both, smaller).meta["pool"] == both.meta["pool"], "the pool is the largest N's, whatever the order"
