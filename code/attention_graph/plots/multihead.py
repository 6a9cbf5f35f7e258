"""The figures of the chapter ``book/multihead.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, Rectangle

from .graphs import circle_layout, direction_key, plot_attention_graph
from .style import COLUMN, finish


def plot_bipartite(W, query_labels, key_labels, ax=None, *, title: str | None = None,
                   highlight: int | None = None, key: bool = True):
    """Cross-attention as a bipartite graph: queries left, keys right, for every W_ij > 0 the arrow from
    key j to query i, its width ∝ W_ij; the legend of the arrows under it.

    Drawn by itself (no ``ax``), it stacks one panel per query, each with that query highlighted (the
    legend of the arrows under the last), so every weight is printed once, on an arrow of its own. In a
    panel with ``highlight`` = i, only the arrows into query i are coloured and labelled, each weight on
    its arrow, a little past the middle (where no faint arrow crosses it), in a box edged in the arrow's
    colour; the other arrows are thin, faint and grey (as
    :func:`attention_graph.plots.graphs.plot_attention_graph` draws a highlighted receiver).
    """
    n_q, n_k = len(query_labels), len(key_labels)
    if ax is None:
        fig, axes = plt.subplots(n_q, 1, figsize=(COLUMN, 2.45 * n_q + 0.3))
        for i, panel in enumerate(axes if n_q > 1 else [axes]):
            plot_bipartite(W, query_labels, key_labels, panel, highlight=i,
                           title=f"the arrows into {query_labels[i]}", key=i == n_q - 1)
        return finish(fig)
    yq = [(n_k - 1) / 2 - i + (n_q - 1) / 2 for i in range(n_q)]
    yk = [n_k - 1 - j for j in range(n_k)]
    for i in range(n_q):
        for j in range(n_k):
            w = float(W[i][j])
            if w <= 0:
                continue
            color, alpha, width = "tab:blue", 0.75, 0.5 + 6 * w
            if highlight is not None and i != highlight:
                color, alpha, width = "0.5", 0.35, 0.5 + 1.5 * w
            ax.add_patch(FancyArrowPatch((1, yk[j]), (0, yq[i]), arrowstyle="-|>",  # key j to query i
                                         mutation_scale=10 + 6 * w, shrinkA=6, shrinkB=6, color=color,
                                         lw=width, alpha=alpha, zorder=2 if color == "tab:blue" else 1))
            if highlight is None or i == highlight:  # the weight on its own arrow, off the faint ones
                ax.text(0.62, yq[i] + 0.62 * (yk[j] - yq[i]), f"{w:.2f}", fontsize=9, ha="center", va="center",
                        zorder=5, bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": color, "lw": 0.8})
    for i, lab in enumerate(query_labels):
        ax.text(-0.07, yq[i], lab, ha="right", va="center",
                fontweight="bold" if i == highlight else "normal")
    for j, lab in enumerate(key_labels):
        ax.text(1.07, yk[j], lab, ha="left", va="center")
    ax.scatter([0] * n_q, yq, s=120, color="tab:orange", zorder=3,
               edgecolors=["tab:blue" if i == highlight else "none" for i in range(n_q)], linewidths=2)
    ax.scatter([1] * n_k, yk, s=120, color="tab:green", zorder=3)
    ax.set_xlim(-0.5, 1.5)
    ax.set_ylim(-0.4, n_k - 0.6)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10)
    if key:  # the legend of the arrows under the panel
        direction_key(ax, y=-0.06)
    return finish(ax.figure, False)


def plot_heads_side_by_side(heads, titles, *, highlight: int | None = None):
    """The simple picture of multi-head attention, one panel above the other: each head's own
    attention graph on the same nodes, then its output set beside the others' and mixed by W_O.

    ``heads`` are :class:`AttentionGraph` objects on the same labels, ``titles`` one per head. With
    ``highlight`` = i every panel colours and labels the arrows into node i, each with its weight in
    that head (as :func:`attention_graph.plots.graphs.plot_attention_graph` draws a highlighted
    receiver), so the panels show how the heads differ, not only that they do."""
    h = len(heads)
    fig, axes = plt.subplots(h + 1, 1, figsize=(COLUMN, (COLUMN + 0.1) * h + 1.5),
                             gridspec_kw={"height_ratios": [COLUMN + 0.1] * h + [1.5]})
    pos = circle_layout(heads[0].n)  # (n, 2), the same places in every panel
    for k, (ax, graph, title) in enumerate(zip(axes, heads, titles)):
        plot_attention_graph(graph, ax, pos=pos, min_weight=1e-12, title=title, show_weights=highlight is not None,
                             highlight=highlight, fontsize=10, node_radius=0.2, key=k == h - 1)
        ax.title.set_fontsize(11)
    ax = axes[-1]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    x = 0.0
    for k in range(h):  # the head outputs, side by side: one block of columns each
        ax.add_patch(Rectangle((x, 0), 0.7, 2, fc=colors[(k + 1) % len(colors)], alpha=0.35, ec="black"))
        ax.text(x + 0.35, 1, f"$Y_{{{k + 1}}}$", ha="center", va="center", fontsize=10)
        x += 0.7
    ax.text(x + 0.35, 1, r"$\times$", ha="center", va="center", fontsize=12)
    x += 0.7
    ax.add_patch(Rectangle((x, 0.6), 0.7 * h, 0.7 * h, fc="white", ec="black"))
    ax.text(x + 0.35 * h, 0.6 + 0.35 * h, "$W_O$", ha="center", va="center", fontsize=10)
    x += 0.7 * h
    ax.text(x + 0.35, 1, "$=$", ha="center", va="center", fontsize=12)
    x += 0.7
    ax.add_patch(Rectangle((x, 0), 0.7 * h, 2, fc="0.85", ec="black"))
    ax.text(x + 0.35 * h, 1, "$Y$", ha="center", va="center", fontsize=10)
    ax.text(0.0, 2.15, "the heads' outputs, side by side", ha="left", va="bottom", fontsize=9)
    ax.text(x - 1.05 - 0.35 * h, 0.45, "mixes them", ha="center", va="top", fontsize=9)
    ax.set_xlim(-0.2, x + 0.7 * h + 0.2)
    ax.set_ylim(-0.4, 2.7)
    ax.set_aspect("equal")
    ax.axis("off")
    return finish(fig)
