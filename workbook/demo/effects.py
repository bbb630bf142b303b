"""The judge of a run on the demo world: the asked change made, and nothing else.

Introduced in Chapter 0 (its example is judged this way) and used by every chapter's success
rate through :func:`workbook.evaluation.scenarios.judge`.

**The world a run must end in.** A scenario labels the calls that do its request (``tools`` with
``args``). The judge plays them on a copy of the world as the run found it
(:meth:`~workbook.demo.world.DemoWorld.clone`) — the *reference* — and the run's world must equal it
everywhere: every file of the sandbox (hidden paths and empty folders included), the git objects,
index, branches and HEAD, every channel, direct message, email, issue field, event, reminder,
note and scratchpad key, and the log of web requests that would have left the sandbox. Only
what a person would leave to the agent is free: the wording of a text the agent composes (a
message, an email's body, a comment, a note, a file's content — where a check names it), clock
times, the ids new items get, and an issue's body. So a second post, an extra commit, a file
staged by ``.``, a branch from the wrong commit, an unrequested label, an issue closed "not
planned", a double booking or a POST of the customer list each make the world differ, whatever
the checks below say.

**What a free text must and must not say** is the job of the checks in ``workbook/data/*_scenarios.json``,
a small declarative vocabulary, one JSON object per fact::

    {"check": "message", "channel": "#dev", "contains": "# TODO", "excludes": "Fix rounding"}
    {"check": "direct_message", "to": "@bob", "contains": "review"}
    {"check": "email", "to": "dana@example.test", "subject": "Returns data", "contains": "returns"}
    {"check": "issue", "title": "Follow up on todo", "priority": "high"}
    {"check": "issue", "id": 6, "assignee": "@dana", "comment": "Dana will take", "label": "tests", "state": "closed"}
    {"check": "event", "title": "Export review", "date": "2025-03-11", "time": "15:00", "attendee": "@carol"}
    {"check": "event", "id": 3, "exists": false}                            (it was cancelled)
    {"check": "reminder", "contains": "Pay invoice 2041", "date": "2025-03-20"}
    {"check": "note", "title": "tool search", "contains": "deferred"}       ("appended": true: old text kept;
                                                                             "exact": true: the text was dictated)
    {"check": "file", "path": "src/money.py", "contains": "Decimal"}        ("exists": false: it is gone)
    {"check": "file", "path": "data/archive/returns.csv", "moved_from": "data/returns.csv"}
    {"check": "commit", "message": "Add --since flag", "files": ["src/app.py"]}
    {"check": "branch", "name": "fix/rounding", "checked_out": true}
    {"check": "scratchpad", "key": "next_tag", "value": "v0.4.0"}
    {"check": "answer", "contains": ["Invoice #2041"]}   (what the user was told: for read-only requests)
    {"check": "answer", "domains": 3}                   (the answer names at least 3 of the world's domains)
    {"check": "observed", "contains": "\"passed\": 7"}  (a step that only looks was done: a tool showed this)
    {"check": "unchanged"}                              (the run changed nothing in the world)

A text check makes that text free and says what it must contain (in a clause that does not deny
it: "the result is not 19.39" does not report 19.39) and must not; ``exact`` keeps a dictated text
fixed (compared without case, spacing, quotes or a closing full stop; a JSON file by its value). Checks are refused when
scenarios load if they name an unknown field or give one the wrong type, so a typo cannot make
a check vacuous. Text matching ignores case and runs of spaces (an excluded text counts where a
word starts with it); ``contains`` and ``excludes`` take a string or a list (all must hold). The ``excludes`` of message, direct-message and email
checks hold for *every* new text the run sent or saved. No new or moved event may overlap
another on its day unless its check says ``"overlaps": true``.

**What the user was told is grounded**: each value an ``answer`` check requires, and each
``observed`` text, must appear in the result of a call to one of the scenario's labelled tools
(the CSV read by the CSV tool, the tests run by the test runner), made before the run had given
that value to any tool itself — an answer typed without looking, or a value written to a file,
posted to an echo or fed to a tool and read back, does not count.
:func:`failed_checks` returns one sentence per failure — an empty list means the run did the task.
"""
from __future__ import annotations

import copy
import hashlib
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from harness.core.json_types import JSON, JSONObject
from harness.core.registry import ToolRegistry
from workbook.demo.toolset import demo_tools

if TYPE_CHECKING:
    from workbook.demo.world import DemoWorld

State = JSONObject
#: One tool call of a run as the judge reads it: (tool name, its arguments as text, its result, whether it worked).
Served = tuple[str, str, str, bool]
Key = tuple[JSON, ...]  # where two states differ: ("files", path), ("issues", 3, "state") …
Call = tuple[str, JSONObject]  # a labelled call: (tool name, arguments)

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
_REFUSAL = re.compile(r"\b(?:can ?not|can't|cannot|unable|won't|will not|don't|do not|not able|sorry|no access|lack|"
                      r"without access|not have access|no way)\b")
#: A value with one of these among the three words before it, in its clause, is denied, not reported.
_DENIAL = re.compile(r"\b(?:not|no|never|isn't|aren't|wasn't|isnt|neither|nor|instead of)\b")
#: Marks a free text in the comparable form of a state (:func:`comparable`).
FREE = "<free>"


# --- the vocabulary: each check's fields and their types ------------------------------------------------

_TEXTS = (str, list)  # a string or a list of strings
_TEXT_FIELDS = {"contains": _TEXTS, "excludes": _TEXTS}
FIELDS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "message": {"channel": str, **_TEXT_FIELDS},
    "direct_message": {"to": str, **_TEXT_FIELDS},
    "email": {"to": str, "subject": str, **_TEXT_FIELDS},
    "issue": {"id": int, "title": str, "state": str, "priority": str, "assignee": str, "label": str, "comment": str},
    "event": {"id": int, "title": str, "date": str, "time": str, "duration_minutes": int, "attendee": _TEXTS,
              "exists": bool, "overlaps": bool},
    "reminder": {"date": str, **_TEXT_FIELDS},
    "note": {"title": str, "appended": bool, "exact": bool, **_TEXT_FIELDS},
    "file": {"path": str, "exists": bool, "appended": bool, "exact": bool, "moved_from": str, **_TEXT_FIELDS},
    "commit": {"message": str, "files": list},
    "branch": {"name": str, "checked_out": bool},
    "scratchpad": {"key": str, "value": str},
    "answer": {"contains": _TEXTS, "excludes": _TEXTS, "domains": int},
    "observed": {"contains": _TEXTS},
    "unchanged": {},
}
#: Fields each check needs (one of a tuple's alternatives).
REQUIRED: dict[str, tuple[str | tuple[str, ...], ...]] = {
    "message": ("channel",), "direct_message": ("to",), "email": ("to",), "issue": (("id", "title"),),
    "event": (("id", "title"),), "reminder": (), "note": ("title",), "file": ("path",), "commit": ("message",),
    "branch": ("name",), "scratchpad": ("key", "value"), "answer": (), "observed": ("contains",), "unchanged": (),
}
#: Checks whose ``excludes`` hold for every new text the run sent, not only the one that matched.
_OUTGOING = {"message", "direct_message", "email"}


def validate_checks(checks: JSON, where: str) -> tuple[JSONObject, ...]:
    """The checks as given, or one error sentence naming the first bad one: an unknown kind or field, a
    missing field, or a field of the wrong type (a typo such as ``contain`` would make a check vacuous)."""
    if not isinstance(checks, list) or not checks:
        raise ValueError(f"{where}: 'checks' must be a non-empty list of checks on the world's state.")
    for n, c in enumerate(checks):
        kind = c.get("check") if isinstance(c, dict) else None
        if kind not in FIELDS:
            raise ValueError(f"{where}: check {n} must be an object whose 'check' is one of {', '.join(FIELDS)}.")
        assert isinstance(c, dict)
        for need in REQUIRED[kind]:
            options = need if isinstance(need, tuple) else (need,)
            if not any(o in c for o in options):
                raise ValueError(f"{where}: check {n} ({kind}) needs {' or '.join(repr(o) for o in options)}.")
        for name, value in c.items():
            if name == "check":
                continue
            if name not in FIELDS[kind]:
                raise ValueError(f"{where}: check {n} ({kind}) has no field {name!r}; its fields are "
                                 f"{', '.join(FIELDS[kind]) or 'none'}.")
            wanted = FIELDS[kind][name]
            texts = wanted is _TEXTS and isinstance(value, list) and all(isinstance(v, str) for v in value)
            if not (isinstance(value, wanted) and not (wanted is int and isinstance(value, bool))) or \
                    (wanted is _TEXTS and isinstance(value, list) and not texts):
                shape = "a string or a list of strings" if wanted is _TEXTS else getattr(wanted, "__name__", str(wanted))
                raise ValueError(f"{where}: check {n} ({kind}) field {name!r} must be {shape}, got {value!r}.")
    return tuple(checks)


# --- states ------------------------------------------------------------------------------------------

def world_state(world: "DemoWorld") -> State:
    """A deep copy of everything a tool can change: what a run's world is compared with.

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
        "branches": dict(repo.branches), "head": repo.head, "staged": dict(repo.staged),
        "commits": {i: {"parent": c.parent, "author": c.author, "message": c.message, "files": c.files}
                    for i, c in repo.commits.items()},
        "inbox": {i: {k: v for k, v in m.items() if k != "unread"} for i, m in world.inbox.items()},
        "web": world.web, "packages": world.packages, "people": world.people, "requests": world.requests,
    })


@dataclass(frozen=True)
class Reference:
    """The world a run must end in: the labelled calls played from where the run started."""

    state: State
    failed: tuple[str, ...]  # labelled calls that did not work from this start, one sentence each


def reference(start: "DemoWorld", calls: Sequence[Call]) -> Reference:
    """Play ``calls`` on a copy of ``start`` (which is left as it is) and keep the state they leave."""
    twin = start.clone()
    try:
        registry = ToolRegistry(demo_tools(twin))
        failed = []
        for i, (name, args) in enumerate(calls):
            result = registry.dispatch(name, dict(args), call_id=f"reference_{i}")
            if result.is_error:
                failed.append(f"the labelled call {name} does not work from where the run started: {result.content[:200]}")
        return Reference(world_state(twin), tuple(failed))
    finally:
        twin.close()


def _norm(text: object) -> str:
    return re.sub(r"\s+", " ", str(text)).strip().lower()


def _loose(text: object) -> str:
    """A dictated text as compared under ``exact``: no case, spacing, surrounding quotes or closing full stop."""
    return _norm(text).strip("'\"` ").rstrip(".").strip("'\"` ")


def _as_list(value: JSON) -> list[str]:
    return [value] if isinstance(value, str) else list(value or [])


def _handle(value: str) -> str:
    return value.strip().lstrip("@").lower()


@dataclass
class _Free:
    """Where the checks leave the wording to the run (and which dictated texts are compared loosely)."""

    channels: set[str]
    direct_messages: set[str]
    email_bodies: set[str]
    email_subjects: set[str]
    comments: set[str]  # issue ids (as text) and normalised titles
    reminders: bool
    notes: dict[str, bool]  # normalised title -> exact
    files: dict[str, bool]  # path -> exact


def _free(checks: Sequence[JSONObject]) -> _Free:
    free = _Free(set(), set(), set(), set(), set(), False, {}, {})
    for c in checks:
        kind = c["check"]
        if kind == "message":
            free.channels.add(c["channel"].strip().lstrip("#").lower())
        elif kind == "direct_message":
            free.direct_messages.add(_handle(c["to"]))
        elif kind == "email":
            free.email_bodies.add(c["to"].lower())
            if "subject" not in c:
                free.email_subjects.add(c["to"].lower())
        elif kind == "issue" and "comment" in c:
            free.comments.add(str(c["id"]) if "id" in c else _norm(c["title"]))
        elif kind == "reminder":
            free.reminders = True
        elif kind == "note":
            free.notes[_norm(c["title"])] = bool(c.get("exact"))
        elif kind == "file" and c.get("exists", True) and "moved_from" not in c:
            free.files[c["path"]] = bool(c.get("exact"))
    return free


def _text_slot(text: str, exact: bool) -> str:
    """A free text's place in a comparable state; a dictated one loosened (a JSON text by its value)."""
    if not exact:
        return FREE
    try:
        return json.dumps(json.loads(text), sort_keys=True)
    except ValueError:
        return _loose(text)


def comparable(state: State, before: State, checks: Sequence[JSONObject]) -> JSONObject:
    """``state`` as the judge compares it with the reference: free texts marked :data:`FREE`, dictated ones
    loosened, clock times dropped, new items listed without their ids, commits named by their content."""
    free = _free(checks)

    def files(snapshot: JSONObject) -> JSONObject:
        return {p: (_text_slot(str(v), free.files[p]) if p in free.files and v is not None else v) for p, v in snapshot.items()}

    def talk(part: str, key: str, messages: list[JSONObject], free_keys: set[str]) -> list[JSONObject]:
        old = len(before[part].get(key, []))
        return [{"author": m["author"], "text": FREE if i >= old and key in free_keys else m["text"]}
                for i, m in enumerate(messages)]

    def by_id(part: str, shape: Callable[[JSONObject, bool], JSONObject]) -> JSONObject:
        """Items that existed before, by id; new ones as a sorted list (their ids depend on what else was made)."""
        old = {str(i): shape(x, False) for i, x in state[part].items() if i in before[part]}
        new = sorted((shape(x, True) for i, x in state[part].items() if i not in before[part]),
                     key=lambda x: json.dumps(x, sort_keys=True))
        return {"existing": old, "new": new}

    def issue(x: JSONObject, new: bool) -> JSONObject:
        seen = 0 if new else len(before["issues"][x["id"]]["comments"])
        mine = str(x["id"]) in free.comments or _norm(x["title"]) in free.comments
        comments = [{"author": c["author"], "text": FREE if i >= seen and mine else c["text"]}
                    for i, c in enumerate(x["comments"])]
        return {**{k: v for k, v in x.items() if k not in ("id", "comments")}, "title": _norm(x["title"]),
                "body": FREE if new else x.get("body", ""), "labels": sorted(x.get("labels", [])), "comments": comments}

    def event(x: JSONObject, new: bool) -> JSONObject:
        return {**{k: v for k, v in x.items() if k != "id"}, "title": _norm(x["title"]), "attendees": sorted(x["attendees"])}

    def reminder(x: JSONObject, new: bool) -> JSONObject:
        return {**{k: v for k, v in x.items() if k != "id"}, "text": FREE if new and free.reminders else x["text"]}

    def note(title: str, x: JSONObject) -> JSONObject:
        key = _norm(title)
        content = _text_slot(x["content"], free.notes[key]) if key in free.notes else x["content"]
        return {**x, "content": content, "tags": sorted(x.get("tags", []))}

    def sent(to: str, mails: list[JSONObject]) -> list[JSONObject]:
        old = len(before["sent"].get(to, []))
        return [{"to": m["to"].lower(),
                 "subject": FREE if i >= old and to in free.email_subjects else _norm(m["subject"]),
                 "body": FREE if i >= old and to in free.email_bodies else m["body"]} for i, m in enumerate(mails)]

    names: dict[str, str] = {}

    def commit(cid: str) -> str:
        """A commit named by what it holds (its parent's name, author, message and files), not by its clock."""
        if cid not in names:
            c = state["commits"][cid]
            body = [commit(c["parent"]) if c["parent"] else None, c["author"], _norm(c["message"]), files(c["files"])]
            names[cid] = hashlib.sha1(json.dumps(body, sort_keys=True).encode()).hexdigest()[:12]
        return names[cid]

    return {
        "files": files(state["files"]),
        "channels": {k: talk("channels", k, v, free.channels) for k, v in state["channels"].items()},
        "channel_settings": state["channel_settings"],
        "direct_messages": {k: talk("direct_messages", k, v, free.direct_messages) for k, v in state["direct_messages"].items()},
        "sent": {to: sent(to, mails) for to, mails in state["sent"].items()},
        "issues": by_id("issues", issue),
        "events": by_id("events", event),
        "reminders": by_id("reminders", reminder),
        "notes": {_norm(t): note(t, x) for t, x in state["notes"].items()},
        "scratchpad": state["scratchpad"],
        "commits": sorted(commit(c) for c in state["commits"]),
        "branches": {b: commit(c) for b, c in state["branches"].items()},
        "head": state["head"],
        "staged": files(state["staged"]),
        "inbox": state["inbox"], "web": state["web"], "packages": state["packages"], "people": state["people"],
        "requests": state["requests"],
    }


#: How deep each part of a comparable state is walked when two differ: where the difference is reported.
_DEPTH = {"files": 1, "channels": 1, "direct_messages": 1, "sent": 1, "issues": 3, "events": 3, "reminders": 2,
          "notes": 2, "scratchpad": 1, "branches": 1, "staged": 1}


def changes(before: JSONObject, after: JSONObject) -> list[Key]:
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


def _differences(run: JSONObject, ref: JSONObject) -> list[str]:
    """One sentence naming where the run's world differs from the reference (empty when nowhere)."""
    places = changes(ref, run)
    if not places:
        return []
    shown = ", ".join(" ".join(str(p) for p in k) for k in places[:6]) + (" …" if len(places) > 6 else "")
    return [f"the world is not what the request asked for, at: {shown}"]


# --- what the checks require of free texts, answers and observations ------------------------------------

class _Run:
    """What a check looks at: the run's world, its state before, the answer, and the run's calls."""

    def __init__(self, world: "DemoWorld", before: State, answer: str, served: Sequence[Served],
                 sources: frozenset[str]) -> None:
        self.world, self.before, self.after = world, before, world_state(world)
        self.answer, self.served, self.sources = answer, served, sources

    def new_messages(self, part: str, key: str) -> list[dict[str, str]]:
        return self.after[part].get(key, [])[len(self.before[part].get(key, [])):]

    def grounded(self, value: str) -> bool:
        """Did a labelled tool show ``value`` before the run had given it to any tool itself?"""
        v = _norm(value)
        for name, args, result, ok in self.served:
            if v in _norm(args):
                return False
            if ok and name in self.sources and v in _norm(result):
                return True
        return False


def _denied(value: str, text: str) -> bool:
    """Whether every clause of ``text`` that holds ``value`` denies it ("is not 19.39", "no 19.39")."""
    v = _norm(value)
    clauses = [c for c in re.split(r"[.;!?\n]+(?:\s|$)|\bbut\b", _norm(text)) if v in c]
    return bool(clauses) and all(_DENIAL.search(" ".join(c[:c.index(v)].split()[-3:])) for c in clauses)


def _text_fails(text: str, spec: JSONObject, what: str, *, excludes: bool = True) -> list[str]:
    """Why ``text`` does not meet ``spec``'s contains (and excludes) — empty when it does."""
    t = _norm(text)
    out = [f"{what} does not contain {c!r}" for c in _as_list(spec.get("contains")) if _norm(c) not in t]
    out += [f"{what} says {c!r} only to deny it" for c in _as_list(spec.get("contains")) if _norm(c) in t and _denied(c, text)]
    if excludes:
        out += [f"{what} contains {x!r}, which it should not" for x in _as_list(spec.get("excludes")) if _carries(text, x)]
    return out


def _carries(text: str, excluded: str) -> bool:
    """Whether ``text`` holds ``excluded`` at the start of a word ("tag" is in "tags", not in "stage")."""
    return re.search(r"(?<!\w)" + re.escape(_norm(excluded)), _norm(text)) is not None


def _any_new(texts: Sequence[str], spec: JSONObject, what: str) -> list[str]:
    """Fine when one of the new ``texts`` has ``spec``'s contains; else the closest miss, or that there is none."""
    if not texts:
        return [f"no new {what}"]
    misses = [_text_fails(t, spec, f"the new {what}", excludes=False) for t in texts]
    return [] if any(not m for m in misses) else min(misses, key=len)


def _message(c: JSONObject, run: _Run) -> list[str]:
    key = c["channel"].strip().lstrip("#").lower()
    if key not in run.world.channels:
        return [f"there is no channel {c['channel']}"]
    return _any_new([m["text"] for m in run.new_messages("channels", key)], c, f"message in #{key}")


def _direct_message(c: JSONObject, run: _Run) -> list[str]:
    who = _handle(c["to"])
    new = [m["text"] for m in run.new_messages("direct_messages", who) if m["author"] == run.world.user]
    return _any_new(new, c, f"direct message to @{who}")


def _email(c: JSONObject, run: _Run) -> list[str]:
    new = run.new_messages("sent", c["to"].lower())
    if "subject" in c:
        new = [m for m in new if _norm(m["subject"]) == _norm(c["subject"])]
    what = f"email to {c['to']}" + (f" with the subject {c['subject']!r}" if "subject" in c else "")
    return _any_new([m["subject"] + "\n" + m["body"] for m in new], c, what)


def _issue(c: JSONObject, run: _Run) -> list[str]:
    issues = run.world.issues
    if "id" in c:
        issue, what = issues.get(c["id"]), f"issue {c['id']}"
    else:
        found = [i for i in issues.values() if _norm(i["title"]) == _norm(c["title"])]
        issue, what = (found[-1] if found else None), f"issue titled {c['title']!r}"
    if issue is None:
        return [f"there is no {what}"]
    out = [f"{what} has {f} {issue.get(f)!r}, not {c[f]!r}" for f in ("state", "priority") if f in c and issue.get(f) != c[f]]
    if "assignee" in c and (issue.get("assignee") or "") != _handle(c["assignee"]):
        out.append(f"{what} is assigned to {issue.get('assignee')!r}, not {c['assignee']!r}")
    if "label" in c and c["label"] not in issue.get("labels", []):
        out.append(f"{what} has no label {c['label']!r}")
    if "comment" in c:
        seen = len(run.before["issues"].get(issue["id"], {}).get("comments", []))
        out += _any_new([x["text"] for x in issue["comments"][seen:]], {"contains": c["comment"]}, f"comment on {what}")
    return out


def _event(c: JSONObject, run: _Run) -> list[str]:
    if "id" in c:
        events, what = [e for e in [run.world.events.get(c["id"])] if e], f"event {c['id']}"
    else:
        events, what = [e for e in run.world.events.values() if _norm(e["title"]) == _norm(c["title"])], f"event {c['title']!r}"
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


def _reminder(c: JSONObject, run: _Run) -> list[str]:
    new = [r for i, r in run.world.reminders.items() if i not in run.before["reminders"] and r["date"] == c.get("date", r["date"])]
    return _any_new([r["text"] for r in new], c, "reminder" + (f" on {c['date']}" if "date" in c else ""))


def _kept(c: JSONObject, old: str | None, new: str, what: str) -> list[str]:
    """``appended``: the old text is still there, at the start, and something was added after it."""
    if not c.get("appended"):
        return []
    if old is None:
        return [f"{what} did not exist before, so nothing could be appended to it"]
    return [] if new.startswith(old.rstrip("\n")) and len(new) > len(old.rstrip("\n")) else [
        f"{what} no longer starts with its old text ({len(old)} characters): it was overwritten, not appended to"]


def _added(c: JSONObject, old: str | None, new: str) -> str:
    """What a run wrote: the added part of an appended text, else the whole text."""
    return new[len(old.rstrip("\n")):] if c.get("appended") and old is not None and new.startswith(old.rstrip("\n")) else new


def _note(c: JSONObject, run: _Run) -> list[str]:
    key = next((t for t in run.world.notes if _norm(t) == _norm(c["title"])), None)
    if key is None:
        return [f"there is no note titled {c['title']!r}"]
    content, old = run.world.notes[key]["content"], run.before["notes"].get(key, {}).get("content")
    if old is not None and _norm(content) == _norm(old):
        return [f"note {c['title']!r} is unchanged"]
    what = f"note {c['title']!r}"
    return _text_fails(_added(c, old, content), c, what) + _kept(c, old, content, what)


def _file(c: JSONObject, run: _Run) -> list[str]:
    path = c["path"]
    now = run.after["files"].get(path)
    if not c.get("exists", True):
        return [f"{path} still exists"] if now is not None else []
    if now is None:
        return [f"there is no file {path}"]
    old = run.before["files"].get(path)
    out = _text_fails(_added(c, old, now), c, path) + _kept(c, old, now, path)
    if "moved_from" in c:
        source = c["moved_from"]
        if run.after["files"].get(source) is not None:
            out.append(f"{source} still exists, so it was not moved")
        if now != run.before["files"].get(source):
            out.append(f"{path} does not hold what {source} held: it is not the moved file")
    return out


def _commit(c: JSONObject, run: _Run) -> list[str]:
    repo = run.world.repo
    new = [repo.commits[i] for i in repo.commits if i not in run.before["commits"]]
    if not new:
        return ["no new commit"]
    misses = []
    for commit in new:
        m = [] if _norm(commit.message) == _norm(c["message"]) else [f"the new commit's message is {commit.message!r}"]
        parent = repo.commits[commit.parent].files if commit.parent else {}
        m += [f"the new commit does not change {p}" for p in c.get("files", []) if commit.files.get(p) == parent.get(p)]
        misses.append(m)
    return min(misses, key=len)


def _branch(c: JSONObject, run: _Run) -> list[str]:
    if c["name"] not in run.world.repo.branches:
        return [f"there is no branch {c['name']!r}"]
    if c.get("checked_out") and run.world.repo.head != c["name"]:
        return [f"{run.world.repo.head!r} is checked out, not {c['name']!r}"]
    return []


def _scratchpad(c: JSONObject, run: _Run) -> list[str]:
    got = run.world.scratchpad.get(c["key"])
    return [] if got == c["value"] else [f"scratchpad {c['key']!r} holds {got!r}, not {c['value']!r}"]


def _named_domains(answer: str, world: "DemoWorld") -> set[str]:
    """The domains an answer offers: named by a tool or a plain word, in a clause that is not a refusal."""
    tools = [(t.name.lower(), t.domain) for t in demo_tools(world)]
    named: set[str] = set()
    for clause in re.split(r"[.;!?\n]+|\bbut\b", _norm(answer)):
        if not _REFUSAL.search(clause):
            named |= {d for d, pattern in _DOMAIN_PATTERNS.items() if pattern.search(clause)}
            named |= {d for name, d in tools if name in clause}
    return named


def _answer(c: JSONObject, run: _Run) -> list[str]:
    if not run.answer.strip():
        return ["there is no answer"]
    out = _text_fails(run.answer, c, "the answer")
    out += [f"the answer's {v!r} was shown by none of the task's own tools before the run typed it: it was not looked up"
            for v in _as_list(c.get("contains")) if _norm(v) in _norm(run.answer) and not run.grounded(v)]
    if "domains" in c:
        named = _named_domains(run.answer, run.world)
        if len(named) < c["domains"]:
            out.append(f"the answer offers {len(named)} of the world's domains, fewer than {c['domains']}")
    return out


def _observed(c: JSONObject, run: _Run) -> list[str]:
    return [f"none of the task's own tools showed {v!r}: the step that looks it up was not done"
            for v in _as_list(c.get("contains")) if not run.grounded(v)]


CHECKS: dict[str, Callable[[JSONObject, _Run], list[str]]] = {
    "message": _message, "direct_message": _direct_message, "email": _email, "issue": _issue, "event": _event,
    "reminder": _reminder, "note": _note, "file": _file, "commit": _commit, "branch": _branch,
    "scratchpad": _scratchpad, "answer": _answer, "observed": _observed, "unchanged": lambda c, run: [],
}


# --- the rules that hold for every scenario ----------------------------------------------------------------

def _new_texts(run: _Run) -> list[tuple[str, str]]:
    """(where, text) for every text the run sent or saved: messages, mail, issues, comments, notes, reminders, requests."""
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


def _excluded(checks: Sequence[JSONObject], run: _Run) -> list[str]:
    banned = {x for c in checks if c["check"] in _OUTGOING for x in _as_list(c.get("excludes"))}
    return [f"the new {where} contains {x!r}, which no message may carry"
            for where, text in _new_texts(run) for x in sorted(banned) if _carries(text, x)]


def _minutes(hhmm: str) -> int:
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


def _overlaps(checks: Sequence[JSONObject], run: _Run) -> list[str]:
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


def failed_checks(checks: Iterable[JSONObject], world: "DemoWorld", start: "DemoWorld", calls: Sequence[Call],
                  answer: str = "", served: Sequence[Served] = (), sources: Iterable[str] | None = None) -> list[str]:
    """One sentence per way the run falls short: a check that does not hold, then the rules every run keeps.

    ``world`` is the run's world afterwards; ``start`` a copy of it as the judged requests found it
    (:meth:`~workbook.demo.world.DemoWorld.clone`, left unchanged); ``calls`` the labelled calls that do the
    request, played from ``start`` to build the reference; ``answer`` what the user was told; ``served`` every
    call of the run in order, as (tool, arguments, result, worked) texts; ``sources`` the tools whose results
    may ground an answer (the labelled calls' tools when None).
    """
    checks = list(checks)
    before = world_state(start)
    ref = reference(start, calls)
    run = _Run(world, before, answer, served, frozenset(sources if sources is not None else (n for n, _ in calls)))
    out = list(ref.failed)
    for c in checks:
        out += CHECKS[c["check"]](c, run)
    out += _differences(comparable(run.after, before, checks), comparable(ref.state, before, checks))
    return out + _excluded(checks, run) + _overlaps(checks, run)
