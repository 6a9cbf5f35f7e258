"""The figures of the chapter ``book/sequence_positions.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np

from .graphs import club_layout
from .style import finish


def plot_offset_kernel(G, offsets, kernel):
    """Top: the Gram matrix PE PEᵀ of the sinusoidal encodings (n, n), positions from 1; bottom: its value
    against i − j."""
    fig, (ax_g, ax_k) = plt.subplots(2, 1, figsize=(3.7, 6.4))
    n = len(G)
    im = ax_g.imshow(G, cmap="viridis", extent=(0.5, n + 0.5, n + 0.5, 0.5))  # positions 1, …, n
    ticks = [1] + [t for t in range(16, n + 1, 16)]  # from 1
    ax_g.set_xticks(ticks)
    ax_g.set_yticks(ticks)
    fig.colorbar(im, ax=ax_g, fraction=0.046, pad=0.04, label=r"$\mathrm{PE}_i \cdot \mathrm{PE}_j$")
    ax_g.set_xlabel("position j")
    ax_g.set_ylabel("position i")
    ax_k.plot(offsets, kernel, "-", color="tab:blue", lw=1.2)
    ax_k.set_xlabel("offset i − j")
    ax_k.set_ylabel(r"$\mathrm{PE}_i \cdot \mathrm{PE}_j$")
    ax_k.axhline(0, color="black", lw=0.5)
    return finish(fig)


def plot_score_panels(panels: dict, *, xlabel="key position j", ylabel="query position i"):
    """Heatmaps of score matrices, one above the other, on one shared colour scale (−∞ entries blank);
    rows and columns are numbered from 1."""
    mats = [np.where(np.isfinite(M), M, np.nan) for M in panels.values()]
    lo = min(float(np.nanmin(M)) for M in mats)
    hi = max(float(np.nanmax(M)) for M in mats)
    fig, axes = plt.subplots(len(panels), 1, figsize=(3.4, 2.9 * len(panels)))
    axes = np.atleast_1d(axes)
    for ax, (title, M) in zip(axes, zip(panels, mats)):
        n_q, n_k = M.shape
        im = ax.imshow(M, cmap="viridis", vmin=lo, vmax=hi, extent=(0.5, n_k + 0.5, n_q + 0.5, 0.5))
        ax.set_xticks(range(1, n_k + 1, 2))
        ax.set_yticks(range(1, n_q + 1, 2))
        ax.set_title(title, fontsize=9)
        ax.set_ylabel(ylabel, fontsize=9)
    axes[-1].set_xlabel(xlabel)
    fig.colorbar(im, ax=list(axes), fraction=0.046, pad=0.04)
    plt.close(fig)  # no tight_layout: it would not leave room for the shared colour bar
    return finish(fig, own=False)


def plot_club_distance_bias(A, weights: dict, query: int, query_name: str):
    """The karate club, each member coloured by the weight query ``query`` (an index, from 0) gives it;
    one panel per entry of ``weights`` (name: (n,) row of W), on one shared colour scale."""
    pos = club_layout()  # (34, 2)
    G = nx.from_numpy_array(np.asarray(A))
    others = np.arange(len(pos)) != query  # (34,): the query's own weight is left out of the scale
    vmax = max(float(np.max(np.asarray(w)[others])) for w in weights.values())
    fig, axes = plt.subplots(len(weights), 1, figsize=(3.3, 3.0 * len(weights)))
    axes = np.atleast_1d(axes)
    for ax, (title, w) in zip(axes, weights.items()):
        nx.draw_networkx_edges(G, {v: pos[v] for v in G.nodes}, ax=ax, width=0.5, alpha=0.4)
        sc = ax.scatter(pos[others, 0], pos[others, 1], c=np.asarray(w)[others], cmap="Blues", vmin=0, vmax=vmax,
                        s=90, edgecolors="black", linewidths=0.5, zorder=3)
        ax.scatter([pos[query, 0]], [pos[query, 1]], s=90, color="white", edgecolors="black", lw=0.5, zorder=3)
        ax.scatter([pos[query, 0]], [pos[query, 1]], s=260, facecolors="none", edgecolors="tab:red", lw=1.6,
                   zorder=4)
        ax.set_title(title, fontsize=9)
        ax.axis("off")
    fig.colorbar(sc, ax=list(axes), fraction=0.03, pad=0.02, label=f"weight {query_name} gives")
    plt.close(fig)  # no tight_layout: it would not leave room for the shared colour bar
    return finish(fig, own=False)
