"""The README's verdict table is what experiments.verdict measures now, row by row (issue 17), and
what the chapters it cites print (issue 26, defect 5).

Each row is measured again here and compared with the README's line for its claim: a change to
the package, the committed sweep or the scenarios that moves a number fails this test until
``python -m experiments.verdict --write README.md`` is run and the new table committed. Rows that need
the public data or the embedding extra are compared where those are present and skip, saying
why, where they are not.

Every number a row's "measured" and "verdict" cells show must also be printed by the committed outputs of
the chapter its "computed by" cell cites, so a row cannot quote a number no chapter shows, and a chapter
re-run that moves a number fails here until the table is rewritten. Each row names the model behind it.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from experiments import verdict

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
LOCAL = [make for make in verdict.ROWS if make not in verdict.NEED_DATA]


def line_of(row: verdict.VerdictRow) -> str:
    return verdict.verdict_table([row]).splitlines()[-1]


@pytest.mark.parametrize("make", LOCAL, ids=lambda f: f.__name__)
def test_the_readme_row_is_measured_now(make):
    row = make()
    assert row.needs is None, row.needs
    written = verdict.readme_rows(README)
    assert row.claim in written, f"the README has no row for {row.claim!r}: run python -m experiments.verdict --write README.md"
    assert written[row.claim] == line_of(row), "the README's verdict row drifted: run python -m experiments.verdict --write README.md"


@pytest.mark.parametrize("make", verdict.NEED_DATA, ids=lambda f: f.__name__)
def test_the_readme_row_needing_public_data_is_measured_now(make):
    row = make()
    if row.needs is not None:
        pytest.skip(f"{row.claim}: {row.measured}")
    assert verdict.readme_rows(README)[row.claim] == line_of(row), \
        "the README's verdict row drifted: run python -m experiments.verdict --write README.md"


def test_the_readme_holds_every_claim_once_in_order():
    claims = list(verdict.readme_rows(README))
    assert len(claims) == len(verdict.ROWS) == len(set(claims))


def test_writing_keeps_rows_this_machine_cannot_measure():
    measured = verdict.VerdictRow("a claim", (verdict.STANDIN,), "1.00 [0.90, 1.00]", "Chapter 9", "holds")
    absent = verdict.VerdictRow("a | data claim", (verdict.RETRIEVAL,), "not measured here: needs data", "Chapter 9", "—", needs="data")
    kept = f"| a \\| data claim | {verdict.RETRIEVAL} | 0.5 | Chapter 9 | refuted |"
    text = f"# T\n\n{verdict.START}\n| h |\n|---|\n| a claim | x | old | Chapter 9 | refuted |\n{kept}\n{verdict.END}\n\nafter\n"
    new = verdict.rewrite(text, [measured, absent])
    assert verdict.readme_rows(new) == {"a claim": f"| a claim | {verdict.STANDIN} | 1.00 [0.90, 1.00] | Chapter 9 | holds |",
                                        "a | data claim": kept}
    assert new.startswith("# T\n\n") and new.endswith(f"{verdict.END}\n\nafter\n")
    with pytest.raises(ValueError, match="no verdict section"):
        verdict.readme_rows("# no section\n")


def test_code_lines_counts_code_not_docstrings_comments_or_blanks():
    source = '"""Module doc,\nover two lines."""\n\n# a comment\nimport os\n\n\ndef f(x):\n    """Doc."""\n    return (x +\n            1)  # trailing\n'
    assert verdict.code_lines(source) == 4  # import, def, and the two lines of the return


NOTEBOOKS = ROOT / "notebooks"
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
CHAPTER = re.compile(r"Chapter (\d+)([a-z]?)\b")
MARKUP = re.compile(r"data:[^\"'\s)]+|<[^>]*>")  # embedded images (base64 digits) and tags
#: A rate with its interval, as chapters print it: ``0.93 [0.88–0.97]`` or ``+0.02 [-0.05, +0.09]``.
RATE = re.compile(r"([-+−]?\d+\.\d+) \[([-+−]?\d+\.\d+)(?:, |–)([-+−]?\d+\.\d+)\]")


def numbers(text: str) -> set[str]:
    """The numbers in a text, as written but without thousands separators (``5,033`` → ``5033``)."""
    return {n.rstrip(",").replace(",", "") for n in NUMBER.findall(text)}


def rates(text: str) -> set[tuple[str, ...]]:
    """Every rate printed with its interval, signs written one way (``+`` dropped, ``−`` as ``-``)."""
    return {tuple(x.replace("+", "").replace("−", "-") for x in m) for m in RATE.findall(text)}


def printed(notebook: Path) -> str:
    """The text a notebook's committed outputs show (streams, plain text, HTML without its markup)."""
    parts = []
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        for out in cell.get("outputs", []):
            parts.append("".join(out.get("text", "")))
            data = out.get("data", {})
            for kind in ("text/plain", "text/markdown", "text/html"):
                parts.append(MARKUP.sub(" ", "".join(data.get(kind, ""))))
    return "\n".join(parts)


def chapter_notebook(number: str, part: str) -> Path:
    found = sorted(NOTEBOOKS.glob(f"{int(number):02d}{part}_*.ipynb"))
    assert len(found) == 1, f"Chapter {number}{part} is not one notebook: {found}"
    return found[0]


def cells(line: str) -> list[str]:
    """A Markdown table line's cells, ``\\|`` read as ``|``."""
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]


def readme_table() -> list[dict[str, str]]:
    """The README's verdict rows as {column header: cell}."""
    body = README[README.index(verdict.START) + len(verdict.START):README.index(verdict.END)].strip().splitlines()
    return [dict(zip(cells(body[0]), cells(line))) for line in body[2:]]


@pytest.mark.parametrize("row", readme_table(), ids=lambda r: r["claim"])
def test_every_number_in_a_row_is_printed_by_the_chapter_it_cites(row):
    if row["verdict"] == "—":
        pytest.skip(f"{row['claim']}: not measured on the machine that wrote the README")
    cited = list(dict.fromkeys(CHAPTER.findall(row["computed by"])))
    if not cited:
        assert verdict.NO_CHAPTER in row["computed by"], "a row cites the chapter that prints its numbers, or says none does"
        return
    text = "\n".join(printed(chapter_notebook(*c)) for c in cited)
    said = row["measured (95 % intervals)"] + " " + row["verdict"]
    for label in verdict.MODELS:  # a model's name is not a measurement
        said = said.replace(label, " ")
    where = ", ".join(chapter_notebook(*c).name for c in cited)
    missing = sorted(numbers(said) - numbers(text), key=float)
    assert not missing, f"{row['claim']!r}: {missing} are not printed by {where}"
    unpaired = sorted(rates(said) - rates(text))  # a rate and its interval must be printed together
    assert not unpaired, f"{row['claim']!r}: the rates with intervals {unpaired} are not printed so by {where}"


@pytest.mark.parametrize("row", readme_table(), ids=lambda r: r["claim"])
def test_every_row_names_the_model_behind_its_numbers(row):
    labels = [m.strip() for m in row.get("model", "").split(";")]
    assert labels and all(m in verdict.MODELS for m in labels), \
        f"{row['claim']!r}: the model column says {row.get('model')!r}; it names one of {verdict.MODELS}"
    if len(labels) > 1:  # a row with two models says which number is whose
        assert all(m in row["measured (95 % intervals)"] for m in labels)


def test_numbers_are_read_as_written():
    assert numbers("N=5 0.93 [0.88–0.97]; 5,033 tokens, 82% and 2,797.") == {"5", "0.93", "0.88", "0.97", "5033", "82", "2797"}
    assert "0.71" not in numbers("0.705 [0.62–0.78]")
    assert rates("0.93 [0.88–0.97] and +0.02 [−0.05, +0.09]") == rates("0.93 [0.88, 0.97]; 0.02 [-0.05, 0.09]") \
        == {("0.93", "0.88", "0.97"), ("0.02", "-0.05", "0.09")}
