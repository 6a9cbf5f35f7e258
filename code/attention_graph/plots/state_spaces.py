"""The figures of the chapter ``book/state_spaces.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch

from .graphs import direction_key
from .style import finish


def plot_decay_graph(a, Pi):
    """Top: the chain of decays, token j to token j + 1 weighted by the decay of j + 1. Bottom: the
    decay mask Π, the weight of the one path from key j (column) to query i (row), nodes from 1."""
    a, Pi = np.asarray(a, dtype=float), np.asarray(Pi, dtype=float)
    n = len(a)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(3.6, 4.0), gridspec_kw={"height_ratios": [0.55, 3]})
    for k in range(n):
        top.add_patch(plt.Circle((k, 0), 0.3, color="tab:blue", alpha=0.25))
        top.text(k, 0, str(k + 1), ha="center", va="center", fontsize=8)
        if k:
            top.add_patch(FancyArrowPatch((k - 0.68, 0), (k - 0.32, 0), arrowstyle="-|>", mutation_scale=7,
                                          color="0.3", lw=0.8))
            top.text(k - 0.5, 0.42, f"{a[k]:.2f}", ha="center", fontsize=7)
    top.set_xlim(-0.5, n - 0.5)
    top.set_ylim(-0.5, 0.8)
    top.set_aspect("equal")
    top.axis("off")
    direction_key(top, y=1.25)
    im = bottom.imshow(Pi, cmap="Blues", vmin=0, vmax=1)
    ticks = range(0, n, 2)
    bottom.set_xticks(ticks, [str(j + 1) for j in ticks], fontsize=8)
    bottom.set_yticks(ticks, [str(i + 1) for i in ticks], fontsize=8)
    bottom.set_xlabel("key j (the message's source)", fontsize=9)
    bottom.set_ylabel("query i (its target)", fontsize=9)
    bar = fig.colorbar(im, ax=bottom, shrink=0.8)
    bar.ax.tick_params(labelsize=8)
    return finish(fig)


def plot_ssd_benchmark(results: dict):
    """CPU time of one call against n, both axes logarithmic: the recurrent form to the largest n, the
    quadratic form up to the size where it stops. Faint: wall-clock time on the shared machine."""
    fig, ax = plt.subplots(figsize=(3.6, 3.0))
    for form, color, marker in (("recurrent", "tab:blue", "o"), ("quadratic", "tab:orange", "s")):
        cases = sorted((c for c in results["cases"] if c["form"] == form), key=lambda c: c["n"])
        n = [c["n"] for c in cases]
        ax.plot(n, [c["cpu_seconds"] for c in cases], marker + "-", color=color, ms=4, lw=1.2, label=form)
        ax.plot(n, [c["seconds"] for c in cases], marker, color=color, ms=3, alpha=0.35)
    ax.axvline(results["quadratic_cap"], color="0.6", ls=":", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("tokens n", fontsize=9)
    ax.set_ylabel("seconds per call (CPU)", fontsize=9)
    ax.tick_params(labelsize=8)
    ax.legend(frameon=False, fontsize=8)
    return finish(fig)
