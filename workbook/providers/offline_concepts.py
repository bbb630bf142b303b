"""A small English concept lexicon: how the offline stand-in model "understands" paraphrase.

Introduced in Chapter 0 with the offline model.

An LLM knows that "erase" and "delete" mean the same; BM25 does not. To keep that difference
visible offline, the stand-in reads words through this lexicon of general-purpose synonym
groups (software and office vocabulary, written once for this project, not fitted to any
query set). It is deliberately small: the stand-in understands some paraphrases and misses
others, as a weak model would. Each group maps to its first word, the concept's name.
"""
from __future__ import annotations

import re

from harness.core.text import stem, tokenize

_GROUPS = """
find search look lookup locate seek hunt grep query discover
delete remove erase drop discard trash purge destroy wipe unlink
create make new add generate compose build start draft
read view show display see print cat peek inspect
write save store persist put overwrite set
list enumerate browse catalog index inventory
send tell notify ping inform contact dm direct whisper
post publish announce broadcast share
channel room
team group squad crew everyone everybody
file document doc
folder directory dir subfolder subdirectory
move rename relocate transfer
copy duplicate replicate
edit modify change update alter amend patch revise tweak
commit checkin snapshot
branch
checkout switch
check verify confirm ensure
history log past previous timeline chronology
diff difference compare delta changes changed
test spec suite unittest
run execute launch invoke trigger kick
web page site website internet online webpage
url link address
fetch download retrieve grab obtain pull_down
package library dependency module lib pkg distribution
version release
license licence licensing
note memo jot scratch scratchpad notepad jotting
issue ticket bug defect problem
close resolve finish complete done shut
comment reply respond remark annotate
calendar schedule agenda diary book reserve
event meeting appointment gathering sync standup
remind reminder alert nudge
time slot availability
summary summarize overview digest brief recap
email mail inbox
csv spreadsheet table sheet tabular
average mean statistic stats
sort order rank arrange
status state progress condition
user person people member colleague teammate coworker
code source implementation function class symbol
docs documentation manual guide reference handbook
convert transform translate
calculate compute evaluate math arithmetic sum total
assign delegate
label tag category
priority urgent important severity
error failure exception crash fail failing broken
due deadline
count tally quantity
size bytes weight
message chat conversation
""".strip().splitlines()


def _build() -> dict[str, str]:
    table: dict[str, str] = {}
    for line in _GROUPS:
        words = line.split()
        concept = stem(words[0])
        for w in words:
            table.setdefault(stem(w.lower()), concept)
    return table


CONCEPTS: dict[str, str] = _build()


#: Phrasal verbs whose meaning is not in their words ("check it out" is not "check").
_PHRASES = [
    (re.compile(r"\bcheck(?:s|ed|ing)?\s+(?:it\s+|them\s+)?out\b", re.I), "checkout"),
    (re.compile(r"\blook(?:s|ed|ing)?\s+(?:it\s+|them\s+)?up\b", re.I), "lookup"),
    (re.compile(r"\bset(?:s|ting)?\s+up\b", re.I), "setup"),
    (re.compile(r"\bfind(?:s|ing)?\s+out\b", re.I), "find"),
    (re.compile(r"\b(?:sign|log)(?:s|ged|ging)?\s+in\b", re.I), "login"),
]


def concepts(text: str) -> list[str]:
    """The text's terms with each synonym replaced by its concept name (others unchanged)."""
    for pattern, word in _PHRASES:
        text = pattern.sub(word, text)
    return [CONCEPTS.get(t, t) for t in tokenize(text)]
