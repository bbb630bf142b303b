"""Labelled queries and scenarios for the demo world, and the tool pairs that are easy to confuse.

Introduced in Chapter 1; Chapter 2 measures BM25 on the queries, Chapter 3 runs the scenarios
through the agent loop.

The labels live in ``workbook/data`` (JSON Lines and JSON, in the same shape as the public
data sets in ``shared/data``) so they can be read, diffed and extended without touching code.
Loading checks every record and names the file and line of the first bad one: a silently
skipped label would flatter every number measured with it.
"""
from __future__ import annotations

import importlib.resources
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from workbook.demo.effects import validate_checks
from workbook.steps import split_steps
from harness.core.json_types import JSON, JSONObject
from harness.retrieval.records import CatalogTool, Query

if TYPE_CHECKING:
    from importlib.abc import Traversable  # importlib.resources.abc from Python 3.11 on

#: The labels are package data, read through importlib.resources wherever harness is installed.
DATA_DIR = importlib.resources.files("workbook") / "data"
QUERIES_FILE = DATA_DIR / "demo_queries.jsonl"
SCENARIOS_FILE = DATA_DIR / "demo_scenarios.json"
#: The scenario sets by split: "dev" is what the workbook's choices were tuned on (the stand-in's
#: rules grew next to it, Chapter 3 picks its k on it); "heldout" was written afterwards, fresh,
#: and nothing is tuned on it — it is only reported.
SPLITS = {"dev": SCENARIOS_FILE, "heldout": DATA_DIR / "heldout_scenarios.json"}

#: Tools whose names and descriptions overlap enough that a model (or BM25) mixes them up.
CONFUSABLE_PAIRS: list[tuple[str, str]] = [
    ("search_docs", "search_code"),
    ("send_direct_message", "post_channel_message"),
    ("read_file", "read_note"),
    ("list_issues", "search_issues"),
    ("create_event", "create_reminder"),
    ("git_diff", "diff_files"),
    ("package_info", "package_versions"),
    ("http_get", "fetch_page_text"),
    ("http_get", "http_head"),
    ("append_to_file", "append_to_note"),
    ("write_file", "create_note"),
    ("search_messages", "search_email"),
    ("run_tests", "rerun_failed_tests"),
    ("preview_csv", "read_file"),
]


@dataclass(frozen=True)
class LabelledQuery:
    """One request and the tool(s) that serve it. ``args`` are the gold tool's arguments the request states."""

    qid: str
    query: str
    gold: tuple[str, ...]
    kind: Literal["literal", "paraphrase"]
    domain: str
    args: JSONObject | None = None


@dataclass(frozen=True)
class Scenario:
    """A request and what doing it means: ``checks`` on the world afterwards (:mod:`workbook.demo.effects`).

    ``tools`` are the tools the (last) request needs, in order, one per step, and ``args`` one dict
    per step: the labelled calls, which the judge plays to build the world a run must end in
    (:mod:`workbook.demo.effects`), and the labels of per-step recall.
    ``kind`` is "task" (a fresh request), "pivot" (``setup`` holds earlier requests, all file or
    git work, then ``request`` turns to another domain), "conversation" (several user turns that
    together make the task: ``setup`` holds the earlier turns and the checks cover every turn's
    effects) or "opener" (a vague first message).
    """

    id: str
    request: str
    tools: tuple[str, ...]
    kind: Literal["task", "pivot", "conversation", "opener"]
    setup: tuple[str, ...] = ()
    args: tuple[JSONObject, ...] = ()
    checks: tuple[JSONObject, ...] = ()
    setup_tools: tuple[tuple[str, ...], ...] = ()  # a conversation's earlier turns: the tools each needs

    @property
    def steps(self) -> list[str]:
        """The request's steps (:func:`workbook.steps.split_steps`): one per needed tool for a task."""
        return split_steps(self.request)


def _require(record: JSON, fields: dict[str, type], where: str) -> JSONObject:
    if not isinstance(record, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(record).__name__}.")
    for name, kind in fields.items():
        if not isinstance(record.get(name), kind):
            raise ValueError(f"{where}: field '{name}' must be a {kind.__name__}, got {record.get(name)!r}.")
    return record


def _names(value: list[JSON], field: str, where: str) -> tuple[str, ...]:
    if not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{where}: '{field}' must list tool names as non-empty strings.")
    return tuple(value)


def load_demo_queries(path: Path | str | None = None) -> list[LabelledQuery]:
    """The labelled demo queries (``workbook/data/demo_queries.jsonl`` unless ``path`` is given)."""
    source: Traversable = Path(path) if path else QUERIES_FILE
    out, seen = [], set()
    for n, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{source.name} line {n}"
        try:
            rec = _require(json.loads(line), {"qid": str, "query": str, "gold": list, "kind": str, "domain": str}, where)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where} is not valid JSON ({exc.msg}).") from None
        if rec["kind"] not in ("literal", "paraphrase"):
            raise ValueError(f"{where}: kind must be 'literal' or 'paraphrase', got {rec['kind']!r}.")
        if rec["qid"] in seen:
            raise ValueError(f"{where}: qid {rec['qid']!r} appears twice.")
        if not rec["gold"]:
            raise ValueError(f"{where}: 'gold' must name at least one tool.")
        args = rec.get("args")
        if args is not None and (not isinstance(args, dict) or len(rec["gold"]) != 1):
            raise ValueError(f"{where}: 'args' must be an object and needs exactly one gold tool.")
        seen.add(rec["qid"])
        out.append(LabelledQuery(rec["qid"], rec["query"], _names(rec["gold"], "gold", where), rec["kind"],
                                 rec["domain"], args))
    return out


KINDS = ("task", "pivot", "conversation", "opener")


def load_scenarios(split: str = "dev") -> list[Scenario]:
    """The development (``"dev"``) or held-out (``"heldout"``) scenarios; see :data:`SPLITS`."""
    if split not in SPLITS:
        raise ValueError(f"There is no scenario split {split!r}; the splits are {', '.join(SPLITS)}.")
    return load_demo_scenarios(SPLITS[split])


def load_demo_scenarios(path: Path | str | Traversable | None = None) -> list[Scenario]:
    """The scenarios in ``path`` (the development set, ``workbook/data/demo_scenarios.json``, when None).

    Every scenario must carry its ``checks``: a scenario without them could only be judged on names.
    """
    source = (Path(path) if isinstance(path, str) else path) if path else SCENARIOS_FILE
    try:
        records = json.loads(source.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source.name} is not valid JSON ({exc.msg} at line {exc.lineno}).") from None
    if not isinstance(records, list):
        raise ValueError(f"{source.name}: expected a JSON list of scenarios.")
    out, seen = [], set()
    for n, rec in enumerate(records):
        where = f"{source.name} scenario {n} ({rec.get('id', '?') if isinstance(rec, dict) else '?'})"
        rec = _require(rec, {"id": str, "request": str, "tools": list, "kind": str}, where)
        if rec["kind"] not in KINDS:
            raise ValueError(f"{where}: kind must be one of {', '.join(KINDS)}, got {rec['kind']!r}.")
        if rec["id"] in seen:
            raise ValueError(f"{where}: id {rec['id']!r} appears twice.")
        seen.add(rec["id"])
        setup, args = rec.get("setup", []), rec.get("args", [])
        if not isinstance(setup, list) or not all(isinstance(s, str) for s in setup):
            raise ValueError(f"{where}: 'setup' must be a list of earlier requests (strings).")
        if len(args) != len(rec["tools"]) or not all(isinstance(a, dict) for a in args):
            raise ValueError(f"{where}: 'args' needs one object per tool ({len(rec['tools'])}), got {len(args)}: "
                             "the judge plays the labelled calls to build the world a run must end in.")
        setup_tools = rec.get("setup_tools", [])
        if setup_tools and (len(setup_tools) != len(setup) or not all(isinstance(t, list) for t in setup_tools)):
            raise ValueError(f"{where}: 'setup_tools' needs one list of tool names per setup request ({len(setup)}).")
        out.append(Scenario(rec["id"], rec["request"], _names(rec["tools"], "tools", where), rec["kind"],
                            tuple(setup), tuple(args), validate_checks(rec.get("checks"), where),
                            tuple(_names(t, "setup_tools", where) for t in setup_tools)))
    return out


# --- the demo world as a labelled data set (Chapter 6a's metrics read it like the public ones) ---------------

def demo_queries(kind: str | None = None) -> list[Query]:
    """The demo world's labelled queries (only the ``kind`` given: "literal" or "paraphrase") as
    :class:`Query` records — the one place a :class:`workbook.demo.LabelledQuery` becomes one."""
    if kind not in (None, "literal", "paraphrase"):
        raise ValueError(f"kind must be 'literal', 'paraphrase' or None, got {kind!r}.")
    return [Query(qid=q.qid, query=q.query, gold=tuple(q.gold)) for q in load_demo_queries()
            if kind is None or q.kind == kind]


def demo_dataset() -> tuple[list[CatalogTool], list[Query]]:
    """The demo world's tools and labelled queries as catalog records (needs ``workbook.demo``)."""
    from workbook.demo.toolset import demo_tools

    return [CatalogTool.from_tool(t) for t in demo_tools()], demo_queries()
