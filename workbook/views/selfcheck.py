"""Self-check questions at a chapter's end: pick an answer, be told right or wrong, and why.

Used at the end of every chapter, from Chapter 0 on. A question is plain data (:class:`Question`);
:func:`grade` is the whole logic and is unit-tested; :func:`self_check` shows the questions as
ipywidgets (radio buttons, a Check button, feedback) and carries a static HTML fallback in the
same output — each answer and its reason behind a ``<details>`` — which a notebook rendered
without a kernel or without widgets (GitHub, nbconvert) shows instead.

A question has at least three options, so that a guess is a guess; :func:`from_static_html` reads the
fallback back into questions, which is how tests/test_selfcheck.py checks every chapter's saved self-check
(answers spread over the options, each reason citing a figure the chapter prints).
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Sequence

from harness.core.html import esc

RIGHT, WRONG = "✔ Right.", "✘ Not quite."
#: Fewer options than this make a question a coin toss.
MIN_OPTIONS = 3


@dataclass(frozen=True)
class Question:
    """One multiple-choice question: the options, the index of the right one, and why it is right."""

    prompt: str
    options: tuple[str, ...]
    answer: int
    why: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", tuple(self.options))
        if len(self.options) < MIN_OPTIONS:
            raise ValueError(f"The question {self.prompt[:60]!r} needs at least {MIN_OPTIONS} options, not {len(self.options)}.")
        if not 0 <= self.answer < len(self.options):
            raise ValueError(f"The question {self.prompt[:60]!r} has options 0 to {len(self.options) - 1}; "
                             f"its answer index {self.answer} is none of them.")
        if not self.prompt.strip() or not self.why.strip():
            raise ValueError("A self-check question needs a prompt and a reason (why) that the feedback shows.")


def grade(question: Question, choice: int | None) -> tuple[bool, str]:
    """(right?, feedback): the feedback says right or wrong, names the right option and says why."""
    if choice is None:
        return False, "Choose an answer first."
    if isinstance(choice, bool) or not isinstance(choice, int) or not 0 <= choice < len(question.options):
        raise ValueError(f"Choose one of options 0 to {len(question.options) - 1}, not {choice!r}.")
    if choice == question.answer:
        return True, f"{RIGHT} {question.why}"
    return False, f"{WRONG} The answer is “{question.options[question.answer]}”: {question.why}"


def _letter(i: int) -> str:
    return "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[i]


def static_html(questions: Sequence[Question]) -> str:
    """The questions as HTML, each answer and its reason folded in a ``<details>`` the reader opens."""
    parts = ['<div class="self-check"><p><b>Check yourself</b></p><ol>']
    for q in questions:
        options = "".join(f"<li>{esc(o)}</li>" for o in q.options)
        parts.append(f'<li><p>{esc(q.prompt)}</p><ol type="A">{options}</ol>'
                     f"<details><summary>Show the answer</summary><p><b>{_letter(q.answer)}. "
                     f"{esc(q.options[q.answer])}</b> — {esc(q.why)}</p></details></li>")
    parts.append("</ol></div>")
    return "".join(parts)


_QUESTION = re.compile(r'<li><p>(.*?)</p><ol type="A">(.*?)</ol><details><summary>Show the answer</summary>'
                       r"<p><b>([A-Z])\. .*?</b> — (.*?)</p></details></li>", re.S)


def from_static_html(page: str) -> list[Question]:
    """The questions of a :func:`static_html` page (a chapter's saved self-check output), answers included."""
    return [Question(html.unescape(prompt), tuple(html.unescape(o) for o in re.findall(r"<li>(.*?)</li>", options, re.S)),
                     ord(letter) - ord("A"), html.unescape(why))
            for prompt, options, letter, why in _QUESTION.findall(page)]


def _question_widget(number: int, question: Question):
    import ipywidgets as w

    choices = w.RadioButtons(options=[(f"{_letter(i)}. {o}", i) for i, o in enumerate(question.options)],
                             value=None, layout=w.Layout(width="auto"))
    check = w.Button(description="Check", button_style="primary")
    feedback = w.HTML()

    def on_check(*_):
        right, text = grade(question, choices.value)
        colour = "#007A5A" if right else "#B84E00"
        feedback.value = f'<span style="color:{colour}">{esc(text)}</span>'

    check.on_click(on_check)
    choices.observe(lambda *_: setattr(feedback, "value", ""), "value")
    return w.VBox([w.HTML(f"<b>{number}.</b> {esc(question.prompt)}"), choices, check, feedback])


class SelfCheck:
    """Displays as a widget where widgets work, and as :func:`static_html` everywhere else."""

    def __init__(self, questions: Sequence[Question]) -> None:
        if not questions:
            raise ValueError("A self-check needs at least one question.")
        self.questions = list(questions)

    def widget(self):
        import ipywidgets as w

        return w.VBox([w.HTML("<b>Check yourself</b>")]
                      + [_question_widget(i, q) for i, q in enumerate(self.questions, 1)])

    def _repr_html_(self) -> str:
        return static_html(self.questions)

    def _repr_mimebundle_(self, include=None, exclude=None):
        """The widget's view plus the static HTML: a front end without widgets shows the HTML."""
        bundle = {"text/html": static_html(self.questions), "text/plain": f"{len(self.questions)} self-check questions"}
        try:
            view = self.widget()._repr_mimebundle_()
        except ImportError:
            return bundle
        return {**(view or {}), **bundle}


def self_check(questions: Sequence[Question]) -> SelfCheck:
    """What a chapter's last cell returns: ``self_check(QUESTIONS)``."""
    return SelfCheck(questions)
