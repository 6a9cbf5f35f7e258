"""The figures of the chapter ``book/attention.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Polygon

from .style import finish


def convex_hull_2d(points):
    """Vertices of the convex hull of 2-d points, counter-clockwise (Andrew's monotone chain). (h, 2)."""
    P = sorted(map(tuple, np.asarray(points, dtype=float)))  # n points, sorted by x then y
    if len(P) <= 2:
        return np.array(P)

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    def chain(pts):
        out = []
        for p in pts:
            while len(out) >= 2 and cross(out[-2], out[-1], p) <= 0:
                out.pop()
            out.append(p)
        return out

    lower, upper = chain(P), chain(P[::-1])
    return np.array(lower[:-1] + upper[:-1])  # (h, 2)


def plot_pull(V, Y, labels=None, ax=None, *, title: str | None = None):
    """Values v_j (dots) with their convex hull (shaded) and outputs y_i (crosses), an arrow v_i → y_i.

    For self-attention in two dimensions: each output lies in the hull of the values, pulled from
    its own value toward the weighted centre of mass of the others.
    """
    V, Y = np.asarray(V, dtype=float), np.asarray(Y, dtype=float)  # (n, 2), (n, 2)
    if V.ndim != 2 or V.shape[1] != 2 or Y.shape != V.shape:
        raise ValueError(f"V and Y must both have shape (n, 2); got {V.shape} and {Y.shape}")
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(3.7, 3.4))
    hull = convex_hull_2d(V)  # (h, 2)
    ax.add_patch(Polygon(hull, closed=True, facecolor="tab:blue", alpha=0.08, edgecolor="tab:blue",
                         lw=1, label="convex hull of the values"))
    ax.plot(V[:, 0], V[:, 1], "o", color="tab:blue", label="value $v_i$")
    ax.plot(Y[:, 0], Y[:, 1], "x", color="tab:red", ms=8, mew=2, label="output $y_i$")
    for v, y in zip(V, Y):
        ax.annotate("", xy=y, xytext=v, arrowprops=dict(arrowstyle="->", color="grey", lw=1))
    if labels is not None:
        for name, v, y in zip(labels, V, Y):
            away = v - y  # (2,): from the output back past the value, so no cross covers the label
            away = away / (np.linalg.norm(away) or 1.0)
            ax.annotate(str(name), v, textcoords="offset points", xytext=11 * away, fontsize=10,
                        ha="center", va="center", zorder=5,
                        bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.8))
    ax.margins(0.16)  # room for the labels of the outermost values, inside the axes
    ax.set_aspect("equal")
    ax.legend(frameon=False, fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=1)  # under the axes
    if title:
        ax.set_title(title)
    return finish(ax.figure, own)
