"""The figures of the chapter ``book/bottlenecks.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch

from .graphs import direction_key
from .style import FLOOR, finish


def plot_causal_paths(n: int, n_layers: int, counts):
    """The causal graph unrolled over L layers: positions left to right, layer l above layer l − 1,
    an arrow from token j of layer l − 1 to token i ≥ j of layer l, with the book's legend of the arrows. Each input
    token is labelled with its number of paths to the last token of the top layer, ``counts`` (n,)."""
    fig, ax = plt.subplots(figsize=(min(0.6 * n + 0.9, 3.7), 0.75 * n_layers + 1.1))
    for layer in range(1, n_layers + 1):
        for i in range(n):
            for j in range(i + 1):
                ax.add_patch(FancyArrowPatch((j, layer - 1), (i, layer), arrowstyle="-|>", mutation_scale=7,
                                             lw=0.7, color="tab:blue", alpha=0.55, shrinkA=7, shrinkB=7))
    for layer in range(n_layers + 1):
        ax.scatter(range(n), [layer] * n, s=110, color="white", edgecolor="black", zorder=3)
    ax.scatter([n - 1], [n_layers], s=110, color="tab:orange", edgecolor="black", zorder=4)
    for j, c in enumerate(counts):
        ax.text(j, -0.42, str(int(c)), ha="center", va="top", fontsize=9, color="tab:red")
    ax.set_xticks(range(n), [f"${j + 1}$" for j in range(n)])
    ax.set_xlabel("input token $j$")
    ax.set_yticks(range(n_layers + 1), ["input"] + [f"layer {layer}" for layer in range(1, n_layers + 1)])
    ax.set_xlim(-0.6, n - 0.4)
    ax.set_ylim(-0.9, n_layers + 0.4)
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.tick_params(length=0)
    direction_key(ax, y=1.06)
    return finish(fig)


def plot_sensitivity(study: dict):
    """Per depth L, the share of the last token's sensitivity ‖∂y_n/∂x_j‖ that each input token j
    holds (median over the seeds, range as a band), against the path share and the uniform walk's
    share; one shared scale across panels."""
    depths = list(study["by_depth"])
    cols = 1  # stacked: a phone shows each panel at its own size
    rows = -(-len(depths) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.7, 2.3 * rows + 0.4), sharex=True, sharey=True,
                             squeeze=False)
    for ax in axes.flat[len(depths):]:
        ax.axis("off")
    for ax, L in zip(axes.flat, depths):
        row = study["by_depth"][L]
        j = np.arange(1, len(row["path_share"]) + 1)  # (n,)
        S = np.maximum(np.array(row["sensitivity_share"]), FLOOR)  # (seeds, n)
        ax.fill_between(j, S.min(axis=0), S.max(axis=0), color="tab:blue", alpha=0.2, lw=0)
        ax.semilogy(j, np.median(S, axis=0), "o-", ms=3, color="tab:blue", label="measured")
        ax.semilogy(j, np.maximum(row["walk_share"], FLOOR), "--", color="tab:orange", label="uniform causal walk")
        ax.semilogy(j, np.maximum(row["path_share"], FLOOR), ":", color="black", label="share of paths")
        ax.set_title(f"$T = {L}$")
        ax.set_ylim(1e-10, 1.5)
    for ax in axes[-1, :]:
        ax.set_xlabel("input token $j$")
    for ax in axes[:, 0]:
        ax.set_ylabel(r"share of $\|\partial y_n / \partial x_j\|$")
    axes[0, 0].legend(frameon=False, fontsize=8)
    return finish(fig)
