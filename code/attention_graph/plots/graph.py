"""The figures of the chapter ``book/graph.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt

from .graphs import plot_heatmap, short_weight
from .style import finish


def plot_model_adjacencies(models: dict, structure=None):
    """One heatmap panel per model's graph (:func:`attention_graph.graph.five_models`), 3 × 2 grid,
    a phone's column wide (two decimals a cell, without the leading zero).

    ``models`` maps a name to (Y, AttentionGraph). ``structure``, an AttentionGraph of the fixed
    graph, fills the last panel when there are five models; otherwise that panel is left empty.
    """
    fig, axes = plt.subplots(3, 2, figsize=(3.7, 6.4))
    top = max(float(graph.W.max()) for _, graph in models.values())  # one colour scale for the models
    panels = [(name, graph, short_weight, "Blues", top) for name, (_, graph) in models.items()]
    if structure is not None:
        panels.append(("the fixed graph: $A + I$", structure, "{:.0f}", "Oranges", None))
    for ax, (name, graph, fmt, cmap, vmax) in zip(axes.flat, panels):
        plot_heatmap(graph, ax=ax, title=name, fmt=fmt, cmap=cmap, vmax=vmax)
        ax.set_title(name, fontsize=9)
        ax.tick_params(labelsize=8)
        ax.tick_params(axis="x", labelrotation=45)
        for label in ax.get_xticklabels():
            label.set_ha("right")
            label.set_rotation_mode("anchor")
        ax.set_xlabel("")
        ax.set_ylabel("")
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax in axes[:, 0]:
        ax.set_ylabel("node i", fontsize=9)
    for ax in axes[-1, :]:
        ax.set_xlabel("node j", fontsize=9)
    return finish(fig)
