"""The figures of the chapter ``book/language_model.md``, drawn from the lm record and the models' graphs.

Every figure is drawn narrow (3.6 in, panels stacked) so that its text stays readable in a phone's
column.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..language_model import ICL_EARLY, ICL_LATE, icl_score
from .style import finish, legend_under

WIDTH = 3.6  # inches: about the phone column at its natural size
SEED_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple")


def plot_lm_training(record: dict):
    """Over training, one line per seed: the held-out loss with the unigram and bigram baselines (top),
    the in-context learning score (middle), and the best head's prefix-matching score on repeated
    random bytes with the best previous-token score (bottom)."""
    fig, (a, b, c) = plt.subplots(3, 1, figsize=(WIDTH, 6.2), sharex=True)
    for k, run in enumerate(record["runs"]):
        curve, color = run["curve"], SEED_COLORS[k % len(SEED_COLORS)]
        steps = curve["steps"]
        a.plot(steps, curve["held_out_loss"], color=color, lw=1.2, label=f"seed {run['seed']}")
        c.plot(steps, [icl_score(x, ICL_EARLY, ICL_LATE) for x in curve["position_losses"]], color=color, lw=1.2)
        prefix = np.asarray(curve["prefix_matching"]).reshape(len(steps), -1).max(axis=1)  # (records,)
        previous = np.asarray(curve["previous_token"]).reshape(len(steps), -1).max(axis=1)  # (records,)
        b.plot(steps, prefix, color=color, lw=1.2, label="prefix matching" if k == 0 else None)
        b.plot(steps, previous, color=color, lw=1.0, ls="--", label="previous token" if k == 0 else None)
    for value, name, ls in ((record["unigram_loss"], "unigram", ":"), (record["bigram_loss"], "bigram", "-.")):
        a.axhline(value, color="grey", ls=ls, lw=0.9, label=name)
    a.set_ylabel("held-out loss (nats)")
    a.set_ylim(top=min(5.6, a.get_ylim()[1]))
    a.legend(frameon=False, fontsize=9, ncol=2)
    b.set_ylabel("best head's score")
    b.set_ylim(bottom=0)
    legend_under(b, ncol=2)
    c.axhline(0.0, color="grey", lw=0.8, ls=":")
    c.set_ylabel("ICL score (nats)")
    c.set_xlabel("Adam step")
    return finish(fig)


def plot_position_losses(positions: dict, bigram: float):
    """The held-out loss at each position of the context: ``positions`` {name: (n,) losses}."""
    fig, ax = plt.subplots(figsize=(WIDTH, 2.8))
    styles = {"untrained": ("0.5", "-")}
    for k, (name, losses) in enumerate(positions.items()):
        color, ls = styles.get(name, (SEED_COLORS[k % len(SEED_COLORS)], "-"))
        ax.plot(np.arange(1, len(losses) + 1), losses, color=color, ls=ls, lw=1.1, label=name)
    ax.axhline(bigram, color="grey", ls="-.", lw=0.9, label="bigram")
    ax.set_xlabel("position i in the context")
    ax.set_ylabel("held-out loss (nats)")
    ax.set_yscale("log")
    legend_under(ax, ncol=2)
    return finish(fig)


def plot_head_scores(trained: list, untrained: list):
    """Every head of every seed as a point: its previous-token score against its prefix-matching
    score; filled for the trained models, hollow for the untrained ones; colour by layer."""
    fig, ax = plt.subplots(figsize=(WIDTH, 3.2))
    for points, filled in ((untrained, False), (trained, True)):
        for layer_colour, layer in (("tab:blue", 0), ("tab:orange", 1)):
            xs = [p["previous_token"] for p in points if p["layer"] == layer]
            ys = [p["prefix_matching"] for p in points if p["layer"] == layer]
            ax.scatter(xs, ys, s=22, facecolors=layer_colour if filled else "none", edgecolors=layer_colour,
                       label=f"layer {layer + 1}" + ("" if filled else ", untrained"))
    ax.set_xlabel("previous-token score")
    ax.set_ylabel("prefix-matching score")
    every = trained + untrained
    ax.set_xlim(0, 1.15 * max(p["previous_token"] for p in every))  # the axes zoom on the heads: scores near 0
    ax.set_ylim(0, 1.15 * max(p["prefix_matching"] for p in every))
    legend_under(ax, ncol=2)
    return finish(fig)


def plot_byte_graph(W, text: str, title: str):
    """One head's attention over the bytes of ``text``: W[i, j] the weight query byte i gives key byte j,
    a message from j to i. Bytes label the axes (a space is drawn as ␣)."""
    W = np.asarray(W, dtype=float)  # (n, n)
    labels = ["␣" if ch == " " else ch for ch in text]
    fig, ax = plt.subplots(figsize=(WIDTH, WIDTH + 0.3))
    im = ax.imshow(W, cmap="Blues", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(len(labels)))
    ax.set_yticks(range(len(labels)))
    ax.set_xticklabels(labels, fontsize=7, family="monospace")
    ax.set_yticklabels(labels, fontsize=7, family="monospace")
    ax.set_xlabel("key byte j (message from j)")
    ax.set_ylabel("query byte i")
    ax.set_title(title, fontsize=9)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.03, label="$W_{ij}$")
    return finish(fig)
