"""The cliff view: at N tools shown, how many schema tokens and what accuracy.

Introduced in Chapter 1. ``cliff_at`` is the function, ``cliff_figure`` the static figure that
a notebook rendered without a kernel still shows, ``cliff_slider`` the widget; ``rate_figure`` draws
accuracy with 95 % intervals on a log N axis with chance, for several models or reading budgets, and
``rate_table`` prints the same curves as text.
"""
from __future__ import annotations

from typing import Sequence

from workbook.evaluation.cliff import AccuracyPoint, RatePoint
from harness.core.html import bar, esc


def cliff_at(n: int, points: Sequence[AccuracyPoint | RatePoint], window: int = 200_000) -> str:
    """One sentence of HTML: the tokens and accuracy measured at ``n`` tools (± seeds, or a 95 % interval and chance)."""
    p = next(p for p in points if p.n == n)
    if isinstance(p, RatePoint):
        accuracy = f"{p.rate:.2f} (95 % CI {p.low:.2f}–{p.high:.2f}; chance {p.chance:.2f}) {bar(p.rate)}"
    else:
        accuracy = f"{p.mean:.2f} ± {p.stdev:.2f} {bar(p.mean)}"
    return (f"<b>{n} tools</b>: {p.tokens:,.0f} schema tokens per turn ({p.tokens / window:.1%} of a {window:,}-token window) "
            f"{bar(p.tokens / max(q.tokens for q in points), color='#c84')}<br>"
            f"tool-choice accuracy {accuracy}")


def rate_table(curves: dict[str, Sequence[RatePoint]], title: str) -> str:
    """The curves as text under ``title``: per N, the first curve's mean schema tokens shown, chance, and each
    curve's rate [95 % interval] and requests."""
    cells = {kind: [f"{p.rate:.2f} [{p.low:.2f}–{p.high:.2f}] n={p.trials}" for p in points] for kind, points in curves.items()}
    width = max(len(c) for column in cells.values() for c in column)
    first = next(iter(curves.values()))
    lines = [f"{'N':>4} {'tokens':>7} {'chance':>7} " + " ".join(f"{kind:>{width}}" for kind in cells)]
    lines += [f"{p.n:>4} {p.tokens:>7,.0f} {p.chance:>7.2f} " + " ".join(f"{column[i]:>{width}}" for column in cells.values())
              for i, p in enumerate(first)]
    return "\n".join([title, *lines])


def cliff_figure(points: Sequence[AccuracyPoint], model_label: str, steepest: tuple[int, int, float] | None = None):
    """Accuracy (left axis) and schema tokens (right axis) against N, labelled with the model."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.6))
    ns = [p.n for p in points]
    ax.errorbar(ns, [p.mean for p in points], yerr=[p.stdev for p in points], marker="o", capsize=3, label="accuracy")
    ax.set_xlabel("tools shown (N)")
    ax.set_ylabel("tool-choice accuracy")
    ax.set_ylim(0, 1.05)
    if steepest:
        ax.axvspan(steepest[0], steepest[1], color="#f4d", alpha=0.15, label=f"steepest drop {steepest[0]}→{steepest[1]}")
    ax2 = ax.twinx()
    ax2.plot(ns, [p.tokens for p in points], color="#c84", linestyle="--", marker=".", label="schema tokens")
    ax2.set_ylabel("schema tokens per turn")
    ax.set_title(f"Tool cliff — model: {model_label}")
    handles = ax.get_legend_handles_labels()[0] + ax2.get_legend_handles_labels()[0]
    ax.legend(handles=handles, loc="lower left", fontsize=8)
    fig.tight_layout()
    return fig


def cliff_slider(points: Sequence[AccuracyPoint | RatePoint], model_label: str):
    import ipywidgets as w

    slider = w.SelectionSlider(options=[p.n for p in points], value=points[0].n, description="N tools")
    out = w.HTML()

    def render(*_):
        out.value = cliff_at(slider.value, points) + f"<br><i>model: {esc(model_label)}</i>"

    slider.observe(render, "value")
    render()
    return w.VBox([slider, out])


def rate_figure(curves: dict[str, Sequence[RatePoint]], title: str, marks: dict[str, float] | None = None, ax=None,
                tokens: dict[int, float] | None = None):
    """Accuracy with 95 % intervals against N on a log axis, one line per curve, chance (1/N) drawn.

    ``marks`` draws labelled vertical lines (e.g. where the stand-in's reading budget is crossed).
    ``tokens`` (schema tokens shown at each N) labels a second axis on top: the folklore's cliff is
    stated in tools and in tokens, and the two do not grow together once real tools join the lists.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=(7, 3.8))
    ns = sorted({p.n for points in curves.values() for p in points})
    for label, points in curves.items():
        rates = [p.rate for p in points]
        ax.errorbar([p.n for p in points], rates, yerr=[[r - p.low for r, p in zip(rates, points)], [p.high - r for r, p in zip(rates, points)]],
                    marker="o", capsize=3, label=label)
    ax.plot(ns, [1 / n for n in ns], color="grey", linestyle=":", label="chance (1/N)")
    for label, n in (marks or {}).items():
        ax.axvline(n, color="#c84", linestyle="--", linewidth=1)
        ax.annotate(label, (n, 1.0), rotation=90, fontsize=7, va="top", ha="right", color="#c84")
    ax.set_xscale("log")
    ax.set_xticks(ns)
    ax.set_xticklabels([str(n) for n in ns])
    ax.minorticks_off()
    ax.set_xlabel("tools shown (N, log scale)")
    ax.set_ylabel("tool-choice accuracy (95 % CI)")
    ax.set_ylim(0, 1.05)
    if tokens:
        top = ax.secondary_xaxis("top")
        top.set_xticks(sorted(tokens), [f"{tokens[n] / 1000:.{0 if tokens[n] >= 10_000 else 1}f}K" for n in sorted(tokens)], fontsize=7)
        top.minorticks_off()
        top.set_xlabel("schema tokens shown (cl100k)", fontsize=8)
    ax.set_title(title, fontsize=10, pad=20 if tokens else 6)  # above the token axis
    ax.legend(fontsize=7, loc="lower left")
    return ax.figure
