"""The figures of the chapter ``book/karate.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Circle

from .style import finish


def plot_laplacian_spectra(spectra: dict, ax=None, *, title: str | None = None):
    """Eigenvalues of I − W in the complex plane (name → complex array), inside the disc |λ − 1| ≤ 1."""
    own = ax is None
    if own:
        fig, (ax, ax_zoom) = plt.subplots(2, 1, figsize=(3.7, 7.2), gridspec_kw={"height_ratios": [1.1, 1]})
    ax.add_patch(Circle((1.0, 0.0), 1.0, fill=False, ls="--", color="grey", lw=1))
    markers = "ox^sd"
    top = max(max(float(np.abs(np.asarray(lam).imag).max()) for lam in spectra.values()), 1e-12)
    for k, (name, lam) in enumerate(spectra.items()):
        lam = np.asarray(lam, dtype=complex)  # (n,)
        for a in ((ax, ax_zoom) if own else (ax,)):
            a.plot(lam.real, lam.imag, markers[k % len(markers)], ms=6, alpha=0.8, label=name,
                   mfc="none" if k else None)
    ax.axhline(0, color="grey", lw=0.5)
    ax.axvline(0, color="grey", lw=0.5)
    ax.set_xlim(-0.1, 2.1)
    ax.set_ylim(-1.05, 1.05)
    ax.set_aspect("equal")
    ax.set_xlabel(r"Re $\lambda$")
    ax.set_ylabel(r"Im $\lambda$")
    ax.set_title("the disc $|\\lambda - 1| \\leq 1$", fontsize=10)
    if own:
        ax_zoom.axhline(0, color="grey", lw=0.5)
        ax_zoom.set_ylim(-1.3 * top, 1.3 * top)
        ax_zoom.set_xlabel(r"Re $\lambda$")
        ax_zoom.set_title("the same, imaginary axis magnified", fontsize=10)
        fig.legend(*ax.get_legend_handles_labels(), frameon=False, fontsize=9, ncol=1,
                   loc="lower center", bbox_to_anchor=(0.5, 0.0))
        fig.tight_layout(rect=(0, 0.06 * len(spectra), 1, 1))
        plt.close(fig)
        return finish(fig, own=False)
    if title:
        ax.set_title(title)
    return finish(ax.figure, own)


def plot_club_split(graph, groups, pos, ax=None, *, title: str | None = None, wrong=None, names=None):
    """The club: an edge per friendship, as wide as the mutual attention (W + Wᵀ)/2; nodes by group.

    ``groups`` colours the nodes (0 blue, 1 orange); nodes listed in ``wrong`` (code indices) get a
    thick red ring. ``names`` labels the nodes (the book's members 1…n); ``graph.labels`` by default.
    """
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(3.7, 3.9))
    pos = np.asarray(pos, dtype=float)  # (n, 2)
    A_s = (graph.W + graph.W.T) / 2  # (n, n)
    top = max(float(A_s[~np.eye(graph.n, dtype=bool)].max()), 1e-12)
    for i, j in zip(*np.nonzero(np.triu(A_s, k=1))):
        ax.plot(*pos[[i, j]].T, color="grey", lw=0.3 + 4.0 * A_s[i, j] / top, alpha=0.6, zorder=1)
    colors = np.where(np.asarray(groups) == 0, "tab:blue", "tab:orange")
    ax.scatter(pos[:, 0], pos[:, 1], s=190, c=colors, edgecolors="black", linewidths=0.6, zorder=2)
    if wrong is not None and len(wrong):
        w = np.asarray(wrong, dtype=int)
        ax.scatter(pos[w, 0], pos[w, 1], s=380, facecolors="none", edgecolors="red", linewidths=2.2,
                   zorder=3)
    for (x, y), name in zip(pos, graph.labels if names is None else names):
        ax.text(x, y, name, ha="center", va="center", fontsize=9, zorder=4)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10)
    return finish(ax.figure, own)


def plot_seed_sweep(scores, *, baseline: float, random_q95: float, ax=None):
    """ARI of the communities for each seed (dots), the mask-only baseline and a random split's 95th
    percentile (lines)."""
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(3.7, 3.0))
    scores = np.asarray(scores, dtype=float)  # (n_seeds,)
    ax.plot(np.arange(len(scores)), scores, "o", label="attention graph, one seed each")
    ax.axhline(baseline, color="tab:green", ls="--", label="uniform attention on the same mask")
    ax.axhline(random_q95, color="tab:red", ls=":", label="random split, 95th percentile")
    ax.set_xlabel("seed of the projections")
    ax.set_ylabel("adjusted Rand index")
    ax.set_xticks(range(0, len(scores), 2 if len(scores) > 10 else 1))
    ax.set_ylim(min(-0.05, scores.min() - 0.05), 1.05)
    ax.legend(frameon=False, fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=1)
    return finish(ax.figure, own)


def plot_pagerank_vs_degree(degree, rank, labels, ax=None, *, top: int = 3):
    """PageRank of the attention graph against the degree of each member; the ``top`` ranked named."""
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(3.7, 3.0))
    degree, rank = np.asarray(degree, dtype=float), np.asarray(rank, dtype=float)  # (n,), (n,)
    ax.plot(degree, rank, "o", alpha=0.7)
    for i in np.argsort(-rank)[:top]:
        ax.annotate(f"member {labels[i]}", (degree[i], rank[i]), textcoords="offset points",
                    xytext=(-6, 6), ha="right", fontsize=9)
    ax.set_xlabel("degree (number of friends)")
    ax.set_ylabel("PageRank of the attention graph")
    return finish(ax.figure, own)
