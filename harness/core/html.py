"""Small HTML helpers shared by the views. Everything shown is escaped: tool text is untrusted."""
from __future__ import annotations

import html
from typing import AbstractSet, Iterable, Sequence

TABLE_STYLE = "border-collapse:collapse;font-family:monospace;font-size:12px"
CELL_STYLE = "border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top"


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], *, raw_columns: AbstractSet[int] = frozenset()) -> str:
    """An HTML table; columns in ``raw_columns`` hold HTML this package built (not escaped)."""
    head = "".join(f'<th style="{CELL_STYLE}">{esc(h)}</th>' for h in headers)
    body = "".join(
        "<tr>" + "".join(f'<td style="{CELL_STYLE}">{c if i in raw_columns else esc(c)}</td>' for i, c in enumerate(r)) + "</tr>"
        for r in rows
    )
    return f'<table style="{TABLE_STYLE}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def bar(fraction: float, width: int = 120, color: str = "#4a7") -> str:
    fraction = max(0.0, min(1.0, fraction))
    return (f'<div style="width:{width}px;background:#eee;display:inline-block">'
            f'<div style="width:{fraction * width:.0f}px;background:{color};height:10px"></div></div>')
