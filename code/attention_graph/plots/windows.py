"""The figures of the chapter ``book/windows.md``, drawn from the package's own arrays.

Narrow by design: 3.6 inches wide, panels stacked, text at 9 px or more on a 390 px phone column.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import FancyArrowPatch

from .graphs import direction_key
from .style import finish

_WIDTH = 3.6  # inches: the phone column
_SINK, _WINDOW = "tab:red", "tab:blue"


def plot_window_graph(M, n_sink: int, query: int):
    """Top: the mask M (n, n), the window in blue and the sink columns in red. Bottom: the tokens in a
    row, with the messages into token ``query`` (0-based), from j to i, drawn as arrows."""
    M = np.asarray(M, bool)
    n = M.shape[0]
    fig, (ax_m, ax_g) = plt.subplots(2, 1, figsize=(_WIDTH, 5.2), gridspec_kw={"height_ratios": [3, 1.2]})
    code = np.where(M, 1, 0)  # (n, n)
    code[:, :n_sink] = np.where(M[:, :n_sink], 2, 0)
    ax_m.imshow(code, cmap=ListedColormap(["white", _WINDOW, _SINK]), vmin=0, vmax=2, interpolation="nearest")
    ax_m.set_xticks(range(n), [str(j + 1) if (j + 1) % 2 else "" for j in range(n)], fontsize=9)
    ax_m.set_yticks(range(n), [str(i + 1) if (i + 1) % 2 else "" for i in range(n)], fontsize=9)
    ax_m.set_xlabel("key j (sends)")
    ax_m.set_ylabel("query i (receives)")
    ax_m.set_xticks(np.arange(-0.5, n), minor=True)
    ax_m.set_yticks(np.arange(-0.5, n), minor=True)
    ax_m.grid(which="minor", color="0.8", lw=0.4)
    ax_m.tick_params(which="minor", length=0)
    x = np.arange(n, dtype=float)  # (n,)
    for j in np.flatnonzero(M[query]):
        if j == query:
            continue
        ax_g.add_patch(FancyArrowPatch((x[j], 0), (x[query], 0), connectionstyle="arc3,rad=-0.35",
                                       arrowstyle="-|>", mutation_scale=9, lw=1.1,
                                       color=_SINK if j < n_sink else _WINDOW, shrinkA=6, shrinkB=6))
    colors = [_SINK if j < n_sink else ("white" if not M[query, j] else "#cfe0f3") for j in range(n)]
    ax_g.scatter(x, np.zeros(n), s=110, color=colors, edgecolors="black", lw=0.8, zorder=3)
    for j in range(n):
        ax_g.text(x[j], -0.55, str(j + 1), ha="center", va="center", fontsize=9)
    ax_g.set_xlim(-0.7, n - 0.3)
    ax_g.set_ylim(-0.8, 1.4)
    ax_g.axis("off")
    direction_key(ax_g, y=-0.02)
    return finish(fig)


def plot_window_reach(D, n_sink: int):
    """The hops D[i, j] a message takes from key j to query i (0 on the diagonal; blank where it never arrives)."""
    D = np.asarray(D, float)
    n = D.shape[0]
    shown = np.where(D >= 0, D, np.nan)  # (n, n)
    fig, ax = plt.subplots(figsize=(_WIDTH, 3.4))
    im = ax.imshow(shown, cmap="viridis_r", interpolation="nearest")
    ax.set_xticks(range(0, n, 3), [str(j + 1) for j in range(0, n, 3)], fontsize=9)
    ax.set_yticks(range(0, n, 3), [str(i + 1) for i in range(0, n, 3)], fontsize=9)
    ax.set_xlabel("key j (sends)")
    ax.set_ylabel("query i (receives)")
    fig.colorbar(im, ax=ax, label="layers (hops)", shrink=0.9)
    if n_sink:
        ax.axvline(n_sink - 0.5, color=_SINK, lw=1.2)
    return finish(fig)


def plot_sink_eviction(w_kept, w_evicted, n_sink: int, window_start: int):
    """Two stacked bar charts of one query's weights over the keys: with the sinks in the cache, and
    after they are evicted (the window's weights scaled up)."""
    w_kept, w_evicted = np.asarray(w_kept, float), np.asarray(w_evicted, float)
    n = w_kept.size
    fig, axes = plt.subplots(2, 1, figsize=(_WIDTH, 4.2), sharex=True, sharey=True)
    for ax, w, title in ((axes[0], w_kept, "sinks kept"), (axes[1], w_evicted, "sinks evicted")):
        colors = [_SINK if j < n_sink else _WINDOW for j in range(n)]
        ax.bar(np.arange(n) + 1, w, color=colors)
        ax.set_title(title, fontsize=10, loc="left")
        ax.set_ylabel("weight")
        ax.axvline(window_start + 0.5, color="0.5", lw=0.8, ls=":")
    axes[1].set_xlabel("key j")
    axes[1].set_xticks(np.arange(1, n + 1, 2))
    return finish(fig)
