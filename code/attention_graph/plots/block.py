"""The figures of the chapter ``book/block.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Circle

from .style import finish


def plot_block_graph(W, labels):
    """The Transformer block as one graph layer, for n tokens (one head's weights ``W``, (n, n)).

    Bottom row: the inputs x_j. Middle row: x'_i = x_i + Σ_j W_ij (x_j W_V W_O), the rows of the
    page's X' (drawn "x'", not "h", the head index), attention arrows from every j to i (width by
    W_ij) and the residual as a straight dashed self-loop x_i → x'_i. Top row:
    y_i = x'_i + FFN(x'_i), the same small network on every node, with its own residual.
    """
    W = np.asarray(W, dtype=float)  # (n, n)
    n = W.shape[0]
    fig, ax = plt.subplots(figsize=(5.6, 5.4))
    xs = np.arange(n) * 1.5  # (n,)
    rows = {"x": 0.0, "h": 2.2, "y": 4.0}
    top = max(float(W.max()), 1e-12)
    for i in range(n):
        for j in range(n):
            if i == j or W[i, j] <= 0:
                continue
            ax.annotate("", xy=(xs[i], rows["h"] - 0.28), xytext=(xs[j], rows["x"] + 0.28),
                        arrowprops=dict(arrowstyle="-|>", color="tab:blue", alpha=0.25 + 0.75 * W[i, j] / top,
                                        lw=0.6 + 3.5 * W[i, j] / top, shrinkA=0, shrinkB=0))
        # the attention's own self-loop W_ii competes in the softmax; the residual does not
        ax.annotate("", xy=(xs[i] - 0.12, rows["h"] - 0.28), xytext=(xs[i] - 0.12, rows["x"] + 0.28),
                    arrowprops=dict(arrowstyle="-|>", color="tab:blue", alpha=0.25 + 0.75 * W[i, i] / top,
                                    lw=0.6 + 3.5 * W[i, i] / top, shrinkA=0, shrinkB=0))
        ax.annotate("", xy=(xs[i] + 0.16, rows["h"] - 0.28), xytext=(xs[i] + 0.16, rows["x"] + 0.28),
                    arrowprops=dict(arrowstyle="-|>", color="black", ls="--", lw=1.4, shrinkA=0, shrinkB=0))
        ax.add_patch(plt.Rectangle((xs[i] - 0.42, 2.9), 0.84, 0.42, fc="tab:green", alpha=0.25,
                                   ec="tab:green"))
        ax.text(xs[i], 3.11, "FFN", ha="center", va="center", fontsize=9)
        ax.annotate("", xy=(xs[i], 2.9), xytext=(xs[i], rows["h"] + 0.28),
                    arrowprops=dict(arrowstyle="-", color="tab:green", lw=1.4, shrinkA=0, shrinkB=0))
        ax.annotate("", xy=(xs[i], rows["y"] - 0.28), xytext=(xs[i], 3.32),
                    arrowprops=dict(arrowstyle="-|>", color="tab:green", lw=1.4, shrinkA=0, shrinkB=0))
        ax.annotate("", xy=(xs[i] + 0.5, rows["y"] - 0.2), xytext=(xs[i] + 0.5, rows["h"] + 0.2),
                    arrowprops=dict(arrowstyle="-|>", color="black", ls="--", lw=1.0,
                                    connectionstyle="arc3,rad=-0.3", shrinkA=0, shrinkB=0))
        for key, y in rows.items():
            ax.add_patch(Circle((xs[i], y), 0.28, fc="white", ec="black", zorder=3))
            ax.text(xs[i], y, {"h": "$x'$"}.get(key, f"${key}$"), ha="center", va="center", fontsize=11,
                    zorder=4)
        ax.text(xs[i], -0.55, labels[i], ha="center", va="top", fontsize=10)
    ax.text(xs[-1] + 0.95, 1.1, "attention:\nmessages\nfrom j to i", fontsize=9, va="center", color="tab:blue")
    ax.text(xs[-1] + 0.95, 3.1, "node-wise\nupdate", fontsize=9, va="center", color="tab:green")
    ax.plot([], [], "--", color="black", label="residual: a self-loop outside the softmax")
    ax.plot([], [], "-", color="tab:blue", label="attention edge, width by $W_{ij}$")
    ax.legend(frameon=False, fontsize=9, loc="upper center", bbox_to_anchor=(0.5, 0.02), ncol=1)
    ax.set_xlim(-0.7, xs[-1] + 2.4)
    ax.set_ylim(-1.0, 4.5)
    ax.set_aspect("equal")
    ax.axis("off")
    return finish(fig)
