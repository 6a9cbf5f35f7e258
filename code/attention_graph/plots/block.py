"""The figures of the chapter ``book/block.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Circle

from .graphs import direction_key
from .style import finish


def plot_block_graph(W, labels):
    """The pre-LN Transformer block as one graph layer, for n tokens (one head's weights ``W``, (n, n)).

    Bottom row: the inputs x_j, each normalised on its own (LN, purple) before the attention reads it.
    Middle row: x'_i = x_i + Σ_j W_ij (LN(x)_j W_V W_O), the rows of the page's X' (drawn "x'", not
    "h", the head index), attention arrows from every j to i (width by W_ij) and the residual as a
    dashed self-loop x_i → x'_i that bypasses both. Top row: y_i = x'_i + FFN(LN(x'_i)), the same
    small network on every node, with its own residual. Drawn a phone's column wide.
    """
    W = np.asarray(W, dtype=float)  # (n, n)
    n = W.shape[0]
    fig, ax = plt.subplots(figsize=(3.7, 4.3))
    xs = np.arange(n) * 1.3  # (n,)
    rows = {"x": 0.0, "h": 2.6, "y": 4.9}
    r = 0.28
    top = max(float(W.max()), 1e-12)

    def box(x, y, text, color):
        ax.add_patch(plt.Rectangle((x - 0.42, y - 0.2), 0.84, 0.4, fc=color, alpha=0.25, ec=color))
        ax.text(x, y, text, ha="center", va="center", fontsize=8)

    def line(a, b, color, arrow=True, **kw):
        ax.annotate("", xy=b, xytext=a, arrowprops=dict(arrowstyle="-|>" if arrow else "-", color=color,
                                                        shrinkA=0, shrinkB=0, **kw))

    for i in range(n):
        box(xs[i], 0.75, "LN", "tab:purple")
        line((xs[i], r), (xs[i], 0.55), "tab:purple", arrow=False, lw=1.2)
        for j in range(n):  # the attention's own self-loop W_ii competes in the softmax; the residual does not
            if W[i, j] <= 0:
                continue
            shift = -0.12 if i == j else 0.0
            line((xs[j] + shift, 0.95), (xs[i] + shift, rows["h"] - r), "tab:blue",
                 alpha=0.25 + 0.75 * W[i, j] / top, lw=0.6 + 3.5 * W[i, j] / top)
        box(xs[i], 3.35, "LN", "tab:purple")
        box(xs[i], 3.96, "FFN", "tab:green")
        line((xs[i], rows["h"] + r), (xs[i], 3.15), "tab:purple", arrow=False, lw=1.2)
        line((xs[i], 3.55), (xs[i], 3.76), "tab:green", arrow=False, lw=1.2)
        line((xs[i], 4.16), (xs[i], rows["y"] - r), "tab:green", lw=1.4)
        for a, b in (("x", "h"), ("h", "y")):
            line((xs[i] + r, rows[a]), (xs[i] + r, rows[b]), "black", ls="--", lw=1.0,
                 connectionstyle=f"bar,fraction={0.3 / (rows[b] - rows[a])}")  # in the gap beside the boxes
        for key, y in rows.items():
            ax.add_patch(Circle((xs[i], y), r, fc="white", ec="black", zorder=3))
            ax.text(xs[i], y, {"h": "$x'$"}.get(key, f"${key}$"), ha="center", va="center", fontsize=10,
                    zorder=4)
        ax.text(xs[i], -0.45, labels[i], ha="center", va="top", fontsize=9)
    side = xs[-1] + 0.85
    ax.text(side, 1.75, "attention:\nmessages\nfrom j to i", fontsize=8, va="center", color="tab:blue")
    ax.text(side, 3.65, "node-wise\nupdate", fontsize=8, va="center", color="tab:green")
    ax.text(side, 0.75, "node-wise\nLayerNorm", fontsize=8, va="center", color="tab:purple")
    ax.plot([], [], "--", color="black", label="residual: a self-loop outside the softmax")
    ax.plot([], [], "-", color="tab:blue", label="attention edge, width by $W_{ij}$")
    ax.add_patch(plt.Rectangle((0, 0), 0, 0, fc="tab:purple", alpha=0.25, ec="tab:purple",
                               label="LN: LayerNorm of one token (pre-LN)"))
    ax.legend(frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, 0.02), ncol=1)
    ax.set_xlim(-0.6, xs[-1] + 2.1)
    ax.set_ylim(-0.9, 5.3)
    ax.set_aspect("equal")
    ax.axis("off")
    direction_key(ax, y=1.03)
    return finish(fig)
