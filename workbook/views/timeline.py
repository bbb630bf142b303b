"""The per-turn selection timeline: each turn's query, the tools shown, and what they cost.

Introduced in Chapter 3; Chapters 4 and 5 reuse it, and Chapter 5c watches a real model's run with it,
each call's arguments and result shown (``details=True``). ``timeline_rows`` is the function;
``turn_timeline`` the widget (a slider over turns).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from harness.selection.agent import TurnEvent
from harness.core.html import bar, esc, table


@dataclass(frozen=True)
class TimelineRow:
    turn: int
    query: str
    shown: list[tuple[str, float | None, bool]]  # (name, score or None when not ranked, pinned)
    schema_tokens: int
    catalog_tokens: int
    calls: list[tuple[str, bool]]  # (tool called, succeeded)
    text: str
    said: tuple[tuple[str, str], ...] = ()  # each call's (arguments as JSON, its result's text)


def timeline_rows(events: list[TurnEvent]) -> list[TimelineRow]:
    rows = []
    for ev in events:
        scores = {r.tool.name: r.score for r in ev.ranked}
        shown = [(t.name, scores.get(t.name), t.name in ev.pinned) for t in ev.tools]
        ok = {r.tool_use_id: not r.is_error for r in ev.results}
        calls = [(c.name, ok.get(c.id, False)) for c in ev.response.tool_calls]
        result = {r.tool_use_id: r.content for r in ev.results}
        said = tuple((json.dumps(c.input, ensure_ascii=False), result.get(c.id, "")) for c in ev.response.tool_calls)
        rows.append(TimelineRow(ev.turn, ev.query, shown, ev.snapshot.tool_tokens, ev.catalog_tokens, calls, ev.response.text, said))
    return rows


def _shown_html(shown: list[tuple[str, float | None, bool]]) -> str:
    return "<br>".join(
        f"{'📌 ' if pinned else ''}{esc(name)}" + (f" <span style='color:#888'>{score:.2f}</span>" if score is not None and not pinned else "")
        for name, score, pinned in shown
    ) or "<i>none</i>"


def _calls_html(row: TimelineRow, details: bool = False) -> str:
    said = row.said if details else ()
    calls = "<br>".join(f"{'✔' if ok else '✘'} {esc(name)}"
                        + (f" <code>{esc(said[i][0][:160])}</code><br><span style='color:#555'>→ {esc(said[i][1][:200])}</span>"
                           if i < len(said) else "")
                        for i, (name, ok) in enumerate(row.calls))
    return calls or f"<i>answers:</i> {esc(row.text[:400 if details else 160])}"


def timeline_html(rows: list[TimelineRow], details: bool = False) -> str:
    """The turns as a table; with ``details``, each call's arguments and the start of its result too."""
    body = [
        (r.turn, esc(r.query[:140]), _shown_html(r.shown),
         f"{r.schema_tokens:,} / {r.catalog_tokens:,}<br>{bar(r.schema_tokens / max(1, r.catalog_tokens))}", _calls_html(r, details))
        for r in rows
    ]
    return table(["turn", "query", "tools shown (📌 pinned, BM25 score)", "schema tokens: shown / all", "model did"],
                 body, raw_columns={1, 2, 3, 4})


def turn_timeline(events: list[TurnEvent], details: bool = False):
    """A slider over turns; the table shows the turns up to the one selected (``details``: see :func:`timeline_html`)."""
    import ipywidgets as w

    rows = timeline_rows(events)
    slider = w.IntSlider(value=len(rows), min=1, max=max(1, len(rows)), description="turn")
    out = w.HTML()

    def render(*_):
        out.value = timeline_html(rows[: slider.value], details)

    slider.observe(render, "value")
    render()
    return w.VBox([slider, out])
