"""Splitting a request into its steps, and finding the quoted values in it: written once.

Introduced in Chapter 1 with the offline stand-in, which works a request step by step; the
demo scenarios' labels (Chapter 3) and Chapter 6's whole-task retriever split with the same rule.

"Read 'notes/todo.md', then post its first line to #dev. Then open an issue" has three steps.
Steps are separated by ", then", "and then", "; ", ". Then", ". Finally", a new sentence…;
quoted text is never split (a file called 'a; then b.txt' is one value), and a bare
acknowledgement ("Looks good.") or a part with no content word ("hi") is not a step.
"""
from __future__ import annotations

import re

from harness.core.text import tokenize

#: A quoted value: '…', "…", `…`, “…” or ‘…’ — one group per form, the value inside. A straight
#: single quote inside a word is an apostrophe, not a quote: it neither opens a value ("what's",
#: "I'd") nor closes one ('Pay Dana's invoice' is one value).
QUOTED = re.compile(r"(?<!\w)'((?:[^']|'(?=\w))+)'(?!\w)|\"([^\"]+)\"|`([^`]+)`|“([^”]+)”|‘([^’]+)’")

_STEP_SPLIT = re.compile(r",?\s+and then\s+|,\s*then\s+|;\s*then\s+|;\s+|\.\s+(?:Then\s+|Finally,?\s+|After that,?\s+)?(?=[A-Z])|,\s*finally,?\s+", re.IGNORECASE)
_ACKNOWLEDGEMENT = re.compile(r"^(?:ok(?:ay)?|great|thanks?(?: you)?|looks good|sounds good|perfect|nice|cool|good|fine|sure|alright)\W*$", re.I)


def quoted_values(text: str) -> list[str]:
    """The values quoted in ``text``, in order, without their quotes."""
    return [next(g for g in m.groups() if g) for m in QUOTED.finditer(text)]


def split_unquoted(text: str, separator: re.Pattern[str]) -> list[str]:
    """``text`` split at ``separator`` except inside quoted values; parts stripped of spaces and full stops."""
    protected: list[str] = []

    def hide(m: re.Match[str]) -> str:
        protected.append(m.group(0))
        return f"\x00{len(protected) - 1}\x00"

    def restore(s: str) -> str:
        return re.sub(r"\x00(\d+)\x00", lambda m: protected[int(m.group(1))], s)

    masked = QUOTED.sub(hide, text.strip())
    return [restore(p.strip(" .")) for p in separator.split(masked) if p]


def split_steps(request: str) -> list[str]:
    """The request's steps in order; quoted text is never split, "Looks good." and "hi" are not steps."""
    return [p for p in split_unquoted(request, _STEP_SPLIT) if p and tokenize(p) and not _ACKNOWLEDGEMENT.match(p)]
