"""The query explorer: type a query, see the ranked tools, their scores and each term's share.

Introduced in Chapter 2. ``ranking_rows`` is the function; ``query_explorer`` the widget over it.
"""
from __future__ import annotations

from dataclasses import dataclass

from harness.selection.catalog import TermContribution, ToolCatalog
from harness.core.html import bar, esc, table


@dataclass(frozen=True)
class RankingRow:
    rank: int
    name: str
    score: float
    terms: list[TermContribution]

    def reason(self) -> str:
        """The matching terms, biggest contribution first: 'file 2.31 (idf 1.20 × tf-part 1.93)'."""
        parts = sorted((t for t in self.terms if t.contribution > 0), key=lambda t: -t.contribution)
        return ", ".join(f"{t.term} {t.contribution:.2f} (idf {t.idf:.2f} × tf {t.tf_part:.2f})" for t in parts)


def ranking_rows(catalog: ToolCatalog, query: str, k: int = 7) -> list[RankingRow]:
    scores = dict(zip(catalog.ids, catalog.scores(query)))
    return [RankingRow(i, name, float(scores[name]), catalog.explain(query, name))
            for i, name in enumerate(catalog.rank(query, k), 1)]


def ranking_html(rows: list[RankingRow], query: str) -> str:
    if not rows:
        return f"<p>No tool shares a term with <code>{esc(query)}</code>: the score floor returns nothing.</p>"
    top = rows[0].score or 1.0
    body = [(r.rank, r.name, f"{r.score:.3f}", bar(r.score / top), r.reason()) for r in rows]
    return f"<p>Query: <code>{esc(query)}</code></p>" + table(["#", "tool", "score", "", "why (term: contribution)"], body, raw_columns={3})


def query_explorer(catalog: ToolCatalog, query: str = "search the code for a function", k: int = 7):
    """A text box and a k slider over :func:`ranking_rows`."""
    import ipywidgets as w

    box = w.Text(value=query, description="query", layout=w.Layout(width="60%"), continuous_update=False)
    k_slider = w.IntSlider(value=k, min=1, max=20, description="k")
    out = w.HTML()

    def render(*_):
        out.value = ranking_html(ranking_rows(catalog, box.value, k_slider.value), box.value)

    box.observe(render, "value")
    k_slider.observe(render, "value")
    render()
    return w.VBox([w.HBox([box, k_slider]), out])
