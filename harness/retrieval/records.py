"""The two records every retriever and every metric share: a catalog tool and a labelled query.

Introduced in Chapter 6a (``notebooks/06a_public_benchmarks.ipynb``).

A public catalog's tools are not :class:`harness.core.tools.Tool` objects: their ids carry the
server (``filesystem/read_file``), some names are not valid API names (``/v1/nutrition``) and
nothing can be called. So a retriever ranks plain records by ``id``; :meth:`CatalogTool.definition`
is what a model would be shown (for token counts), and :meth:`CatalogTool.definition_hash` is
what a cache keys on, so a changed definition is noticed and an unchanged one is not. What a search
reads of a record (:attr:`~CatalogTool.search_text`, :attr:`~CatalogTool.parameters`) is what it reads
of a :class:`~harness.core.tools.Tool`, from the same functions; the two conversions, a tool to a
record (:meth:`CatalogTool.from_tool`) and a record to a tool (:meth:`CatalogTool.to_tool`), are here.
"""
from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field
from typing import Mapping

from harness.core.tools import Tool, parameter_texts, search_text
from harness.core.json_types import JSON, JSONObject


@dataclass(frozen=True)
class CatalogTool:
    """One tool of a catalog: a unique ``id`` plus what a model would be shown."""

    id: str
    name: str
    description: str = ""
    input_schema: Mapping[str, JSON] = field(default_factory=lambda: {"type": "object", "properties": {}})
    server: str = ""
    extra: Mapping[str, JSON] = field(default_factory=dict, compare=False, repr=False)

    @property
    def server_description(self) -> str:
        """The server's own description, under whichever key the source used ('' if none)."""
        for key in ("server_description", "server_summary"):
            if isinstance(self.extra.get(key), str):
                return self.extra[key]
        return ""

    @property
    def parameters(self) -> list[tuple[str, str]]:
        """(name, description) of each top-level input parameter, as :attr:`Tool.parameters <harness.core.tools.Tool.parameters>`."""
        return parameter_texts(self.input_schema)

    @functools.cached_property
    def search_text(self) -> str:
        """What a search reads, as :attr:`Tool.search_text <harness.core.tools.Tool.search_text>` (Chapter 2's catalog document)."""
        return search_text(self.name, self.description, self.input_schema)

    @property
    def api_schema(self) -> JSONObject:
        """The input schema as a tool takes it: a copy, or an empty object schema when it is no object."""
        if self.input_schema.get("type") == "object":
            return dict(self.input_schema)
        return {"type": "object", "properties": {}}

    def definition(self) -> JSONObject:
        """The tool as the Messages API would carry it (what schema tokens are counted on)."""
        return {"name": self.name, "description": self.description, "input_schema": dict(self.input_schema)}

    def definition_hash(self) -> str:
        """SHA-256 of everything a retriever may read about this tool (ScaleMCP's change detector).

        The id is left out: two catalog entries with one definition share one embedding.
        """
        data = {**self.definition(), "server": self.server, "server_description": self.server_description}
        blob = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
        return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()  # a lone surrogate from a JSON escape too

    @classmethod
    def from_tool(cls, t: Tool, server: str = "") -> "CatalogTool":
        """A harness :class:`Tool` as a catalog record (its name is its id)."""
        return cls(id=t.name, name=t.name, description=t.description, input_schema=t.input_schema,
                   server=server or t.domain)

    def to_tool(self, name: str | None = None) -> Tool:
        """The record as a (non-callable) :class:`Tool`, under ``name`` (its own by default); an empty description
        becomes the name, a schema that is no object an empty one. A ValueError when the name is no valid tool name."""
        return Tool(name or self.name, self.description or self.name, self.api_schema, domain=self.server)


@dataclass(frozen=True)
class Query:
    """A labelled query: the text, the acceptable tool ids, and the slots that must be filled.

    ``gold_groups`` has one entry per needed tool ("slot"); any id in a slot fills it. When a
    source gives no groups, each gold id is its own slot.
    """

    qid: str
    query: str
    gold: tuple[str, ...]
    gold_groups: tuple[tuple[str, ...], ...] = ()
    steps: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # An id listed twice, or a slot listed twice, counts once: otherwise one hit fills two
        # slots and R@1 says 1.0 where nDCG says 0.61.
        object.__setattr__(self, "gold", tuple(dict.fromkeys(self.gold)))
        groups = self.gold_groups or tuple((g,) for g in self.gold)
        unique = {frozenset(g): tuple(dict.fromkeys(g)) for g in groups}
        object.__setattr__(self, "gold_groups", tuple(unique.values()))

    @property
    def slots(self) -> tuple[tuple[str, ...], ...]:
        return self.gold_groups
