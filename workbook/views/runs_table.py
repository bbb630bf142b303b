"""End-to-end runs as one text table: a label per configuration, then its summary row.

Introduced in Chapter 3 (task success per query, per ``k``, held out); each row is
:meth:`workbook.evaluation.scenarios.RunsSummary.row`, so every chapter's run tables read alike.
"""
from __future__ import annotations

from typing import Mapping

from workbook.evaluation.scenarios import RunsSummary

#: The column heads over :meth:`RunsSummary.row`, aligned with it.
HEADER = f"{'n':>3} {'success [95 %]':>18} {'right tools [95 %]':>18} {'turns':>5} {'schema tok':>10}"


def runs_table(rows: Mapping[str | tuple[str, ...], RunsSummary], title: str) -> str:
    """``title``, the header, then one line per configuration; a tuple key fills the label's words in order."""
    labels = {key: " ".join(key) if isinstance(key, tuple) else key for key in rows}
    width = max(len(label) for label in labels.values())
    return "\n".join([title, " " * (width + 1) + HEADER,
                      *(f"{labels[key]:<{width}} {summary.row():>{len(HEADER)}}" for key, summary in rows.items())])
