"""Model-written tool documents (Chapter 8b): writing, the guard, the resumable builder and the measurement,
with a scripted fake model in place of llama-server."""
from __future__ import annotations

import json
import re
from dataclasses import replace
from importlib import resources
from typing import AbstractSet, cast

import pytest
from real_model_support import needs_model

from experiments import DATA
from experiments import tool_documents
from experiments.tool_documents import (DATASETS, DOCUMENTED, Measurement, Row, build, default_with_documents,
                                                load_documents, load_measured, main, measure, save_measured, timing)
from experiments.zero_shot import Catalog, catalogs
from workbook.providers.local_llama import LocalLlamaProvider, LocalLlamaServer, ToolChoice
from workbook.research.expansion import expanded
from workbook.research.model_documents import (EXAMPLES, FOLDER, NOT_FOR, OPENINGS, SYSTEM, USE_WHEN, DocumentRecord,
                                                ToolDocument, Verdict, copies, guard, guard_counts, neighbours,
                                                read_records, repeats, review_sample, sample_for_review, with_documents,
                                                write_document)
from harness.retrieval.records import CatalogTool


def examples_for(name: str) -> list[str]:
    return [f"{o} first request {i} for {name.replace('_', ' ')} please" for i, o in enumerate(OPENINGS)]


class FakeModel:
    """Answers each part of a document with a scripted sentence that begins with the asked opening; picks the
    tool an example was written for, unless the request is scripted to go to a neighbour (``misassign``)."""

    def __init__(self, misassign: AbstractSet[str] = frozenset(), answers: dict[str, list[str]] | None = None) -> None:
        self.misassign = misassign
        self.answers = answers or {}  # tool name -> its examples, in the order of OPENINGS
        self.written: list[str] = []  # tool names, in the order documents were asked for
        self.asked: list[tuple[str, str, str]] = []  # (system, request, opening)
        self.author: dict[str, str] = {}  # example request -> the tool name it was written for

    def complete_from(self, system: str, request: str, opening: str) -> str:
        name = next(line for line in request.splitlines() if line.startswith("Tool: "))[len("Tool: "):]
        self.asked.append((system, request, opening))
        if opening == USE_WHEN[1]:
            self.written.append(name)
            return f"{opening} you need to {name.replace('_', ' ')}."
        if opening == NOT_FOR[1]:
            return f"{opening}   do anything but {name}."
        example = (self.answers.get(name) or examples_for(name))[OPENINGS.index(opening)]
        self.author[example] = name
        return example

    def choose(self, request: str, tools) -> ToolChoice:
        names = [t.name for t in tools]
        target = self.author[request]
        pick = next(n for n in names if n != target) if request in self.misassign else target
        return ToolChoice(pick, 2.5, None)


@pytest.fixture(scope="module")
def demo() -> Catalog:
    return catalogs()["demo"]


def test_every_part_is_asked_with_its_opening_after_the_tool_s_definition(demo):
    t = demo.tools[0]
    model = FakeModel()
    doc = write_document(t, model)
    assert doc == ToolDocument(f"Use it when you need to {t.name.replace('_', ' ')}.", tuple(examples_for(t.name)),
                               f"It does not do anything but {t.name}.")  # spacing tidied
    assert [o for _, _, o in model.asked] == [USE_WHEN[1], *OPENINGS, NOT_FOR[1]]
    definition = model.asked[0][1][:model.asked[0][1].index("\n\n") + 2]
    assert t.description in definition and all(r.startswith(definition) for _, r, _ in model.asked)  # one cached prefix
    assert {s for s, _, _ in model.asked} == {SYSTEM}


def test_the_real_provider_continues_its_answer_from_the_opening_greedily():
    sent = []

    class Server:
        def post(self, path, payload):
            sent.append((path, payload))
            return {"prompt": "<rendered>"} if path == "/apply-template" else {"content": " read notes.txt"}

    provider = object.__new__(LocalLlamaProvider)  # no llama-server: only the payload is checked
    provider.server = cast(LocalLlamaServer, Server())  # a fake: only post() is called
    assert provider.complete_from("sys", "write it", "I need to") == "I need to read notes.txt"
    (_, template), (path, payload) = sent
    assert template["tools"] == [] and template["messages"][-1] == {"role": "user", "content": "write it"}
    assert path == "/completion" and payload["prompt"] == "<rendered>I need to" and payload["temperature"] == 0
    assert payload["stop"] == ["\n"]


def test_a_copy_of_the_description_and_a_repeat_are_recognised():
    description = "Read a text file from the project workspace and return its lines, numbered."
    assert copies("I need to read a text file from the project workspace and return its lines", description)
    assert not copies("Can you show me what notes.txt in my project says?", description)
    assert repeats("I want to append 'hi' to the end of notes.txt",
                   ["Can you append 'hi' to the end of notes.txt?"])  # the openings set aside
    assert not repeats("How do I add a line to my diary file?", ["Can you append 'hi' to the end of notes.txt?"])


def test_copies_and_repeats_are_dropped_unasked(demo):
    t = demo.tools[3]
    copied = f"I need to {t.description}"
    model = FakeModel(answers={t.name: [copied, "Can you do the thing for report.pdf today",
                                        "How do I do the thing for report.pdf today", "I want to ask something new"]})
    doc = write_document(t, model)
    model.author[copied] = t.name
    verdicts = guard(t, doc, neighbours(demo.tools)[t.id], model)
    assert [v.reason for v in verdicts][:3] == ["it copies the description", verdicts[1].reason,
                                               "it repeats an earlier example"]
    assert verdicts[1].kept and verdicts[3].kept and verdicts[0].chosen is None and verdicts[2].chosen is None
    assert guard_counts([DocumentRecord(t.id, t.definition_hash(), doc, tuple(verdicts))])["dropped_as_a_copy"] == 1


def test_the_guard_drops_an_example_the_model_gives_to_a_neighbour_and_keeps_at_most_three(demo):
    t = demo.tools[5]
    model = FakeModel()
    doc = write_document(t, model)
    model.misassign = {doc.examples[1]}
    near = neighbours(demo.tools)[t.id]
    assert len(near) == 4 and t.id not in {n.id for n in near}
    verdicts = guard(t, doc, near, model)
    assert [v.kept for v in verdicts] == [True, False, True, True]
    assert verdicts[1].chosen in {n.id for n in near} and verdicts[1].reason == f"the model chose {verdicts[1].chosen} instead"
    record = DocumentRecord(t.id, t.definition_hash(), doc, tuple(verdicts))
    assert record.kept().examples == (doc.examples[0], doc.examples[2], doc.examples[3])
    assert guard_counts([record]) == {"kept": 3, "dropped": 1, "dropped_for_naming_the_tool": 0,
                                      "dropped_as_a_repeat": 0, "dropped_as_a_copy": 0, "dropped_for_a_neighbour": 1}
    everything = DocumentRecord(t.id, t.definition_hash(), doc, tuple(replace(v, kept=True) for v in verdicts))
    assert len(everything.kept().examples) == EXAMPLES == 3


def test_an_example_naming_the_tool_is_dropped_unasked(demo):
    t = next(x for x in demo.tools if "_" in x.name)
    doc = ToolDocument("When needed.", (f"please run {t.name} now", "something else entirely"), "Not for that.")
    model = FakeModel()
    model.author["something else entirely"] = t.name
    verdicts = guard(t, doc, neighbours(demo.tools)[t.id], model)
    assert verdicts[0] == Verdict(f"please run {t.name} now", False, "it names the tool")
    assert verdicts[1].kept


def test_expanded_text_carries_use_when_and_kept_examples_but_not_not_for(demo):
    t = demo.tools[2]
    doc = ToolDocument("When you need it.", ("ask one", "ask two", "ask three"), "Not for cooking.")
    guarded = (Verdict("ask one", True, "ok"), Verdict("ask two", False, "no"), Verdict("ask three", True, "ok"))
    more = with_documents(demo.tools, {t.id: DocumentRecord(t.id, t.definition_hash(), doc, guarded)})
    text = more[2].description
    assert text.startswith(t.description) and "When you need it." in text and "Not for cooking." not in text
    assert "ask one" in text and "ask three" in text and "ask two" not in text
    assert [m.id for m in more] == [x.id for x in demo.tools]
    assert all(m is x for m, x in zip(more, demo.tools) if m.id != t.id)


def test_a_document_for_an_older_definition_is_not_appended(demo):
    t = demo.tools[2]
    doc = ToolDocument("When you need it.", (), "Not for cooking.")
    more = with_documents(demo.tools, {t.id: DocumentRecord(t.id, "0" * 64, doc)})
    assert more[2] is demo.tools[2]


def test_a_tool_the_writer_wrote_nothing_for_is_returned_as_it_was():
    t = CatalogTool("x", "x", "Reads a file.\n")  # a trailing newline is part of the definition (and its hash)
    (same,) = expanded([t], writer=lambda _: [])
    assert same.description == t.description and same.definition_hash() == t.definition_hash()


def _file_ids(path):
    return [(r.id, r.sha256) for r in read_records(path)]


def test_resume_skips_done_tools_and_writes_the_rest(demo, tmp_path):
    out = tmp_path / "demo.jsonl"
    model = FakeModel()
    build("demo", out, model, limit=2, say=lambda s: None)
    assert model.written == [t.name for t in demo.tools[:2]]
    again = FakeModel()
    written = build("demo", out, again, limit=4, threads=1, say=lambda s: None)
    assert again.written == [t.name for t in demo.tools[2:4]] and len(written) == 2
    assert _file_ids(out) == [(t.id, t.definition_hash()) for t in demo.tools[:4]]
    line = json.loads(out.read_text().splitlines()[-1])
    assert set(line) >= {"id", "sha256", "document", "guard", "seconds", "model_sha256", "threads"}
    assert len(line["guard"]) == len(OPENINGS) and line["threads"] == 1 and len(line["model_sha256"]) == 64
    assert timing(read_records(out))["tools"] == 4 and timing(read_records(out))["threads"] == 1


def test_a_changed_definition_is_rewritten_and_an_unchanged_one_is_not(demo, tmp_path, monkeypatch):
    out = tmp_path / "demo.jsonl"
    build("demo", out, FakeModel(), limit=3, say=lambda s: None)
    changed = replace(demo.tools[1], description=demo.tools[1].description + " Now also in colour.")
    tools = [demo.tools[0], changed, *demo.tools[2:]]
    monkeypatch.setattr(tool_documents, "catalog", lambda dataset, seed=0: Catalog(tools, demo.development, demo.test))
    model = FakeModel()
    build("demo", out, model, limit=3, say=lambda s: None)
    assert model.written == [changed.name]
    assert sorted(_file_ids(out)) == sorted((t.id, t.definition_hash()) for t in tools[:3])
    assert len(out.read_text().splitlines()) == 3  # the old line of the changed tool is gone


def test_a_cut_last_line_is_ignored_and_written_again(demo, tmp_path):
    out = tmp_path / "demo.jsonl"
    build("demo", out, FakeModel(), limit=3, say=lambda s: None)
    lines = out.read_text().splitlines()
    out.write_text(lines[0] + "\n" + lines[1] + "\n" + lines[2][: len(lines[2]) // 2])  # a run killed mid-line
    assert [r.id for r in read_records(out)] == [t.id for t in demo.tools[:2]]
    model = FakeModel()
    build("demo", out, model, limit=3, say=lambda s: None)
    assert model.written == [demo.tools[2].name]
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == [t.id for t in demo.tools[:3]]


def test_measure_gives_paired_intervals_and_leaves_undocumented_tools_alone(demo, monkeypatch):
    monkeypatch.setattr(tool_documents, "dense_unavailable_reason", lambda: "no embeddings in this test.")
    model = FakeModel()
    records = {}
    for t in demo.tools[:10]:
        doc = write_document(t, model)
        records[t.id] = DocumentRecord(t.id, t.definition_hash(), doc, tuple(guard(t, doc, [], model)))
    result = measure("demo", records)
    assert result.documented == 10 and result.tools == len(demo.tools)
    assert result.skipped == {"dense-minilm": "no embeddings in this test.", "hybrid-rrf": "no embeddings in this test."}
    assert [(r.test_set, r.retriever) for r in result.rows] == [("demo", "bm25"), ("demo", "bm25-fielded")]
    for r in result.rows:
        assert r.n == len(demo.test["demo"])
        for mean, low, high in (r.original, r.expanded):
            assert low <= mean <= high
        assert r.difference[0] == pytest.approx(r.expanded[0] - r.original[0])
        assert r.difference[1] <= r.difference[0] <= r.difference[2]
    assert any(r.difference[0] != 0 for r in result.rows)  # the documents did change some rankings
    assert "10 of 74 tools have a document" in result.report() and "skipped hybrid-rrf" in result.report()
    nothing = measure("demo", {}, names=("bm25",))
    assert nothing.documented == 0 and nothing.rows[0].difference == (0.0, 0.0, 0.0)


def test_measure_reads_a_documents_file_of_one_s_own_run(demo, tmp_path):
    out = tmp_path / "docs.jsonl"
    build("demo", out, FakeModel(), limit=4, say=lambda s: None)
    from_file, from_records = measure("demo", out, names=("bm25",)), measure("demo", str(out), names=("bm25",))
    assert from_file.documented == from_records.documented == 4
    assert from_file.rows == from_records.rows


def test_a_measurement_is_stored_beside_other_datasets_and_read_back_as_it_was(demo, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(tool_documents, "LocalLlamaProvider", lambda **_: pytest.fail("the model was started"))
    out = tmp_path / "docs.jsonl"
    build("demo", out, FakeModel(), limit=5, say=lambda s: None)
    stored = tmp_path / "measured.json"
    other = Measurement("toollens", 1, 2, [], {"dense-minilm": "a reason."})
    save_measured(other, stored)
    assert main(["--dataset", "demo", "--out", str(out), "--measure", str(stored)]) == 0
    assert "5 of 74 tools have a document" in capsys.readouterr().out
    found = json.loads(stored.read_text())
    assert sorted(found) == ["demo", "toollens"]
    again = Measurement.from_json(found["demo"])
    assert again == measure("demo", out)
    assert Measurement.from_json(found["toollens"]) == other


def test_the_committed_measurements_are_of_the_committed_documents():
    """What Chapter 8b shows for a public catalog without its data: rows for every retriever and test set,
    measured with as many documented tools as the committed documents hold."""
    found = {d: m for d in DATASETS if (m := load_measured(d)) is not None}
    if not found:
        pytest.skip("no public catalog's document measurement is committed yet")
    for dataset, measured in found.items():
        docs = load_documents(dataset)
        assert measured.documented == len(docs.records) <= measured.tools
        assert {r.retriever for r in measured.rows} | set(measured.skipped) == set(tool_documents.RETRIEVERS)
        assert all(r.original[1] <= r.original[0] <= r.original[2] and r.difference[1] <= r.difference[0] <= r.difference[2]
                   for r in measured.rows)


def _row(test_set: str, retriever: str, difference: tuple[float, float, float]) -> Row:
    return Row(test_set, retriever, 50, (0.5, 0.4, 0.6), (0.5 + difference[0], 0.4, 0.7), difference)


@pytest.mark.parametrize("rows, expected", [
    ([("livemcp-task", "hybrid-rrf", (0.1, 0.02, 0.2)), ("livemcp-step", "hybrid-rrf", (0.0, -0.03, 0.03))], DOCUMENTED),
    ([("livemcp-task", "hybrid-rrf", (0.1, -0.01, 0.2))], "hybrid-rrf"),                        # inside its interval
    ([("livemcp-task", "hybrid-rrf", (0.1, 0.02, 0.2)), ("demo", "hybrid-rrf", (-0.05, -0.09, -0.01))], "hybrid-rrf"),
    ([("livemcp-task", "bm25", (0.1, 0.02, 0.2)), ("livemcp-task", "hybrid-rrf", (0.0, -0.02, 0.02))], "hybrid-rrf"),
    ([("demo", "hybrid-rrf", (0.1, 0.02, 0.2))], "hybrid-rrf"),                                   # whole tasks not measured
])
def test_the_documents_become_the_default_only_by_the_rule_fixed_in_advance(rows, expected):
    """Better on LiveMCPBench's whole tasks and worse on no measured set, for hybrid-rrf's own rows only."""
    by_dataset: dict[str, list[Row]] = {}
    for test_set, retriever, difference in rows:
        by_dataset.setdefault("demo" if test_set == "demo" else "livemcpbench", []).append(_row(test_set, retriever, difference))
    measured = [Measurement(d, 1, 2, r, {}) for d, r in by_dataset.items()]
    assert default_with_documents(measured) == expected


@pytest.mark.parametrize("call", [lambda: measure("nope"), lambda: load_documents("nope"),
                                  lambda: build("nope", "x.jsonl", FakeModel())])
def test_an_unknown_dataset_is_one_sentence(call):
    with pytest.raises(ValueError, match=r"^No dataset named 'nope'; the datasets are: demo, livemcpbench, toollens\.$"):
        call()


def test_an_unreadable_file_is_one_sentence(tmp_path):
    (tmp_path / "folder.jsonl").mkdir()
    with pytest.raises(ValueError, match=r"^The tool-document file folder\.jsonl cannot be read \(\w+\)\.$"):
        read_records(tmp_path / "folder.jsonl")
    (tmp_path / "bytes.jsonl").write_bytes(b"\xff\xfe{")
    with pytest.raises(ValueError, match=r"cannot be read \(UnicodeDecodeError\)\.$"):
        read_records(tmp_path / "bytes.jsonl")


def test_the_cli_says_one_sentence_for_bad_input_and_starts_no_model(capsys, monkeypatch):
    monkeypatch.setattr(tool_documents, "LocalLlamaProvider", lambda **_: pytest.fail("the model was started"))
    assert main(["--dataset", "nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "No dataset named 'nope'; the datasets are: demo, livemcpbench, toollens." and "Traceback" not in err


def test_the_cli_prints_a_review_sample_without_a_model(demo, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(tool_documents, "LocalLlamaProvider", lambda **_: pytest.fail("the model was started"))
    out = tmp_path / "demo.jsonl"
    build("demo", out, FakeModel(), limit=2, say=lambda s: None)
    assert main(["--dataset", "demo", "--out", str(out), "--review", "5"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("1. ") and demo.tools[0].id in printed and demo.tools[1].id in printed


def test_absent_committed_documents_are_empty_and_say_so(monkeypatch):
    monkeypatch.setattr(tool_documents, "FOLDER", "no_such_folder")
    found = load_documents("demo")
    assert found.records == {} and "python -m experiments.tool_documents --dataset demo" in found.note


def test_the_review_sample_is_readable_and_fixed(demo):
    model = FakeModel()
    records = []
    for t in demo.tools[:6]:
        doc = write_document(t, model)
        model.misassign = {doc.examples[0]}
        records.append(DocumentRecord(t.id, t.definition_hash(), doc, tuple(guard(t, doc, neighbours(demo.tools)[t.id], model))))
    text = sample_for_review(records, demo.tools, n=3, seed=0)
    assert text == sample_for_review(records, demo.tools, n=3, seed=0)
    blocks = text.split("\n\n")
    assert len(blocks) == 3 and all(b.split(". ", 1)[1].split("\n")[0] in {t.id for t in demo.tools[:6]} for b in blocks)
    assert text.count("[DROPPED]") == 3 and text.count("[kept]") == 9 and "  Use it when you need to" in text
    assert len(sample_for_review(records, demo.tools, n=30).split("\n\n")) == 6


@pytest.mark.real_model
@needs_model
def test_the_committed_guard_verdicts_reproduce_on_the_real_model(demo):
    """Two committed demo documents' candidate requests, guarded again: the same verdicts (a choice among
    five tools, which a rounding in another build of llama.cpp does not flip the way it can a text)."""
    records = load_documents("demo").records
    picks = [records[t.id] for t in demo.tools if t.id in records and records[t.id].kept().examples][:2]
    by_id = {t.id: t for t in demo.tools}
    near = neighbours(demo.tools)
    with LocalLlamaProvider(threads=picks[0].threads or None) as model:
        again = [guard(by_id[r.id], r.document, near[r.id], model) for r in picks]
    assert [[v.kept for v in verdicts] for verdicts in again] == [[v.kept for v in r.guard] for r in picks]
    assert [[v.chosen for v in verdicts] for verdicts in again] == [[v.chosen for v in r.guard] for r in picks]


@pytest.mark.parametrize("dataset", DATASETS)
def test_the_committed_documents_fit_their_catalog_and_their_review(dataset):
    """What Chapter 8b's figures stand on, for each catalog whose data is here: one document per tool's
    current definition, written on two server threads, and a review that read the seeded draw itself
    (its count of appended requests is that draw's)."""
    cats = catalogs()
    if dataset not in cats:
        pytest.skip(f"the public data for {dataset} is not here")
    records = list(load_documents(dataset).records.values())
    assert {r.sha256 for r in records} == {t.definition_hash() for t in cats[dataset].tools}
    assert timing(records)["threads"] == 2
    review = DATA.joinpath(FOLDER).joinpath(f"{dataset}.review.md").read_text("utf-8")
    found = re.search(r"\*\*Appended examples: (\d+) in the 30 documents", review)
    assert found, f"{dataset}.review.md does not say how many appended examples it read"
    read = int(found[1])
    assert read == sum(len(r.kept().examples) for r, _ in review_sample(records, cats[dataset].tools))
