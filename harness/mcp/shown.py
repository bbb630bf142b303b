"""Words a client or server sent, quoted back in a reply or an error: short, and unable to act on a screen.

Introduced in Chapter 7 with ``harness serve``: a tool name or query comes from whoever is connected,
and an error that repeats it whole could be megabytes long, clear a terminal (``ESC [2J``) or turn the
rest of a line around (the right-to-left override U+202E). :func:`shown` keeps the first characters,
marks the cut with an ellipsis, and shows control and format characters as escapes.
"""
from __future__ import annotations

import unicodedata

from harness.safe_text import printable

#: How many characters of a name or query a reply repeats.
SHOWN_CHARS = 80


def shown(text: str, limit: int = SHOWN_CHARS) -> str:
    """The first ``limit`` characters of ``text`` (an ellipsis when cut), with controls and bidi/format characters escaped."""
    head = printable(text[:limit], keep_newlines=False)
    head = "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) == "Cf" else c for c in head)
    return head + ("…" if len(text) > limit else "")
