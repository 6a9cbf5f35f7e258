"""The figures of the chapter ``book/multihead.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt

from .style import finish


def plot_bipartite(W, query_labels, key_labels, ax=None, *, title: str | None = None):
    """Cross-attention as a bipartite graph: queries left, keys right, edge width ∝ W_ij."""
    own = ax is None
    if own:
        _, ax = plt.subplots(figsize=(3.7, 2.8))
    n_q, n_k = len(query_labels), len(key_labels)
    yq = [(n_k - 1) / 2 - i + (n_q - 1) / 2 for i in range(n_q)]
    yk = [n_k - 1 - j for j in range(n_k)]
    for i in range(n_q):
        for j in range(n_k):
            if W[i][j] > 0:
                ax.plot([0, 1], [yq[i], yk[j]], color="tab:blue", lw=0.5 + 6 * float(W[i][j]),
                        alpha=0.7, solid_capstyle="round")
                ax.annotate(f"{float(W[i][j]):.2f}", (0.72, yq[i] + 0.72 * (yk[j] - yq[i])),
                            fontsize=8, ha="center", va="center",
                            bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none"})
    for i, lab in enumerate(query_labels):
        ax.text(-0.05, yq[i], lab, ha="right", va="center")
    for j, lab in enumerate(key_labels):
        ax.text(1.05, yk[j], lab, ha="left", va="center")
    ax.scatter([0] * n_q, yq, s=120, color="tab:orange", zorder=3)
    ax.scatter([1] * n_k, yk, s=120, color="tab:green", zorder=3)
    ax.set_xlim(-0.5, 1.5)
    ax.axis("off")
    if title:
        ax.set_title(title)
    return finish(ax.figure, own)
