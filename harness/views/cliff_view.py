"""The cliff view: at N tools shown, how many schema tokens and what accuracy.

Introduced in Chapter 1. ``cliff_at`` is the function, ``cliff_figure`` the static figure that
a notebook rendered without a kernel still shows, ``cliff_slider`` the widget.
"""
from __future__ import annotations

from typing import Sequence

from harness.cliff import AccuracyPoint
from harness.views.html import bar, esc


def cliff_at(n: int, points: Sequence[AccuracyPoint], window: int = 200_000) -> str:
    """One sentence of HTML: the tokens and accuracy measured at ``n`` tools."""
    p = next(p for p in points if p.n == n)
    return (f"<b>{n} tools</b>: {p.tokens:,.0f} schema tokens per turn ({p.tokens / window:.1%} of a {window:,}-token window) "
            f"{bar(p.tokens / max(q.tokens for q in points), color='#c84')}<br>"
            f"tool-choice accuracy {p.mean:.2f} ± {p.stdev:.2f} {bar(p.mean)}")


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


def cliff_slider(points: Sequence[AccuracyPoint], model_label: str):
    import ipywidgets as w

    slider = w.SelectionSlider(options=[p.n for p in points], value=points[0].n, description="N tools")
    out = w.HTML()

    def render(*_):
        out.value = cliff_at(slider.value, points) + f"<br><i>model: {esc(model_label)}</i>"

    slider.observe(render, "value")
    render()
    return w.VBox([slider, out])
