"""Email tools: an inbox you can list, read and search, and mail you can send, in memory.

Introduced in Chapter 1 as part of the demo world (the module is ``mail`` so it never shadows
the standard library's ``email``).

Email overlaps chat on purpose: "send Dana a note" could be either, and the address form
(``dana@example.test``) versus the handle form (``@dana``) is the clue a model should use.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from harness.core.text import tokenize
from harness.core.tools import Tool, tool
from harness.core.json_types import JSONObject

if TYPE_CHECKING:
    from workbook.demo.world import DemoWorld

DOMAIN = "email"
_ADDRESS = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


def make_tools(world: DemoWorld) -> list[Tool]:
    def find(email_id: int) -> JSONObject:
        if email_id not in world.inbox:
            raise ValueError(f"No email with id {email_id}; list_inbox shows the ids.")
        return world.inbox[email_id]

    def line(m: JSONObject) -> str:
        return f"{m['id']}: {'[unread] ' if m['unread'] else ''}{m['date']} from {m['sender']}: {m['subject']}"

    @tool(domain=DOMAIN, tags={"network", "write"})
    def send_email(recipient: str, subject: str, body: str) -> str:
        """Send an email from your mailbox to an address, with a subject and body.
        Reaches anyone with an email address, including people outside the team.

        Args:
            recipient: Email address, e.g. 'dana@example.test'; a teammate's @handle also works.
            subject: Subject line.
            body: Text of the email.
        """
        address = recipient.strip()
        if not _ADDRESS.fullmatch(address):
            address = world.people[world.person(address)]
        world.sent.append({"to": address, "subject": subject, "body": body, "date": world.now()})
        return f"Sent '{subject}' to {address}."

    @tool(domain=DOMAIN, tags={"network", "read"})
    def list_inbox(unread_only: bool = False, limit: int = 10) -> list[str]:
        """List the latest emails in your inbox with sender, subject, date and whether each is unread.

        Args:
            unread_only: Only list unread emails.
            limit: Maximum number of emails to list.
        """
        found = sorted((m for m in world.inbox.values() if m["unread"] or not unread_only), key=lambda m: m["date"], reverse=True)
        return [line(m) for m in found[:limit]] or ["No emails."]

    @tool(domain=DOMAIN, tags={"network", "read"})
    def read_email(email_id: int) -> dict[str, object]:
        """Open one email by its id and return the full body with sender, subject and date; marks it as read.

        Args:
            email_id: The email's id, as shown by list_inbox.
        """
        m = find(email_id)
        m["unread"] = False
        return {k: m[k] for k in ("id", "sender", "subject", "date", "body")}

    @tool(domain=DOMAIN, tags={"network", "read"})
    def search_email(query: str) -> list[str]:
        """Search your mailbox for a keyword in subject, sender and body; returns matching email ids and subjects.

        Args:
            query: Keyword or phrase to look for.
        """
        terms = set(tokenize(query))
        hits = [line(m) for m in world.inbox.values()
                if query.lower() in f"{m['subject']} {m['sender']} {m['body']}".lower()
                or (terms and terms <= set(tokenize(f"{m['subject']} {m['sender']} {m['body']}")))]
        return hits or [f"No email mentions {query!r}."]

    return [send_email, list_inbox, read_email, search_email]
