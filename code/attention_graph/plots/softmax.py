"""The figures of the chapter ``book/softmax.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..validation import as_matrix
from .style import finish, legend_under


def plot_softmax_peakedness(record: dict):
    """Two panels from :func:`attention_graph.softmax.peakedness`: the mean largest weight of a row
    and the mean Frobenius norm of the softmax Jacobian, against d, without and with the 1/√d scale.
    The Jacobian's axis is labelled in words: the figure leads the chapter, before the Jacobian.
    """
    fig, (left, right) = plt.subplots(2, 1, figsize=(3.7, 6.2), sharex=True)
    d, n_k = record["d"], record["n_k"]
    left.semilogx(d, record["max_raw"], "o-", label=r"scores $q\cdot k$ (unscaled)")
    left.semilogx(d, record["max_scaled"], "s-", label=r"scores $q\cdot k/\sqrt{d}$")
    left.axhline(1.0, color="grey", ls=":", lw=1)
    left.axhline(1.0 / n_k, color="grey", ls="--", lw=1, label=f"uniform row, $1/n_k$ ($n_k$ = {n_k})")
    left.set_ylim(0, 1.05)
    left.set_ylabel("mean largest weight of a row")
    legend_under(left)
    right.semilogx(d, record["jac_raw"], "o-", label="unscaled")
    right.semilogx(d, record["jac_scaled"], "s-", label=r"scaled by $1/\sqrt{d}$")
    right.set_ylim(bottom=0)
    right.set_xlabel("dimension $d$")
    right.set_ylabel("how much a row still responds\nwhen its scores move")
    right.legend(frameon=False, fontsize=8)
    return finish(fig)


def plot_softmax_row(p_raw, p_scaled, d: int):
    """The softmax weights of one row of scores q·k_j in d dimensions, without and with the 1/√d scale.

    Two bar panels on one weight axis (0 to 1), keys in the order of the row; the dashed line is a
    uniform row. The explorable of ``book/softmax.md`` starts from the right panel.
    """
    p_raw = as_matrix(np.atleast_2d(p_raw), "p_raw", shape_doc="(n_k,)")[0]  # (n_k,)
    p_scaled = as_matrix(np.atleast_2d(p_scaled), "p_scaled", shape_doc="(n_k,)")[0]  # (n_k,)
    n_k = p_raw.shape[0]
    fig, axes = plt.subplots(2, 1, figsize=(3.7, 4.6), sharex=True)
    for ax, p, title in ((axes[0], p_raw, r"unscaled, $q\cdot k_j$"),
                         (axes[1], p_scaled, r"scaled, $q\cdot k_j/\sqrt{d}$")):
        ax.bar(np.arange(n_k), p, color="0.35")
        ax.axhline(1.0 / n_k, color="grey", ls="--", lw=1)
        ax.set_ylim(0, 1.0)
        ax.set_xticks([])
        ax.set_ylabel("weight")
        ax.set_title(f"{title}, $d$ = {d}", fontsize=9)
    axes[-1].set_xlabel(f"the {n_k} keys")
    return finish(fig)
