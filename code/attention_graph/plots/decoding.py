"""The figures of the chapter ``book/decoding.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch

from .graphs import direction_key
from .style import finish


def plot_decoding_dag(n: int, weights):
    """The causal DAG of n tokens as decoding builds it: arrows j → i (messages flow from key j to
    query i), nodes labelled from 1; the newest token, n (index n − 1), in red with the messages into it, their
    width ∝ ``weights`` (n,)."""
    fig, ax = plt.subplots(figsize=(3.7, 2.6))
    x = np.arange(n, dtype=float)  # (n,)
    w = np.asarray(weights, float)  # (n,)
    for i in range(n - 1):
        for j in range(i):
            ax.add_patch(FancyArrowPatch((x[j], 0), (x[i], 0), connectionstyle=f"arc3,rad={-0.45}",
                                         arrowstyle="-|>", mutation_scale=8, lw=0.6, color="grey", alpha=0.6,
                                         shrinkA=8, shrinkB=8))
    new = n - 1
    for j in range(new):
        ax.add_patch(FancyArrowPatch((x[j], 0), (x[new], 0), connectionstyle="arc3,rad=0.45", arrowstyle="-|>",
                                     mutation_scale=10, lw=0.6 + 5 * w[j] / w.max(), color="tab:red",
                                     shrinkA=8, shrinkB=8))
    ax.scatter(x[:-1], np.zeros(n - 1), s=190, color="white", edgecolors="black", zorder=3)
    ax.scatter([x[new]], [0], s=220, color="tab:red", edgecolors="black", zorder=3)
    for i in range(n):
        ax.text(x[i], 0, str(i + 1), ha="center", va="center", fontsize=8, zorder=4,
                color="white" if i == new else "black")
    ax.text(x[new], 0.35, f"self-loop weight {w[new]:.2f}", ha="center", fontsize=8, color="tab:red")
    ax.set_xlim(-0.7, n - 0.3)
    ax.set_ylim(-1.45 * (n - 1) / 5 - 0.3, 1.45 * (n - 1) / 5 + 0.3)
    ax.axis("off")
    direction_key(ax, y=0.0)
    return finish(fig)
