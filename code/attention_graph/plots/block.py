"""The figures of the chapter ``book/block.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Circle

from .graphs import direction_key
from .style import finish

BOX_PT = 12  # the LN and FFN boxes' labels: capitals 0.73 of it, 11.7 px tall at the figure's natural size


def plot_block_graph(W, labels, *, norm_first: bool = True):
    """The Transformer block as one graph layer, for n tokens (one head's weights ``W``, (n, n)).

    With ``norm_first`` (pre-LN), bottom row: the inputs x_j, each normalised on its own (LN, purple)
    before the attention reads it. Middle row: x'_i = x_i + Σ_j W_ij (LN(x)_j W_V W_O), the rows of the
    page's X' (drawn "x'", not "h", the head index), attention arrows from every j to i (width by W_ij)
    and the residual as a dashed self-loop x_i → x'_i that bypasses both. Top row:
    y_i = x'_i + FFN(LN(x'_i)), the same small network on every node, with its own residual.
    Without it (post-LN), the attention reads the inputs themselves and each LN comes after its
    residual sum: x'_i = LN(x_i + Σ_j W_ij x_j W_V W_O), y_i = LN(x'_i + FFN(x'_i)); the residuals
    end at the LN boxes. Drawn a phone's column wide.
    """
    W = np.asarray(W, dtype=float)  # (n, n)
    n = W.shape[0]
    fig, ax = plt.subplots(figsize=(3.7, 4.3))
    xs = np.arange(n) * 1.3  # (n,)
    rows = {"x": 0.0, "h": 2.6, "y": 4.9}
    r = 0.28
    top = max(float(W.max()), 1e-12)
    ln_low, upper = (0.75, ("LN", "FFN")) if norm_first else (2.05, ("FFN", "LN"))  # where LN_1 sits, LN_2's order
    colors = {"LN": "tab:purple", "FFN": "tab:green"}

    def box(x, y, text, color):
        ax.add_patch(plt.Rectangle((x - 0.42, y - 0.2), 0.84, 0.4, fc=color, alpha=0.25, ec=color))
        ax.text(x, y, text, ha="center", va="center", fontsize=BOX_PT)

    def line(a, b, color, arrow=True, **kw):
        ax.annotate("", xy=b, xytext=a, arrowprops=dict(arrowstyle="-|>" if arrow else "-", color=color,
                                                        shrinkA=0, shrinkB=0, **kw))

    for i in range(n):
        box(xs[i], ln_low, "LN", "tab:purple")
        if norm_first:  # x → LN → attention → x'
            line((xs[i], r), (xs[i], ln_low - 0.2), "tab:purple", arrow=False, lw=1.2)
            start, end = ln_low + 0.2, rows["h"] - r
        else:  # x → attention → (+ residual) → LN → x'
            line((xs[i], ln_low + 0.2), (xs[i], rows["h"] - r), "tab:purple", lw=1.2)
            start, end = r, ln_low - 0.2
        for j in range(n):  # the attention's own self-loop W_ii competes in the softmax; the residual does not
            if W[i, j] <= 0:
                continue
            shift = -0.12 if i == j else 0.0
            line((xs[j] + shift, start), (xs[i] + shift, end), "tab:blue",
                 alpha=0.25 + 0.75 * W[i, j] / top, lw=0.6 + 3.5 * W[i, j] / top)
        box(xs[i], 3.35, upper[0], colors[upper[0]])
        box(xs[i], 3.96, upper[1], colors[upper[1]])
        line((xs[i], rows["h"] + r), (xs[i], 3.15), colors[upper[0]], arrow=False, lw=1.2)
        line((xs[i], 3.55), (xs[i], 3.76), colors[upper[1]], arrow=False, lw=1.2)
        line((xs[i], 4.16), (xs[i], rows["y"] - r), colors[upper[1]], lw=1.4)
        # the residuals, in the gap beside the boxes: to the next row (pre-LN), or to the LN box (post-LN)
        for a, b in (("x", rows["h"] if norm_first else ln_low), ("h", rows["y"] if norm_first else 3.96)):
            line((xs[i] + r, rows[a]), (xs[i] + r, b), "black", ls="--", lw=1.0,
                 connectionstyle=f"bar,fraction={0.3 / (b - rows[a])}")
        for key, y in rows.items():
            ax.add_patch(Circle((xs[i], y), r, fc="white", ec="black", zorder=3))
            ax.text(xs[i], y, {"h": "$x'$"}.get(key, f"${key}$"), ha="center", va="center", fontsize=10,
                    zorder=4)
        ax.text(xs[i], -0.45, labels[i], ha="center", va="top", fontsize=9)
    side = xs[-1] + 0.85
    # the side labels at 10 pt and the legend at 9 pt, 12 px and more at its natural size: few words each
    ax.text(side, 1.75 if norm_first else 1.1, "attention:\nfrom j to i", fontsize=10, va="center",
            color="tab:blue")
    ax.text(side, 3.65, "update,\nper node", fontsize=10, va="center", color="tab:green")
    ax.text(side, ln_low if norm_first else 2.2, "LN,\nper node", fontsize=10, va="center",
            color="tab:purple")
    ax.plot([], [], "--", color="black", label="residual: a self-loop outside softmax")
    ax.plot([], [], "-", color="tab:blue", label="attention edge, width by $W_{ij}$")
    where = "before attention and FFN (pre-LN)" if norm_first else "after each residual sum (post-LN)"
    ax.add_patch(plt.Rectangle((0, 0), 0, 0, fc="tab:purple", alpha=0.25, ec="tab:purple",
                               label=f"LN {where}"))
    ax.legend(frameon=False, fontsize=9, loc="upper center", bbox_to_anchor=(0.5, 0.02), ncol=1,
              handlelength=1.6, handletextpad=0.5)
    ax.set_xlim(-0.6, xs[-1] + 2.1)
    ax.set_ylim(-0.9, 5.3)
    ax.set_aspect("equal")
    ax.axis("off")
    direction_key(ax, y=1.03)
    return finish(fig)
