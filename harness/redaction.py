"""Secrets kept out of text that is shown: the values a process was given, and passwords in URLs.

Introduced in Chapter 5 with the MCP hub: a server's last words on stderr are shown in its status,
and a server that fails to log in often prints the token it was given (``${VAR}`` already filled in).
Every value of the server's ``env`` is hidden, and so is any run of :data:`MIN_FRAGMENT` characters
of one, so a printed half or tail of a key does not pass either.
"""
from __future__ import annotations

import re
from typing import Iterable

#: Values shorter than this are not hidden ("1", "true" would blank out ordinary words).
MIN_VALUE = 4
#: Any run of this many characters of a longer value is hidden too.
MIN_FRAGMENT = 8
HIDDEN = "***"
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@")


def hide_values(text: str, values: Iterable[str]) -> str:
    """``text`` with every value (and every :data:`MIN_FRAGMENT`-character run of one) and URL password as ``***``."""
    covered = [False] * len(text)
    for value in {v for v in values if isinstance(v, str) and len(v) >= MIN_VALUE}:
        size = min(len(value), MIN_FRAGMENT)
        for piece in {value[i:i + size] for i in range(len(value) - size + 1)}:
            start = text.find(piece)
            while start != -1:
                covered[start:start + size] = [True] * size
                start = text.find(piece, start + 1)
    out, hiding = [], False
    for char, hide in zip(text, covered):
        if hide and not hiding:
            out.append(HIDDEN)
        elif not hide:
            out.append(char)
        hiding = hide
    return _URL_PASSWORD.sub(rf"\1{HIDDEN}@", "".join(out))
