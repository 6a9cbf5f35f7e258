"""The figures of the chapter ``book/worked_example.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..validation import as_matrix
from .style import finish


def plot_plane_movement(X, Y, labels, ax=None, *, title: str | None = None):
    """The plane of a 2-d attention layer: each row's arrow from x_i to y_i, and the mean of the x_i.

    ``X`` and ``Y`` are (n, 2): the inputs and the outputs Y = W V of the layer (V = X for the
    worked example). Open circles are the inputs, filled dots the outputs; the cross is x̄.
    """
    X = as_matrix(X, "X", shape_doc="(n, 2)")  # (n, 2)
    Y = as_matrix(Y, "Y", shape_doc="(n, 2)")  # (n, 2)
    labels = [str(x) for x in labels]
    if X.shape != Y.shape or X.shape[1] != 2:
        raise ValueError(f"X and Y must both have shape (n, 2); got {X.shape} and {Y.shape}")
    if len(labels) != X.shape[0]:
        raise ValueError(f"labels must name the {X.shape[0]} rows; got {len(labels)} labels")
    lo = np.minimum(X.min(axis=0), Y.min(axis=0)) - 0.4  # (2,)
    hi = np.maximum(X.max(axis=0), Y.max(axis=0)) + 0.4  # (2,)
    own = ax is None
    if own:
        span = hi - lo  # (2,)
        width = 2.8  # the axes; with its labels the figure is a phone's column wide
        fig, ax = plt.subplots(figsize=(width + 0.9, min(max(width * span[1] / span[0], 2.0), 5.0) + 0.8))
    mean = X.mean(axis=0)  # (2,)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, ((x, y), (xn, yn), name) in enumerate(zip(X, Y, labels)):
        color = colors[k % len(colors)]
        ax.annotate("", xy=(xn, yn), xytext=(x, y),
                    arrowprops=dict(arrowstyle="-|>", color=color, lw=1.6, shrinkA=5, shrinkB=4))
        ax.plot([x], [y], "o", mfc="white", mec=color, mew=1.6, ms=9, zorder=3)
        ax.plot([xn], [yn], "o", color=color, ms=6, zorder=3)
        away = np.array([x, y]) - mean  # (2,)
        away = away / (np.linalg.norm(away) or 1.0)
        ax.annotate(name, (x, y), xytext=12 * away, textcoords="offset points",
                    ha="center", va="center", color=color, fontsize=10)
    ax.plot([mean[0]], [mean[1]], "X", color="black", ms=9, zorder=4, label=r"mean $\bar{x}$")
    ax.plot([], [], "o", mfc="white", mec="grey", label="input $x_i$")
    ax.plot([], [], "o", color="grey", ms=6, label="output $y_i$")
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect("equal")
    ax.axhline(0, color="0.85", lw=0.8, zorder=0)
    ax.axvline(0, color="0.85", lw=0.8, zorder=0)
    ax.set_xlabel("first coordinate")
    ax.set_ylabel("second coordinate")
    ax.legend(frameon=False, loc="lower left", fontsize=9)
    if title:
        ax.set_title(title)
    return finish(ax.figure, own)
