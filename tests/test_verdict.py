"""The README's verdict table is what harness.experiments.verdict measures now, row by row (issue 17).

Each row is measured again here and compared with the README's line for its claim: a change to
the package, the committed sweep or the scenarios that moves a number fails this test until
``python -m harness.experiments.verdict --write README.md`` is run and the new table committed. Rows that need
the public data or the embedding extra are compared where those are present and skip, saying
why, where they are not.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.experiments import verdict

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
    assert row.claim in written, f"the README has no row for {row.claim!r}: run python -m harness.experiments.verdict --write README.md"
    assert written[row.claim] == line_of(row), "the README's verdict row drifted: run python -m harness.experiments.verdict --write README.md"


@pytest.mark.parametrize("make", verdict.NEED_DATA, ids=lambda f: f.__name__)
def test_the_readme_row_needing_public_data_is_measured_now(make):
    row = make()
    if row.needs is not None:
        pytest.skip(f"{row.claim}: {row.measured}")
    assert verdict.readme_rows(README)[row.claim] == line_of(row), \
        "the README's verdict row drifted: run python -m harness.experiments.verdict --write README.md"


def test_the_readme_holds_every_claim_once_in_order():
    claims = list(verdict.readme_rows(README))
    assert len(claims) == len(verdict.ROWS) == len(set(claims))


def test_writing_keeps_rows_this_machine_cannot_measure():
    measured = verdict.VerdictRow("a claim", "1.00 [0.90, 1.00]", "Chapter 9", "holds")
    absent = verdict.VerdictRow("a | data claim", "not measured here: needs data", "Chapter 9", "—", needs="data")
    kept = "| a \\| data claim | 0.5 | Chapter 9 | refuted |"
    text = f"# T\n\n{verdict.START}\n| h |\n|---|\n| a claim | old | Chapter 9 | refuted |\n{kept}\n{verdict.END}\n\nafter\n"
    new = verdict.rewrite(text, [measured, absent])
    assert verdict.readme_rows(new) == {"a claim": "| a claim | 1.00 [0.90, 1.00] | Chapter 9 | holds |", "a | data claim": kept}
    assert new.startswith("# T\n\n") and new.endswith(f"{verdict.END}\n\nafter\n")
    with pytest.raises(ValueError, match="no verdict section"):
        verdict.readme_rows("# no section\n")


def test_code_lines_counts_code_not_docstrings_comments_or_blanks():
    source = '"""Module doc,\nover two lines."""\n\n# a comment\nimport os\n\n\ndef f(x):\n    """Doc."""\n    return (x +\n            1)  # trailing\n'
    assert verdict.code_lines(source) == 4  # import, def, and the two lines of the return
