"""Checks on the demo world's state after a run: was the task *done*, not just attempted?

Introduced in Chapter 0 (its example is judged this way) and used by every chapter's success
rate through :func:`harness.scenarios.judge`.

A scenario in ``harness/data/*_scenarios.json`` lists ``checks``, a small declarative
vocabulary, one JSON object per fact that must hold afterwards::

    {"check": "message", "channel": "#dev", "contains": "# TODO", "excludes": "Fix rounding"}
    {"check": "direct_message", "to": "@bob", "contains": "review"}
    {"check": "email", "to": "dana@example.test", "subject": "Returns data", "contains": "returns"}
    {"check": "issue", "title": "Follow up on todo", "priority": "high"}
    {"check": "issue", "id": 6, "assignee": "@dana", "comment": "Dana will take", "label": "tests", "state": "closed"}
    {"check": "event", "title": "Export review", "date": "2025-03-11", "time": "15:00", "attendee": "@carol"}
    {"check": "event", "id": 3, "exists": false}                            (it was cancelled)
    {"check": "reminder", "contains": "Pay invoice 2041", "date": "2025-03-20"}
    {"check": "note", "title": "tool search", "contains": "deferred"}
    {"check": "file", "path": "src/money.py", "contains": "Decimal"}        ("exists": false: it is gone)
    {"check": "commit", "message": "Add --since flag", "files": ["src/app.py"]}
    {"check": "branch", "name": "fix/rounding", "checked_out": true}
    {"check": "scratchpad", "key": "next_tag", "value": "v0.4.0"}
    {"check": "answer", "contains": ["Invoice #2041"]}   (what the user was told: for read-only requests)
    {"check": "answer", "domains": 3}                   (the answer names at least 3 of the world's domains)
    {"check": "unchanged"}                              (the run changed nothing in the world)

Messages, emails and commits count only when they are new (not in the world before the run),
so a seeded message can never satisfy a check. Text matching ignores case and runs of spaces;
``contains`` and ``excludes`` take a string or a list (all must hold). :func:`failed_checks`
returns one sentence per check that does not hold — an empty list means the effects hold.
"""
from __future__ import annotations

import copy
import re
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

if TYPE_CHECKING:
    from harness.demo.world import DemoWorld

State = dict[str, Any]

#: Words that name each domain in an answer, besides the domain's tool names.
DOMAIN_WORDS: dict[str, tuple[str, ...]] = {
    "files": ("file", "folder", "director"), "git": ("git", "commit", "branch"), "tests": ("test",),
    "web": ("web", "page", "http", "docs"), "packages": ("package", "dependenc"), "notes": ("note", "scratchpad"),
    "chat": ("chat", "channel", "direct message"), "issues": ("issue",), "calendar": ("calendar", "event", "remind"),
    "data": ("csv", "data", "calculat"), "email": ("email", "e-mail", "inbox", "mail"),
}


def world_state(world: "DemoWorld") -> State:
    """A deep copy of everything a tool can change: taken before a run, compared after it."""
    repo = world.repo
    return copy.deepcopy({
        "channels": {n: c["messages"] for n, c in world.channels.items()},
        "direct_messages": world.direct_messages, "sent": world.sent, "issues": world.issues,
        "events": world.events, "reminders": world.reminders, "notes": world.notes,
        "scratchpad": world.scratchpad, "files": world.worktree(),
        "branches": dict(repo.branches), "head": repo.head, "staged": dict(repo.staged),
        "commits": list(repo.commits),
    })


def _norm(text: Any) -> str:
    return re.sub(r"\s+", " ", str(text)).strip().lower()


def _as_list(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value or [])


def _text_fails(text: str, spec: dict[str, Any], what: str) -> list[str]:
    """Why ``text`` does not meet ``spec``'s contains/excludes (empty when it does)."""
    t = _norm(text)
    out = [f"{what} does not contain {c!r}" for c in _as_list(spec.get("contains")) if _norm(c) not in t]
    out += [f"{what} contains {x!r}, which it should not" for x in _as_list(spec.get("excludes")) if _norm(x) in t]
    return out


def _any_new(texts: Sequence[str], spec: dict[str, Any], what: str) -> list[str]:
    """Fine when one of the new ``texts`` meets ``spec``; else the closest miss, or that there is none."""
    if not texts:
        return [f"no new {what}"]
    misses = [_text_fails(t, spec, f"the new {what}") for t in texts]
    return [] if any(not m for m in misses) else min(misses, key=len)


def _handle(value: str) -> str:
    return value.strip().lstrip("@").lower()


def _message(c: dict, world: "DemoWorld", before: State, answer: str) -> list[str]:
    key = c["channel"].strip().lstrip("#").lower()
    if key not in world.channels:
        return [f"there is no channel {c['channel']}"]
    new = world.channels[key]["messages"][len(before["channels"].get(key, [])):]
    return _any_new([m["text"] for m in new], c, f"message in #{key}")


def _direct_message(c: dict, world: "DemoWorld", before: State, answer: str) -> list[str]:
    who = _handle(c["to"])
    new = world.direct_messages.get(who, [])[len(before["direct_messages"].get(who, [])):]
    return _any_new([m["text"] for m in new if m["author"] == world.user], c, f"direct message to @{who}")


def _email(c: dict, world: "DemoWorld", before: State, answer: str) -> list[str]:
    new = [m for m in world.sent[len(before["sent"]):] if m["to"].lower() == c["to"].lower()]
    if "subject" in c:
        new = [m for m in new if _norm(m["subject"]) == _norm(c["subject"])]
    return _any_new([m["subject"] + "\n" + m["body"] for m in new], c, f"email to {c['to']}"
                    + (f" with the subject {c['subject']!r}" if "subject" in c else ""))


def _issue(c: dict, world: "DemoWorld", before: State, answer: str) -> list[str]:
    if "id" in c:
        issue = world.issues.get(c["id"])
        what = f"issue {c['id']}"
    else:
        found = [i for i in world.issues.values() if _norm(i["title"]) == _norm(c["title"])]
        issue = found[-1] if found else None
        what = f"issue titled {c['title']!r}"
    if issue is None:
        return [f"there is no {what}"]
    out = []
    for field in ("state", "priority"):
        if field in c and issue.get(field) != c[field]:
            out.append(f"{what} has {field} {issue.get(field)!r}, not {c[field]!r}")
    if "assignee" in c and (issue.get("assignee") or "") != _handle(c["assignee"]):
        out.append(f"{what} is assigned to {issue.get('assignee')!r}, not {c['assignee']!r}")
    if "label" in c and c["label"] not in issue.get("labels", []):
        out.append(f"{what} has no label {c['label']!r}")
    if "comment" in c:
        old = len(before["issues"].get(issue["id"], {}).get("comments", []))
        out += _any_new([x["text"] for x in issue["comments"][old:]], {"contains": c["comment"]}, f"comment on {what}")
    return out


def _event(c: dict, world: "DemoWorld", before: State, answer: str) -> list[str]:
    if "id" in c:
        events = [e for e in [world.events.get(c["id"])] if e]
        what = f"event {c['id']}"
    else:
        events = [e for e in world.events.values() if _norm(e["title"]) == _norm(c["title"])]
        what = f"event {c['title']!r}"
    if not c.get("exists", True):
        return [f"{what} still exists"] if events else []
    if not events:
        return [f"there is no {what}"]
    misses = []
    for e in events:
        m = [f"{what} is at {e.get(f)!r}, not {c[f]!r}" for f in ("date", "time", "duration_minutes") if f in c and e.get(f) != c[f]]
        m += [f"{what} does not invite {a}" for a in _as_list(c.get("attendee")) if _handle(a) not in e["attendees"]]
        misses.append(m)
    return min(misses, key=len)


def _reminder(c: dict, world: "DemoWorld", before: State, answer: str) -> list[str]:
    new = [r for i, r in world.reminders.items() if i not in before["reminders"]]
    if "date" in c:
        new = [r for r in new if r["date"] == c["date"]]
    return _any_new([r["text"] for r in new], c, "reminder" + (f" on {c['date']}" if "date" in c else ""))


def _note(c: dict, world: "DemoWorld", before: State, answer: str) -> list[str]:
    note = next((n for t, n in world.notes.items() if _norm(t) == _norm(c["title"])), None)
    if note is None:
        return [f"there is no note titled {c['title']!r}"]
    if _norm(note["content"]) == _norm(before["notes"].get(c["title"], {}).get("content", "\0")):
        return [f"note {c['title']!r} is unchanged"]
    return _text_fails(note["content"], c, f"note {c['title']!r}")


def _file(c: dict, world: "DemoWorld", before: State, answer: str) -> list[str]:
    path = world.root / c["path"]
    if not c.get("exists", True):
        return [f"{c['path']} still exists"] if path.exists() else []
    if not path.is_file():
        return [f"there is no file {c['path']}"]
    return _text_fails(path.read_text(encoding="utf-8", errors="replace"), c, c["path"])


def _commit(c: dict, world: "DemoWorld", before: State, answer: str) -> list[str]:
    repo = world.repo
    new = [repo.commits[i] for i in repo.commits if i not in set(before["commits"])]
    if not new:
        return ["no new commit"]
    misses = []
    for commit in new:
        m = [] if _norm(commit.message) == _norm(c["message"]) else [f"the new commit's message is {commit.message!r}"]
        parent = repo.commits[commit.parent].files if commit.parent else {}
        m += [f"the new commit does not change {p}" for p in _as_list(c.get("files")) if commit.files.get(p) == parent.get(p)]
        misses.append(m)
    return min(misses, key=len)


def _branch(c: dict, world: "DemoWorld", before: State, answer: str) -> list[str]:
    if c["name"] not in world.repo.branches:
        return [f"there is no branch {c['name']!r}"]
    if c.get("checked_out") and world.repo.head != c["name"]:
        return [f"{world.repo.head!r} is checked out, not {c['name']!r}"]
    return []


def _scratchpad(c: dict, world: "DemoWorld", before: State, answer: str) -> list[str]:
    got = world.scratchpad.get(c["key"])
    return [] if got == c["value"] else [f"scratchpad {c['key']!r} holds {got!r}, not {c['value']!r}"]


def _answer(c: dict, world: "DemoWorld", before: State, answer: str) -> list[str]:
    out = _text_fails(answer, c, "the answer") if answer.strip() else ["there is no answer"]
    if "domains" in c:
        from harness.demo import demo_tools

        text = _norm(answer)
        named = {d for d, words in DOMAIN_WORDS.items() if any(w in text for w in words)}
        named |= {t.domain for t in demo_tools(world) if t.name.lower() in text}
        if len(named) < c["domains"]:
            out.append(f"the answer names {len(named)} of the world's domains, fewer than {c['domains']}")
    return out


def _unchanged(c: dict, world: "DemoWorld", before: State, answer: str) -> list[str]:
    after = world_state(world)
    changed = [k for k in after if after[k] != before.get(k)]
    return [f"the run changed the world ({', '.join(changed)})"] if changed else []


CHECKS: dict[str, Callable[[dict, "DemoWorld", State, str], list[str]]] = {
    "message": _message, "direct_message": _direct_message, "email": _email, "issue": _issue, "event": _event,
    "reminder": _reminder, "note": _note, "file": _file, "commit": _commit, "branch": _branch,
    "scratchpad": _scratchpad, "answer": _answer, "unchanged": _unchanged,
}
#: Fields each check needs (one of a tuple's alternatives).
REQUIRED: dict[str, tuple[str | tuple[str, ...], ...]] = {
    "message": ("channel",), "direct_message": ("to",), "email": ("to",), "issue": (("id", "title"),),
    "event": (("id", "title"),), "reminder": (), "note": ("title",), "file": ("path",), "commit": ("message",),
    "branch": ("name",), "scratchpad": ("key", "value"), "answer": (), "unchanged": (),
}


def validate_checks(checks: Any, where: str) -> tuple[dict[str, Any], ...]:
    """The checks as given, or one error sentence naming the first bad one."""
    if not isinstance(checks, list) or not checks:
        raise ValueError(f"{where}: 'checks' must be a non-empty list of checks on the world's state.")
    for n, c in enumerate(checks):
        kind = c.get("check") if isinstance(c, dict) else None
        if kind not in CHECKS:
            raise ValueError(f"{where}: check {n} must be an object whose 'check' is one of {', '.join(CHECKS)}.")
        for need in REQUIRED[kind]:
            options = need if isinstance(need, tuple) else (need,)
            if not any(o in c for o in options):
                raise ValueError(f"{where}: check {n} ({kind}) needs {' or '.join(repr(o) for o in options)}.")
    return tuple(checks)


def failed_checks(checks: Iterable[dict[str, Any]], world: "DemoWorld", before: State, answer: str = "") -> list[str]:
    """One sentence per check that does not hold on ``world`` (``before``: its state before the run).

    ``answer`` is what the user was told (the run's final texts); only ``answer`` checks read it.
    """
    return [why for c in checks for why in CHECKS[c["check"]](c, world, before, answer)]
