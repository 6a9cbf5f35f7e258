"""The figures of the chapter ``book/multihead.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, Rectangle

from .graphs import circle_layout, direction_key, plot_attention_graph
from .style import COLUMN, finish


def plot_bipartite(W, query_labels, key_labels, ax=None, *, title: str | None = None):
    """Cross-attention as a bipartite graph: queries left, keys right, for every W_ij > 0 the arrow from
    key j to query i, its width ∝ W_ij and its weight printed on it; the legend of the arrows under it."""
    own = ax is None
    if own:
        _, ax = plt.subplots(figsize=(3.7, 2.8))
    n_q, n_k = len(query_labels), len(key_labels)
    yq = [(n_k - 1) / 2 - i + (n_q - 1) / 2 for i in range(n_q)]
    yk = [n_k - 1 - j for j in range(n_k)]
    for i in range(n_q):
        for j in range(n_k):
            if W[i][j] > 0:
                ax.add_patch(FancyArrowPatch((1, yk[j]), (0, yq[i]), arrowstyle="-|>",  # key j to query i
                                             mutation_scale=10 + 6 * float(W[i][j]), shrinkA=6, shrinkB=6,
                                             color="tab:blue", lw=0.5 + 6 * float(W[i][j]), alpha=0.7))
                ax.annotate(f"{float(W[i][j]):.2f}", (0.7, yq[i] + 0.7 * (yk[j] - yq[i])),
                            fontsize=8, ha="center", va="center",
                            bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none"})
    for i, lab in enumerate(query_labels):
        ax.text(-0.05, yq[i], lab, ha="right", va="center")
    for j, lab in enumerate(key_labels):
        ax.text(1.05, yk[j], lab, ha="left", va="center")
    ax.scatter([0] * n_q, yq, s=120, color="tab:orange", zorder=3)
    ax.scatter([1] * n_k, yk, s=120, color="tab:green", zorder=3)
    ax.set_xlim(-0.5, 1.5)
    ax.axis("off")
    if title:
        ax.set_title(title)
    direction_key(ax, y=-0.06)
    return finish(ax.figure, own)


def plot_heads_side_by_side(heads, titles):
    """The simple picture of multi-head attention, one panel above the other: each head's own
    attention graph on the same nodes, then its output set beside the others' and mixed by W_O.

    ``heads`` are :class:`AttentionGraph` objects on the same labels, ``titles`` one per head."""
    h = len(heads)
    fig, axes = plt.subplots(h + 1, 1, figsize=(COLUMN, (COLUMN + 0.1) * h + 1.5),
                             gridspec_kw={"height_ratios": [COLUMN + 0.1] * h + [1.5]})
    pos = circle_layout(heads[0].n)  # (n, 2), the same places in every panel
    for k, (ax, graph, title) in enumerate(zip(axes, heads, titles)):
        plot_attention_graph(graph, ax, pos=pos, min_weight=1e-12, title=title,
                             fontsize=10, node_radius=0.2, key=k == h - 1)
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
