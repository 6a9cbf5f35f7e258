"""The figures of the chapter ``book/graph_view_limits.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .style import finish


def plot_prediction_and_outcome(predicted, trained):
    """The out-strength of each causal position: what the graph predicts (uniform attention on the
    causal graph, ``predicted`` (n,)) against what trained models do (``trained`` (seeds, n)).

    Line: the prediction H_n − H_{j−1}. Dots: the median over seeds after training; band: their range.
    """
    predicted = np.asarray(predicted, dtype=float)  # (n,)
    trained = np.asarray(trained, dtype=float)  # (seeds, n)
    j = np.arange(1, predicted.size + 1)  # (n,): positions from 1
    fig, ax = plt.subplots(figsize=(3.7, 3.0))
    ax.plot(j, predicted, "--", color="0.35", lw=1.4, label="graph view: uniform causal attention")
    ax.fill_between(j, trained.min(axis=0), trained.max(axis=0), color="tab:blue", alpha=0.18, lw=0,
                    label="trained models: range over seeds")
    ax.plot(j, np.median(trained, axis=0), "o", color="tab:blue", ms=5, label="trained models: median")
    ax.set_xlabel("key position $j$")
    ax.set_ylabel("out-strength $\\sum_i W_{ij}$")
    ax.set_xticks(j)
    ax.legend(frameon=False, fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.2))
    return finish(fig)
