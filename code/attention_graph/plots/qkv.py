"""The figures of the chapter ``book/qkv.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Circle

from .graphs import direction_key
from .style import QKV_COLORS, finish


def _vector(ax, xy, values, color, name, *, cell: float = 0.7, fontsize: float = 10.5):
    """One row vector drawn as a strip of cells, each holding its entry, its name to the left."""
    x0, y0 = xy
    for c, value in enumerate(values):
        ax.add_patch(plt.Rectangle((x0 + c * cell, y0 - cell / 2), cell, cell, fc=color, alpha=0.18,
                                   ec=color, lw=1.2))
        ax.text(x0 + (c + 0.5) * cell, y0, f"{value:.2f}".replace("-", "−"), ha="center", va="center",
                fontsize=fontsize - 2)
    ax.text(x0 - 0.1, y0, name, ha="right", va="center", fontsize=fontsize, color=color)
    return x0 + len(values) * cell  # the right end of the strip


def plot_qkv(X, W_Q, W_K, W_V, labels, i: int):
    """Top: one input row x_i becomes three vectors q_i, k_i, v_i. Bottom: q_i meets every key.

    ``X`` is (n, d_model); the projections as in :func:`attention_graph.project`. The bottom panel
    draws each key k_j as a node with an arrow from j to i, the way j's value will flow, labelled
    with the score q_i · k_j / √d.
    """
    X = np.asarray(X, dtype=float)  # (n, d_model)
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # (n, d), (n, d), (n, d_v)
    S = Q @ K.T / np.sqrt(Q.shape[1])  # (n, n)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(3.7, 5.6), gridspec_kw={"height_ratios": [1, 1.35]})
    end = _vector(top, (-0.1, 1.0), X[i], QKV_COLORS["x"], "$x_i$")
    start, stop = np.array([end + 0.05, 1.0]), 2.5  # (2,): the three arrows leave x_i's right end together
    for y, key, M, name in ((1.8, "q", Q, "$q_i$"), (1.0, "k", K, "$k_i$"), (0.2, "v", V, "$v_i$")):
        top.annotate("", xy=(stop, y), xytext=start,
                     arrowprops=dict(arrowstyle="-|>", color=QKV_COLORS[key], lw=1.5))
        # each matrix's name off its arrow, on the side away from the other two: W_Q above-left of the
        # rising arrow, W_V below-left of the falling one, W_K above the level one near its head
        along = np.array([stop, y]) - start  # (2,)
        away = np.array([-along[1], along[0]]) / np.linalg.norm(along)  # (2,): to the arrow's left
        at = {"q": start + 0.5 * along + 0.2 * away, "k": start + 0.72 * along + np.array([0.0, 0.2]),
              "v": start + 0.5 * along - 0.2 * away}[key]  # (2,)
        top.text(*at, f"$W_{key.upper()}$", color=QKV_COLORS[key], ha="center", va="center", fontsize=10)
        _vector(top, (3.0, y), M[i], QKV_COLORS[key], name)
    top.set_xlim(-0.6, 5.15)
    top.set_ylim(-0.2, 2.2)
    top.axis("off")
    top.set_title(f"one row, three vectors: {labels[i]}", fontsize=11)
    n = X.shape[0]
    others = [j for j in range(n)]
    angles = np.pi / 2 - 2 * np.pi * np.arange(n) / n  # (n,)
    pos = np.column_stack([np.cos(angles), np.sin(angles)]) * 1.6  # (n, 2), keys on a circle
    rim_k, rim_q = 1.6 - 0.4, 0.4  # the arrow runs from key j's rim to the query's
    for j in others:
        out = pos[j] / 1.6  # (2,): the unit vector from the query to key j
        tail, head = rim_k * out, (rim_q + 0.02) * out  # (2,), (2,): from key j towards the query
        bottom.annotate("", xy=head, xytext=tail,
                        arrowprops=dict(arrowstyle="-|>", color=QKV_COLORS["k"], lw=1.4, shrinkA=0, shrinkB=0))
        # the score beside its arrow, halfway, always on the same turning side, clear of both circles
        side = np.array([-out[1], out[0]])  # (2,): a quarter turn from the arrow
        at = 0.5 * (rim_k + rim_q) * out + (0.1 + 0.28 * abs(side[0]) + 0.2 * abs(side[1])) * side  # (2,)
        bottom.text(*at, f"{S[i, j]:.2f}".replace("-", "−"), ha="center", va="center", fontsize=11,
                    color="black")
        bottom.add_patch(Circle(pos[j], 0.4, fc="white", ec=QKV_COLORS["k"], lw=1.5))
        bottom.text(*pos[j], f"$k$\n{labels[j]}", ha="center", va="center", fontsize=10)
    bottom.add_patch(Circle((0, 0), 0.4, fc="white", ec=QKV_COLORS["q"], lw=2))
    bottom.text(0, 0, f"$q$\n{labels[i]}", ha="center", va="center", fontsize=10)
    bottom.set_xlim(-2.05, 2.05)
    bottom.set_ylim(-2.05, 2.05)
    bottom.set_aspect("equal")
    bottom.axis("off")
    bottom.set_title(r"the query meets every key: $q \cdot k_j/\sqrt{d}$", fontsize=11)
    direction_key(bottom, carries="$S_{ij}$", says="the score; $v_j$ will flow from $j$ to $i$",
                  color=QKV_COLORS["k"])
    return finish(fig)
