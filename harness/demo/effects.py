"""Checks on the demo world's state after a run: was the task *done*, and nothing else damaged?

Introduced in Chapter 0 (its example is judged this way) and used by every chapter's success
rate through :func:`harness.evaluation.scenarios.judge`.

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
    {"check": "note", "title": "tool search", "contains": "deferred"}       ("appended": true: old text kept)
    {"check": "file", "path": "src/money.py", "contains": "Decimal"}        ("exists": false: it is gone;
                                                                             "appended": true: old text kept)
    {"check": "file", "path": "data/archive/returns.csv", "moved_from": "data/returns.csv"}
    {"check": "commit", "message": "Add --since flag", "files": ["src/app.py"]}
    {"check": "branch", "name": "fix/rounding", "checked_out": true}
    {"check": "scratchpad", "key": "next_tag", "value": "v0.4.0"}
    {"check": "answer", "contains": ["Invoice #2041"]}   (what the user was told: for read-only requests)
    {"check": "answer", "domains": 3}                   (the answer names at least 3 of the world's domains)
    {"check": "observed", "contains": "\"passed\": 7"}  (a step that only looks was done: a tool showed this)
    {"check": "unchanged"}                              (the run changed nothing in the world)

Messages, emails, reminders and commits count only when they are new (not in the world before the
run), so a seeded message can never satisfy a check. Text matching ignores case and runs of
spaces; ``contains`` and ``excludes`` take a string or a list (all must hold).

Three rules hold for every scenario besides its checks, so that no run passes by damage or by
talk alone:

* **Nothing else changed.** The whole world is compared before and after — every file in the
  sandbox (hidden folders and caches included) and every collection (messages, mail, issues,
  events, reminders, notes, scratchpad, branches, commits, the staging area, inbox, web, packages).
  Each check allows exactly what it names to change (a message check its channel, an issue check
  that issue's named fields, a file check that path, ``moved_from`` the source too, a commit
  check new commits, the staging area and the checked-out branch's tip); any other change fails.
  So ``unchanged`` is the rule with nothing allowed, an append that rewrites the file fails
  ``appended``, and nothing is deleted unless a check says so. Reading an email (its unread mark)
  and running the tests (the last run kept for "rerun what failed") are looks, not changes.
* **No new text carries excluded content.** The ``excludes`` of message, direct-message and email
  checks apply to *every* new message, direct message, email, issue, comment, note and reminder
  — posting the excluded line in a second message fails too. (On a note, file or answer check,
  ``excludes`` concerns that note, file or answer.)
* **No new or moved event overlaps another** on its day, unless its event check says
  ``"overlaps": true``.

What the user was told is grounded: each value an ``answer`` check requires, and each
``observed`` text, must appear in the result of a tool call made during the run whose own
arguments did not contain it (so an answer typed without looking, or a value fed to a tool and
echoed back, does not count). The caller passes those results as ``served``.
:func:`failed_checks` returns one sentence per failure — an empty list means the effects hold.
"""
from __future__ import annotations

import copy
import re
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from harness.demo.toolset import demo_tools
from harness.core.json_types import JSON, JSONObject

if TYPE_CHECKING:
    from harness.demo.world import DemoWorld

State = JSONObject
Served = tuple[str, str]  # one tool call of a run: (its arguments as text, the result it got back)
Key = tuple[JSON, ...]  # where in the state a change happened: ("files", path), ("issues", 3, "state") …

#: Words that name each domain in an answer, besides the domain's tool names; each is matched at the start
#: of a word ("test" names tests, "latest" does not). No bare "web" or "data": a model's stock list of
#: skills ("web development", "data analysis", "machine learning") names none of this world's tools.
DOMAIN_WORDS: dict[str, tuple[str, ...]] = {
    "files": ("file", "folder", "director"), "git": ("git", "commit", "branch"), "tests": ("test",),
    "web": ("web page", "webpage", "website", "url", "http", "link", "docs", "documentation"),
    "packages": ("package", "dependenc"), "notes": ("note", "scratchpad"),
    "chat": ("chat", "channel", "direct message"), "issues": ("issue",), "calendar": ("calendar", "event", "remind"),
    "data": ("csv", "spreadsheet", "calculat", "arithmetic"), "email": ("email", "e-mail", "inbox", "mail"),
}
_DOMAIN_PATTERNS = {d: re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + ")") for d, words in DOMAIN_WORDS.items()}
#: A clause with one of these says what cannot be done: its domain words name no capability.
_NEGATION = re.compile(r"\b(?:can ?not|can't|cannot|unable|won't|will not|don't|do not|not able|sorry|no access)\b")
#: How deep each part of the state is compared: a change is found (and allowed) at this depth.
_DEPTH = {"files": 1, "channels": 1, "direct_messages": 1, "sent": 1, "issues": 2, "events": 1, "reminders": 1,
          "notes": 1, "scratchpad": 1, "branches": 1}
#: The issue fields each issue-check field allows to change.
_ISSUE_FIELDS = {"state": ("state", "close_reason"), "priority": ("priority",), "assignee": ("assignee",),
                 "label": ("labels",), "comment": ("comments",)}


def world_state(world: "DemoWorld") -> State:
    """A deep copy of everything a tool can change: taken before a run, compared after it.

    Observation traces are left out on purpose: an email's unread mark and the last test run
    change when the agent looks, and looking is not damage.
    """
    repo = world.repo
    sent: dict[str, list[dict[str, str]]] = {}
    for m in world.sent:
        sent.setdefault(m["to"].lower(), []).append(m)
    return copy.deepcopy({
        "files": world.snapshot(),
        "channels": {n: c["messages"] for n, c in world.channels.items()},
        "channel_settings": {n: {k: v for k, v in c.items() if k != "messages"} for n, c in world.channels.items()},
        "direct_messages": world.direct_messages, "sent": sent, "issues": world.issues, "events": world.events,
        "reminders": world.reminders, "notes": world.notes, "scratchpad": world.scratchpad,
        "branches": dict(repo.branches), "head": repo.head, "staged": dict(repo.staged), "commits": list(repo.commits),
        "inbox": {i: {k: v for k, v in m.items() if k != "unread"} for i, m in world.inbox.items()},
        "web": world.web, "packages": world.packages, "people": world.people,
    })


def _norm(text: object) -> str:
    return re.sub(r"\s+", " ", str(text)).strip().lower()


def _as_list(value: JSON) -> list[str]:
    return [value] if isinstance(value, str) else list(value or [])


def _text_fails(text: str, spec: JSONObject, what: str, *, excludes: bool = True) -> list[str]:
    """Why ``text`` does not meet ``spec``'s contains (and excludes) — empty when it does."""
    t = _norm(text)
    out = [f"{what} does not contain {c!r}" for c in _as_list(spec.get("contains")) if _norm(c) not in t]
    if excludes:
        out += [f"{what} contains {x!r}, which it should not" for x in _as_list(spec.get("excludes")) if _norm(x) in t]
    return out


def _any_new(texts: Sequence[str], spec: JSONObject, what: str) -> list[str]:
    """Fine when one of the new ``texts`` has ``spec``'s contains; else the closest miss, or that there is none.

    Its ``excludes`` are checked on every new text by :func:`_excluded`, not here.
    """
    if not texts:
        return [f"no new {what}"]
    misses = [_text_fails(t, spec, f"the new {what}", excludes=False) for t in texts]
    return [] if any(not m for m in misses) else min(misses, key=len)


def _grounded(value: str, served: Sequence[Served]) -> bool:
    """Did a tool call of the run return ``value`` without having been given it?"""
    v = _norm(value)
    return any(v in _norm(result) and v not in _norm(args) for args, result in served)


def _handle(value: str) -> str:
    return value.strip().lstrip("@").lower()


class _Run:
    """What a check looks at: the world, its state before and after, the answer and the served results."""

    def __init__(self, world: "DemoWorld", before: State, answer: str, served: Sequence[Served]) -> None:
        self.world, self.before, self.after = world, before, world_state(world)
        self.answer, self.served = answer, served

    def new_messages(self, part: str, key: str) -> list[dict[str, str]]:
        return self.after[part].get(key, [])[len(self.before[part].get(key, [])):]


# --- the checks: each returns why it fails (empty when it holds) and what it allows to change ----------------

def _message(c: dict, run: _Run) -> tuple[list[str], set[Key]]:
    key = c["channel"].strip().lstrip("#").lower()
    if key not in run.world.channels:
        return [f"there is no channel {c['channel']}"], set()
    return _any_new([m["text"] for m in run.new_messages("channels", key)], c, f"message in #{key}"), {("channels", key)}


def _direct_message(c: dict, run: _Run) -> tuple[list[str], set[Key]]:
    who = _handle(c["to"])
    new = [m["text"] for m in run.new_messages("direct_messages", who) if m["author"] == run.world.user]
    return _any_new(new, c, f"direct message to @{who}"), {("direct_messages", who)}


def _email(c: dict, run: _Run) -> tuple[list[str], set[Key]]:
    to = c["to"].lower()
    new = run.new_messages("sent", to)
    if "subject" in c:
        new = [m for m in new if _norm(m["subject"]) == _norm(c["subject"])]
    what = f"email to {c['to']}" + (f" with the subject {c['subject']!r}" if "subject" in c else "")
    return _any_new([m["subject"] + "\n" + m["body"] for m in new], c, what), {("sent", to)}


def _issue(c: dict, run: _Run) -> tuple[list[str], set[Key]]:
    issues = run.world.issues
    if "id" in c:
        issue, what = issues.get(c["id"]), f"issue {c['id']}"
    else:
        found = [i for i in issues.values() if _norm(i["title"]) == _norm(c["title"])]
        issue, what = (found[-1] if found else None), f"issue titled {c['title']!r}"
    if issue is None:
        return [f"there is no {what}"], set()
    old = run.before["issues"].get(issue["id"])
    allowed: set[Key] = ({("issues", issue["id"])} if old is None else
                         {("issues", issue["id"], f) for name, fields in _ISSUE_FIELDS.items() if name in c for f in fields})
    out = []
    for field in ("state", "priority"):
        if field in c and issue.get(field) != c[field]:
            out.append(f"{what} has {field} {issue.get(field)!r}, not {c[field]!r}")
    if "assignee" in c and (issue.get("assignee") or "") != _handle(c["assignee"]):
        out.append(f"{what} is assigned to {issue.get('assignee')!r}, not {c['assignee']!r}")
    if "label" in c and c["label"] not in issue.get("labels", []):
        out.append(f"{what} has no label {c['label']!r}")
    if "comment" in c:
        seen = len((old or {}).get("comments", []))
        out += _any_new([x["text"] for x in issue["comments"][seen:]], {"contains": c["comment"]}, f"comment on {what}")
    return out, allowed


def _event(c: dict, run: _Run) -> tuple[list[str], set[Key]]:
    if "id" in c:
        events = [e for e in [run.world.events.get(c["id"])] if e]
        what, allowed = f"event {c['id']}", {("events", c["id"])}
    else:
        events = [e for e in run.world.events.values() if _norm(e["title"]) == _norm(c["title"])]
        what, allowed = f"event {c['title']!r}", {("events", e["id"]) for e in events}
    if not c.get("exists", True):
        return ([f"{what} still exists"] if events else []), allowed
    if not events:
        return [f"there is no {what}"], allowed
    misses = []
    for e in events:
        m = [f"{what} is at {e.get(f)!r}, not {c[f]!r}" for f in ("date", "time", "duration_minutes") if f in c and e.get(f) != c[f]]
        m += [f"{what} does not invite {a}" for a in _as_list(c.get("attendee")) if _handle(a) not in e["attendees"]]
        misses.append(m)
    return min(misses, key=len), allowed


def _reminder(c: dict, run: _Run) -> tuple[list[str], set[Key]]:
    new = {i: r for i, r in run.world.reminders.items() if i not in run.before["reminders"]}
    if "date" in c:
        new = {i: r for i, r in new.items() if r["date"] == c["date"]}
    fails = _any_new([r["text"] for r in new.values()], c, "reminder" + (f" on {c['date']}" if "date" in c else ""))
    return fails, {("reminders", i) for i in new}


def _note(c: dict, run: _Run) -> tuple[list[str], set[Key]]:
    key = next((t for t in run.world.notes if _norm(t) == _norm(c["title"])), None)
    if key is None:
        return [f"there is no note titled {c['title']!r}"], set()
    content, old = run.world.notes[key]["content"], run.before["notes"].get(key, {}).get("content")
    if old is not None and _norm(content) == _norm(old):
        return [f"note {c['title']!r} is unchanged"], {("notes", key)}
    return _text_fails(content, c, f"note {c['title']!r}") + _kept(c, old, content, f"note {c['title']!r}"), {("notes", key)}


def _kept(c: dict, old: str | None, new: str, what: str) -> list[str]:
    """``appended``: the old text is still there, at the start, and something was added after it."""
    if not c.get("appended"):
        return []
    if old is None:
        return [f"{what} did not exist before, so nothing could be appended to it"]
    return [] if new.startswith(old.rstrip("\n")) and len(new) > len(old.rstrip("\n")) else [
        f"{what} no longer starts with its old text ({len(old)} characters): it was overwritten, not appended to"]


def _file(c: dict, run: _Run) -> tuple[list[str], set[Key]]:
    path, allowed = c["path"], {("files", c["path"])}
    now = run.after["files"].get(path)
    if not c.get("exists", True):
        return ([f"{path} still exists"] if now is not None else []), allowed
    if now is None:
        return [f"there is no file {path}"], allowed
    out = _text_fails(now, c, path) + _kept(c, run.before["files"].get(path), now, path)
    if "moved_from" in c:
        source, allowed = c["moved_from"], allowed | {("files", c["moved_from"])}
        if run.after["files"].get(source) is not None:
            out.append(f"{source} still exists, so it was not moved")
        if now != run.before["files"].get(source):
            out.append(f"{path} does not hold what {source} held: it is not the moved file")
    return out, allowed


def _commit(c: dict, run: _Run) -> tuple[list[str], set[Key]]:
    repo = run.world.repo
    allowed = {("commits",), ("staged",), ("branches", repo.head)}
    new = [repo.commits[i] for i in repo.commits if i not in set(run.before["commits"])]
    if not new:
        return ["no new commit"], allowed
    misses = []
    for commit in new:
        m = [] if _norm(commit.message) == _norm(c["message"]) else [f"the new commit's message is {commit.message!r}"]
        parent = repo.commits[commit.parent].files if commit.parent else {}
        m += [f"the new commit does not change {p}" for p in _as_list(c.get("files")) if commit.files.get(p) == parent.get(p)]
        misses.append(m)
    return min(misses, key=len), allowed


def _branch(c: dict, run: _Run) -> tuple[list[str], set[Key]]:
    allowed = {("branches", c["name"])} | ({("head",)} if c.get("checked_out") else set())
    if c["name"] not in run.world.repo.branches:
        return [f"there is no branch {c['name']!r}"], allowed
    if c.get("checked_out") and run.world.repo.head != c["name"]:
        return [f"{run.world.repo.head!r} is checked out, not {c['name']!r}"], allowed
    return [], allowed


def _scratchpad(c: dict, run: _Run) -> tuple[list[str], set[Key]]:
    got = run.world.scratchpad.get(c["key"])
    return ([] if got == c["value"] else [f"scratchpad {c['key']!r} holds {got!r}, not {c['value']!r}"]), {("scratchpad", c["key"])}


def _named_domains(answer: str, world: "DemoWorld") -> set[str]:
    """The domains an answer offers: named by a tool or a plain word, in a clause that is not a refusal."""
    tools = [(t.name.lower(), t.domain) for t in demo_tools(world)]
    named: set[str] = set()
    for clause in re.split(r"[.;!?\n]+|\bbut\b", _norm(answer)):
        if not _NEGATION.search(clause):
            named |= {d for d, pattern in _DOMAIN_PATTERNS.items() if pattern.search(clause)}
            named |= {d for name, d in tools if name in clause}
    return named


def _answer(c: dict, run: _Run) -> tuple[list[str], set[Key]]:
    if not run.answer.strip():
        return ["there is no answer"], set()
    out = _text_fails(run.answer, c, "the answer")
    out += [f"the answer's {v!r} was in no tool result of the run: it was not looked up"
            for v in _as_list(c.get("contains")) if _norm(v) in _norm(run.answer) and not _grounded(v, run.served)]
    if "domains" in c:
        named = _named_domains(run.answer, run.world)
        if len(named) < c["domains"]:
            out.append(f"the answer offers {len(named)} of the world's domains, fewer than {c['domains']}")
    return out, set()


def _observed(c: dict, run: _Run) -> tuple[list[str], set[Key]]:
    return [f"no tool result of the run showed {v!r}: the step that looks it up was not done"
            for v in _as_list(c.get("contains")) if not _grounded(v, run.served)], set()


def _unchanged(c: dict, run: _Run) -> tuple[list[str], set[Key]]:
    return [], set()  # the rule below, with nothing allowed


CHECKS: dict[str, Callable[[dict, _Run], tuple[list[str], set[Key]]]] = {
    "message": _message, "direct_message": _direct_message, "email": _email, "issue": _issue, "event": _event,
    "reminder": _reminder, "note": _note, "file": _file, "commit": _commit, "branch": _branch,
    "scratchpad": _scratchpad, "answer": _answer, "observed": _observed, "unchanged": _unchanged,
}
#: Fields each check needs (one of a tuple's alternatives).
REQUIRED: dict[str, tuple[str | tuple[str, ...], ...]] = {
    "message": ("channel",), "direct_message": ("to",), "email": ("to",), "issue": (("id", "title"),),
    "event": (("id", "title"),), "reminder": (), "note": ("title",), "file": ("path",), "commit": ("message",),
    "branch": ("name",), "scratchpad": ("key", "value"), "answer": (), "observed": ("contains",), "unchanged": (),
}
#: Checks whose ``excludes`` hold for every new text the run sent, not only the one that matched.
_OUTGOING = {"message", "direct_message", "email"}


# --- the rules that hold for every scenario ----------------------------------------------------------------

def changes(before: State, after: State) -> list[Key]:
    """Where ``after`` differs from ``before``, each place at the depth :data:`_DEPTH` gives its part."""
    out: list[Key] = []

    def walk(old: JSON, new: JSON, key: Key, depth: int) -> None:
        if old == new:
            return
        if depth == 0 or not isinstance(old, dict) or not isinstance(new, dict):
            out.append(key)
            return
        for k in sorted(old.keys() | new.keys(), key=str):
            walk(old.get(k), new.get(k), (*key, k), depth - 1)

    for part in after.keys() | before.keys():
        walk(before.get(part), after.get(part), (part,), _DEPTH.get(part, 0))
    return sorted(out, key=str)


def _unasked(run: _Run, allowed: set[Key]) -> list[str]:
    """What changed that no check allows, as one sentence (empty when nothing did)."""
    extra = [k for k in changes(run.before, run.after) if not any(k[:len(a)] == a for a in allowed)]
    if not extra:
        return []
    shown = ", ".join(" ".join(str(p) for p in k) for k in extra[:6]) + (" …" if len(extra) > 6 else "")
    return [f"the run changed what the request did not ask for: {shown}"]


def _new_texts(run: _Run) -> list[tuple[str, str]]:
    """(where, text) for every text the run sent or saved: messages, mail, issues, comments, notes, reminders."""
    b, a = run.before, run.after
    out = [(f"message in #{ch}", m["text"]) for ch in a["channels"] for m in run.new_messages("channels", ch)]
    out += [(f"direct message to @{p}", m["text"]) for p in a["direct_messages"] for m in run.new_messages("direct_messages", p)]
    out += [(f"email to {to}", m["subject"] + "\n" + m["body"]) for to in a["sent"] for m in run.new_messages("sent", to)]
    for i, issue in a["issues"].items():
        old = b["issues"].get(i)
        if old is None:
            out.append((f"issue {i}", issue["title"] + "\n" + issue.get("body", "")))
        out += [(f"comment on issue {i}", x["text"]) for x in issue["comments"][len((old or {}).get("comments", [])):]]
    out += [(f"note {t!r}", n["content"]) for t, n in a["notes"].items() if n != b["notes"].get(t)]
    out += [(f"reminder {r['text']!r}", r["text"]) for i, r in a["reminders"].items() if i not in b["reminders"]]
    return out


def _excluded(checks: Sequence[dict], run: _Run) -> list[str]:
    banned = {x for c in checks if c["check"] in _OUTGOING for x in _as_list(c.get("excludes"))}
    return [f"the new {where} contains {x!r}, which no message may carry"
            for where, text in _new_texts(run) for x in sorted(banned) if _norm(x) in _norm(text)]


def _minutes(hhmm: str) -> int:
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


def _overlaps(checks: Sequence[dict], run: _Run) -> list[str]:
    """New or moved events that overlap another event on their day (unless a check allows it)."""
    ok_ids = {e["id"] for c in checks if c["check"] == "event" and c.get("overlaps")
              for e in run.world.events.values() if e["id"] == c.get("id") or _norm(e["title"]) == _norm(c.get("title", ""))}
    span = lambda e: (_minutes(e["time"]), _minutes(e["time"]) + e["duration_minutes"])
    out = []
    for e in run.after["events"].values():
        old = run.before["events"].get(e["id"])
        if e["id"] in ok_ids or (old and span(old) == span(e) and old["date"] == e["date"]):
            continue
        start, end = span(e)
        clash = [o["title"] for o in run.after["events"].values()
                 if o["id"] != e["id"] and o["date"] == e["date"] and span(o)[0] < end and start < span(o)[1]]
        if clash:
            out.append(f"event {e['title']!r} at {e['date']} {e['time']} overlaps {', '.join(clash)}")
    return out


def validate_checks(checks: JSON, where: str) -> tuple[JSONObject, ...]:
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


def failed_checks(checks: Iterable[JSONObject], world: "DemoWorld", before: State, answer: str = "",
                  served: Sequence[Served] = ()) -> list[str]:
    """One sentence per check that does not hold on ``world``, then per rule every run must keep.

    ``before`` is the world's state before the judged request; ``answer`` what the user was told
    (the run's final texts); ``served`` the run's successful tool calls, as (arguments, result)
    texts — what an answer's values and ``observed`` texts must be found in.
    """
    checks = list(checks)
    run = _Run(world, before, answer, served)
    out: list[str] = []
    allowed: set[Key] = set()
    for c in checks:
        fails, allows = CHECKS[c["check"]](c, run)
        out += fails
        allowed |= allows
    if any(c["check"] == "unchanged" for c in checks):
        allowed = set()
    return out + _unasked(run, allowed) + _excluded(checks, run) + _overlaps(checks, run)
