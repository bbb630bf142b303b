"""What a fresh demo world contains: a small project, its history, and the team around it.

Introduced in Chapter 1 with :class:`workbook.demo.world.DemoWorld`.

The seed is plain data so every fresh world starts identical: the labelled queries and
scenarios in ``workbook/data`` name these files, issues, channels and dates, and a test runs
them against a fresh world. The project ("tally", a sales-CSV summariser) is small but real:
its tests pass under real pytest except the one that documents issue #2.
"""
from __future__ import annotations

from harness.core.json_types import JSONObject

#: The demo's "today", so calendar answers are the same on every run.
TODAY = "2025-03-10"
#: The user the agent works for; the other people are teammates.
USER = "sam"
PEOPLE = {
    "sam": "sam@example.test",
    "alice": "alice@example.test",
    "bob": "bob@example.test",
    "carol": "carol@example.test",
    "dana": "dana@example.test",
}

# --- the project's files, at each version --------------------------------------------------

README_V1 = """# tally

Summarise sales CSV files.
"""

README_V2 = """# tally

Summarise sales CSV files from the command line.

## Usage

    python -m src.app data/sales.csv --by region
"""

README_V3 = README_V2 + """
## Development

Run the tests with `python -m pytest`. See docs/CHANGELOG.md for what changed.
"""

PYPROJECT_V1 = """[project]
name = "tally"
version = "0.1.0"
requires-python = ">=3.10"
dependencies = ["quickcsv>=2.0"]
"""

PYPROJECT_V3 = """[project]
name = "tally"
version = "0.3.0"
requires-python = ">=3.10"
dependencies = ["quickcsv>=2.0", "tablefmt>=0.9"]
"""

PARSER = '''"""Parse sales CSV files into rows of dicts."""
import csv
from pathlib import Path


def parse_line(line: str, sep: str = ",") -> list[str]:
    """Split one CSV line into fields, honouring double quotes."""
    return next(csv.reader([line], delimiter=sep)) if line.strip() else []


def parse_row(header: list[str], line: str) -> dict[str, str]:
    """Pair a line's fields with the header's column names."""
    return dict(zip(header, parse_line(line)))


def load_rows(path: str | Path) -> list[dict[str, str]]:
    """Read a CSV file into a list of row dicts."""
    lines = Path(path).read_text().splitlines()
    header = parse_line(lines[0])
    return [parse_row(header, line) for line in lines[1:] if line.strip()]
'''

REPORT = '''"""Totals per group for parsed sales rows."""
from collections import defaultdict


def total(amounts: list[str]) -> float:
    """Sum amounts given as strings. Known issue #2: float sums drift by a cent."""
    return sum(float(a) for a in amounts if a)


def totals_by(rows: list[dict[str, str]], key: str, column: str = "amount") -> dict[str, float]:
    """Sum ``column`` per value of ``key``."""
    groups: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        groups[row[key]].append(row[column])
    return {k: total(v) for k, v in sorted(groups.items())}


def format_table(totals: dict[str, float]) -> str:
    """Render totals as an aligned two-column table."""
    width = max((len(k) for k in totals), default=0)
    return "\\n".join(f"{k:<{width}}  {v:>10.2f}" for k, v in totals.items())
'''

APP_HEAD = '''"""Command-line entry point: python -m src.app FILE --by COLUMN."""
import argparse

from src.parser import load_rows
from src.report import format_table, totals_by


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Summarise a sales CSV.")
    ap.add_argument("file")
    ap.add_argument("--by", default="region")
    args = ap.parse_args(argv)
    print(format_table(totals_by(load_rows(args.file), args.by)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
'''

APP_WORKING = APP_HEAD.replace(
    '''    args = ap.parse_args(argv)
    print(format_table(totals_by(load_rows(args.file), args.by)))''',
    '''    ap.add_argument("--since", help="only rows on or after this date (YYYY-MM-DD)")
    args = ap.parse_args(argv)
    rows = load_rows(args.file)
    if args.since:
        rows = [r for r in rows if r["date"] >= args.since]
    print(format_table(totals_by(rows, args.by)))''',
)

EXPORT = '''"""Write report totals back out as CSV."""
import csv
import io


def totals_to_csv(totals: dict[str, float]) -> str:
    """Totals as CSV text with a header row."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["group", "total"])
    for key, value in totals.items():
        writer.writerow([key, f"{value:.2f}"])
    return out.getvalue()
'''

TEST_PARSER = '''import pytest

from src.parser import parse_line, parse_row


def test_parse_line():
    assert parse_line("a,b,c") == ["a", "b", "c"]


def test_parse_quoted_field():
    assert parse_line('"Smith, J",42') == ["Smith, J", "42"]


def test_parse_empty_line():
    assert parse_line("   ") == []


def test_parse_row_pairs_header():
    assert parse_row(["region", "amount"], "north,12.50") == {"region": "north", "amount": "12.50"}


@pytest.mark.skip(reason="semicolon-separated files are not supported yet (issue #6)")
def test_parse_semicolons():
    assert parse_line("a;b", sep=";") == ["a", "b"]
'''

TEST_REPORT = '''import pytest

from src.report import format_table, total, totals_by


def test_total_sums_amounts():
    assert total(["1.50", "2.25"]) == 3.75


def test_totals_by_region():
    rows = [{"region": "north", "amount": "2"}, {"region": "south", "amount": "3"}, {"region": "north", "amount": "1"}]
    assert totals_by(rows, "region") == {"north": 3.0, "south": 3.0}


def test_total_rounds_to_cents():
    # Issue #2: float sums drift by a cent; the fix will sum Decimals.
    pytest.fail("total(['0.10', '0.20']) returned 0.30000000000000004, expected 0.30")


def test_format_table_aligns_columns():
    assert format_table({"north": 3.0, "south": 12.5}).splitlines()[1] == "south       12.50"
'''

SALES = """date,region,product,amount
2025-03-01,north,widget,12.50
2025-03-01,south,gadget,30.00
2025-03-02,north,gadget,18.75
2025-03-03,east,widget,9.99
2025-03-03,south,widget,12.50
2025-03-04,west,gizmo,45.00
2025-03-05,north,gizmo,22.10
2025-03-05,east,gadget,
2025-03-06,south,widget,11.25
2025-03-07,west,widget,12.50
"""

CUSTOMERS = """id,name,email,region,signup_date
1,Acme Ltd,billing@acme.example.test,north,2024-11-02
2,Blue Fern,hello@bluefern.example.test,south,2025-01-15
3,"Copper & Co",accounts@copper.example.test,east,2025-02-01
4,Delta Works,ops@delta.example.test,west,2025-02-20
5,Evergreen,team@evergreen.example.test,north,2025-03-03
"""

RETURNS = """date,region,product,amount
2025-03-04,north,widget,12.50
2025-03-06,south,gadget,30.00
"""

TODO = """# TODO

- Fix rounding in report totals (issue #2)
- Document the --since flag in the README
- Ask Dana for the February invoice numbers
"""

CHANGELOG = """# Changelog

## 0.3.0 - 2025-03-07
- New command-line entry point (`python -m src.app`).

## 0.2.0 - 2025-03-05
- Totals per region.

## 0.1.0 - 2025-03-03
- CSV parser.
"""

#: Commits oldest first: (branch, author, date, message, {path: new content}).
#: A branch's first commit starts from the tip of ``main`` at that point.
HISTORY: list[tuple[str, str, str, str, dict[str, str]]] = [
    ("main", "alice", "2025-03-03", "Add CSV parser", {
        "README.md": README_V1, "pyproject.toml": PYPROJECT_V1,
        "src/parser.py": PARSER, "tests/test_parser.py": TEST_PARSER,
    }),
    ("main", "bob", "2025-03-05", "Add totals per region", {
        "src/report.py": REPORT, "tests/test_report.py": TEST_REPORT,
        "data/sales.csv": SALES, "data/customers.csv": CUSTOMERS,
    }),
    ("main", "alice", "2025-03-07", "Add command-line entry point", {
        "src/app.py": APP_HEAD, "README.md": README_V2, "pyproject.toml": PYPROJECT_V3,
        "docs/CHANGELOG.md": CHANGELOG, "notes/todo.md": TODO,
    }),
    ("feature/csv-export", "carol", "2025-03-08", "Add CSV export of totals", {"src/export.py": EXPORT}),
]
CHECKED_OUT = "main"

#: The working tree on top of ``main``: README.md staged, src/app.py edited, one untracked file.
WORKING_CHANGES = {"README.md": README_V3, "src/app.py": APP_WORKING, "data/returns.csv": RETURNS}
STAGED = ["README.md"]

# --- the documentation website and a small API (served from memory) -------------------------

DOCS = "http://docs.example.test"
API = "http://api.example.test"


def _page(title: str, body: str) -> str:
    nav = (f'<nav><a href="{DOCS}/">Home</a> | <a href="/getting-started">Getting started</a> | '
           '<a href="/guides/csv-format">CSV format</a> | <a href="/changelog">Changelog</a></nav>')
    return (f"<!doctype html><html><head><title>{title}</title><script>track('{title}')</script></head>"
            f"<body>{nav}<main><h1>{title}</h1>{body}</main><footer>tally docs</footer></body></html>")


WEB: dict[str, JSONObject] = {
    f"{DOCS}/": {"type": "text/html", "body": _page("tally documentation",
        "<p>tally summarises sales CSV files from the command line.</p><ul>"
        '<li><a href="/getting-started">Getting started</a></li>'
        '<li><a href="/guides/csv-format">The CSV format tally reads</a></li>'
        '<li><a href="/guides/tool-search">Using tally from an agent: deferred loading and tool search</a></li>'
        '<li><a href="/api/report">API reference: src.report</a></li>'
        '<li><a href="/changelog">Changelog</a></li></ul>')},
    f"{DOCS}/getting-started": {"type": "text/html", "body": _page("Getting started",
        "<p>Install with <code>pip install tally</code>, then run "
        "<code>python -m src.app data/sales.csv --by region</code>.</p>"
        "<p>The output is one line per region with its total amount.</p>")},
    f"{DOCS}/guides/csv-format": {"type": "text/html", "body": _page("The CSV format",
        "<p>Files need a header row. Columns: date (YYYY-MM-DD), region, product, amount.</p>"
        "<p>Quoted fields may contain commas. Semicolon-separated files are not supported yet.</p>")},
    f"{DOCS}/guides/tool-search": {"type": "text/html", "body": _page("Deferred loading and tool search",
        "<p>An agent with many tools should not load every schema up front. Mark tools as deferred "
        "and give the model a search tool; matching tools are loaded when the search finds them.</p>")},
    f"{DOCS}/api/report": {"type": "text/html", "body": _page("API reference: src.report",
        "<p><code>total(amounts)</code> sums amounts; <code>totals_by(rows, key)</code> groups them; "
        "<code>format_table(totals)</code> renders an aligned table.</p>")},
    f"{DOCS}/changelog": {"type": "text/html", "body": _page("Changelog",
        "<p>0.3.0 (2025-03-07): command-line entry point. 0.2.0: totals per region. 0.1.0: CSV parser.</p>")},
    f"{API}/status": {"type": "application/json",
                      "body": '{"service": "tally-api", "status": "ok", "version": "0.3.0"}'},
    f"{API}/echo": {"type": "application/json", "body": '{"error": "POST a body to this endpoint"}',
                    "status": 405},
}

# --- the package index -------------------------------------------------------------------------


def _rel(version: str, date: str, requires: dict[str, str] | None = None, yanked: bool = False) -> JSONObject:
    return {"version": version, "date": date, "requires": requires or {}, "yanked": yanked}


PACKAGES: dict[str, JSONObject] = {
    "quickcsv": {"summary": "Fast CSV reading and writing with type inference.", "license": "MIT",
                 "homepage": "https://quickcsv.example.test",
                 "releases": [_rel("1.4.2", "2023-06-01"), _rel("2.0.0", "2024-05-20", {"datewise": ">=1.1"}),
                              _rel("2.1.0", "2025-01-12", {"datewise": ">=1.2", "tidylog": ">=0.5"})]},
    "tinyhttp": {"summary": "A small synchronous HTTP client with retries.", "license": "Apache-2.0",
                 "homepage": "https://tinyhttp.example.test",
                 "releases": [_rel("2.0.0", "2024-02-02", {"retryloop": ">=1.0"}),
                              _rel("2.1.0", "2024-09-09", {"retryloop": ">=1.0"}, yanked=True),
                              _rel("2.1.1", "2024-09-12", {"retryloop": ">=1.0"})],
                 "advisories": [{"id": "DEMO-2024-0012", "severity": "high", "affected": ["2.0.0", "2.1.0"],
                                 "summary": "Redirects to another host keep the Authorization header."}]},
    "tidylog": {"summary": "Structured, colourful logging for command-line tools.", "license": "BSD-3-Clause",
                "homepage": "https://tidylog.example.test",
                "releases": [_rel("0.4.0", "2023-10-10"), _rel("0.5.1", "2024-08-30")]},
    "datewise": {"summary": "Parse and format dates and durations without surprises.", "license": "MIT",
                 "homepage": "https://datewise.example.test",
                 "releases": [_rel("1.1.0", "2024-01-05"), _rel("1.2.0", "2024-11-11")]},
    "retryloop": {"summary": "Retry flaky calls with exponential backoff and jitter.", "license": "MIT",
                  "homepage": "https://retryloop.example.test",
                  "releases": [_rel("1.0.0", "2023-03-03"), _rel("1.1.0", "2024-07-07")]},
    "yamlette": {"summary": "A strict YAML 1.2 parser.", "license": "MIT",
                 "homepage": "https://yamlette.example.test",
                 "releases": [_rel("1.1.0", "2023-12-12"), _rel("1.2.0", "2024-06-06"), _rel("1.2.1", "2024-10-01")],
                 "advisories": [{"id": "DEMO-2024-0031", "severity": "critical", "affected": ["1.1.0", "1.2.0"],
                                 "summary": "Custom tags can construct arbitrary Python objects."}]},
    "slugline": {"summary": "Turn titles into URL-safe slugs in any language.", "license": "ISC",
                 "homepage": "https://slugline.example.test",
                 "releases": [_rel("3.0.0", "2024-04-04")]},
    "tablefmt": {"summary": "Render lists of rows as aligned plain-text or Markdown tables.", "license": "MIT",
                 "homepage": "https://tablefmt.example.test",
                 "releases": [_rel("0.9.0", "2024-03-03"), _rel("1.0.0", "2025-02-14", {"tidylog": ">=0.4"})]},
    "cachebox": {"summary": "In-memory and on-disk caches with time-to-live expiry.", "license": "Apache-2.0",
                 "homepage": "https://cachebox.example.test",
                 "releases": [_rel("0.3.0", "2024-05-05", {"datewise": ">=1.0"}),
                              _rel("0.4.0", "2025-01-30", {"datewise": ">=1.1", "tidylog": ">=0.5"})]},
    "promptkit": {"summary": "Templates and token budgeting for LLM prompts.", "license": "MIT",
                  "homepage": "https://promptkit.example.test",
                  "releases": [_rel("0.1.0", "2024-12-01", {"tinyhttp": ">=2.1", "cachebox": ">=0.3"}),
                               _rel("0.2.0", "2025-02-27", {"tinyhttp": ">=2.1.1", "cachebox": ">=0.4"})]},
}

# --- notes, chat, issues, calendar, email ------------------------------------------------------

NOTES: dict[str, JSONObject] = {
    "standup": {"content": "Yesterday: CLI entry point. Today: --since flag. Blocked: rounding bug (#2).",
                "tags": ["daily"], "date": "2025-03-10"},
    "release checklist": {"content": "1. Run the tests\n2. Update docs/CHANGELOG.md\n3. Tag the release\n"
                                     "4. Announce in #releases", "tags": ["release"], "date": "2025-03-06"},
    "ideas": {"content": "Export totals as CSV (carol is on it). Maybe a --top N option.",
              "tags": ["backlog"], "date": "2025-03-04"},
}
SCRATCHPAD = {"build_number": "41"}

CHANNELS: dict[str, JSONObject] = {
    "general": {"topic": "Company-wide announcements", "members": ["sam", "alice", "bob", "carol", "dana"],
                "messages": [("dana", "2025-03-07 16:02", "Invoices for February go out on Monday."),
                             ("alice", "2025-03-10 08:55", "Office is closed on Friday afternoon.")]},
    "dev": {"topic": "tally development", "members": ["sam", "alice", "bob", "carol"],
            "messages": [("bob", "2025-03-07 11:20", "Totals per region are merged."),
                         ("carol", "2025-03-08 17:45", "CSV export is on feature/csv-export, review welcome."),
                         ("alice", "2025-03-10 09:05", "Deploy freeze starts Wednesday, get fixes in before.")]},
    "team": {"topic": "Team coordination", "members": ["sam", "alice", "bob", "carol", "dana"],
             "messages": [("alice", "2025-03-10 09:00", "Standup moved to 09:30 this week.")]},
    "releases": {"topic": "Release announcements", "members": ["sam", "alice", "bob"],
                 "messages": [("alice", "2025-03-07 18:00", "tally 0.3.0 is out.")]},
    "random": {"topic": "Anything goes", "members": ["sam", "bob", "carol"],
               "messages": [("bob", "2025-03-09 12:00", "Lunch on Thursday?")]},
}
DIRECT_MESSAGES: dict[str, list[tuple[str, str, str]]] = {
    "alice": [("alice", "2025-03-09 19:12", "Can you look at the rounding bug tomorrow?"),
              ("sam", "2025-03-09 19:30", "Yes, first thing.")],
    "bob": [("bob", "2025-03-10 08:40", "The report tests fail on main, is that known?")],
}

ISSUES: list[JSONObject] = [
    {"title": "Parser drops the last row when the file has no trailing newline", "state": "open",
     "priority": "high", "labels": ["bug"], "assignee": "alice", "created": "2025-03-04",
     "body": "load_rows skips the final line of files written without a newline at the end."},
    {"title": "Report totals are off by one cent", "state": "open", "priority": "medium", "labels": ["bug"],
     "assignee": "bob", "created": "2025-03-05",
     "body": "total() sums floats, so 0.10 + 0.20 gives 0.30000000000000004. Sum Decimals instead.",
     "comments": [("alice", "This breaks test_total_rounds_to_cents.")]},
    {"title": "Add CSV export command", "state": "open", "priority": "low", "labels": ["enhancement"],
     "assignee": "carol", "created": "2025-03-06", "body": "Write the totals table out as CSV."},
    {"title": "Document the --since flag", "state": "open", "priority": "low", "labels": ["docs"],
     "assignee": None, "created": "2025-03-08", "body": "The README does not mention --since yet."},
    {"title": "Crash on empty CSV input", "state": "closed", "priority": "high", "labels": ["bug"],
     "assignee": "bob", "created": "2025-03-02", "body": "An empty file raised IndexError in load_rows."},
    {"title": "Support semicolon-separated files", "state": "open", "priority": "medium",
     "labels": ["enhancement"], "assignee": None, "created": "2025-03-06",
     "body": "European spreadsheets export with ';'. See the skipped test_parse_semicolons."},
    {"title": "Release 0.3.0", "state": "closed", "priority": "medium", "labels": ["release"],
     "assignee": "alice", "created": "2025-03-06", "body": "Tag and announce 0.3.0."},
]

EVENTS: list[JSONObject] = [
    {"title": "Standup", "date": "2025-03-10", "time": "09:30", "duration_minutes": 15,
     "attendees": ["sam", "alice", "bob", "carol"]},
    {"title": "Design review: CSV export", "date": "2025-03-10", "time": "14:00", "duration_minutes": 60,
     "attendees": ["sam", "carol"]},
    {"title": "1:1 with Dana", "date": "2025-03-11", "time": "10:00", "duration_minutes": 30,
     "attendees": ["sam", "dana"]},
    {"title": "Standup", "date": "2025-03-11", "time": "09:30", "duration_minutes": 15,
     "attendees": ["sam", "alice", "bob", "carol"]},
    {"title": "Release planning", "date": "2025-03-12", "time": "11:00", "duration_minutes": 45,
     "attendees": ["sam", "alice", "bob"]},
]
REMINDERS: list[JSONObject] = [
    {"text": "Renew the TLS certificate for docs.example.test", "date": "2025-03-14", "time": "09:00"},
]

EMAILS: list[JSONObject] = [
    {"sender": "dana@example.test", "subject": "Invoice #2041 for February", "date": "2025-03-07 15:10",
     "unread": True, "body": "Hi Sam, the February invoice is attached: 1,240.00 EUR, due 2025-03-21. Dana"},
    {"sender": "sales@pebble.example.test", "subject": "Pricing update for 2025", "date": "2025-03-05 09:00",
     "unread": False, "body": "From April the team plan costs 12 EUR per seat per month."},
    {"sender": "alice@example.test", "subject": "Re: release notes draft", "date": "2025-03-09 20:15",
     "unread": True, "body": "Looks good. Add a line about the --since flag once it lands."},
    {"sender": "ci@example.test", "subject": "Build failed on main", "date": "2025-03-10 07:58",
     "unread": True, "body": "tests/test_report.py::test_total_rounds_to_cents failed."},
]
