"""The figures of the chapter ``book/rank_collapse.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .style import FLOOR, finish


def plot_collapse_bound(study: dict):
    """Per graph, the measured spread ratio δ(X⁽ˡ⁾)/δ(X⁽⁰⁾) of the stack without skips against
    τ(W⁽ˡ⁾ ⋯ W⁽¹⁾) and ∏ τ(W⁽ᵐ⁾), on one shared log scale."""
    graphs = list(study["bounds"])
    fig, axes = plt.subplots(len(graphs), 1, figsize=(3.7, 2.3 * len(graphs) + 0.4), sharex=True)
    for ax, graph in zip(axes, graphs):
        run = study["runs"][graph]["attention only"][0]
        depth = np.arange(1, len(run["spread"]))  # (L,)
        ratio = np.maximum(run["spread"][1:] / run["spread"][0], FLOOR)  # (L,)
        b = study["bounds"][graph]
        ax.semilogy(depth, np.maximum(b["bound"], FLOOR), "--", color="grey", label=r"$\prod_m \tau_1(W^{(m)})$")
        ax.semilogy(depth, np.maximum(b["product"], FLOOR), "-", color="tab:orange",
                    label=r"$\tau_1(W^{(l)} \cdots W^{(1)})$")
        ax.semilogy(depth, ratio, "o", ms=2.5, color="tab:blue", label=r"measured $\Delta(X^{(l)})/\Delta(X^{(0)})$")
        ax.set_title(graph, fontsize=10)
        ax.set_ylabel("spread, relative", fontsize=9)
        ax.set_ylim(FLOOR / 3, 3.0)
    axes[-1].set_xlabel("layer $l$")
    axes[1].legend(frameon=False, fontsize=8, loc="lower left")
    return finish(fig)


def plot_collapse_depth(study: dict):
    """Per graph, the distance from rank one r(X⁽ˡ⁾) against depth for each variant: the median over
    the seeds (line) and their range (band), on one shared log scale."""
    graphs = list(study["runs"])
    fig, axes = plt.subplots(len(graphs), 1, figsize=(3.7, 2.3 * len(graphs) + 0.4), sharex=True)
    styles = ["-", ":", "--", "-"]
    for ax, graph in zip(axes, graphs):
        for style, (name, runs) in zip(styles, study["runs"][graph].items()):
            R = np.maximum(np.array([run["r"] for run in runs]), FLOOR)  # (seeds, L + 1)
            depth = np.arange(R.shape[1])  # (L + 1,)
            line, = ax.semilogy(depth, np.median(R, axis=0), style, lw=1.4, label=name)
            ax.fill_between(depth, R.min(axis=0), R.max(axis=0), color=line.get_color(), alpha=0.15, lw=0)
        ax.set_title(graph, fontsize=10)
        ax.set_ylabel(r"$\mathrm{res}(X^{(l)})$", fontsize=9)
        ax.set_ylim(FLOOR / 3, 3.0)
    axes[-1].set_xlabel("layer $l$")
    axes[-1].legend(frameon=False, fontsize=8, loc="lower left")
    return finish(fig)
