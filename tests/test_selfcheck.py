"""Self-check questions: grade() says right or wrong and why; the static fallback shows every answer; and every
chapter's saved self-check is a fair quiz — at least three options a question, answers spread over the options,
each reason citing a figure the chapter prints."""
from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from workbook.views.selfcheck import Question, SelfCheck, from_static_html, grade, self_check, static_html

CACHE = Question("Where should found tools go so that the prompt cache survives?",
                 ("First in the tools block", "After the conversation so far", "In the system prompt"), 1,
                 "A cache serves only the prefix up to the first change; anything added at the end changes nothing before it.")
RRF = Question("What does RRF add up?", ("Scores", "1/(k + rank) from each list", "Cosines"), 1,
               "Ranks compare across lists; scores do not.")


def test_the_right_choice_is_right_and_says_why():
    right, text = grade(CACHE, 1)
    assert right and text.startswith("✔") and CACHE.why in text


@pytest.mark.parametrize("choice", [0, 2])
def test_a_wrong_choice_is_wrong_names_the_answer_and_says_why(choice):
    right, text = grade(CACHE, choice)
    assert not right and text.startswith("✘")
    assert "After the conversation so far" in text and CACHE.why in text


def test_no_choice_asks_for_one():
    assert grade(CACHE, None) == (False, "Choose an answer first.")


@pytest.mark.parametrize("choice", [3, -1, "1", 1.0, True])
def test_a_choice_that_is_no_option_is_one_sentence(choice):
    with pytest.raises(ValueError, match=r"^Choose one of options 0 to 2, not .*\.$"):
        grade(CACHE, choice)


@pytest.mark.parametrize("kwargs, message", [
    (dict(options=("only one",), answer=0), "at least 3 options"),
    (dict(options=("a", "b"), answer=0), "at least 3 options, not 2"),
    (dict(options=("a", "b", "c"), answer=3), "answer index 3 is none of them"),
    (dict(options=("a", "b", "c"), answer=0, why=" "), "needs a prompt and a reason"),
])
def test_a_malformed_question_is_refused_in_one_sentence(kwargs, message):
    fields = dict(prompt="Which?", why="Because.") | kwargs
    with pytest.raises(ValueError, match=message):
        Question(**fields)


def test_the_static_fallback_shows_each_question_its_options_and_folded_answer():
    page = static_html([CACHE, RRF])
    root = ET.fromstring(page)  # well-formed, so it renders the same everywhere
    details = root.findall(".//details")
    assert len(details) == 2 and all(d.find("summary").text == "Show the answer" for d in details)
    assert "B. After the conversation so far" in ET.tostring(details[0], encoding="unicode")
    assert html.escape(RRF.options[1]) in page and html.escape(CACHE.why) in page
    assert [o.text for o in root.findall(".//li/ol/li")] == [*CACHE.options, *RRF.options]


def test_question_text_is_escaped():
    page = static_html([Question("<img src=x onerror=alert(1)>?", ("<b>", "&", "'"), 0, "<script>")])
    assert "<img" not in page and "<script>" not in page and "&lt;script&gt;" in page


def test_the_display_carries_the_widget_and_the_fallback():
    bundle = self_check([CACHE, RRF])._repr_mimebundle_()
    assert bundle["text/html"] == static_html([CACHE, RRF])
    assert "application/vnd.jupyter.widget-view+json" in bundle  # ipywidgets is a notebooks dependency
    assert bundle["text/plain"] == "2 self-check questions"


def test_the_widget_checks_an_answer_through_grade():
    widget = SelfCheck([CACHE]).widget()
    _, question = widget.children
    _, choices, check, feedback = question.children
    check.click()
    assert "Choose an answer first." in feedback.value
    choices.value = 0
    check.click()
    assert "✘" in feedback.value and html.escape(CACHE.why) in feedback.value
    choices.value = 1
    assert feedback.value == ""  # a new choice clears the old verdict
    check.click()
    assert re.search("✔ Right", feedback.value)


def test_an_empty_self_check_is_refused():
    with pytest.raises(ValueError, match="at least one question"):
        self_check([])


def test_the_static_fallback_reads_back_into_the_same_questions():
    hostile = Question("<b>Which</b> & why?", ("a < b", "“quoted”", "x — y"), 2, "Because 3 < 4 — & so on.")
    assert from_static_html(static_html([CACHE, RRF, hostile])) == [CACHE, RRF, hostile]


# --- every chapter's saved self-check ------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "notebooks").glob("*.ipynb"))
#: No letter may answer more than this share of the course's questions.
COURSE_SHARE = 0.40
#: A figure: a number as a chapter prints it (41,669 · 0.93 · 14/42 · 99.5%), not a section or chapter number.
FIGURE = re.compile(r"(?<![\w@§/.,])(?<!Chapter )(?<!section )\d[\d,]*(?:\.\d+)?(?:/\d[\d,]*)?")


def _text(output: dict) -> str:
    data = output.get("data", {})
    parts = [output.get("text", ""), data.get("text/plain", ""), data.get("text/html", ""), output.get("evalue", "")]
    return "".join("".join(p) if isinstance(p, list) else p for p in parts)


def saved_self_check(path: Path) -> tuple[list[Question], str]:
    """(the chapter's self-check questions, read from its saved output; everything else the chapter printed)."""
    cells = [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    quiz = [c for c in cells if "self_check([" in "".join(c["source"])]
    assert len(quiz) == 1, f"{path.name}: one self-check cell"
    try:
        questions = from_static_html("".join(_text(o) for o in quiz[0]["outputs"]))
    except ValueError as refused:  # a question the Question class no longer accepts (fewer than three options)
        pytest.fail(f"{path.name}: {refused}")
    printed = "\n".join(_text(o) for c in cells if c is not quiz[0] for o in c.get("outputs", []))
    return questions, printed


def figures(why: str) -> list[str]:
    return [f.rstrip(",") for f in FIGURE.findall(why)]


def printed_figure(figure: str, printed: str) -> bool:
    return re.search(rf"(?<![\d.]){re.escape(figure)}(?![\d]|\.\d)", printed) is not None


def letters(questions: list[Question]) -> Counter:
    return Counter("ABCDEFGHIJ"[q.answer] for q in questions)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name.split("_")[0])
def test_each_chapters_self_check_is_fair_and_cites_what_the_chapter_prints(path):
    """At least three options a question; no letter answers more than half of the chapter's questions; each reason
    cites at least one figure, and every figure it cites is one the chapter printed (its saved outputs)."""
    questions, printed = saved_self_check(path)
    assert questions, f"{path.name}: its saved self-check output holds no questions (re-run the notebook)"
    assert all(len(q.options) >= 3 for q in questions), [q.prompt for q in questions if len(q.options) < 3]
    top, n = letters(questions).most_common(1)[0]
    assert n <= len(questions) / 2, f"{path.name}: {n} of {len(questions)} answers are {top}"
    for q in questions:
        cited = figures(q.why)
        assert cited, f"{path.name}: the reason of {q.prompt[:50]!r} cites no figure the chapter prints"
        missing = [f for f in cited if not printed_figure(f, printed)]
        assert not missing, f"{path.name}: {q.prompt[:50]!r} cites {missing}, which the chapter's outputs do not show"


def test_the_course_spreads_its_answers_over_the_options():
    every = [q for path in CHAPTERS for q in saved_self_check(path)[0]]
    counts = letters(every)
    assert max(counts.values()) <= COURSE_SHARE * len(every), f"answers per letter over {len(every)} questions: {dict(counts)}"


def test_figures_are_numbers_as_printed_not_section_numbers():
    assert figures("§3: 41,669 tokens, 0.93 [0.88, 0.97], 14/42 in Chapter 6a, R@10 and section 4.") == \
        ["41,669", "0.93", "0.88", "0.97", "14/42"]
    assert printed_figure("0.9", "accuracy 0.9 at N=5") and not printed_figure("0.9", "accuracy 0.93")
    assert not printed_figure("41", "41,669 tokens") or printed_figure("41,669", "41,669 tokens")
