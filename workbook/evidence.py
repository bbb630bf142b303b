"""Evidence cells in one call: the figures a chapter's prose states, checked against what its cells computed.

Introduced in Chapter 1 and used by every chapter whose prose quotes numbers (Chapter 3 too). The
prose is the specification: each key of :func:`check_figures` is a snippet of it ("0.93 → 0.80",
"+0.16 [+0.05, +0.27]", "85 of 622 (14 %)"), each value the computed number(s) behind it, and a figure
matches when the value, rounded as the prose rounds that figure, equals it. So a re-run whose output
moves a figure fails with the prose's text beside the new one, and an evidence cell stays a few lines
(course rule 2: collapsed, ending with one visible ``✓ checks:`` label).
"""
from __future__ import annotations

import re
from typing import Mapping, Sequence

#: A figure as prose writes it: optional sign (ASCII or the typographic minus), thousands separators,
#: decimals, and a percent sign (the value is then a fraction). Digits inside a word (Qwen2.5) are not figures.
FIGURE = re.compile(r"(?<![\w.])([+\-−]?)(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(\s?%)?")

Values = float | Sequence[float]


def _as_tuple(values: Values) -> tuple[float, ...]:
    return tuple(values) if isinstance(values, Sequence) else (values,)


def figures_in(text: str) -> list[float]:
    """The numbers ``text`` states, in order; a percentage as the fraction it stands for."""
    numbers = []
    for m in FIGURE.finditer(text):
        number = float(m[2].replace(",", "") + (f".{m[3]}" if m[3] else ""))
        number = -number if m[1] in ("-", "−") else number
        numbers.append(round(number / 100, 10) if m[4] else number)
    return numbers


def _render(m: re.Match[str], value: float) -> str:
    decimals = len(m[3] or "")
    shown = round(value * 100 if m[4] else value, decimals) + 0.0  # + 0.0: no "-0.00"
    sign = "−" if shown < 0 and m[1] != "-" else "-" if shown < 0 else "+" if m[1] else ""
    body = f"{abs(shown):,.{decimals}f}" if "," in m[2] else f"{abs(shown):.{decimals}f}"
    return sign + body + (m[4] or "")


def render_like(text: str, values: Values) -> str:
    """``text`` with each figure replaced by the matching value, written in that figure's own style."""
    numbers = iter(_as_tuple(values))
    return FIGURE.sub(lambda m: _render(m, next(numbers)), text)


def check_figures(figures: Mapping[str, Values], what: str, claims: Mapping[str, bool] | None = None) -> None:
    """Fail when a prose figure (or a claim) no longer holds; otherwise print ``✓ checks: {what}``.

    ``figures`` maps a snippet of prose to the value(s) its figures come from, one value per figure;
    ``claims`` maps a sentence the prose makes to the boolean computed for it.
    """
    wrong = []
    for text, values in figures.items():
        count = len(FIGURE.findall(text))
        if count == 0 or count != len(_as_tuple(values)):
            raise ValueError(f"{text!r} has {count or 'no'} figure{'s' if count != 1 else ''} but "
                             f"{len(_as_tuple(values))} value(s) were given for it.")
        computed = render_like(text, values)
        if computed != text:
            wrong.append(f"the prose says {text!r}, the cells computed {computed!r}")
    wrong += [f"the prose says {claim!r}, which no longer holds" for claim, holds in (claims or {}).items() if not holds]
    if wrong:
        raise AssertionError("; ".join(wrong))
    print(f"✓ checks: {what}")
