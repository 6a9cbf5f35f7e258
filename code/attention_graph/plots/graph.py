"""The figures of the chapter ``book/graph.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt

from .graphs import plot_heatmap
from .style import COLUMN, finish

WEIGHTS_CMAP = "Blues"  # every model's weights, as every heatmap of weights in the book
MASK_CMAP = "Greys"  # a 0/1 mask, not weights, as the masks of book/patterns.md
MASK_TITLE = "not a model: the mask $A + I$ (1 = edge)"


def plot_model_adjacencies(models: dict, structure=None):
    """One heatmap panel per model's graph (:func:`attention_graph.graph.five_models`), stacked in
    one column a phone's column wide, each weight printed with two decimals ("0.50").

    ``models`` maps a name to (Y, AttentionGraph); the models share one colour scale, in
    :data:`WEIGHTS_CMAP`. ``structure``, an AttentionGraph of the fixed graph's 0/1 mask, adds a last
    panel in :data:`MASK_CMAP`, titled :data:`MASK_TITLE`: it holds no weights.
    """
    top = max(float(graph.W.max()) for _, graph in models.values())  # one colour scale for the models
    panels = [(name, graph, "{:.2f}", WEIGHTS_CMAP, top) for name, (_, graph) in models.items()]
    if structure is not None:
        panels.append((MASK_TITLE, structure, "{:.0f}", MASK_CMAP, 1.0))
    fig, axes = plt.subplots(len(panels), 1, figsize=(COLUMN, 2.55 * len(panels)), squeeze=False)
    for ax, (name, graph, fmt, cmap, vmax) in zip(axes[:, 0], panels):
        plot_heatmap(graph, ax=ax, title=name, fmt=fmt, cmap=cmap, vmax=vmax)
        ax.set_title(name, fontsize=10)
        ax.tick_params(labelsize=9)
        ax.set_xlabel("j: sends", fontsize=9)
        ax.set_ylabel("i: receives", fontsize=9)
    return finish(fig)
