"""The figures of the chapter ``book/training.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .style import finish


def plot_learned_graphs(runs: list[dict]):
    """For each run of ``training.train_sequence_model``: mean attention before and after training.

    Rows are queries i, columns keys j, both labelled from 1; a red dot marks each expected edge
    (the arrow from key source[i] to query i).
    """
    fig, axes = plt.subplots(len(runs), 2, figsize=(3.7, 2.1 * len(runs) + 0.2), squeeze=False)
    for row, run in zip(axes, runs):
        n = len(run["source"])
        for ax, key, when in ((row[0], "W_before", "before"), (row[1], "W_after", "after")):
            ax.imshow(run[key], cmap="Blues", vmin=0.0, vmax=1.0)
            ax.plot(np.asarray(run["source"]), np.arange(n), "o", ms=3, color="tab:red")
            ax.set_title(f"{run['task']}, {when}", fontsize=9)
            ax.set_xticks(range(0, n, 2), [str(k + 1) for k in range(0, n, 2)])  # the book counts from 1
            ax.set_yticks(range(0, n, 2), [str(k + 1) for k in range(0, n, 2)])
            ax.tick_params(labelsize=8)
            ax.set_xlabel("j (key)", fontsize=9)
            ax.set_ylabel("i (query)", fontsize=9)
    return finish(fig)


def plot_share_curves(runs: list[dict]):
    """The share of attention on the expected edges over training steps, one line per task."""
    fig, ax = plt.subplots(figsize=(3.7, 3.0))
    styles = [dict(ls="-", marker="o", lw=2.4, alpha=0.6), dict(ls="--", marker="s", mfc="none", lw=1.4)]
    for k, run in enumerate(runs):
        every = max(len(run["steps"]) // 8, 1)
        ax.plot(run["steps"], run["share"], markevery=(k * every // 2, every), ms=5, label=run["task"],
                **styles[k % len(styles)])
    ax.axhline(1 / len(runs[0]["source"]), color="grey", ls=":", lw=0.8, label="uniform attention")
    ax.set_xlabel("Adam step")
    ax.set_ylabel("mass on the expected edges")
    ax.set_ylim(0, 1.02)
    ax.legend(frameon=False, fontsize=8)
    return finish(fig)


def plot_club_accuracy(accuracies: dict):
    """Accuracy on the unlabelled members, one dot per seed, one column per model."""
    fig, ax = plt.subplots(figsize=(3.7, 3.0))
    for k, values in enumerate(accuracies.values()):
        values = np.asarray(values, dtype=float)  # (seeds,)
        jitter = np.linspace(-0.15, 0.15, len(values))  # (seeds,)
        ax.plot(k + jitter, values, "o", ms=3, alpha=0.7)
        ax.plot([k - 0.25, k + 0.25], [values.mean()] * 2, "k-", lw=1.2)
    ax.set_xticks(range(len(accuracies)), list(accuracies), fontsize=8, rotation=30, ha="right")
    ax.set_ylabel("accuracy, unlabelled members")
    return finish(fig)


def plot_club_curves(early: dict, models):
    """Test accuracy against Adam steps, seed means, one line per model; a dot at the mean of the
    steps chosen on the held-out members and the mean test accuracy there (from training.early_stopping)."""
    fig, ax = plt.subplots(figsize=(3.7, 3.0))
    steps = np.asarray(early["record_steps"])  # (records,)
    for kind in models:
        r = early[kind]
        (line,) = ax.plot(steps, r["curve"], "-", lw=1.4, label=kind)
        ax.plot([np.mean(r["chosen"])], [np.mean(r["at_chosen"])], "o", color=line.get_color(), ms=5)
    ax.set_xlabel("Adam step")
    ax.set_ylabel("accuracy, test members")
    ax.set_ylim(0.85, 1.0)
    ax.legend(frameon=False, fontsize=8, loc="lower right")
    return finish(fig)
