"""Text from untrusted places made safe to show in a terminal and to send to a model.

Introduced in Chapter 0 with the registry; Chapter 5 uses it for MCP servers' words.

Two ways text from a data file, a tool or a server's stderr can hurt:

* **Terminal escapes.** ``ESC [2J`` clears a screen, ``ESC ]0;…BEL`` retitles a window and
  others rewrite what a reader sees. :func:`printable` shows every control character as a
  visible ``\\x1b``-style escape (tabs and, where asked, newlines kept as layout).
* **Invalid Unicode.** A file name that is not UTF-8 reaches Python as lone surrogates
  (``'caf\\udce9'``); JSON-encoding it for an API call then fails. :func:`valid_unicode` shows
  the undecodable bytes as ``\\xe9`` escapes and replaces any other lone surrogate with U+FFFD.

And words someone else sent, quoted back in a reply or an error (Chapter 4's search note, Chapter 7's
``harness serve``): an error that repeats a name or query whole could be megabytes long or turn the rest
of a line around (the right-to-left override U+202E). :func:`shown` keeps the first characters, marks the
cut with an ellipsis, and shows control and format characters as escapes.
"""
from __future__ import annotations

import re
import unicodedata

# C0 controls except tab/newline/carriage return, DEL, and the C1 controls (U+0080–U+009F).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_AND_NEWLINES = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def printable(text: str, *, keep_newlines: bool = True) -> str:
    """``text`` with every control character (terminal escapes included) shown as an escape."""
    pattern = _CONTROL if keep_newlines else _CONTROL_AND_NEWLINES
    return pattern.sub(_escape, valid_unicode(text))


def valid_unicode(text: str) -> str:
    """``text`` as valid Unicode: undecodable bytes as ``\\xNN``, other lone surrogates as U+FFFD."""
    return _SURROGATE.sub(_byte_or_replacement, text) if _SURROGATE.search(text) else text


def _byte_or_replacement(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else "\ufffd"  # surrogateescape's bytes


#: How many characters of a name or query a reply repeats.
SHOWN_CHARS = 80


def shown(text: str, limit: int = SHOWN_CHARS) -> str:
    """The first ``limit`` characters of ``text`` (an ellipsis when cut), with controls and bidi/format characters escaped."""
    head = printable(text[:limit], keep_newlines=False)
    head = "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) == "Cf" else c for c in head)
    return head + ("…" if len(text) > limit else "")
