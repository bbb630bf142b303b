"""check_figures: a chapter's prose figures checked against the computed values in one call."""
from __future__ import annotations

import pytest

from workbook.evidence import check_figures, figures_in, render_like


def test_figures_are_read_as_the_prose_writes_them():
    assert figures_in("0.93 → 0.80") == [0.93, 0.80]
    assert figures_in("+0.02 [−0.05, +0.08]") == [0.02, -0.05, 0.08]
    assert figures_in("85 of 622 (14 %), 95 % CI 11 %–35 %") == [85, 622, 0.14, 0.95, 0.11, 0.35]
    assert figures_in("41,669 → 214 tokens") == [41669, 214]
    assert figures_in("Qwen2.5 at k=10, N = 40") == [10, 40]


def test_values_are_rendered_in_each_figure_s_own_style():
    assert render_like("+0.02 [−0.05, +0.08]", (0.0249, -0.051, 0.0801)) == "+0.02 [−0.05, +0.08]"
    assert render_like("85 of 622 (14 %)", (85, 622, 0.1367)) == "85 of 622 (14 %)"
    assert render_like("5,033 tokens", 5033.4) == "5,033 tokens"
    assert render_like("0.93 → 0.80", (0.9, 0.8)) == "0.90 → 0.80"


def test_matching_figures_print_one_label_line(capsys):
    check_figures({"0.93 → 0.80": (0.9293, 0.7961), "+0.00 [−0.04, +0.12]": (-0.001, -0.04, 0.1249),
                   "22 % (11 %–35 %)": (0.2174, 0.11, 0.349), "46 of 74": (46, 74)},
                  "every number in section 2", claims={"not separated": True})
    assert capsys.readouterr().out == "✓ checks: every number in section 2\n"


def test_a_figure_the_output_no_longer_has_fails_naming_both_texts(capsys):
    with pytest.raises(AssertionError) as failed:
        check_figures({"0.93 → 0.80": (0.93, 0.79), "46 of 74": (46, 74)}, "section 2")
    assert "'0.93 → 0.80'" in str(failed.value) and "'0.93 → 0.79'" in str(failed.value)
    assert "46 of 74" not in str(failed.value)
    assert capsys.readouterr().out == ""


def test_a_claim_that_no_longer_holds_fails_naming_it():
    with pytest.raises(AssertionError, match="the intervals do not overlap"):
        check_figures({}, "section 3", claims={"the intervals do not overlap": False, "k = 10": True})


def test_a_key_whose_numbers_and_values_differ_in_count_is_a_mistake_in_the_cell():
    with pytest.raises(ValueError, match="3 figures"):
        check_figures({"+0.02 [−0.05, +0.08]": (0.02, -0.05)}, "x")
    with pytest.raises(ValueError, match="no figure"):
        check_figures({"not separated": 0.3}, "x")


# --- the chapters: every figure an evidence cell checks is quoted from the chapter's own prose ---------

import ast  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def checked_figures(source: str) -> list[str]:
    """The literal keys of the figures dict handed to every check_figures call in a cell's source."""
    keys = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "check_figures" and node.args:
            first = node.args[0]
            if isinstance(first, ast.IfExp):  # {…} if data else {}
                first = first.body
            if isinstance(first, ast.Dict):
                keys += [k.value for k in first.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    return keys


def test_the_figure_keys_are_read_from_a_cell():
    cell = 'x = 1\ncheck_figures({"0.93 to 0.80": (a, b), "k = 7": k} if a else {}, "s", claims={"c": True})'
    assert checked_figures(cell) == ["0.93 to 0.80", "k = 7"]


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if "check_figures(" in p.read_text(encoding="utf-8")], ids=lambda p: p.stem)
def test_every_figure_an_evidence_cell_checks_is_quoted_from_the_chapter_s_prose(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    prose = " ".join(" ".join("".join(c["source"]).split()) for c in cells if c["cell_type"] == "markdown")
    keys = [key for c in cells if c["cell_type"] == "code" and "check_figures(" in "".join(c["source"])
            for key in checked_figures("".join(c["source"]))]
    assert keys, "a notebook that calls check_figures checks at least one figure"
    assert [key for key in keys if " ".join(key.split()) not in prose] == [], "figures checked that the prose does not state"
