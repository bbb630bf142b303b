"""Mechanism diagrams: the pictures a chapter explains in words, drawn by code as plain SVG.

One function per mechanism; each returns a :class:`Diagram`, which a notebook cell shows (as an
image with alt text, even before the notebook is trusted) and a test parses (``.svg``). Plain SVG text, no new dependency: crisp at any zoom,
a few kilobytes, and readable by a screen reader through ``role="img"``, ``aria-label``,
``<title>`` and ``<desc>``. The data-driven ones compute what they draw with the package itself —
:func:`bm25_scoring` with :class:`harness.selection.catalog.ToolCatalog`, :func:`rrf_fusion` with
:func:`harness.retrieval.hybrid.rrf`, :func:`pinning_across_turns` with the agent loop's own record of each
turn — so a diagram cannot teach a number the code does not produce.

Used from Chapter 0 (:func:`course_map`) onwards; each function's docstring names its chapter.
Colours are the Okabe–Ito palette (safe for colour-blind readers) as light fills under dark text,
and no meaning rests on colour alone: re-read segments are also hatched, deferred tools dashed.
"""
from __future__ import annotations

import base64
import html
import math
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping, Protocol, Sequence
from xml.sax.saxutils import escape

from harness.selection.catalog import ToolCatalog
from harness.selection.discovery import DEFAULT_LIMIT
from harness.selection.ranking import DEFAULT_K
from harness.retrieval.hybrid import rrf
from harness.core.text import tokenize
from harness.core.tools import Tool
from workbook.views.course import COURSE, Chapter

if TYPE_CHECKING:  # the loop's records and a scenario's run: read, never built, here
    from harness.selection.agent import TurnEvent
    from workbook.evaluation.scenarios import ScenarioRun

FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
MIN_SIZE = 12  # no text smaller than this, in px at 100 % zoom
MAX_WIDTH = 900
CHAR_EM = 0.58  # a generous average glyph width of the fonts above, in em (DejaVu Sans: about 0.55)

# Okabe–Ito hues as (fill tint, stroke)
BLUE = ("#d6eaf8", "#0072B2")
ORANGE = ("#fde9c0", "#B07800")
GREEN = ("#cdeee3", "#007A5A")
PURPLE = ("#f3dcea", "#A8588A")
GREY = ("#eeeeee", "#555555")
INK = "#111111"


@dataclass(frozen=True, repr=False)
class Diagram:
    """An SVG picture with its alt text.

    Jupyter shows ``_repr_html_``: the SVG as an ``<img>`` with ``alt`` text, which JupyterLab shows
    even in a notebook it does not trust (a fresh clone's committed outputs), where it refuses a bare
    SVG and strips inline SVG out of HTML. ``_repr_svg_`` is there for front ends that want the SVG.
    """

    name: str
    title: str
    description: str
    svg: str

    @property
    def alt(self) -> str:
        return f"{self.title}. {self.description}"

    def _repr_svg_(self) -> str:
        return self.svg

    def _repr_html_(self) -> str:
        data = base64.b64encode(self.svg.encode()).decode()
        return f'<img alt="{html.escape(self.alt, quote=True)}" src="data:image/svg+xml;base64,{data}"/>'

    def __repr__(self) -> str:
        return f"<Diagram {self.name}: {self.title}>"

    def __str__(self) -> str:
        return self.svg


def text_width(text: str, size: float, bold: bool = False) -> float:
    """An upper estimate of ``text``'s width in px: what the layout budgets for it."""
    return len(text) * size * (CHAR_EM + (0.05 if bold else 0.0))


def wrap(text: str, width: float, size: float = 13) -> list[str]:
    """``text`` in lines that fit ``width`` px at ``size`` px."""
    return textwrap.wrap(text, max(4, int(width // (size * CHAR_EM)))) or [""]


def clip(text: str, width: float, size: float = 13, bold: bool = False) -> str:
    """``text`` cut with an ellipsis so it fits ``width`` px (tool names are untrusted and may be long)."""
    if text_width(text, size, bold) <= width:
        return text
    keep = max(1, int(width // (size * (CHAR_EM + (0.05 if bold else 0.0)))) - 1)
    return text[:keep] + "…"


class _Canvas:
    """SVG parts in drawing order; the height grows with what is drawn."""

    def __init__(self, width: int) -> None:
        if width > MAX_WIDTH:
            raise ValueError(f"A diagram is at most {MAX_WIDTH} px wide, not {width}.")
        self.width, self.bottom = width, 0.0
        self.parts: list[str] = []

    def _grow(self, y: float) -> None:
        self.bottom = max(self.bottom, y)

    def text(self, x: float, y: float, s: str, size: float = 13, *, anchor: str = "start", bold: bool = False,
             italic: bool = False, fill: str = INK) -> None:
        size = max(size, MIN_SIZE)
        style = (' font-weight="bold"' if bold else "") + (' font-style="italic"' if italic else "")
        self.parts.append(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size:g}" text-anchor="{anchor}" '
                          f'fill="{fill}"{style}>{escape(s)}</text>')
        self._grow(y + size * 0.3)

    def rect(self, x: float, y: float, w: float, h: float, colour: tuple[str, str] = GREY, *, dashed: bool = False,
             hatched: bool = False, rx: float = 6) -> None:
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        self.parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{rx}" '
                          f'fill="{colour[0]}" stroke="{colour[1]}" stroke-width="1.5"{dash}/>')
        if hatched:
            self.parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{rx}" '
                              f'fill="url(#hatch)" stroke="none"/>')
        self._grow(y + h)

    def box(self, x: float, y: float, w: float, h: float, lines: Sequence[str], colour: tuple[str, str] = GREY, *,
            size: float = 13, bold_first: bool = True, dashed: bool = False, hatched: bool = False) -> None:
        """A rounded box with ``lines`` centred in it; tests check each line stays inside the box."""
        self.parts.append('<g class="box">')
        self.rect(x, y, w, h, colour, dashed=dashed, hatched=hatched)
        lead = size * 1.25
        top = y + h / 2 - lead * (len(lines) - 1) / 2 + size * 0.35
        for i, line in enumerate(lines):
            bold = bold_first and i == 0
            self.text(x + w / 2, top + i * lead, clip(line, w - 8, size, bold), size, anchor="middle", bold=bold)
        self.parts.append("</g>")

    def arrow(self, x1: float, y1: float, x2: float, y2: float, *, label: str = "", dashed: bool = False,
              both: bool = False, colour: str = "#333333", size: float = 12, label_dy: float = -6) -> None:
        dash = ' stroke-dasharray="5 4"' if dashed else ""
        start = ' marker-start="url(#head)"' if both else ""
        self.parts.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{colour}" '
                          f'stroke-width="1.6"{dash} marker-end="url(#head)"{start}/>')
        self._grow(max(y1, y2))
        if label and x1 == x2:  # a vertical arrow: the label beside it, not across it
            self.text(x1 + 8, (y1 + y2) / 2 + size * 0.35, label, size)
        elif label:
            self.text((x1 + x2) / 2, (y1 + y2) / 2 + label_dy, label, size, anchor="middle")

    def polyline(self, points: Sequence[tuple[float, float]], colour: str, *, dashed: bool = False) -> None:
        dash = ' stroke-dasharray="5 3"' if dashed else ""
        pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        self.parts.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')

    def render(self, name: str, title: str, description: str) -> Diagram:
        height = math.ceil(self.bottom + 12)
        defs = ('<defs><marker id="head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
                'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#333333"/></marker>'
                '<pattern id="hatch" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
                '<line x1="0" y1="0" x2="0" y2="8" stroke="#D55E00" stroke-width="2" stroke-opacity="0.45"/></pattern></defs>')
        # ids are per diagram so several diagrams in one page never share a marker or pattern
        body = (defs + "".join(self.parts)).replace('id="head"', f'id="head-{name}"').replace(
            "url(#head)", f"url(#head-{name})").replace('id="hatch"', f'id="hatch-{name}"').replace(
            "url(#hatch)", f"url(#hatch-{name})")
        svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" height="{height}" '
               f'viewBox="0 0 {self.width} {height}" role="img" aria-label="{escape(title, {chr(34): "&quot;"})}" '
               f'font-family="{FONT}"><title>{escape(title)}</title><desc>{escape(description)}</desc>'
               f'<rect width="100%" height="100%" fill="#ffffff"/>{body}</svg>')
        return Diagram(name, title, description, svg)


# ---------------------------------------------------------------- (0) every definition in every request

def tools_in_every_request(points: Sequence[tuple[int, int]] | None = None) -> Diagram:
    """Chapter 1: with every tool shown, each request carries all N definitions, and the model picks among them.
    The bars are the schema tokens (cl100k) a request carries at each N: ``points`` as (N, tokens), by default the
    first 5, 20, 40 and all 74 of the demo world's tools, counted now."""
    if points is None:
        from harness.core.tokens import tools_tokens

        tools = demo_catalog().tools
        points = [(n, tools_tokens(tools[:n])) for n in (5, 20, 40, len(tools))]
    c = _Canvas(860)
    c.text(16, 26, "Every definition rides in every request; the model picks among all of them", 15, bold=True)
    x, w = 16, 260
    c.box(x, 50, w, 96, ["N tool definitions", "name · description · parameters", "(JSON Schema), sent first"], ORANGE)
    c.box(x, 154, w, 38, ["system prompt"], GREY)
    c.box(x, 200, w, 38, ["the person's request"], BLUE)
    c.arrow(x + w, 144, x + w + 66, 144, label="each turn")
    c.box(x + w + 68, 118, 140, 52, ["the model", "picks one tool"], GREEN)
    bars_x, top = 500, max(t for _, t in points)
    c.text(bars_x, 56, "schema tokens a request carries", 13, bold=True)
    for i, (n, tokens) in enumerate(points):
        y = 70 + i * 40
        c.text(bars_x, y + 20, f"N = {n}", 13)
        width = max(2.0, 220 * tokens / top)
        c.rect(bars_x + 70, y + 6, width, 20, ORANGE, rx=3)
        c.text(bars_x + 76 + width, y + 21, f"{tokens:,}", 12)
    c.text(16, 262, "More tools: more tokens on every turn, and more near neighbours for the right tool to be confused with.",
           13, italic=True)
    sizes = ", ".join(f"{t:,} at N = {n}" for n, t in points)
    return c.render("tools-in-every-request", "Every tool definition rides in every request",
                    "A request holds the system prompt, N tool definitions (name, description, parameters) and the "
                    f"person's request; each turn the model picks one tool among all N. Schema tokens per request: {sizes}.")


# ---------------------------------------------------------------- (a) request layout and the prompt cache

@dataclass(frozen=True)
class Segment:
    """One part of a request: what it is, a key that says whether two requests hold the same bytes, its width."""

    label: str
    key: str
    width: int
    colour: tuple[str, str] = GREY


def cached_prefix(before: Sequence[Segment], after: Sequence[Segment]) -> int:
    """How many leading segments of ``after`` equal ``before``'s: what a prefix cache serves."""
    n = 0
    for a, b in zip(before, after):
        if a.key != b.key:
            break
        n += 1
    return n


def _layout_placements() -> list[tuple[str, list[Segment], list[Segment]]]:
    tools, system, convo, found = BLUE, GREY, PURPLE, ORANGE
    sys_ = Segment("system", "sys", 70, system)
    u1, a1 = Segment("user", "u1", 60, convo), Segment("assistant", "a1", 90, convo)
    r1, a2 = Segment("result", "r1", 70, convo), Segment("assistant", "a2", 90, convo)
    pinned = Segment("pinned: search", "pin", 130, tools)
    return [
        ("1 · Per-turn top-k: the tools block is chosen again every turn",
         [Segment("tools: top-k (turn n)", "topk-n", 190, tools), sys_, u1, a1],
         [Segment("tools: top-k (turn n+1)", "topk-n1", 190, tools), sys_, u1, a1, r1]),
        ("2 · Deferral: found tools join the tools block",
         [pinned, sys_, u1, a1],
         [pinned, Segment("found tools", "found-in-tools", 120, found), sys_, u1, a1, r1]),
        ("3 · Found tools expanded after the conversation (API tool search, a proxy's results)",
         [pinned, sys_, u1, a1],
         [pinned, sys_, u1, a1, Segment("found tools", "found-after", 120, found), a2]),
    ]


def request_layout() -> Diagram:
    """Chapter 5 (prompt caching) and the "what to do" page: where found tools go decides what the cache keeps.

    A request is tools, then system, then messages; a cache serves only the prefix up to the first
    change. Three placements of found tools, each as two consecutive requests; what is kept is
    computed by :func:`cached_prefix`, not drawn by hand.
    """
    c = _Canvas(880)
    c.text(16, 26, "A request, in the order the model reads it: tools → system → messages", 15, bold=True)
    c.text(16, 48, "A prompt cache serves only the prefix up to the first change; everything after it is read again.", 13)
    y, x0, h = 78, 120, 34
    captions = []
    for heading, before, after in _layout_placements():
        c.text(16, y, heading, 13, bold=True)
        kept = cached_prefix(before, after)
        for label, segs, kept_n in (("turn n", before, len(before)), ("turn n+1", after, kept)):
            y += 10
            c.text(16, y + h / 2 + 5, label, 13)
            x = x0
            for i, s in enumerate(segs):
                c.box(x, y, s.width - 4, h, [s.label], s.colour, size=12, bold_first=False, hatched=i >= kept_n)
                x += s.width
            if segs is after:
                first_change = x0 + sum(s.width for s in after[:kept])
                if kept:
                    c.arrow(x0, y + h + 12, first_change - 4, y + h + 12, both=True, colour="#007A5A")
                c.parts.append(f'<line x1="{first_change - 2:.1f}" y1="{y - 6:.1f}" x2="{first_change - 2:.1f}" '
                               f'y2="{y + h + 20:.1f}" stroke="#D55E00" stroke-width="2.5" stroke-dasharray="4 3"/>')
                names = ", ".join(dict.fromkeys(s.label for s in after[:kept]))
                caption = f"cache keeps: {names}" if kept else "cache keeps: nothing (the first change is the tools block)"
                captions.append(caption)
                c.text(x0, y + h + 34, caption, 13, italic=True)
                y += h + 42
            else:
                y += h
        y += 26
    # legend: meaning by pattern and label, not colour alone
    c.arrow(16, y + 15, 70, y + 15, both=True, colour="#007A5A")
    c.text(80, y + 20, "cached prefix (read back)", 13)
    c.box(290, y, 190, 30, ["hatched: read again"], GREY, size=12, bold_first=False, hatched=True)
    c.text(496, y + 20, "dashed line: the first change", 13)
    return c.render("request-layout", "Where found tools go decides what the prompt cache keeps",
                    "Three pairs of consecutive requests, each laid out as tools, system, messages. " + " ".join(
                        f"{h.split(':')[0]}: {cap}." for (h, _, _), cap in zip(_layout_placements(), captions)))


# ---------------------------------------------------------------- (b) the per-turn loop

def per_turn_loop(k: int | None = None) -> Diagram:
    """Chapter 3: each turn the transcript gives a query, the query selects k tools, the model sees only those."""
    top_k = f"top-{k}" if k else "top-k"
    c = _Canvas(820)
    c.text(16, 26, "The per-turn loop: the tools shown are chosen again on every turn", 15, bold=True)
    w, h = 220, 58
    xs, y_cat, y1, y2 = (20, 300, 580), 48, 140, 270
    c.box(xs[2], y_cat, w, 44, ["catalog", "every tool, indexed once"], GREY, dashed=True)
    top = [("transcript", "the conversation so far"), ("query", "what is needed now"),
           (f"select {top_k}", f"{top_k} by BM25, plus pinned")]
    bottom = [("result", "appended to the transcript"), ("tool call", "a name and its arguments"),
              ("model", f"sees only the {k or 'k'} schemas")]
    for x, (head, sub) in zip(xs, top):
        c.box(x, y1, w, h, [head, sub], BLUE)
    for x, (head, sub) in zip(xs, bottom):
        c.box(x, y2, w, h, [head, sub], ORANGE if head == "model" else PURPLE)
    c.arrow(xs[2] + w / 2, y_cat + 44, xs[2] + w / 2, y1 - 2)
    c.arrow(xs[0] + w, y1 + h / 2, xs[1] - 2, y1 + h / 2)
    c.arrow(xs[1] + w, y1 + h / 2, xs[2] - 2, y1 + h / 2)
    c.arrow(xs[2] + w / 2, y1 + h, xs[2] + w / 2, y2 - 2, label="k schemas")
    c.arrow(xs[2], y2 + h / 2, xs[1] + w + 2, y2 + h / 2)
    c.arrow(xs[1], y2 + h / 2, xs[0] + w + 2, y2 + h / 2, label="runs", label_dy=-8)
    c.arrow(xs[0] + w / 2, y2, xs[0] + w / 2, y1 + h + 2, label="next turn")
    c.text(16, y2 + h + 30, "The model answers in text when it needs no tool; the loop ends there.", 13, italic=True)
    return c.render("per-turn-loop", "The per-turn selection loop",
                    f"Transcript, then query, then select {top_k} from the catalog, then the model, which sees only "
                    "those schemas, then a tool call, then its result, which is appended to the transcript "
                    "for the next turn.")



def failure_points() -> Diagram:
    """Chapter 5c: where in the loop each class of failure of a whole run happens (experiments.real_tasks)."""
    c = _Canvas(820)
    c.text(16, 26, "Where a whole run can fail: one class at each step of the loop", 15, bold=True)
    w, h, y1, y2 = 180, 58, 60, 190
    xs = (20, 220, 420, 620)
    steps = [("tools shown", "top-k, all, or found"), ("model picks", "answer, or call"),
             ("arguments", "written to the schema"), ("result", "appended; next turn")]
    fails = [("tool not shown", "never on the list"), ("wrong tool", "shown, not needed"),
             ("argument content", "right tool, bad values"), ("never stopped", "the same call again")]
    for x, (head, sub) in zip(xs, steps):
        c.box(x, y1, w, h, [head, sub], BLUE)
    for x, (head, sub) in zip(xs, fails):
        c.box(x, y2, w, h, [head, sub], ORANGE, dashed=True)
        c.arrow(x + w / 2, y1 + h, x + w / 2, y2 - 2)
    for a, b in zip(xs, xs[1:]):
        c.arrow(a + w, y1 + h / 2, b - 2, y1 + h / 2)
    c.text(16, y2 + h + 30, "Answering before the work is done: stopped early. A wrong answer where no tool is needed: "
           "answer content.", 13, italic=True)
    return c.render("failure-points", "Where a whole run can fail",
                    "Four steps of the loop — tools shown, the model picks, arguments, result — each with the failure "
                    "that happens there: tool not shown, wrong tool, argument content, never stopped.")

# ---------------------------------------------------------------- (c) BM25 scoring one query

@dataclass(frozen=True)
class TermScore:
    term: str
    idf: float
    tf: int
    tf_part: float
    contribution: float


@dataclass(frozen=True)
class ToolScore:
    name: str
    length: int
    score: float
    terms: list[TermScore]


def bm25_table(catalog: ToolCatalog, query: str) -> tuple[list[str], list[ToolScore]]:
    """The query's distinct terms and every tool's per-term factors, best score first (the catalog's own numbers)."""
    terms = list(dict.fromkeys(tokenize(query)))
    if not terms:
        raise ValueError(f"The query {query!r} has no searchable term (only stop words or punctuation).")
    index = catalog.index
    scores = dict(zip(catalog.ids, catalog.scores(query)))
    ranked = catalog.rank(query)
    order = ranked + [n for n in catalog.ids if n not in ranked]
    rows = []
    for name in order:
        assert index is not None  # a catalog with a tool to rank has an index
        by_term = {t.term: t for t in catalog.explain(query, name)}
        rows.append(ToolScore(name, int(index.doc_len[catalog.ids.index(name)]), float(scores[name]),
                              [TermScore(t, by_term[t].idf, by_term[t].tf, by_term[t].tf_part,
                                         by_term[t].contribution) for t in terms]))
    return terms, rows


def demo_catalog() -> ToolCatalog:
    """The demo world's tools as one BM25 catalog (Chapter 2's)."""
    from workbook.demo import demo_tools

    return ToolCatalog(demo_tools())


def bm25_scoring(query: str = "post a message to the team channel", catalog: ToolCatalog | Sequence[Tool] | None = None,
                 top: int = 5) -> Diagram:
    """Chapter 2: one query scored against a few tool documents — terms, idf, tf saturation, length norm.

    Every number drawn is the catalog's own (:meth:`ToolCatalog.explain`): idf and the average
    document length are over the whole catalog (the demo world's by default), the rows are its ``top``
    tools in rank order.
    """
    catalog = demo_catalog() if catalog is None else catalog if isinstance(catalog, ToolCatalog) else ToolCatalog(catalog)
    terms, rows = bm25_table(catalog, query)
    rows = rows[:top]
    if len(terms) > 4 or not 1 <= len(rows) <= 6:
        raise ValueError(f"The BM25 diagram shows 1 to 6 tools and at most 4 query terms; got {len(rows)} and {len(terms)}.")
    index = catalog.index
    assert index is not None  # the rows are its tools, so it has an index
    c = _Canvas(880)
    c.text(16, 26, f"BM25 scores the query “{clip(query, 560, 15, True)}”", 15, bold=True)
    c.text(16, 48, "score = Σ over query terms of  idf(term) × tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl))", 13)
    c.text(16, 68, f"idf and avgdl over all {len(catalog)} tools: k1 = {index.k1:g}, b = {index.b:g}, "
                   f"avgdl = {index.avgdl:.1f} words.", 13)
    c.text(16, 88, f"Stop words are dropped: the query's terms are {', '.join(terms)}.", 13)
    name_w, cell_w, score_w, x0, y = 220, 130, 120, 16, 104
    c.box(x0, y, name_w - 4, 44, ["tool", "|d| = words in it"], GREY)
    for j, t in enumerate(terms):
        c.box(x0 + name_w + j * cell_w, y, cell_w - 4, 44, [t, f"idf {rows[0].terms[j].idf:.2f}"], BLUE)
    sx = x0 + name_w + len(terms) * cell_w
    c.box(sx, y, score_w, 44, ["score", "sum of cells"], ORANGE)
    top_score = max(r.score for r in rows) or 1.0
    for i, r in enumerate(rows):
        ry = y + 52 + i * 52
        c.box(x0, ry, name_w - 4, 46, [f"{i + 1}. {r.name}", f"|d| = {r.length}"], GREEN if r.score > 0 else GREY)
        for j, cell in enumerate(r.terms):
            lines = [f"tf {cell.tf} → {cell.tf_part:.2f}", f"× {cell.idf:.2f} = {cell.contribution:.2f}"] if cell.tf else ["not in it"]
            c.box(x0 + name_w + j * cell_w, ry, cell_w - 4, 46, lines, BLUE if cell.tf else GREY, size=12, bold_first=False)
        c.rect(sx, ry, score_w, 46, GREY)
        c.rect(sx + 4, ry + 30, (score_w - 8) * r.score / top_score, 10, ORANGE, rx=2)
        c.text(sx + score_w / 2, ry + 22, f"{r.score:.2f}", 13, anchor="middle", bold=True)
    # inset: tf saturation and length normalisation with this catalog's k1, b, avgdl
    iy = y + 52 + len(rows) * 52 + 20
    c.text(16, iy + 4, "Why tf saturates and long documents score less (the tf part of one term):", 13, bold=True)
    px, py, pw, ph, max_tf = 60, iy + 20, 360, 130, 8
    top_part = index.k1 + 1
    c.rect(px, py, pw, ph, ("#ffffff", "#999999"), rx=0)
    for key, (label, ratio, colour, dashed) in enumerate((("|d| = avgdl / 2", 0.5, "#0072B2", False), ("|d| = avgdl", 1.0, "#007A5A", False),
                                         ("|d| = 2 × avgdl", 2.0, "#D55E00", True))):
        norm = index.k1 * (1 - index.b + index.b * ratio)
        pts = [(px + pw * tf / max_tf, py + ph - ph * (tf * (index.k1 + 1) / (tf + norm)) / top_part) for tf in range(max_tf + 1)]
        c.polyline(pts, colour, dashed=dashed)
        at_max = max_tf * (index.k1 + 1) / (max_tf + norm)
        ky = py + 14 + 22 * key
        c.polyline([(px + pw + 20, ky), (px + pw + 50, ky)], colour, dashed=dashed)  # the key's swatch
        c.text(px + pw + 58, ky + 5, f"{label}: {at_max:.2f} at tf {max_tf}", 12)
    c.text(px - 6, py + 5, f"{top_part:g}", 12, anchor="end")
    c.text(px - 6, py + ph + 4, "0", 12, anchor="end")
    c.text(px + pw / 2, py + ph + 20, f"tf (times the term occurs in the tool's document, 0 to {max_tf})", 12, anchor="middle")
    c.text(px + pw + 20, py + 90, f"More occurrences add less and less: never above k1 + 1 = {top_part:g}.", 12, italic=True)
    c.text(px + pw + 20, py + 110, "A longer document gets less for the same tf.", 12, italic=True)
    best = rows[0]
    return c.render("bm25-scoring", f"BM25 scoring the query {query!r} against {len(rows)} tools",
                    f"Query terms {', '.join(terms)} with idf "
                    + ", ".join(f"{t.term} {t.idf:.2f}" for t in best.terms)
                    + ". Scores in rank order: " + ", ".join(f"{r.name} {r.score:.2f}" for r in rows)
                    + ". A term's share grows with its count in the document but saturates below k1 + 1, "
                      "and a longer document gets less for the same count.")


# ---------------------------------------------------------------- (d) deferral and search

def deferral_and_search(query: str = "send a message to the team channel",
                        catalog: ToolCatalog | None = None, limit: int = DEFAULT_LIMIT) -> Diagram:
    """Chapters 4–5: a pinned search tool, a deferred catalog, and the found tools becoming callable.

    The found tools are the catalog's own ranking of ``query`` (the demo world's by default); ``limit`` defaults to
    the search's own :data:`~harness.selection.discovery.DEFAULT_LIMIT`, so the picture says what a search returns
    when the model names no limit.
    """
    catalog = catalog or demo_catalog()
    found = catalog.rank(query, limit)
    c = _Canvas(880)
    c.text(16, 26, "Deferral and search: the model asks for the tools it needs", 15, bold=True)
    pw, gap, y0 = 264, 28, 50
    xs = [16 + i * (pw + gap) for i in range(3)]
    heads = ["1 · The request", "2 · The model searches", "3 · Found tools are callable"]
    for x, head in zip(xs, heads):
        c.text(x, y0 + 14, head, 14, bold=True)
    y = y0 + 30
    # panel 1
    c.box(xs[0], y, pw, 48, ["search_tools", "pinned: always callable"], BLUE)
    c.box(xs[0], y + 62, pw, 74, [f"{len(catalog)} tools deferred", "not in the request:", "no schema tokens"],
          GREY, dashed=True)
    # panel 2
    asked = wrap(f"“{query}”", pw - 12, 13)[:2]
    c.box(xs[1], y, pw, 62, ["model calls search_tools", *asked], ORANGE)
    c.box(xs[1], y + 76, pw, 60, [f"the index ranks all {len(catalog)}", f"and returns the best {limit}"], GREY)
    c.arrow(xs[1] + pw / 2, y + 62, xs[1] + pw / 2, y + 74)
    # panel 3
    c.box(xs[2], y, pw, 48, ["search_tools", "still pinned"], BLUE)
    for i, name in enumerate(found):
        c.box(xs[2], y + 62 + i * 40, pw, 34, [name], GREEN)
    c.arrow(xs[0] + pw + 2, y + 24, xs[1] - 2, y + 24)
    c.arrow(xs[1] + pw + 2, y + 106, xs[2] - 2, y + 79)
    last = max(y + 136, y + 62 + len(found) * 40)
    c.text(xs[2], last + 16, "now callable: the model may call one", 13, italic=True)
    c.text(16, last + 40, "The rest of the catalog stays deferred: it costs nothing until a search finds it.", 13)
    return c.render("deferral-and-search", "Deferral and search",
                    f"Only search_tools is pinned; {len(catalog)} tools are deferred. The model calls search_tools with "
                    f"the query {query!r}; the index returns {', '.join(found) or 'nothing'}, which become callable.")


# ---------------------------------------------------------------- (e) the proxy

def proxy(servers: Sequence[str] = ("filesystem", "git", "fetch", "memory", "…"),
          direct_tokens: int | None = None, proxied_tokens: int | None = None) -> Diagram:
    """Chapter 7: ``harness serve`` between an MCP client and its servers.

    Pass ``direct_tokens``/``proxied_tokens`` only as measured (e.g. ``harness serve --measure``);
    without them the diagram states no number.
    """
    c = _Canvas(880)
    c.text(16, 26, "harness serve: one MCP server in front of many", 15, bold=True)
    y = 60
    cx, cw, px, pw, sx, sw = 16, 180, 330, 280, 720, 150
    c.box(cx, y + 70, cw, 80, ["MCP client", "Claude Code, Codex,", "any agent"], PURPLE)
    c.rect(px, y, pw, 250, BLUE)
    c.text(px + pw / 2, y + 24, "the proxy (harness serve)", 14, anchor="middle", bold=True)
    c.box(px + 20, y + 40, pw - 40, 48, ["search_tools(query)", "names + schemas of the best"], ("#ffffff", "#0072B2"), size=12)
    c.box(px + 20, y + 100, pw - 40, 48, ["call_tool(name, args)", "forwarded to its server"], ("#ffffff", "#0072B2"), size=12)
    c.box(px + 20, y + 160, pw - 40, 64, ["index of every tool", "hybrid: BM25 + MiniLM, fused", "built once at start"],
          GREEN, size=12)
    for i, name in enumerate(servers):
        c.box(sx, y + i * 52, sw, 42, [name], ORANGE, size=13)
    c.arrow(cx + cw + 2, y + 90, px - 2, y + 90, label="lists 2 tools", both=True)
    c.arrow(cx + cw + 2, y + 130, px - 2, y + 130, label="search, then call", both=True, label_dy=20)
    mid = y + 26 * len(servers) - 5
    c.arrow(px + pw + 2, mid - 30, sx - 2, mid - 30, label="tools/list once", both=True)
    c.arrow(px + pw + 2, mid + 30, sx - 2, mid + 30, label="tools/call", both=True, label_dy=20)
    bottom = max(y + 250, y + 52 * len(servers))
    note = "The client's context holds two tool schemas (plus any kept always loaded), not every server's."
    if direct_tokens is not None and proxied_tokens is not None:
        note = f"Schema tokens at connection, measured: {direct_tokens:,} direct → {proxied_tokens:,} through the proxy."
    c.text(16, bottom + 30, note, 13, italic=True)
    return c.render("proxy", "The proxy between an MCP client and its servers",
                    "An MCP client connects to harness serve, which lists search_tools and call_tool (and any tools kept "
                    "always loaded). The proxy "
                    f"indexes every tool of its servers ({', '.join(s for s in servers if s != '…')}), answers "
                    "searches from that index and forwards each call to the server that owns the tool. " + note)


# ---------------------------------------------------------------- (f) RRF fusion

def rrf_fusion(first: Sequence[str], second: Sequence[str], k: float = 60.0,
               labels: tuple[str, str] = ("BM25", "dense (MiniLM)")) -> Diagram:
    """Chapters 6a and 8a: two rankings fused by Reciprocal Rank Fusion; the fused order is :func:`rrf`'s own."""
    if not first or not second:
        raise ValueError("RRF fusion needs two non-empty rankings.")
    if len(first) > 8 or len(second) > 8:
        raise ValueError(f"The RRF diagram shows at most 8 tools per ranking; got {len(first)} and {len(second)}.")
    fused = rrf([first, second], k)
    part = [{t: 1 / (k + pos) for pos, t in enumerate(r, 1)} for r in (first, second)]
    c = _Canvas(880)
    c.text(16, 26, f"Reciprocal Rank Fusion: each list gives a tool 1/(k + rank), k = {k:g}", 15, bold=True)
    c.text(16, 48, "Scores on unlike scales are never compared: only ranks are, and agreement adds up.", 13)
    lw, fw, y0, row = 210, 330, 92, 50
    lx, fx, rx = 16, 275, 880 - 16 - 210
    c.text(lx + lw / 2, y0 - 12, labels[0], 14, anchor="middle", bold=True)
    c.text(fx + fw / 2, y0 - 12, "fused", 14, anchor="middle", bold=True)
    c.text(rx + lw / 2, y0 - 12, labels[1], 14, anchor="middle", bold=True)
    places = {}
    for col, (x, ranking, share) in enumerate(((lx, first, part[0]), (rx, second, part[1]))):
        for pos, t in enumerate(ranking, 1):
            ty = y0 + (pos - 1) * row
            c.box(x, ty, lw, row - 8, [f"{pos}. {t}", f"1/({k:g}+{pos}) = {share[t]:.4f}"], BLUE if col == 0 else ORANGE,
                  size=12)
            places[(col, t)] = ty + (row - 8) / 2
    for pos, t in enumerate(fused, 1):
        ty = y0 + (pos - 1) * row
        shares = [f"{p[t]:.4f}" for p in part if t in p]
        only = [lab for lab, p in zip(labels, part) if t in p]
        total = " + ".join(shares) + f" = {sum(p.get(t, 0) for p in part):.4f}" if len(shares) > 1 else f"{shares[0]} ({only[0]} only)"
        c.box(fx, ty, fw, row - 8, [f"{pos}. {t}", total], GREEN, size=12)
        if (0, t) in places:
            c.arrow(lx + lw + 2, places[(0, t)], fx - 2, ty + (row - 8) / 2, colour="#0072B2")
        if (1, t) in places:
            c.arrow(rx - 2, places[(1, t)], fx + fw + 2, ty + (row - 8) / 2, colour="#B07800")
    bottom = y0 + max(len(first), len(second), len(fused)) * row
    c.text(16, bottom + 16, "A tool missing from a list gets nothing from it; ties keep the order first seen.", 13, italic=True)
    return c.render("rrf-fusion", f"RRF fusion of {labels[0]} and {labels[1]} rankings",
                    f"{labels[0]} ranks {', '.join(first)}; {labels[1]} ranks {', '.join(second)}. With k = {k:g} "
                    f"the fused order is {', '.join(fused)}.")


# ---------------------------------------------------------------- (g) the course map
# The chapters and the core path are defined once, in workbook.views.course.

def course_map(chapters: Sequence[Chapter] = COURSE) -> Diagram:
    """Chapter 0: one screen of the course — which chapter explains which piece, core path and going further."""
    core = [ch for ch in chapters if ch.core]
    extra = [ch for ch in chapters if not ch.core]
    c = _Canvas(880)
    c.text(16, 26, "The course on one screen", 15, bold=True)
    cw, ew, h, step, y0 = 470, 340, 50, 62, 70
    c.text(16, y0 - 12, "Core path: read in order", 14, bold=True)
    c.text(534, y0 - 12, "Going further", 14, bold=True)
    for i, ch in enumerate(core):
        y = y0 + i * step
        c.box(16, y, cw, h, [f"Chapter {ch.number} · {ch.title}", ch.piece], BLUE)
        if i:
            c.arrow(16 + cw / 2, y - step + h + 1, 16 + cw / 2, y - 2)
    for i, ch in enumerate(extra):
        y = y0 + i * step
        c.box(534, y, ew, h, [f"Chapter {ch.number} · {ch.title}", ch.piece], ORANGE, dashed=True)
    c.text(16, y0 + max(len(core), len(extra)) * step + 10,
           "Solid boxes: the core path. Dashed boxes: optional depth, read after the core path.", 13, italic=True)
    return c.render("course-map", "Course map: which chapter explains which piece",
                    "Core path: " + "; ".join(f"Chapter {ch.number}, {ch.title}: {ch.piece}" for ch in core)
                    + ". Going further: " + "; ".join(f"Chapter {ch.number}, {ch.title}: {ch.piece}" for ch in extra) + ".")


# ---------------------------------------------------------------- (h) a failing server behind the hub

class _Status(Protocol):
    @property
    def state(self) -> str: ...

    @property
    def reason(self) -> str: ...


class _Result(Protocol):
    @property
    def content(self) -> str: ...

    @property
    def is_error(self) -> bool: ...


@dataclass(frozen=True)
class _Example:
    """The default picture's inputs: Chapter 5b's three servers after a hang and a crash."""

    state: str
    reason: str = ""
    content: str = ""
    is_error: bool = False


EXAMPLE_STATUSES = {"tracker": _Example("failed", "command 'mcp-issue-tracker' not found"),
                    "misbehave": _Example("crashed", "the server exited during a call to 'crash_server'"),
                    "time": _Example("ready", "2 tools listed")}
EXAMPLE_CALLS = (("misbehave", "slow_operation", _Example("", content="did not answer within 1 s", is_error=True)),
                 ("misbehave", "crash_server", _Example("", content="crashed during the call", is_error=True)),
                 ("time", "get_current_time", _Example("", content='{"timezone": "UTC"}')))
STATE_STYLE = {"ready": (GREEN, False, False), "failed": (GREY, True, False), "crashed": (ORANGE, False, True)}


def _clause(text: str) -> str:
    """A result or reason up to its first ';' (the rest is detail a diagram has no room for)."""
    return text.split(";")[0].strip()


def hub_failures(statuses: Mapping[str, _Status] | None = None,
                 calls: Sequence[tuple[str, str, _Result]] | None = None) -> Diagram:
    """Chapter 5b: servers that are missing, hang or crash become statuses and error results; the session goes on.

    Drawn from what the hub reported: ``statuses`` is ``hub.statuses`` (state and reason per server), ``calls``
    the (server, tool, result) of the calls made — Chapter 5b's three servers after a hang and a crash by default.
    """
    shown: Mapping[str, _Status] = EXAMPLE_STATUSES if statuses is None else statuses
    made: Sequence[tuple[str, str, _Result]] = EXAMPLE_CALLS if calls is None else calls
    c = _Canvas(880)
    c.text(16, 26, "A failing server becomes a status and an error result, never a dead session", 15, bold=True)
    cx, cw, hx, hw, sx, sw = 16, 300, 360, 290, 690, 174
    c.text(cx, 58, "the agent's calls and what came back", 13, bold=True)
    c.text(hx, 58, "the hub's status for each server", 13, bold=True)
    c.text(sx, 58, "the servers", 13, bold=True)
    y = 72
    for server, status in shown.items():
        mine = [(tool, r) for s, tool, r in made if s == server]
        height = max(58, 66 * len(mine) - 8)
        colour, dashed, hatched = STATE_STYLE.get(status.state, (BLUE, False, False))
        c.box(sx, y, sw, height, [server, {"failed": "never started", "crashed": "process gone"}.get(status.state, "running")],
              colour, dashed=dashed, hatched=hatched)
        c.box(hx, y, hw, height, [f"{server}: {status.state}", *wrap(_clause(status.reason), hw - 12, 12)[:2]], colour, size=12)
        c.arrow(hx + hw + 2, y + height / 2, sx - 2, y + height / 2, both=True)
        if not mine:
            c.box(cx, y, cw, height, ["no call", "its tools were never listed"], GREY, size=12, dashed=True)
        for i, (tool, result) in enumerate(mine):
            said = "error result" if result.is_error else "answered"
            detail = wrap(_clause(result.content), cw - 12, 12)[:2] if result.is_error else []
            c.box(cx, y + i * 66, cw, 58, [f"{tool} → {said}", *detail], ORANGE if result.is_error else GREEN, size=12)
            c.arrow(cx + cw + 2, y + i * 66 + 29, hx - 2, y + height / 2, both=True)
        y += height + 16
    c.text(16, y + 16, "The loop reads each error result as the tool's answer and goes on; the status names what failed and why.",
           13, italic=True)
    states = ", ".join(f"{name} {s.state}" for name, s in shown.items())
    results = ", ".join(f"{tool}: {'error result' if r.is_error else 'answered'}" for _, tool, r in made)
    return c.render("hub-failures", "A failing server becomes a status and an error result",
                    f"Servers and the hub's status for each: {states}. Calls and what came back: {results}. "
                    "The session goes on.")


# ---------------------------------------------------------------- (i) learned signals: a query log and a usage prior

def _flow(c: _Canvas, x: float, y: float, w: float, steps: Sequence[tuple[Sequence[str], tuple[str, str]]],
          side: tuple[float, Sequence[str]] | None = None) -> float:
    """Boxes stacked with arrows between them; ``side`` is (index, lines): a dashed box feeding that step from the right."""
    h, gap = 50, 22
    for i, (lines, colour) in enumerate(steps):
        c.box(x, y, w, h, lines, colour, size=12)
        if i:
            c.arrow(x + w / 2, y - gap, x + w / 2, y - 2)
        if side is not None and side[0] == i:
            sw = 170
            c.box(x + w + 24, y - 8, sw, h + 16, side[1], ORANGE, size=12, dashed=True)
            c.arrow(x + w + 22, y + h / 2, x + w + 2, y + h / 2)
        y += h + gap
    return y


def _two_panels(title: str, left: str, right: str) -> _Canvas:
    """A canvas with a title and two panel headings, left at x = 16 and right at x = 450."""
    c = _Canvas(880)
    c.text(16, 26, title, 15, bold=True)
    c.text(16, 50, left, 14, bold=True)
    c.text(450, 50, right, 14, bold=True)
    return c


def query_log_and_prior() -> Diagram:
    """Chapter 6c: two learned signals feeding a ranker — a log of past queries, and a prior from past use."""
    c = _two_panels("Learning from a log: past queries vote, past use lifts", "1 · Query log (QueryLogRetriever)",
                    "2 · Usage prior (UsagePriorRetriever)")
    left = _flow(c, 16, 66, 230, [
        (["a new query"], BLUE),
        (["nearest logged queries", "by BM25 over the log"], GREY),
        (["their tools vote"], GREY),
        (["fused by RRF", "with fielded BM25"], GREEN)],
        side=(1, ["the log:", "past queries and", "the tools they needed"]))
    right = _flow(c, 450, 66, 230, [
        (["a new task"], BLUE),
        (["the base ranking", "(hybrid-task)"], GREY),
        (["its first places kept"], GREY),
        (["then every second place:", "relevance + prior"], GREEN)],
        side=(3, ["uses per tool:", "log1p, scaled", "to 0–1"]))
    bottom = max(left, right)
    c.text(16, bottom + 4, "Pays when jobs recur; a job the log never saw", 13, italic=True)
    c.text(16, bottom + 22, "gets little (memorisation, not generalisation).", 13, italic=True)
    c.text(450, bottom + 4, "Lifts the tools tasks use but rarely name", 13, italic=True)
    c.text(450, bottom + 22, "(the file writer, the clock, the geocoder).", 13, italic=True)
    return c.render("query-log-and-prior", "Two learned signals: a query log and a usage prior",
                    "Left: a new query finds the nearest logged queries by BM25, their tools vote, and the votes are fused "
                    "with fielded BM25 by RRF. Right: a base ranking keeps its first places, and from there every second "
                    "place goes to relevance plus a prior counted from past use (log1p, scaled to 0 to 1).")


# ---------------------------------------------------------------- (j) zero-shot: servers first, and query planning

PLANNED_TASK = "Show me the contents of notes/todo.md, then post its first line to the #dev channel"


def servers_first_and_planning(task: str = PLANNED_TASK, servers: int = 3) -> Diagram:
    """Chapter 8a: two zero-shot ideas — rank servers before tools, and rank a task's steps apart, then fuse.

    The steps drawn are :func:`workbook.steps.split_steps`'s own for ``task``.
    """
    from workbook.steps import split_steps

    steps = split_steps(task)
    if not 1 <= len(steps) <= 4:
        raise ValueError(f"The planning diagram draws a task of 1 to 4 steps; {task!r} has {len(steps)}.")
    c = _two_panels("Two zero-shot ideas: servers before tools, and one query per step",
                    "1 · Servers first (HierarchicalRetriever)", "2 · Query planning (PlannedRetriever)")
    left = _flow(c, 16, 66, 230, [
        (["the query"], BLUE),
        (["rank the server documents", "(hybrid search)"], GREY),
        ([f"the best {servers} servers"], GREY),
        (["their tools first, in the", "tool ranking's order"], GREEN),
        (["then every other tool:", "nothing is lost"], GREEN)],
        side=(1, ["a server's document:", "its name, description,", "its tools' names"]))
    c.box(450, 66, 414, 62, ["the task", *wrap(f"“{task}”", 402, 12)[:2]], BLUE, size=12)
    y, sw = 66 + 62 + 22, (414 - 12 * (len(steps) - 1)) / len(steps)
    for i, step in enumerate(steps):
        x = 450 + i * (sw + 12)
        c.box(x, y, sw, 62, [f"step {i + 1}", *wrap(step, sw - 10, 12)[:2]], GREY, size=12)
        c.arrow(x + sw / 2, y - 22, x + sw / 2, y - 2)
    y += 62 + 22
    c.box(450, y, 414, 50, [f"rank the task (weight {len(steps)}) and each step (weight 1)"], GREY, size=12)
    c.arrow(657, y - 22, 657, y - 2)
    y += 50 + 22
    c.box(450, y, 414, 50, ["fuse the rankings by RRF: one ranking"], GREEN, size=12)
    c.arrow(657, y - 22, 657, y - 2)
    bottom = max(left, y + 50 + 22)
    c.text(16, bottom + 4, "A task that does not split is ranked as before; the whole task weighs as much as its steps together.",
           13, italic=True)
    return c.render("servers-first-and-planning", "Servers first, and query planning",
                    f"Left: the query ranks server documents, the tools of the best {servers} servers come first in the tool "
                    f"ranking's order, then every other tool. Right: the task {task!r} splits into {len(steps)} steps "
                    f"({'; '.join(steps)}); the task and each step are ranked and the rankings fused by RRF.")


# ---------------------------------------------------------------- (k) pinning across an opener and a pivot

@dataclass(frozen=True)
class ShownTurn:
    """One turn as :func:`pinning_across_turns` draws it: the query the loop ranked with, the pinned tools and then
    the ranked ones (in rank order) the request carried, and each call the model made with whether it ran — a call
    of a tool the request did not carry comes back as an error result, which is what the picture must show."""

    query: str
    pinned: tuple[str, ...]
    ranked: tuple[str, ...]
    calls: tuple[tuple[str, bool], ...] = ()


@dataclass(frozen=True)
class Lane:
    """One request of a conversation: its kind ("opener", "pivot"…), what the user said, the tools it needs (none
    for an opener like "hi"), how many requests came before it, and its turns."""

    kind: str
    request: str
    needed: tuple[str, ...]
    turns: tuple[ShownTurn, ...]
    earlier: int = 0


def shown_turns(events: Sequence[TurnEvent]) -> tuple[ShownTurn, ...]:
    """What each turn showed and did, read from the loop's own records (``RunResult.turns``), so the picture draws
    what the model was given rather than what a test expects. Tools a deferral loaded are not the selector's
    choice and are left out; a call with no result (the run stopped) counts as not run."""
    out = []
    for ev in events:
        ran = {r.tool_use_id: not r.is_error for r in ev.results}
        out.append(ShownTurn(ev.query, tuple(r.tool.name for r in ev.ranked if r.pinned),
                             tuple(r.tool.name for r in ev.ranked if not r.pinned),
                             tuple((c.name, ran.get(c.id, False)) for c in ev.response.tool_calls)))
    return tuple(out)


def lane_of(run: ScenarioRun) -> Lane:
    """A scenario's run as one lane: its last request's turns (a pivot's earlier requests are counted, not drawn —
    what they leave behind is in the query)."""
    s = run.scenario
    return Lane(s.kind, s.request, tuple(s.tools), shown_turns(run.result.turns), len(s.setup))


def demo_pinning_lanes() -> list[Lane]:
    """Chapter 4's section 2 as lanes: the offline stand-in on the demo world's "hi" opener and its first
    development pivot, ``list_available_tools`` pinned, each on a fresh world.

    The runs are async; they run in a thread of their own so that a notebook's running event loop is no obstacle.
    """
    import asyncio
    import concurrent.futures

    from harness.selection.discovery import discovery_tool
    from harness.selection.ranking import Selector
    from workbook.demo import DemoWorld, demo_tools, load_scenarios
    from workbook.evaluation.scenarios import run_scenario
    from workbook.providers.offline import OfflineModel

    scenarios = load_scenarios("dev")
    chosen = [next(s for s in scenarios if s.kind == "opener" and s.request == "hi"),
              next(s for s in scenarios if s.kind == "pivot")]

    async def lanes() -> list[Lane]:
        out = []
        for s in chosen:
            with DemoWorld() as world:
                catalog = ToolCatalog(demo_tools(world))
                out.append(lane_of(await run_scenario(OfflineModel(), Selector.over(catalog, pinned=[discovery_tool(catalog)]), s)))
        return out

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, lanes()).result()


def _query_lines(query: str, width: float) -> list[str]:
    """A query in at most three lines: its start, how many words are left out, and its end. A transcript query runs
    to hundreds of words; its start is the first request and its end the latest activity, which is what moves."""
    words = query.split()
    lines = wrap(" ".join(words), width, 12) if words else ["(empty)"]
    if len(lines) <= 3:
        return lines
    tail: list[str] = []
    for word in reversed(words):
        if text_width(" ".join([word, *tail]), 12) > width:
            break
        tail.insert(0, word)
    tail = tail or [clip(words[-1], width, 12)]
    hidden = len(words) - len(lines[0].split()) - len(tail)
    return [lines[0], f"[{hidden} more words]", " ".join(tail)] if hidden > 0 else [lines[0], " ".join(tail)]


def _what_the_model_did(turn: ShownTurn) -> tuple[list[str], tuple[str, str]]:
    """The model column's lines and colour: the first call and whether it ran, and why not when the turn says."""
    if not turn.calls:
        return ["answers in text", "the request ends"], GREY
    name, ran = turn.calls[0]
    if name in turn.pinned:
        said, colour = ("ran: the pinned tool" if ran else "error result"), BLUE
    elif ran:
        said, colour = "ran", GREEN
    elif name not in turn.ranked:
        said, colour = "error: not shown this turn", ORANGE
    else:
        said, colour = "error result", ORANGE
    more = [f"+ {len(turn.calls) - 1} more calls"] if len(turn.calls) > 1 else []
    return [name, said, *more], colour


def _top_k_label(turn: ShownTurn, needed: Sequence[str]) -> str:
    """What the top-k squares mean in words: nothing matched, where a needed tool ranks, or that it is absent."""
    if not turn.ranked:
        return "0 tools: nothing matched"
    shown = [f"{n} at #{turn.ranked.index(n) + 1}" for n in needed if n in turn.ranked]
    if shown:
        return ", ".join(shown)
    return f"no {needed[0]}" if needed else f"{len(turn.ranked)} tools shown"


def pinning_across_turns(lanes: Sequence[Lane] | None = None, k: int = DEFAULT_K) -> Diagram:
    """Chapter 4: a pinned discovery tool rides in every request, turn after turn, while the per-turn top-k follows
    the transcript's query — empty for an opener like "hi", still the old task's on the first turns of a pivot.

    Drawn from runs: ``lanes`` as :func:`lane_of` reads them from scenario runs, by default the stand-in's
    (:func:`demo_pinning_lanes`). Every name, rank and call drawn is one the loop recorded; ``k`` is the number of
    places a turn has for ranked tools (:data:`~harness.selection.ranking.DEFAULT_K`).
    """
    chosen = demo_pinning_lanes() if lanes is None else list(lanes)
    rows = sum(len(lane.turns) for lane in chosen)
    if not chosen or not all(lane.turns for lane in chosen) or rows > 10:
        raise ValueError(f"The pinning diagram draws 1 to 10 turns, each request with one at least; got {rows} turns "
                         f"in {len(chosen)} requests.")
    widest = max(len(t.ranked) for lane in chosen for t in lane.turns)
    if not 1 <= k <= 20 or widest > k:
        raise ValueError(f"The pinning diagram draws at most k = {k} ranked tools a turn (k from 1 to 20), and a turn "
                         f"shows {widest}.")
    pins = list(dict.fromkeys(n for lane in chosen for t in lane.turns for n in t.pinned))
    pin = ", ".join(pins) or "nothing"
    c = _Canvas(900)
    headline = f"{pin}, pinned, is in every request; the top-{k} follows the query" if pins else \
        f"Nothing pinned: each request carries only the top-{k} the query selects"
    c.text(16, 26, clip(headline, 868, 15, True), 15, bold=True)
    c.text(16, 48, "Each row is one turn: the query from the transcript, the tools the request carries, what the model did.", 13)
    qx, qw, px, pw, tx, tw, mx, mw, h, step = 70, 210, 288, 170, 466, 210, 684, 200, 50, 58
    y = 80
    for x, head in ((16, "turn"), (qx, "query"), (px, "pinned"), (tx, f"top-{k} by the query"), (mx, "the model")):
        c.text(x, y, head, 13, bold=True)
    slot = (tw - 14) / k
    side = min(16.0, slot - 4)
    closing = []
    for lane in chosen:
        y += 26
        before = f", after {lane.earlier} earlier request{'s' if lane.earlier != 1 else ''}" if lane.earlier else ""
        needs = f"needs {', '.join(lane.needed)}" if lane.needed else "needs no tool"
        c.text(16, y, clip(f"{lane.kind.capitalize()}{before} · {needs}", 868, 13, True), 13, bold=True)
        c.text(16, y + 19, clip(f"“{lane.request}”", 868, 13), 13, italic=True)
        y += 30
        for n, turn in enumerate(lane.turns, 1):
            c.text(16, y + h / 2 + 5, f"turn {n}", 13)
            c.box(qx, y, qw, h, _query_lines(turn.query, qw - 10), GREY, size=12, bold_first=False)
            if turn.pinned:
                c.box(px, y, pw, h, [*turn.pinned[:2], "pinned: every turn"], BLUE, size=12)
            else:
                c.box(px, y, pw, h, ["nothing pinned"], GREY, size=12, dashed=True)
            c.rect(tx, y, tw, h, ("#ffffff", "#999999"), rx=4)
            c.parts.append('<g class="top-k">')  # the k places, one group a turn (what a test counts)
            for j in range(k):
                sx = tx + 7 + j * slot
                if j < len(turn.ranked):
                    colour = GREEN if turn.ranked[j] in lane.needed else ("#c8c8c8", "#555555")
                    c.rect(sx, y + 8, side, side, colour, rx=2)
                else:
                    c.rect(sx, y + 8, side, side, ("#ffffff", "#999999"), rx=2, dashed=True)
            c.parts.append("</g>")
            c.text(tx + 7, y + h - 9, clip(_top_k_label(turn, lane.needed), tw - 14, 12), 12)
            lines, colour = _what_the_model_did(turn)
            c.box(mx, y, mw, h, lines, colour, size=12)
            y += step
        y -= step - h
        first = next((n for n, t in enumerate(lane.turns, 1) if set(lane.needed) & set(t.ranked)), None)
        if lane.needed and first is None:
            closing.append(f"{lane.kind}: {lane.needed[0]} never entered the top-{k}")
        elif lane.needed and first is not None:
            named = next(x for x in lane.needed if x in lane.turns[first - 1].ranked)
            why = ", once its name was in the query" if named in lane.turns[first - 1].query else ""
            closing.append(f"{lane.kind}: {named} first in the top-{k} on turn {first}{why}")
        elif not lane.turns[0].ranked:
            closing.append(f"{lane.kind}: the top-{k} is empty on turn 1")
        if not any(lane.request in t.query for t in lane.turns):
            closing.append(f"the {lane.kind}'s request is in none of its {len(lane.turns)} queries")
    y += 30
    c.rect(16, y - 12, 14, 14, GREEN, rx=2)
    c.text(36, y, "a tool the request needs (named below the squares)", 12)
    c.rect(400, y - 12, 14, 14, ("#c8c8c8", "#555555"), rx=2)
    c.text(420, y, "another tool the query selected", 12)
    c.rect(650, y - 12, 14, 14, ("#ffffff", "#999999"), rx=2, dashed=True)
    c.text(670, y, "an empty place", 12)
    for line in wrap("; ".join(closing) + ".", 868, 13) if closing else []:
        y += 22
        c.text(16, y, line, 13, italic=True)

    def said(lane: Lane) -> str:
        turns = [f"turn {n}: the top-{k} shows {len(t.ranked)} tools ({_top_k_label(t, lane.needed)}), the model "
                 + (", ".join(f"calls {name} ({'ran' if ran else 'error result'})" for name, ran in t.calls) or "answers in text")
                 for n, t in enumerate(lane.turns, 1)]
        return f"{lane.kind.capitalize()} “{lane.request}”: " + "; ".join(turns) + "."

    return c.render("pinning-across-turns", "A pinned tool across an opener and a pivot",
                    (f"Pinned in every request: {pin}. " if pins else "Nothing pinned. ")
                    + " ".join(said(lane) for lane in chosen))


# ---------------------------------------------------------------- (l) where a search's time goes

#: One run of Chapter 8b's stage table: MiniLM's hybrid-rrf over MCP-Zero's 2,797 tools, 50 LiveMCPBench step
#: queries each embedded on its own, median ms of CPU time per stage (ONNX Runtime; load 0.9 on 2 cores).
EXAMPLE_STAGES = {"tokenize": 0.115, "embedding (onnx)": 3.673, "catalog matmul": 0.222, "dense top-100": 0.130,
                  "bm25 top-100": 0.569, "fusion": 0.061}
EXAMPLE_TOTAL = 4.773
#: The parts of a hybrid query, each with its colour and legend; a stage belongs to the first whose test it passes.
STAGE_PARTS: tuple[tuple[str, tuple[str, str], Callable[[str], bool]], ...] = (
    ("MiniLM: the query's embedding", ORANGE,
     lambda s: s == "tokenize" or "embedding" in s or s.startswith("layer ") or s == "pooling"),
    ("dense: dot products, nearest tools", BLUE, lambda s: s == "catalog matmul" or s.startswith("dense")),
    ("fielded BM25", GREEN, lambda s: s.startswith("bm25")),
    ("RRF fusion", PURPLE, lambda s: s == "fusion"),
)
MAX_STAGES = 16


def _ms(value: float) -> str:
    """A time in ms as the stage table prints it (three decimals), without trailing zeros; coarser when large."""
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.{1 if value >= 10 else 3}f}".rstrip("0").rstrip(".")


def _stage_part(stage: str) -> tuple[str, tuple[str, str]]:
    """(legend, colour) of the part of a hybrid query a stage belongs to; an unknown stage is grey."""
    for legend, colour, test in STAGE_PARTS:
        if test(stage):
            return legend, colour
    return "other", GREY


def _stage_note(stage: str, tools: int) -> str:
    """What a stage of :func:`workbook.evaluation.query_time.breakdown` does, in a few words ("" if unknown)."""
    depth = stage.rsplit("-", 1)[-1]
    if stage.startswith("layer "):
        return f"MiniLM's {stage} of 6 (NumPy)"
    return {"tokenize": "MiniLM's tokenizer: the query's word pieces",
            "embedding (onnx)": "MiniLM's 6 layers in ONNX Runtime: a vector",
            "query embedding": "MiniLM, tokenizer and layers: one vector",
            "token embeddings": "MiniLM: a first vector per word piece",
            "pooling": "MiniLM: mean of the word pieces' vectors",
            "catalog matmul": f"a dot product with each of {tools:,} tools",
            "fusion": "RRF merges the two lists into one"}.get(stage, (
                f"the {depth} tools nearest the query vector" if stage.startswith("dense top-") else
                f"the query's terms scored, best {depth}" if stage.startswith("bm25 top-") else ""))


def query_time_stages(stages: Mapping[str, float] | None = None, total: float | None = None, *, tools: int = 2_797,
                      queries: int | None = 50, clock: str = "CPU") -> Diagram:
    """Chapter 8b: where one hybrid-rrf search's time goes — a bar per stage, as long as its measured median, each
    starting where the one before ended (the order the stages run), then the whole search timed on its own.

    Drawn from what was measured, never from a model of it: ``stages`` maps each stage's name (as
    :func:`workbook.evaluation.query_time.breakdown` names them) to its median in ms, ``total`` is the whole search's
    median, timed on its own. Medians do not add up, so the two are drawn side by side rather than one derived from
    the other. By default, one run of Chapter 8b's stage table (:data:`EXAMPLE_STAGES`).
    """
    shown = dict(EXAMPLE_STAGES if stages is None else stages)
    whole = EXAMPLE_TOTAL if stages is None and total is None else total
    if not shown:
        raise ValueError("The query-time diagram needs at least one stage.")
    if len(shown) > MAX_STAGES:
        raise ValueError(f"The query-time diagram draws at most {MAX_STAGES} stages, not {len(shown)}.")
    for name, ms in [*shown.items(), *([("the whole search", whole)] if whole is not None else [])]:
        if not (math.isfinite(ms) and ms >= 0):
            raise ValueError(f"A stage's time is a number of ms of at least 0, and {name!r} has {ms}.")
    summed = sum(shown.values())
    if whole is not None and whole < max(shown.values()):
        raise ValueError(f"The whole search's median ({_ms(whole)} ms) cannot be below a stage's "
                         f"({_ms(max(shown.values()))} ms): each query's whole contains its stages.")
    span = max(summed, whole or 0.0)
    if span <= 0:
        raise ValueError("The query-time diagram needs a stage that took some time.")
    base = whole if whole is not None else summed  # what each stage's share is a share of
    embedding = sum(ms for name, ms in shown.items() if _stage_part(name)[0] == STAGE_PARTS[0][0])

    c = _Canvas(880)
    c.text(16, 26, f"Where one hybrid-rrf search's time goes, at {tools:,} tools", 15, bold=True)
    over = f" over {queries:,} queries" if queries else ""
    c.text(16, 48, f"Median ms of {clock} time per stage{over}, each bar starting where the stage before it ended", 13)
    x = 16.0
    for legend, colour in dict.fromkeys(_stage_part(name) for name in shown):
        c.rect(x, 62, 14, 14, colour, rx=2)
        c.text(x + 20, 74, legend, 12)
        x += 20 + text_width(legend, 12) + 18
    x0, bar_w, fig_x, y0, row = 330.0, 390.0, 864.0, 92.0, 42.0
    scale = bar_w / span
    rows = [(name, ms, _stage_note(name, tools), _stage_part(name)[1]) for name, ms in shown.items()]
    start = 0.0
    for i, (name, ms, note, colour) in enumerate(rows):
        y = y0 + i * row
        c.text(16, y + 16, clip(name, 300, 13, True), 13, bold=True)
        if note:
            c.text(16, y + 33, clip(note, 300, 12), 12)
        c.parts.append('<g class="bar">')
        c.rect(x0 + start * scale, y + 7, max(ms * scale, 1.5), 26, colour, rx=3)
        c.parts.append("</g>")
        c.text(fig_x, y + 25, f"{_ms(ms)} ms · {100 * ms / base:.0f} %", 13, anchor="end")
        start += ms
    y = y0 + len(rows) * row + 8
    if whole is not None:
        c.text(16, y + 16, "the whole search", 13, bold=True)
        c.text(16, y + 33, "timed on its own, first stage to last", 12)
        c.parts.append('<g class="whole">')
        c.rect(x0, y + 7, max(whole * scale, 1.5), 26, GREY, dashed=True, rx=3)
        c.parts.append("</g>")
        c.text(fig_x, y + 25, f"{_ms(whole)} ms", 13, anchor="end", bold=True)
        y += row
    c.parts.append(f'<line x1="{x0:.1f}" y1="{y0:.1f}" x2="{x0:.1f}" y2="{y:.1f}" stroke="#555555" stroke-width="1"/>')
    of = f"the whole search's {_ms(whole)} ms" if whole is not None else f"the stages' {_ms(summed)} ms"
    lines = [f"The query's embedding: {_ms(embedding)} of {of} ({100 * embedding / base:.0f} %)."] if embedding else []
    if whole is not None and len(shown) > 1:
        lines.append(f"The stages' medians sum to {_ms(summed)} ms; medians need not add up to the whole's median.")
    elif whole is not None:
        lines.append("The other stages were not timed apart in this measurement.")
    for i, line in enumerate(lines):
        c.text(16, y + 20 + 20 * i, line, 13, italic=True)
    return c.render("query-time-stages", f"Where one hybrid-rrf search's time goes, at {tools:,} tools",
                    f"Median ms of {clock} time per stage{over}, in the order the stages run: "
                    + "; ".join(f"{name} {_ms(ms)} ms" for name, ms in shown.items())
                    + (f"; the whole search, timed on its own, {_ms(whole)} ms" if whole is not None else "")
                    + ". " + " ".join(lines))


DIAGRAMS = {"tools_in_every_request": tools_in_every_request, "request_layout": request_layout, "per_turn_loop": per_turn_loop, "bm25_scoring": bm25_scoring,
            "deferral_and_search": deferral_and_search, "proxy": proxy, "course_map": course_map,
            "failure_points": failure_points, "hub_failures": hub_failures, "query_log_and_prior": query_log_and_prior,
            "servers_first_and_planning": servers_first_and_planning, "pinning_across_turns": pinning_across_turns,
            "query_time_stages": query_time_stages}


def demo_rankings(query: str = "find where a function is defined in the code", dense: bool = True
                  ) -> tuple[list[str], list[str], tuple[str, str]]:
    """Two real top-5 rankings of :func:`demo_catalog` for ``query``, with their labels: its BM25, and
    MiniLM's — or, with ``dense=False`` or without the embedding extra, BM25 over name and description
    alone (instant: embedding the 74 tools takes seconds)."""
    from harness.retrieval.dense import dense_available
    from harness.retrieval.named import make_retriever

    catalog = demo_catalog()
    if dense and dense_available():
        return catalog.rank(query, 5), make_retriever("dense-minilm", catalog.tools).rank(query, 5), ("BM25", "dense (MiniLM)")
    return catalog.rank(query, 5), make_retriever("bm25", catalog.tools).rank(query, 5), ("BM25", "BM25, name + description")


def all_diagrams() -> list[Diagram]:
    """Every diagram with its default inputs (a gallery for tests and authors); RRF fuses two BM25 rankings."""
    first, second, labels = demo_rankings(dense=False)
    return [f() for f in DIAGRAMS.values()] + [rrf_fusion(first, second, labels=labels)]
