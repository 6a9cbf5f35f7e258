"""The figures of the chapter ``book/graph_tools.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .graphs import plot_attention_graph, plot_heatmap, short_weight
from .style import finish


def plot_centrality_bars(graph, series: dict, ax=None, *, title: str | None = None):
    """Grouped bars, one group per node of ``graph`` and one bar per entry of ``series`` (name → (n,))."""
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(3.7, 3.2))
    width = 0.8 / max(len(series), 1)
    x = np.arange(graph.n)  # (n,)
    for k, (name, values) in enumerate(series.items()):
        ax.bar(x + (k - (len(series) - 1) / 2) * width, values, width, label=name)
    ax.axhline(1 / graph.n, color="grey", ls=":", lw=1, label=f"uniform, 1/{graph.n}")
    ax.set_xticks(x, graph.labels)
    ax.set_ylabel("share of the total")
    ax.legend(frameon=False, fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=1)
    if title:
        ax.set_title(title)
    return finish(ax.figure, own)


def plot_fiedler_vector(graph, u, groups, ax=None, *, title: str | None = None):
    """Bars of the Fiedler vector u, one per node, coloured by the community its sign gives."""
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(3.7, 2.5))
    colors = np.where(np.asarray(groups) == 0, "tab:blue", "tab:orange")
    ax.bar(range(graph.n), u, color=colors)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(range(graph.n), graph.labels)
    ax.set_ylabel(r"Fiedler vector $\hat u_i$")
    if title:
        ax.set_title(title)
    return finish(ax.figure, own)


def plot_head_graphs(heads, titles):
    """Head by head, one above the other: its attention graph, then its heatmap (a multigraph, head by
    head, a phone's column wide); the legend of the arrows under each graph."""
    h = len(heads)
    fig, axes = plt.subplots(2 * h, 1, figsize=(3.7, 6.0 * h), gridspec_kw={"height_ratios": [1.15, 1] * h})
    top = max(float(g.W.max()) for g in heads)  # the heads share one colour scale
    for k, (graph, name) in enumerate(zip(heads, titles)):
        plot_attention_graph(graph, ax=axes[2 * k], fontsize=10, title=name)
        plot_heatmap(graph, ax=axes[2 * k + 1], vmax=top)
    return finish(fig)


def plot_rollout_layers(layers, rollouts: dict):
    """Left column: heatmaps of W⁽¹⁾ … W⁽ᴸ⁾, top to bottom. Right column: each rollout of ``rollouts``
    (title → graph). A phone's column wide: the nodes by initial on the axes."""
    L = len(layers)
    rows = max(L, len(rollouts))
    fig, axes = plt.subplots(rows, 2, figsize=(3.7, 2.1 * rows + 0.2), squeeze=False)
    axes = axes.T  # axes[0]: the layers, axes[1]: the rollouts
    top = max(float(g.W.max()) for g in list(layers) + list(rollouts.values()))  # one scale for all
    for k, g in enumerate(layers, 1):
        plot_heatmap(g, ax=axes[0, k - 1], title=f"layer {k}: $W^{{({k})}}$", fmt=short_weight, vmax=top)
    for ax, (name, g) in zip(axes[1], rollouts.items()):
        plot_heatmap(g, ax=ax, title=name, fmt=short_weight, cmap="Purples", vmax=top)
    for ax in axes[1, len(rollouts):]:
        ax.axis("off")
    initials = [str(label)[0] for label in layers[0].labels]
    for ax in axes.ravel():
        ax.set_xticks(range(len(initials)), initials)
        ax.set_yticks(range(len(initials)), initials)
        ax.set_xlabel("key j", fontsize=9)
        ax.set_ylabel("query i", fontsize=9)
        ax.tick_params(labelsize=9)
        ax.title.set_fontsize(9)
    return finish(fig)
