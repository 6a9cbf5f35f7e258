"""The figures of the chapter ``book/induction.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .style import finish


def plot_induction_curves(curves: list[dict]):
    """Held-out accuracy against steps, one thin line per seed, the median thick and the range
    shaded (left); the median head scores against steps (right)."""
    fig, (a, b) = plt.subplots(2, 1, figsize=(3.7, 5.6), sharex=True)
    steps = np.asarray(curves[0]["steps"])  # (checkpoints,)
    acc = np.array([c["accuracy"] for c in curves])  # (seeds, checkpoints)
    for row in acc:
        a.plot(steps, row, "-", color="tab:blue", lw=0.7, alpha=0.6)
    a.fill_between(steps, acc.min(axis=0), acc.max(axis=0), color="tab:blue", alpha=0.15,
                   label="range over seeds")
    a.plot(steps, np.median(acc, axis=0), "-", color="black", lw=1.6, label="median")
    a.set_ylabel("held-out accuracy")
    a.set_ylim(0, 1.02)
    a.legend(frameon=False, fontsize=8, loc="lower right")
    for key, style in (("previous", "-"), ("induction", "--"), ("composed", ":")):
        b.plot(steps, np.median([c[key] for c in curves], axis=0), style, label=key)
    b.set_xlabel("Adam step")
    b.set_ylabel("mass on the expected edges")
    b.set_ylim(0, 1.02)
    b.legend(frameon=False, fontsize=8)
    return finish(fig)


def plot_induction_graphs(W1, W2, C, period: int):
    """Layer 1's graph, layer 2's and their product W⁽²⁾W⁽¹⁾ on one sequence of period m, one colour
    scale; red dots mark the expected edges (j, j − 1) at the keys j = i − m + 1 that layer 2 reads,
    (i, i − m + 1) and (i, i − m), for the predictable queries i.

    Rows are queries i, columns keys j: a message flows from key j to query i, positions numbered
    from 1."""
    fig, axes = plt.subplots(3, 1, figsize=(3.0, 8.4))
    n = len(np.asarray(W1))
    m = int(period)
    i = np.arange(m, n - 1)  # (r,): the predictable queries
    j = i - m + 1  # (r,): the keys the induction head reads
    dots = ((j - 1, j), (j, i), (i - m, i))
    titles = ("layer 1: $W^{(1)}$", "layer 2: $W^{(2)}$", "two hops: $W^{(2)}W^{(1)}$")
    for ax, W, (x, y), title in zip(axes, (W1, W2, C), dots, titles):
        ax.imshow(np.asarray(W, dtype=float), cmap="Blues", vmin=0.0, vmax=1.0)
        ax.plot(x, y, "o", ms=2.5, color="tab:red")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("j (key)")
        ax.set_ylabel("i (query)")
        ticks = range(0, n, 4)  # indices 0, 4, …: positions 1, 5, …
        ax.set_xticks(ticks, [str(k + 1) for k in ticks])
        ax.set_yticks(ticks, [str(k + 1) for k in ticks])
    return finish(fig)


def plot_circuits(qk, ov):
    """Layer 2's two token-to-token circuits (Elhage et al. 2021), each on its own symmetric colour
    scale, read on the colour bar beside it: QK (query token a against the token b that layer 1 wrote
    into the key) and OV (the logit of token c that attending to token b adds)."""
    fig, axes = plt.subplots(2, 1, figsize=(3.7, 7.0))
    for ax, M, title, ylabel, xlabel, bar in (
            (axes[0], qk, "QK: $W_E W_Q^{(2)} (W_E W_V^{(1)} W_K^{(2)})^\\top$", "query token a",
             "previous token b at the key", "score"),
            (axes[1], ov, "OV: $W_E W_V^{(2)} W_U$", "attended token b", "output logit c", "logit added")):
        M = np.asarray(M, dtype=float)  # (vocab, vocab)
        lim = float(np.abs(M).max())
        im = ax.imshow(M, cmap="RdBu_r", vmin=-lim, vmax=lim)
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04).set_label(bar, fontsize=9)
        ax.set_title(title, fontsize=9)
        ax.set_ylabel(ylabel, fontsize=9)
        ax.set_xlabel(xlabel, fontsize=9)
        ax.set_xticks(range(0, len(M), 4))
        ax.set_yticks(range(0, len(M), 4))
    return finish(fig)
