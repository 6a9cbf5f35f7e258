"""The figures of the chapter ``book/graph.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from .graphs import plot_heatmap
from .style import COLUMN, finish

WEIGHTS_CMAP = "Blues"  # every model's weights, as every heatmap of weights in the book
MASK_CMAP = "Greys"  # a 0/1 mask, not weights, as the masks of book/patterns.md
MASK_TITLE = "not a model: the mask $A + I$ (1 = edge)"
PANEL_HEIGHT = 1.95  # inches a panel: title, four rows of 10 pt numbers, the names and the x label
KEY_HEIGHT = 3.7  # inches: the key figure, about as tall as the chapter's summary beside it at 1280 px
FRAME_COLOR = "black"  # a cell of the fixed graph's A + I, framed as the mask panel's 1s are black


def plot_model_adjacencies(models: dict, structure=None):
    """One heatmap panel per model's graph (:func:`attention_graph.graph.five_models`), stacked in
    one column a phone's column wide, each weight printed with two decimals ("0.50").

    ``models`` maps a name to (Y, AttentionGraph); the models share one colour scale, in
    :data:`WEIGHTS_CMAP`, whose colour bar heads the column. ``structure``, an AttentionGraph of the
    fixed graph's 0/1 mask, adds a last panel in :data:`MASK_CMAP`, titled :data:`MASK_TITLE`: it
    holds no weights, and its title is its key.
    """
    top = max(float(graph.W.max()) for _, graph in models.values())  # one colour scale for the models
    panels = [(name, graph, "{:.2f}", WEIGHTS_CMAP, top) for name, (_, graph) in models.items()]
    if structure is not None:
        panels.append((MASK_TITLE, structure, "{:.0f}", MASK_CMAP, 1.0))
    fig, axes = plt.subplots(len(panels) + 1, 1, figsize=(COLUMN, PANEL_HEIGHT * len(panels) + 0.6),
                             gridspec_kw={"height_ratios": [0.05] + [1.0] * len(panels)})
    bar_ax, axes = axes[0], axes[1:]
    for ax, (name, graph, fmt, cmap, vmax) in zip(axes, panels):
        plot_heatmap(graph, ax=ax, title=name, fmt=fmt, cmap=cmap, vmax=vmax)
        ax.set_aspect("auto")  # cells as wide as the column allows, so the rows can be low
        ax.set_title(name, fontsize=10)
        ax.tick_params(labelsize=9)
        ax.set_xlabel("j: sends", fontsize=9, labelpad=1)
        ax.set_ylabel("i: receives", fontsize=9)
    bar = fig.colorbar(axes[0].images[0], cax=bar_ax, orientation="horizontal")
    bar.ax.tick_params(labelsize=9)
    bar.ax.set_title(f"weight $W_{{ij}}$, one scale for the {len(models)} models", fontsize=9)
    return finish(fig)


def plot_complete_over_path(models: dict, structure, name: str = "attention"):
    """The chapter's key figure: the weights of ``models[name]`` (attention on the complete graph) as
    one heatmap, on the colour scale :func:`plot_model_adjacencies` gives the models, with every cell
    of the fixed graph's mask ``structure`` (an AttentionGraph of A + I) framed in :data:`FRAME_COLOR`:
    the only cells the graph models fill.
    """
    if name not in models:
        raise ValueError(f"name must be one of the models {sorted(models)}; got {name!r}")
    top = max(float(graph.W.max()) for _, graph in models.values())  # the scale of plot_model_adjacencies
    _, graph = models[name]
    fig, ax = plt.subplots(figsize=(COLUMN, KEY_HEIGHT))
    plot_heatmap(graph, ax=ax, fmt="{:.2f}", cmap=WEIGHTS_CMAP, vmax=top)
    ax.set_aspect("auto")  # cells as wide as the column allows
    for i, j in np.argwhere(np.asarray(structure.W) > 0):  # (edges, 2): row, column of each cell of A + I
        ax.add_patch(Rectangle((j - 0.44, i - 0.44), 0.88, 0.88, fill=False, edgecolor=FRAME_COLOR,
                               linewidth=1.8))
    ax.set_title(f"{name}: every cell filled\nframed: $A + I$, the path and self-loops", fontsize=10)
    ax.tick_params(labelsize=9)
    ax.set_xlabel("j: sends", fontsize=9, labelpad=1)
    ax.set_ylabel("i: receives", fontsize=9)
    return finish(fig)
