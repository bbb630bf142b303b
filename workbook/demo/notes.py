"""Notes tools: a personal notes store and a session scratchpad, both in memory.

Introduced in Chapter 1 as part of the demo world.

Notes are deliberately *not* files: ``read_note`` and ``read_file`` both "read" something a
user calls a note, and telling them apart is one of the choices the chapters measure.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from harness.core.text import tokenize
from harness.core.tools import Tool, tool
from harness.core.json_types import JSONObject

if TYPE_CHECKING:
    from workbook.demo.world import DemoWorld

DOMAIN = "notes"


def make_tools(world: DemoWorld) -> list[Tool]:
    def key_of(title: str) -> str:
        key = title.strip().lower()
        if not key:
            raise ValueError("A note needs a non-empty title.")
        return key

    def find(title: str) -> JSONObject:
        key = key_of(title)
        if key not in world.notes:
            raise ValueError(f"No note titled {title!r}; notes: {', '.join(repr(t) for t in world.notes)}.")
        return world.notes[key]

    @tool(domain=DOMAIN, tags={"write"})
    def create_note(title: str, content: str, tags: list[str] | None = None) -> str:
        """Save a new note in your personal notes store under a title, with optional tags.
        Notes are kept outside the project's files; to create a file use write_file.

        Args:
            title: Title of the note; must not be taken yet.
            content: Text of the note.
            tags: Optional tags, e.g. ['release'].
        """
        key = key_of(title)
        if key in world.notes:
            raise ValueError(f"A note titled {title!r} already exists; add to it with append_to_note.")
        world.notes[key] = {"content": content, "tags": list(tags or []), "date": world.today}
        return f"Saved note {title.strip()!r}."

    @tool(domain=DOMAIN, tags={"read"})
    def read_note(title: str) -> str:
        """Return the full text of one note from your notes store, looked up by its title.
        Notes are not workspace files: to read a file use read_file.

        Args:
            title: Title of the note (case does not matter).
        """
        return find(title)["content"]

    @tool(domain=DOMAIN, tags={"read"})
    def list_notes(tag: str | None = None) -> list[dict[str, object]]:
        """List the titles, tags and dates of your saved notes, optionally only those carrying a tag.

        Args:
            tag: Only list notes with this tag.
        """
        return [{"title": t, "tags": n["tags"], "date": n["date"]} for t, n in world.notes.items()
                if tag is None or tag.strip().lower() in n["tags"]]

    @tool(domain=DOMAIN, tags={"read"})
    def search_notes(query: str) -> list[dict[str, str]] | str:
        """Search the text and titles of all your notes for a keyword and return matching titles with a snippet.

        Args:
            query: Keyword or phrase to look for.
        """
        terms = set(tokenize(query))
        hits = [{"title": t, "snippet": n["content"][:120]} for t, n in world.notes.items()
                if query.lower() in f"{t} {n['content']}".lower() or terms & set(tokenize(f"{t} {n['content']}"))]
        return hits or f"No note mentions {query!r}."

    @tool(domain=DOMAIN, tags={"write"})
    def append_to_note(title: str, text: str) -> str:
        """Add text to the end of an existing note, keeping what is already there.

        Args:
            title: Title of the note.
            text: Text to add on a new line.
        """
        note = find(title)
        note["content"] = f"{note['content']}\n{text}" if note["content"] else text
        return f"Added {len(text)} characters to note {title.strip()!r}."

    @tool(domain=DOMAIN, tags={"write"})
    def scratchpad_set(key: str, value: str) -> str:
        """Store a short value under a key in the session scratchpad, replacing any earlier value.
        Handy for keeping intermediate results between steps.

        Args:
            key: Name to store the value under.
            value: The value to keep.
        """
        world.scratchpad[key.strip()] = value
        return f"{key.strip()} = {value!r}"

    @tool(domain=DOMAIN, tags={"read"})
    def scratchpad_get(key: str) -> str:
        """Read back the value stored under a key in the session scratchpad.

        Args:
            key: Name the value was stored under.
        """
        if key.strip() not in world.scratchpad:
            raise ValueError(f"Nothing stored under {key!r}; keys: {', '.join(world.scratchpad) or 'none'}.")
        return world.scratchpad[key.strip()]

    return [create_note, read_note, list_notes, search_notes, append_to_note, scratchpad_set, scratchpad_get]
