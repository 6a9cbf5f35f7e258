"""The figures of the chapter ``book/sinks.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .style import finish


def plot_causal_reach(out_degree, out_strength, rank):
    """The causal graph on n tokens: each key's out-degree, how many queries see it (top); the
    out-strength and the PageRank of each key under uniform causal attention (bottom)."""
    out_degree, out_strength, rank = (np.asarray(x, dtype=float) for x in (out_degree, out_strength, rank))
    n = len(out_degree)
    j = np.arange(1, n + 1)  # (n,): 1-based positions
    fig, (a, b) = plt.subplots(2, 1, figsize=(3.7, 5.8))
    a.bar(j, out_degree, color="tab:blue")
    a.set_xlabel("key position j")
    a.set_ylabel("queries that see j")
    a.set_title("out-degree in the causal graph", fontsize=9)
    b.bar(j - 0.2, out_strength / n, width=0.4, color="tab:orange", label="out-strength / n")
    b.bar(j + 0.2, rank, width=0.4, color="tab:green", label="PageRank")
    b.set_xlabel("key position j")
    b.set_title("uniform causal attention", fontsize=9)
    b.legend(frameon=False, fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)  # under the axes
    for ax in (a, b):
        ax.set_xticks(j[::2])
    return finish(fig)


def plot_sink_forming(results: dict):
    """The out-strength of the first positions over training, one line per seed, from the sinks
    benchmark record: without a sink token (top, the first token) and with one (bottom, the sink
    token and the first content token), each legend under its panel. Shared y-axis."""
    fig, axes = plt.subplots(2, 1, figsize=(3.7, 6.6), sharey=True)
    n = results["n"]
    harmonic = float(np.sum(1.0 / np.arange(1, n + 1)))
    for ax, variant in zip(axes, ("plain", "sink token")):
        for k, run in enumerate(results["runs"][variant]):
            s = np.array([r["out_strength"] for r in run["readouts"]])  # (checkpoints, n or n + 1)
            ax.plot(run["steps"], s[:, 0], "-", color="tab:blue", lw=1, alpha=0.8,
                    label=("first token" if variant == "plain" else "sink token") if k == 0 else None)
            if variant == "sink token":
                ax.plot(run["steps"], s[:, 1], "--", color="tab:orange", lw=1, alpha=0.8,
                        label="first content token" if k == 0 else None)
        ax.axhline(harmonic, color="grey", ls=":", lw=0.8, label="uniform: $H_n$")
        ax.set_title("no sink token" if variant == "plain" else "with a sink token", fontsize=9)
        ax.set_ylabel("out-strength $s_{\\mathrm{out}}$")
        ax.set_xlabel("Adam step")
        ax.legend(frameon=False, fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2)  # under the axes
    return finish(fig)


def plot_sink_graphs(W_plain, W_sink):
    """The trained mean attention without and with a sink token, one colour scale (0 to 1).

    Rows are queries i, columns keys j: a message flows from key j to query i, tokens numbered from 1
    (the sink token is token 1)."""
    fig, (a, b) = plt.subplots(2, 1, figsize=(3.4, 6.6), layout="constrained")
    for ax, W, title in zip((a, b), (W_plain, W_sink), ("no sink token", "with a sink token (token 1)")):
        W = np.asarray(W, dtype=float)  # (n, n)
        im = ax.imshow(W, cmap="Blues", vmin=0.0, vmax=1.0)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("j (key)")
        ax.set_ylabel("i (query)")
        ticks = range(0, len(W), 2)  # indices 0, 2, …: tokens 1, 3, …
        ax.set_xticks(ticks, [str(k + 1) for k in ticks])
        ax.set_yticks(ticks, [str(k + 1) for k in ticks])
    fig.colorbar(im, ax=[a, b], label="$W_{ij}$", fraction=0.05, pad=0.04)
    plt.close(fig)  # laid out by matplotlib's constrained layout, which leaves room for the colour bar
    return finish(fig, own=False)
