"""Labelled public data for tool retrieval: where it lives, how it loads, how to fetch it.

Introduced in Chapter 6a (``notebooks/06a_public_benchmarks.ipynb``).

Every source is normalised to one shape so one loader and one set of metrics serve all of them:
``tools.jsonl`` (one tool a line: ``id``, ``server``, ``name``, ``description``, ``input_schema``) and
``queries.jsonl`` (``qid``, ``query``, ``gold`` tool ids; optionally ``gold_groups``, one slot of
interchangeable ids per needed tool, and ``steps``, an annotator's plan). The data is
never part of the repository: it is found through ``HARNESS_DATA`` or beside the repository, and
everything that needs it says in one sentence what it skips when it is absent. Loading is strict
by default because a silently dropped line or an unknown gold id would change every number
measured on it.
"""
from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
import warnings
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping

from harness.core.places import find_upward
from harness.core.redaction import redact_url_credentials
from harness.retrieval.records import CatalogTool, Query
from harness.core.json_types import JSON, JSONObject

#: The public folders Chapter 6 measures on (``data_dir()/<name>``).
DATASETS = ("livemcpbench", "toollens_train", "mcpzero_catalog")


#: A file only a checkout of the workbook has: the public data is looked for beside the checkout it marks.
CHECKOUT_MARK = "workbook/__init__.py"


def data_dir() -> Path | None:
    """The public data folder: ``$HARNESS_DATA``, else ``../shared/data`` beside the workbook checkout the working
    folder is in; None if absent. Not any ``shared/data`` above the working folder: outside a checkout (a user's
    project, a temp folder) the data is only what ``HARNESS_DATA`` names, wherever that folder happens to sit."""
    named = os.environ.get("HARNESS_DATA", "").strip()
    if named:
        found: Path | None = Path(named).expanduser()
    else:
        mark = find_upward(CHECKOUT_MARK)
        found = mark.parents[2] / "shared" / "data" if mark else None
    return found if found and found.is_dir() else None


def data_dir_problem() -> str | None:
    """What is wrong with ``$HARNESS_DATA`` when it is set but names no folder ("HARNESS_DATA names X, which
    does not exist"), else None: the reader who set it is told that, not to set it."""
    named = os.environ.get("HARNESS_DATA", "").strip()
    if not named:
        return None
    path = Path(named).expanduser()
    if path.is_dir():
        return None
    return f"HARNESS_DATA names {path}, which {'is a file, not a folder' if path.exists() else 'does not exist'}"


def dataset_dir(name: str) -> Path | None:
    """``data_dir()/name`` when it holds a ``tools.jsonl``, else None."""
    root = data_dir()
    folder = root / name if root else None
    return folder if folder and (folder / "tools.jsonl").is_file() else None


def missing_data_note(name: str) -> str:
    """The one sentence said when a public folder is absent."""
    problem = data_dir_problem()
    if problem:
        return (f"Public data '{name}' not found because {problem} (point it at the folder holding the public "
                "data): skipping what needs it.")
    return (f"Public data '{name}' not found (set HARNESS_DATA to the folder holding it, or put it at "
            f"../shared/data beside the repository): skipping what needs it.")


# --- loading ---------------------------------------------------------------------------------

def _jsonl_path(path: str | os.PathLike[str], file_name: str) -> Path:
    p = Path(path)
    if p.is_dir():
        p = p / file_name
    if not p.is_file():
        raise FileNotFoundError(f"No {file_name} at {p}: pass the file itself or a folder that contains it.")
    return p


def _records(p: Path) -> Iterator[tuple[int, JSONObject]]:
    """(line number, object) for each non-blank line; a bad line is an error naming file and line.

    Lines are decoded one by one (a UTF-8 byte-order mark at the start is allowed), so an
    encoding error names its line too.
    """
    with p.open("rb") as f:
        for n, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8-sig" if n == 1 else "utf-8")
            except UnicodeDecodeError as e:
                raise ValueError(f"{p}, line {n}: not UTF-8 text (byte 0x{raw[e.start]:02x} at column {e.start + 1}); "
                                 "save the file as UTF-8.") from None
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{p}, line {n}: not valid JSON ({e.msg}).") from None
            except RecursionError:
                raise ValueError(f"{p}, line {n}: nested too deeply to read (a record is a few levels deep): "
                                 "check it is the right file.") from None
            if not isinstance(rec, dict):
                raise ValueError(f"{p}, line {n}: expected a JSON object, got {type(rec).__name__}.")
            yield n, rec


_KIND_NAMES = {str: "string", int: "number", list: "list", dict: "JSON object"}
#: How deep a tool's input schema may nest: real ones are a few levels; deeper ones break code that walks them.
MAX_SCHEMA_DEPTH = 100


def _depth(value: JSON) -> int:
    """How many levels of lists and objects ``value`` nests (walked without recursion)."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, level = todo.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is not None:
            deepest = max(deepest, level)
            todo.extend((child, level + 1) for child in children)
    return deepest


def _schema(rec: JSONObject, where: str) -> JSONObject:
    """A record's ``input_schema``, checked where code that reads schemas would otherwise fail later."""
    schema = _field(rec, "input_schema", dict, where, {"type": "object", "properties": {}})
    if _depth(schema) > MAX_SCHEMA_DEPTH:
        raise ValueError(f"{where}: field 'input_schema' is nested more than {MAX_SCHEMA_DEPTH} levels deep; "
                         "a tool's parameters are a few levels deep.")
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        raise ValueError(f"{where}: field 'input_schema.properties' must be a JSON object of parameters, "
                         f"got {type(properties).__name__}.")
    return schema


def _field(rec: JSONObject, key: str, kind: type | tuple[type, ...], where: str, default: JSON = ...) -> JSON:
    value = rec.get(key, default)
    if value is ...:
        raise ValueError(f"{where}: missing the required field '{key}'.")
    if not isinstance(value, kind) or isinstance(value, bool):
        wanted = " or ".join(_KIND_NAMES[k] for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise ValueError(f"{where}: field '{key}' must be a {wanted}, got {type(value).__name__}.")
    return value


def load_tools(path: str | os.PathLike[str]) -> list[CatalogTool]:
    """The tools of a ``tools.jsonl`` (or of the folder holding one), in file order."""
    p = _jsonl_path(path, "tools.jsonl")
    tools: list[CatalogTool] = []
    seen: dict[str, int] = {}
    core = {"id", "name", "description", "input_schema", "server"}
    for n, rec in _records(p):
        where = f"{p}, line {n}"
        tid = str(_field(rec, "id", (str, int), where))
        if not tid:
            raise ValueError(f"{where}: the tool id is empty.")
        if tid in seen:
            raise ValueError(f"{where}: duplicate tool id {tid!r} (first on line {seen[tid]}).")
        seen[tid] = n
        schema = _schema(rec, where)
        tools.append(CatalogTool(
            id=tid,
            name=_field(rec, "name", str, where),
            description=_field(rec, "description", str, where, ""),
            input_schema=schema,
            server=_field(rec, "server", str, where, ""),
            extra={k: v for k, v in rec.items() if k not in core},
        ))
    return tools


def _split_steps(steps: JSON, where: str) -> tuple[str, ...]:
    if steps is None:
        return ()
    if isinstance(steps, list):
        lines = [str(s) for s in steps]
    elif isinstance(steps, str):
        lines = steps.splitlines()
    else:
        raise ValueError(f"{where}: field 'steps' must be a string or a list of strings.")
    cleaned = (re.sub(r"^\s*\d+[.)]\s*", "", s).strip() for s in lines)
    return tuple(s for s in cleaned if s)


def _parse_query(rec: JSONObject, where: str) -> Query:
    gold = _field(rec, "gold", list, where)
    if not gold or not all(isinstance(g, (str, int)) for g in gold):
        raise ValueError(f"{where}: 'gold' must be a non-empty list of tool ids.")
    groups = _field(rec, "gold_groups", list, where, [])
    if not all(isinstance(g, list) and g for g in groups):
        raise ValueError(f"{where}: 'gold_groups' must be a list of non-empty lists of tool ids.")
    text = _field(rec, "query", str, where)
    if not text.strip():
        raise ValueError(f"{where}: the query text is empty.")
    return Query(
        qid=str(_field(rec, "qid", (str, int), where)),
        query=text,
        gold=tuple(str(g) for g in gold),
        gold_groups=tuple(tuple(str(i) for i in g) for g in groups),
        steps=_split_steps(rec.get("steps"), where),
    )


def load_queries(
    path: str | os.PathLike[str],
    tools: Iterable[CatalogTool] | None = None,
    *,
    strict: bool = True,
) -> list[Query]:
    """The labelled queries of a ``queries.jsonl`` (or of the folder holding one).

    Gold ids are checked against ``tools`` (default: the ``tools.jsonl`` beside the file, if
    any). An unknown id is an error; with ``strict=False`` its query is dropped and a warning
    says how many were.
    """
    p = _jsonl_path(path, "queries.jsonl")
    if tools is None and (p.parent / "tools.jsonl").is_file():
        tools = load_tools(p.parent)
    known = {t.id for t in tools} if tools is not None else None
    queries: list[Query] = []
    dropped: list[str] = []
    lines: dict[str, int] = {}
    for n, rec in _records(p):
        q = _parse_query(rec, f"{p}, line {n}")
        if q.qid in lines:
            raise ValueError(f"{p}, line {n}: query id {q.qid!r} is used again (first on line {lines[q.qid]}): "
                             "give every query its own qid.")
        lines[q.qid] = n
        unknown = [i for i in (*q.gold, *(i for g in q.slots for i in g)) if known is not None and i not in known]
        if unknown and strict:
            raise ValueError(f"{p}, line {n}: gold id {unknown[0]!r} of query {q.qid!r} is not in the catalog "
                             f"({len(known or ())} tools); pass strict=False to drop such queries.")
        if unknown:
            dropped.append(q.qid)
            continue
        queries.append(q)
    if dropped:
        warnings.warn(f"Dropped {len(dropped)} of {len(dropped) + len(queries)} queries in {p} whose gold ids "
                      f"are not in the catalog (first: {dropped[0]!r}).", stacklevel=2)
    return queries


def load_public(name: str) -> tuple[list[CatalogTool], list[Query]] | None:
    """A public folder's tools and queries (none if it has no queries.jsonl), or None when it is absent."""
    folder = dataset_dir(name)
    if folder is None:
        return None
    tools = load_tools(folder)
    return tools, load_queries(folder, tools=tools) if (folder / "queries.jsonl").is_file() else []


# --- step-level queries ------------------------------------------------------------------------

def step_queries(queries: Iterable[Query]) -> list[Query]:
    """One query per annotated step, each labelled with *all* of its task's slots.

    Alignment rule, and why there is none: a step could be paired with a slot by position only
    when a task has as many steps as slots — 36 of LiveMCPBench's 94 tasks — and reading those
    pairs shows several shifted ("make a report" paired with ``get_news``, "calculate" with a
    market-cap tool). So steps are not aligned to slots: measure them with Hit@k / MRR ("does
    this step find some tool its task needs"), and keep R@k to whole-task queries.
    """
    out: list[Query] = []
    for q in queries:
        for i, step in enumerate(q.steps, 1):
            out.append(Query(qid=f"{q.qid}#step{i}", query=step, gold=q.gold, gold_groups=q.slots))
    return out


# --- downloading the public sources ------------------------------------------------------------

_RAW = "https://raw.githubusercontent.com"
#: Each source's raw files at the commits named in the folder READMEs.
SOURCES: dict[str, dict[str, str]] = {
    "livemcpbench": {
        "tools": f"{_RAW}/icip-cas/LiveMCPBench/a928e57d1ee7a25579b9a7036030faffff72d15b/tools/LiveMCPTool/tools.json",
        "tasks": f"{_RAW}/icip-cas/LiveMCPBench/a928e57d1ee7a25579b9a7036030faffff72d15b/baseline/annotation/"
                 "claude-sonnet-4-20250514_Qwen3-Embedding-0.6B.json",
    },
    "toollens_train": {
        "corpus": f"{_RAW}/quchangle1/COLT/bbec292c38cabe3fbae098f50cc31b2e9f7e8fca/datasets/ToolLens/corpus.jsonl",
        "queries": f"{_RAW}/quchangle1/COLT/bbec292c38cabe3fbae098f50cc31b2e9f7e8fca/datasets/ToolLens/queries.jsonl",
        "qrels": f"{_RAW}/quchangle1/COLT/bbec292c38cabe3fbae098f50cc31b2e9f7e8fca/datasets/ToolLens/qrels/train.tsv",
    },
    "mcpzero_catalog": {
        "tools": f"{_RAW}/StacklokLabs/mcp-tef/1553c31835eb0d9503725e77f078999673b3088f/tests/data/mcp_tools_cleaned.json",
    },
}
#: LiveMCPBench annotations that name a renamed tool (from the folder README).
LIVEMCP_ALIASES = {"trial_references": "trial_references_getter", "ddg-search": "duckduckgo_web_search"}


def _fetch(url: str, timeout: float) -> str:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.read().decode("utf-8")
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        shown = redact_url_credentials(f"Could not download {url} ({reason})")  # a mirror's login stays private
        raise ConnectionError(f"{shown}; without a network, copy the public data folder by hand and point "
                              "HARNESS_DATA at it.") from None


def _livemcp_tools(raw: dict[str, str]) -> list[JSONObject]:
    rows = []
    for entry in json.loads(raw["tools"]):
        for key, server in (entry.get("tools") or {}).items():
            for t in server.get("tools", []):
                rows.append({"id": f"{key}/{t['name']}", "server": key, "server_title": entry.get("name", ""),
                             "server_description": entry.get("description", ""), "category": entry.get("category", ""),
                             "name": t["name"], "description": t.get("description") or "",
                             "input_schema": t.get("inputSchema") or {"type": "object", "properties": {}}})
    return rows


def _livemcp_queries(raw: dict[str, str], tools: list[JSONObject]) -> list[JSONObject]:
    by_name: dict[str, list[str]] = {}
    for t in tools:
        by_name.setdefault(t["name"], []).append(t["id"])
    rows = []
    for task in json.loads(raw["tasks"]):
        meta = task.get("Annotator Metadata") or {}
        names = [re.sub(r"^\s*\d+[.)]\s*", "", s).strip() for s in str(meta.get("Tools", "")).splitlines()]
        names = list(dict.fromkeys(n for n in names if n))
        groups = [by_name[LIVEMCP_ALIASES.get(n, n)] for n in names if LIVEMCP_ALIASES.get(n, n) in by_name]
        if not groups:
            continue
        rows.append({"qid": task["task_id"], "query": task["Question"], "gold": sorted({i for g in groups for i in g}),
                     "gold_groups": groups, "gold_names": names,
                     "gold_unresolved": [n for n in names if LIVEMCP_ALIASES.get(n, n) not in by_name],
                     "gold_aliased": [n for n in names if n in LIVEMCP_ALIASES],
                     "category": task.get("category", ""), "steps": meta.get("Steps", "")})
    return rows


def _livemcpbench(raw: dict[str, str]) -> tuple[list[JSONObject], list[JSONObject]]:
    tools = _livemcp_tools(raw)
    return tools, _livemcp_queries(raw, tools)


_TOOLLENS_DOC = re.compile(
    r"category_name:(?P<category>.*?), tool_name:(?P<server>.*?), api_name:(?P<name>.*?), "
    r"api_description:(?P<description>.*?), required_params: (?P<required>\[.*?\]), "
    r"optional_params: (?P<optional>\[.*?\]), return_schema: (?P<returns>.*)$", re.DOTALL)
_JSON_TYPES = {"string", "number", "integer", "boolean", "array", "object"}


def _toollens(raw: dict[str, str]) -> tuple[list[JSONObject], list[JSONObject]]:
    tools = []
    for line in raw["corpus"].splitlines():
        if not line.strip():
            continue
        doc = json.loads(line)
        m = _TOOLLENS_DOC.match(doc["text"])
        if not m:
            raise ValueError(f"ToolLens corpus document {doc['_id']!r} is not in the expected 'category_name:…' form.")
        props: JSONObject = {}
        required = []
        for kind in ("required", "optional"):
            for p in json.loads(m[kind]):
                kind_name = str(p.get("type", "string")).lower()
                props[p["name"]] = {"type": kind_name if kind_name in _JSON_TYPES else "string",
                                    **({"description": p["description"]} if p.get("description") else {})}
                if kind == "required":
                    required.append(p["name"])
        tools.append({"id": doc["_id"], "server": m["server"], "name": m["name"], "description": m["description"],
                      "input_schema": {"type": "object", "properties": props, "required": required},
                      "category": m["category"], "return_schema": m["returns"], "raw_text": doc["text"]})
    texts = {q["_id"]: q["text"] for q in map(json.loads, filter(str.strip, raw["queries"].splitlines()))}
    gold: dict[str, list[str]] = {}
    for line in raw["qrels"].splitlines()[1:]:  # header: query-id corpus-id score
        if line.strip():
            qid, doc_id, *_ = line.split("\t")
            gold.setdefault(qid, []).append(doc_id)
    queries = [{"qid": qid, "query": texts[qid], "gold": ids, "split": "train"} for qid, ids in gold.items()]
    return tools, queries


def _mcpzero_schema(params: Mapping[str, str]) -> JSONObject:
    """MCP-Zero writes each parameter as "(type[, optional]) description"; rebuild a JSON Schema."""
    props, required = {}, []
    for name, text in params.items():
        m = re.match(r"\s*\(([^)]*)\)\s*(.*)", str(text), re.DOTALL)
        spec, desc = (m[1], m[2]) if m else ("string", str(text))
        words = [w.strip().lower() for w in spec.split(",")]
        first = words[0].split()[0] if words[0] else "string"
        props[name] = {"type": first if first in _JSON_TYPES else "string", **({"description": desc} if desc else {})}
        if "optional" not in words:
            required.append(name)
    return {"type": "object", "properties": props, "required": required}


def _mcpzero(raw: dict[str, str]) -> tuple[list[JSONObject], list[JSONObject]]:
    rows, seen = [], set()
    for server in json.loads(raw["tools"]):
        for t in server.get("tools", []):
            tid = f"{server['name']}/{t['name']}"
            while tid in seen:
                tid += "#2"
            seen.add(tid)
            rows.append({"id": tid, "server": server["name"], "name": t["name"], "description": t.get("description", ""),
                         "input_schema": _mcpzero_schema(t.get("parameter") or {}),
                         "server_summary": server.get("summary", ""), "server_url": server.get("url", "")})
    return rows, []


_CONVERTERS: dict[str, Callable[[dict[str, str]], tuple[list[JSONObject], list[JSONObject]]]] = {
    "livemcpbench": _livemcpbench, "toollens_train": _toollens, "mcpzero_catalog": _mcpzero,
}


def download(name: str, dest: str | os.PathLike[str], *, urls: Mapping[str, str] | None = None,
             timeout: float = 60.0) -> Path:
    """Fetch one public source from GitHub and write it normalised to ``dest/name/``; returns that folder.

    ``urls`` overrides the source's file addresses (a mirror, or ``file://`` copies).
    """
    if name not in SOURCES:
        raise ValueError(f"Unknown dataset {name!r}; choose one of {', '.join(SOURCES)}.")
    raw = {key: _fetch(url, timeout) for key, url in {**SOURCES[name], **(urls or {})}.items()}
    tools, queries = _CONVERTERS[name](raw)
    folder = Path(dest) / name
    folder.mkdir(parents=True, exist_ok=True)
    for file_name, rows in (("tools.jsonl", tools), ("queries.jsonl", queries)):
        if rows:
            with (folder / file_name).open("w", encoding="utf-8") as f:
                f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    return folder
