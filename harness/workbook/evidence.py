"""Evidence cells in one call: the figures and claims a chapter's prose states, checked against what its cells computed.

Introduced in Chapter 5 (``notebooks/05_mcp_integration.ipynb``) and used by the chapters after it. A chapter's
prose says "0.41" or "about 76,300" or "+0.02 [−0.05, +0.08]"; the evidence cell (tagged ``evidence``, collapsed
off the reading path) passes each such figure *as the prose writes it* with the number a cell computed, and
:func:`check_prose` formats the number the way the figure is written — same decimals, thousands commas, sign,
per cent — so the cell pins exactly what a reader sees, in one line per figure instead of one assert each.
A number after the word "about" ("about 76,300") is checked at its significant figures (76,281 rounds to it;
76,140 does not); numbers before it in the same figure stay exact.
Claims that are not numbers ("deferred search is above both") are passed as sentences with a truth value.
"""
from __future__ import annotations

import math
import re
from typing import Mapping, Sequence

#: A number as prose writes it: optional sign (+, - or the typographic −), digits with optional thousands
#: commas, optional decimals, optional per cent sign (with or without the space the course's prose uses).
#: Digits inside a word are not figures: "top-10", "Qwen2.5", "200k" label, they are not checked.
NUMBER = re.compile(r"(?<![\w.,+\-−])(?P<sign>[+\-−])?(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<frac>\d+))?(?P<pct> ?%)?"
                    r"(?![\w%]|[.,]\d)")
ABOUT = "about "

Value = float | int | str | Sequence[float]


def as_written(value: float, figure: re.Match[str], about: bool = False) -> str:
    """``value`` formatted the way ``figure`` (one :data:`NUMBER` match) is written.

    Per cent figures take ``value`` as a share (0.208 → "20.8%"). With ``about``, an integer figure's trailing
    zeros say how far it was rounded ("76,300": to hundreds) and ``value`` is rounded the same way.
    """
    sign, whole, frac, pct = figure["sign"], figure["int"], figure["frac"] or "", figure["pct"] or ""
    scaled = value * 100 if pct else value
    if about and not frac:
        digits = whole.replace(",", "")
        zeros = len(digits) - len(digits.rstrip("0")) if digits.strip("0") else 0
        step = 10 ** zeros  # halves round away from zero, as a reader rounds (20,650 is about 20,700)
        scaled = math.copysign(math.floor(abs(scaled) / step + 0.5) * step, scaled)
    magnitude = f"{abs(scaled):{',' if ',' in whole else ''}.{len(frac)}f}"
    if float(magnitude.replace(",", "")) == 0:  # a figure that rounds to zero keeps the sign the prose gave it
        mark = sign or ""
    elif scaled < 0:
        mark = sign if sign in ("-", "−") else "-"
    else:
        mark = "+" if sign else ""
    return f"{mark}{magnitude}{pct}"


def mismatch(figure: str, value: Value) -> str | None:
    """None when ``value`` reads as ``figure``; else one sentence saying what was computed instead.

    ``figure`` may hold several numbers ("0.44 [0.34, 0.54]"); ``value`` then is a sequence with one number each.
    A ``str`` value must equal the figure. Words without digits in the figure only label it.
    """
    if isinstance(value, str):
        return None if value == figure else f"the prose says {figure!r}; computed {value!r}"
    found = list(NUMBER.finditer(figure))
    values: list[float] = [float(v) for v in value] if isinstance(value, Sequence) else [float(value)]
    if len(found) != len(values):
        raise ValueError(f"the figure {figure!r} holds {len(found)} numbers but {len(values)} values were given")
    computed = figure
    for match, number in reversed(list(zip(found, values))):
        about = ABOUT in figure[:match.start()]
        computed = computed[:match.start()] + as_written(number, match, about) + computed[match.end():]
    return None if computed == figure else f"the prose says {figure!r}; computed {computed!r}"


def check_prose(label: str, figures: Mapping[str, Value] | None = None, claims: Mapping[str, bool] | None = None) -> None:
    """Check every prose figure against its computed value and every claim's truth, then print ``✓ checks: label``.

    Raises AssertionError naming every figure and claim that does not hold (all of them, not just the first),
    so a re-run after the numbers moved says at once which sentences to rewrite.
    """
    problems = [p for figure, value in (figures or {}).items() if (p := mismatch(figure, value))]
    problems += [f"the claim {claim!r} does not hold" for claim, holds in (claims or {}).items() if not holds]
    if problems:
        raise AssertionError("; ".join(problems))
    print(f"✓ checks: {label}")
