"""The figures of the chapter ``book/notation.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt

from .graphs import plot_attention_graph, plot_heatmap
from .style import finish


def plot_orientation(graph):
    """W_ij two ways, stacked for a narrow page: the heatmap (row i attends to column j) above
    the graph it is the adjacency of, where the weight W_ij is an arrow from j to i, the way v_j flows."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(4.4, 8.2), gridspec_kw={"height_ratios": [1, 1.1]})
    plot_heatmap(graph, top, fmt="{:.1f}", fontsize=12, title="$W_{ij}$: row $i$ attends to column $j$")
    plot_attention_graph(graph, bottom, show_weights=True, fmt="{:.1f}", node_radius=0.2, fontsize=12,
                         title="the same weights: $v_j$ flows from $j$ to $i$")
    return finish(fig)
