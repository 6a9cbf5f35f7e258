"""The figures of the chapter ``book/patterns.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .style import finish, legend_under


def plot_patterns(patterns: dict, n: int):
    """Each pattern's (n, n) mask as a black-and-white grid: row i = query, column j = key."""
    cols = min(len(patterns), 3)  # at most three a row, so that the names stay legible
    rows = -(-len(patterns) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.7, 3.7 / cols * 1.25 * rows), squeeze=False)
    for ax in axes.flat[len(patterns):]:
        ax.axis("off")
    for ax, (name, E) in zip(axes.flat, patterns.items()):
        M = np.zeros((n, n), dtype=bool)  # (n, n)
        M[E[:, 0], E[:, 1]] = True
        ax.imshow(M, cmap="Greys", vmin=0, vmax=1, interpolation="nearest")
        ax.set_title(name, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    return finish(fig)


def plot_pattern_scaling(comparison: dict):
    """Edges (log-log) and maximum path length against n, one line per pattern."""
    fig, (ax_e, ax_d) = plt.subplots(2, 1, figsize=(3.7, 6.4))
    markers, styles = "os^vDx", ["-", "--", "-", "-", "-", "--"]
    for marker, style, (name, by_n) in zip(markers, styles, comparison.items()):
        ns = sorted(by_n)
        ax_e.loglog(ns, [by_n[n]["edges"] for n in ns], marker + style, label=name, mfc="none")
        ax_d.loglog(ns, [by_n[n]["max_path"] for n in ns], marker + style, label=name, mfc="none")
    for ax in (ax_e, ax_d):
        ax.set_xticks(ns, [str(n) for n in ns], fontsize=8)
        ax.minorticks_off()
    ax_e.set_xlabel("tokens n")
    ax_e.set_ylabel("edges of one layer")
    ax_d.set_xlabel("tokens n")
    ax_d.set_ylabel("maximum path length (layers)")
    legend_under(ax_d)
    return finish(fig)
