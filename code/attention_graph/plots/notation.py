"""The figures of the chapter ``book/notation.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt

from .graphs import plot_attention_graph, plot_heatmap
from .style import finish


def plot_orientation(graph):
    """W_ij two ways, stacked for a narrow page: the heatmap (row i receives, column j sends) above
    the graph it is the adjacency of, where the weight W_ij is the arrow from j to i, carrying v_j."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(3.6, 7.0), gridspec_kw={"height_ratios": [1, 1.1]})
    plot_heatmap(graph, top, fmt="{:.1f}", fontsize=10, title="$W_{ij}$: row $i$, column $j$")
    plot_attention_graph(graph, bottom, show_weights=True, fmt="{:.1f}", node_radius=0.2, fontsize=10,
                         title="the same weights as arrows")
    return finish(fig)
