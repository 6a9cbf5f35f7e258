"""The figures of the chapter ``book/notation.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

from ..validation import as_matrix
from .graphs import plot_attention_graph, plot_heatmap
from .style import COLUMN, finish


def plot_people(X, labels):
    """Each row x_i of X as an arrow from the origin to its point of the plane, named and with its two numbers.

    ``X`` is (n, 2), ``labels`` names its rows. Each row keeps its colour of the worked example's
    plane (the colour cycle, in row order) and the open circle of an input x_i.
    """
    X = as_matrix(X, "X", shape_doc="(n, 2)")  # (n, 2)
    labels = [str(x) for x in labels]
    if X.shape[1] != 2:
        raise ValueError(f"X must have shape (n, 2), one point of the plane a row; got {X.shape}")
    if len(labels) != X.shape[0]:
        raise ValueError(f"labels must name the {X.shape[0]} rows; got {len(labels)} labels")
    lo = np.minimum(X.min(axis=0), 0.0) - 0.5  # (2,): the origin and every point in view
    hi = np.maximum(X.max(axis=0), 0.0) + np.array([1.4, 0.5])  # (2,): room for the names on the right
    span = hi - lo  # (2,)
    axes_width = COLUMN - 0.75  # inches left for the axes beside the tick labels
    fig, ax = plt.subplots(figsize=(COLUMN, axes_width * span[1] / span[0] + 0.95))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    ax.axhline(0, color="0.85", lw=0.8, zorder=0)
    ax.axvline(0, color="0.85", lw=0.8, zorder=0)
    for k, ((x, y), name) in enumerate(zip(X, labels)):
        color = colors[k % len(colors)]
        ax.annotate("", xy=(x, y), xytext=(0, 0),
                    arrowprops=dict(arrowstyle="-|>", color=color, lw=1.4, shrinkA=0, shrinkB=5))
        ax.plot([x], [y], "o", mfc="white", mec=color, mew=1.6, ms=9, zorder=3)
        numbers = f"({x:g}, {y:g})".replace("-", "−")
        ax.annotate(f"{name}\n$x_{k + 1}$ = {numbers}", (x, y), xytext=(9, 0), textcoords="offset points",
                    ha="left", va="center", color=color, fontsize=9)
    ax.plot([0], [0], "o", color="0.35", ms=3, zorder=3)
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect("equal")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("first number")
    ax.set_ylabel("second number")
    ax.set_title("each row of $X$ is a point")
    return finish(fig)


def plot_orientation(graph):
    """W_ij two ways, stacked for a narrow page: the heatmap (row i receives, column j sends) above
    the graph it is the adjacency of, where the weight W_ij is the arrow from j to i, carrying v_j."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(3.6, 7.0), gridspec_kw={"height_ratios": [1, 1.1]})
    plot_heatmap(graph, top, fmt="{:.1f}", fontsize=10, title="$W_{ij}$: row $i$, column $j$")
    plot_attention_graph(graph, bottom, show_weights=True, fmt="{:.1f}", node_radius=0.2, fontsize=10,
                         title="the same weights as arrows")
    return finish(fig)
