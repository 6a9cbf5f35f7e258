"""The figures of the chapter ``book/backward.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .style import finish, legend_under


def plot_backward_graph():
    """The computation graph of attention: forward arrows (black) and the gradients flowing back (red).

    Nodes Q, K, V, S, W, Y and the loss 𝒥; each backward arrow is labelled with the equation of
    ``book/backward.md`` that carries the gradient along it.
    """
    # top to bottom, so that the graph fits a phone's column: inputs above, the loss below
    pos = {"Q": (2.3, 0.0), "K": (-0.7, 0.0), "S": (0.8, -2.3), "W": (0.8, -4.3), "V": (2.3, -4.3),
           "Y": (1.55, -6.2), "L": (1.55, -7.9)}
    names = {"Q": "$Q$", "K": "$K$", "V": "$V$", "S": "$S$", "W": "$W$", "Y": "$Y$",
             "L": r"loss $\mathcal{J}$"}
    # each gradient's label on the side its red arrow bends to (+1 right, -1 left), away from the others
    backward = [("L", "Y", r"$\mathrm{d}Y$", 1), ("Y", "W", r"$\mathrm{d}W = \mathrm{d}Y\,V^\top$", -1),
                ("Y", "V", r"$\mathrm{d}V = W^\top \mathrm{d}Y$", 1), ("W", "S", r"$\mathrm{d}S$", -1),
                ("S", "Q", r"$\mathrm{d}Q = \mathrm{d}S\,K/\sqrt{d}$", 1),
                ("S", "K", r"$\mathrm{d}K = \mathrm{d}S^\top Q/\sqrt{d}$", -1)]
    fig, ax = plt.subplots(figsize=(3.7, 6.4))
    for a, b, label, side in backward:
        rad = 0.12 * side  # every backward arrow runs upwards: a positive rad bends it to the right
        ax.annotate("", xy=pos[a], xytext=pos[b],  # the forward arrow, b to a, bends the other way
                    arrowprops=dict(arrowstyle="-|>", color="black", lw=1.3, shrinkA=15, shrinkB=15,
                                    connectionstyle=f"arc3,rad={rad}"))
        ax.annotate("", xy=pos[b], xytext=pos[a],
                    arrowprops=dict(arrowstyle="-|>", color="tab:red", lw=1.3, ls="--", shrinkA=15,
                                    shrinkB=15, connectionstyle=f"arc3,rad={rad}"))
        mid = 0.5 * (np.array(pos[a]) + np.array(pos[b]))  # (2,)
        ax.text(mid[0] + 0.3 * side, mid[1], label, color="tab:red", ha="left" if side > 0 else "right",
                va="center", fontsize=9, bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.85))
    for key, (x, y) in pos.items():
        ax.text(x, y, names[key], ha="center", va="center", fontsize=11,
                bbox=dict(boxstyle="round,pad=0.35", fc="white", ec="black"))
    ax.plot([], [], "-", color="black", label="forward: computes")
    ax.plot([], [], "--", color="tab:red", label="backward: the gradient of $L$")
    ax.legend(frameon=False, fontsize=9, loc="upper center", bbox_to_anchor=(0.5, 0.02))
    ax.set_xlim(-2.4, 4.0)
    ax.set_ylim(-8.5, 0.6)
    ax.axis("off")
    return finish(fig)


def plot_backward_benchmark(results: dict):
    """Peak memory (traced, above the inputs) and time of the dense and blockwise backward against n.

    ``results`` is the ``"results"`` entry of ``attention_graph/data/bench_backward.json``; the
    dense peak extrapolated to the target n is drawn as an open marker.
    """
    fig, (ax_mem, ax_time) = plt.subplots(2, 1, figsize=(3.7, 6.6))
    target = results["target"]
    for method, marker in (("dense", "o-"), ("blockwise", "s-")):
        cases = sorted((c for c in results["cases"] if c["method"] == method), key=lambda c: c["n"])
        n = [c["n"] for c in cases]
        label = method if method == "dense" else f"blockwise, block size {results['block_size']}"
        ax_mem.loglog(n, [c["traced_mb"] for c in cases], marker, label=label)
        ax_time.loglog(n, [c["seconds"] for c in cases], marker, label=label)
    ax_mem.loglog([target["dense_extrapolated_from_n"], target["n"]],
                  [target["dense_bytes_per_entry"] * target["dense_extrapolated_from_n"]**2 / 2**20,
                   target["dense_extrapolated_mb"]], "o:", mfc="none", color="tab:blue",
                  label=r"dense, extrapolated as $c\,n^2$")
    ax_mem.axhline(target["target_mb"], color="tab:red", lw=0.8, ls="--",
                   label=f"target at n = {target['n']}")
    n_all = sorted({c["n"] for c in results["cases"]})
    for ax, ylabel in ((ax_mem, "peak memory above the inputs (MiB)"), (ax_time, "time (s)")):
        ax.set_xlabel("n (queries = keys)")
        ax.set_ylabel(ylabel)
        ax.set_xticks(n_all, [str(x) for x in n_all])
        ax.minorticks_off()
        legend_under(ax)
    return finish(fig)
