"""check_prose: a prose figure is checked as it is written — decimals, commas, sign, per cent, 'about'."""
from __future__ import annotations

import pytest

from harness.workbook.evidence import check_prose, mismatch


@pytest.mark.parametrize("figure, value", [
    ("0.41", 0.4091), ("41,669", 41_669), ("20.8%", 0.2083), ("95 %", 0.951), ("+0.16", 0.157),
    ("−0.05", -0.0512), ("-0.05", -0.049), ("+0.00", -0.001), ("5.0", 4.96),
    ("about 76,300", 76_281), ("about 7,990", 7_986), ("about 20,700", 20_650),
    ("81 %, about 76,300, 7,990", (0.812, 76_265, 7_989)),
    ("0.44 [0.34, 0.54]", (0.441, 0.338, 0.54)), ("+0.02 [−0.05, +0.08]", (0.02, -0.05, 0.081)),
    ("156 tools, 41,669 tokens", [156, 41_669]), ("notion", "notion"),
    ("per-turn top-10 on 0.23", 0.23), ("Qwen2.5 picks 0.44 in a 200k window", 0.44), ("(−64,700, 0.5)", (-64_700, 0.5)),
])
def test_a_figure_holds_when_the_value_rounds_to_it_as_written(figure, value):
    assert mismatch(figure, value) is None


@pytest.mark.parametrize("figure, value, computed", [
    ("0.41", 0.404, "0.40"), ("41,669", 41_670, "41,670"), ("20.8%", 0.21, "21.0%"),
    ("+0.16", -0.16, "-0.16"), ("−0.05", 0.05, "+0.05"), ("0.25", -0.25, "-0.25"),
    ("about 76,300", 76_140, "about 76,100"), ("200", 156, "156"),
    ("81 %, about 76,300", (0.8162, 76_265), "82 %, about 76,300"), ("41,700, about 41,700", (41_669, 41_669), "41,669, about 41,700"),
    ("0.44 [0.34, 0.54]", (0.44, 0.34, 0.55), "0.44 [0.34, 0.55]"),
])
def test_a_figure_fails_with_what_was_computed_in_its_own_format(figure, value, computed):
    assert mismatch(figure, value) == f"the prose says {figure!r}; computed {computed!r}"


def test_a_figure_and_its_values_must_agree_in_count():
    with pytest.raises(ValueError, match="holds 2 numbers but 1 values"):
        mismatch("0.44 [0.34]", 0.44)


def test_check_prose_prints_one_label_line_when_everything_holds(capsys):
    check_prose("every number in section 1", {"0.41": 0.41, "41,669": 41_669}, {"search is above both": True})
    assert capsys.readouterr().out == "✓ checks: every number in section 1\n"


def test_check_prose_names_every_failure_not_just_the_first(capsys):
    with pytest.raises(AssertionError) as failure:
        check_prose("x", {"0.41": 0.40, "3.5": 3.5, "12": 13}, {"holds": True, "separated": False})
    message = str(failure.value)
    assert "'0.41'; computed '0.40'" in message and "'12'; computed '13'" in message
    assert "'separated' does not hold" in message and "3.5" not in message and "'holds'" not in message
    assert capsys.readouterr().out == ""
