"""Issue-tracker tools: open, find, discuss and close the project's issues, in memory.

Introduced in Chapter 1 as part of the demo world.

``list_issues`` filters by fields and ``search_issues`` matches words; real trackers keep
these apart too, and a request like "issues about rounding" needs the second one.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from harness.core.text import tokenize
from harness.core.tools import Tool, tool
from harness.core.json_types import JSONObject

if TYPE_CHECKING:
    from workbook.demo.world import DemoWorld

DOMAIN = "issues"


def make_tools(world: DemoWorld) -> list[Tool]:
    def find(issue_id: int) -> JSONObject:
        if issue_id not in world.issues:
            raise ValueError(f"No issue #{issue_id}; issues run from #1 to #{max(world.issues)}.")
        return world.issues[issue_id]

    def line(i: JSONObject) -> str:
        who = f"@{i['assignee']}" if i["assignee"] else "unassigned"
        return f"#{i['id']} [{i['state']}, {i['priority']}] {i['title']} ({who}; {', '.join(i['labels']) or 'no labels'})"

    @tool(domain=DOMAIN, tags={"network", "write"})
    def create_issue(title: str, body: str = "", priority: Literal["low", "medium", "high"] = "medium",
                     labels: list[str] | None = None) -> dict[str, object]:
        """Open a new issue in the project's issue tracker with a title, a description and a priority.

        Args:
            title: One-line summary of the problem or request.
            body: Longer description in Markdown.
            priority: How urgent the issue is.
            labels: Optional labels, e.g. ['bug'].
        """
        if not title.strip():
            raise ValueError("An issue needs a non-empty title.")
        issue_id = max(world.issues) + 1
        world.issues[issue_id] = {"id": issue_id, "title": title.strip(), "state": "open", "priority": priority,
                                  "labels": list(labels or []), "assignee": None, "created": world.today,
                                  "body": body, "comments": []}
        return {"issue_id": issue_id, "url": f"http://issues.example.test/tally/{issue_id}", "title": title.strip()}

    @tool(domain=DOMAIN, tags={"network", "read"})
    def list_issues(state: Literal["open", "closed", "all"] = "open", label: str | None = None,
                    assignee: str | None = None, limit: int = 20) -> list[str]:
        """List issues filtered by state, label and assignee, newest first.
        Filters only, no free-text matching: to look for words in issues use search_issues.

        Args:
            state: Which issues to list.
            label: Only issues with this label.
            assignee: Only issues assigned to this teammate (handle).
            limit: Maximum number of issues to return.
        """
        who = world.person(assignee) if assignee else None
        found = [i for i in reversed(world.issues.values())
                 if state in ("all", i["state"]) and (label is None or label in i["labels"])
                 and (who is None or i["assignee"] == who)]
        return [line(i) for i in found[:limit]] or ["No issues match these filters."]

    @tool(domain=DOMAIN, tags={"network", "read"})
    def search_issues(query: str, state: Literal["open", "closed", "all"] = "all") -> list[str]:
        """Search issue titles and descriptions for keywords and return the best matches with their state and assignee.

        Args:
            query: Keywords to look for.
            state: Only search issues in this state.
        """
        terms = set(tokenize(query))
        scored = sorted((-len(terms & set(tokenize(f"{i['title']} {i['body']}"))), i["id"]) for i in world.issues.values()
                        if state in ("all", i["state"]))
        return [line(world.issues[n]) for s, n in scored if s < 0][:10] or [f"No issue mentions {query!r}."]

    @tool(domain=DOMAIN, tags={"network", "read"})
    def get_issue(issue_id: int) -> dict[str, object]:
        """Show one issue in full: description, state, priority, labels, assignee and comments.

        Args:
            issue_id: The issue number.
        """
        return dict(find(issue_id))

    @tool(domain=DOMAIN, tags={"network", "write"})
    def comment_on_issue(issue_id: int, body: str) -> str:
        """Add a comment to an existing issue.

        Args:
            issue_id: The issue number.
            body: The comment text (Markdown).
        """
        if not body.strip():
            raise ValueError("A comment needs some text.")
        find(issue_id)["comments"].append({"author": world.user, "text": body.strip()})
        return f"Commented on issue #{issue_id}."

    @tool(domain=DOMAIN, tags={"network", "write"})
    def close_issue(issue_id: int, reason: Literal["completed", "not_planned"] = "completed") -> str:
        """Close an issue, either as completed or as not planned.

        Args:
            issue_id: The issue number.
            reason: Why it is closed.
        """
        issue = find(issue_id)
        if issue["state"] == "closed":
            return f"Issue #{issue_id} was already closed."
        issue["state"] = "closed"
        issue["close_reason"] = reason
        return f"Closed issue #{issue_id} as {reason.replace('_', ' ')}."

    @tool(domain=DOMAIN, tags={"network", "write"})
    def assign_issue(issue_id: int, assignee: str) -> str:
        """Assign an issue to a teammate, replacing any current assignee.

        Args:
            issue_id: The issue number.
            assignee: The teammate's handle, e.g. '@carol'.
        """
        issue = find(issue_id)
        issue["assignee"] = world.person(assignee)
        return f"Assigned issue #{issue_id} to @{issue['assignee']}."

    @tool(domain=DOMAIN, tags={"network", "write"})
    def label_issue(issue_id: int, label: str) -> str:
        """Add a label such as 'bug' or 'docs' to an issue.

        Args:
            issue_id: The issue number.
            label: The label to add.
        """
        issue, label = find(issue_id), label.strip().lower()
        if not label:
            raise ValueError("A label needs a name.")
        if label not in issue["labels"]:
            issue["labels"].append(label)
        return f"Issue #{issue_id} labels: {', '.join(issue['labels'])}."

    return [create_issue, list_issues, search_issues, get_issue, comment_on_issue, close_issue, assign_issue,
            label_issue]
