"""Self-check questions: grade() says right or wrong and why; the static fallback shows every answer."""
from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET

import pytest

from workbook.views.selfcheck import Question, SelfCheck, grade, self_check, static_html

CACHE = Question("Where should found tools go so that the prompt cache survives?",
                 ("First in the tools block", "After the conversation so far", "In the system prompt"), 1,
                 "A cache serves only the prefix up to the first change; anything added at the end changes nothing before it.")
RRF = Question("What does RRF add up?", ("Scores", "1/(k + rank) from each list"), 1, "Ranks compare across lists; scores do not.")


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
    (dict(options=("only one",), answer=0), "at least two options"),
    (dict(options=("a", "b"), answer=2), "answer index 2 is none of them"),
    (dict(options=("a", "b"), answer=0, why=" "), "needs a prompt and a reason"),
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
    page = static_html([Question("<img src=x onerror=alert(1)>?", ("<b>", "&"), 0, "<script>")])
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
