"""The figures of the chapter ``book/differential.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .style import finish


def plot_common_mode(sweep: dict):
    """The share of |W±| off the relevant key against ϑ, one line per level of private noise."""
    fig, ax = plt.subplots(figsize=(3.6, 2.7))
    styles = ("-", "--", ":")
    for k, (private, noise) in enumerate(zip(sweep["privates"], sweep["noise"])):
        ax.plot(sweep["thetas"], noise, styles[k % 3], color="tab:blue", lw=1.4,
                label=f"private noise {private:g}")
    ax.set_xlabel(r"weight of the second map $\vartheta$", fontsize=9)
    ax.set_ylabel("share off the needed key", fontsize=9)
    ax.set_ylim(0, 1)
    ax.tick_params(labelsize=8)
    ax.legend(frameon=False, fontsize=8)
    return finish(fig)


def plot_signed_graph(W):
    """A signed weight matrix W± as a heat map, red for negative edges and blue for positive ones.

    Rows are queries i, columns keys j: a message flows from key j to query i, nodes numbered from 1."""
    W = np.asarray(W, dtype=float)
    n_q, n_k = W.shape
    lim = float(np.abs(W).max())
    fig, ax = plt.subplots(figsize=(3.6, 3.1))
    im = ax.imshow(W, cmap="RdBu", vmin=-lim, vmax=lim)
    ax.set_xticks(range(n_k), [str(j + 1) for j in range(n_k)], fontsize=8)
    ax.set_yticks(range(n_q), [str(i + 1) for i in range(n_q)], fontsize=8)
    ax.set_xlabel("key j (the message's source)", fontsize=9)
    ax.set_ylabel("query i (its target)", fontsize=9)
    bar = fig.colorbar(im, ax=ax, shrink=0.85)
    bar.ax.tick_params(labelsize=8)
    return finish(fig)


def plot_gate_sinks(summary: dict):
    """The first token's out-strength after training, seed by seed, without and with the gate."""
    fig, ax = plt.subplots(figsize=(3.6, 2.8))
    plain, gated = summary["plain"]["s0_by_seed"], summary["gated"]["s0_by_seed"]
    for a, b in zip(plain, gated):
        ax.plot([0, 1], [a, b], "-", color="0.7", lw=0.8)
    ax.plot(np.zeros(len(plain)), plain, "o", color="tab:blue", ms=5, label="no gate")
    ax.plot(np.ones(len(gated)), gated, "s", color="tab:orange", ms=5, label="gate")
    ax.set_xticks([0, 1], ["no gate", "sigmoid gate"], fontsize=9)
    ax.set_xlim(-0.4, 1.4)
    ax.set_ylim(0, None)
    ax.set_ylabel("first token's out-strength", fontsize=9)
    ax.tick_params(axis="y", labelsize=8)
    return finish(fig)
