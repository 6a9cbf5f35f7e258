"""The figures of the chapter ``book/linear_attention.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch

from .graphs import direction_key
from .style import finish, legend_under


def _arrow(ax, a, b, *, color="tab:blue", lw=1.0, alpha=1.0, shrink=9):
    """One arrow from point a to point b: a message travelling from a to b."""
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=9, lw=lw, alpha=alpha, color=color,
                                 shrinkA=shrink, shrinkB=shrink, zorder=2))


def plot_two_hop(PQ, PK, query_labels, key_labels):
    """Linear attention's graph: keys (right) send to F feature nodes (middle), which send to the
    queries (left); edge width ∝ φ(k_j)_a and φ(q_i)_a, with the book's legend of the arrows."""
    PQ, PK = np.asarray(PQ, float), np.asarray(PK, float)  # (n_q, F), (n_k, F)
    n_q, F = PQ.shape
    n_k = PK.shape[0]
    fig, ax = plt.subplots(figsize=(3.7, 3.0))
    y = {name: np.linspace(1, 0, m) if m > 1 else np.array([0.5]) for name, m in
         (("q", n_q), ("f", F), ("k", n_k))}
    top = max(float(PQ.max()), float(PK.max()))
    for a in range(F):
        for j in range(n_k):
            _arrow(ax, (2, y["k"][j]), (1, y["f"][a]), lw=0.4 + 3 * PK[j, a] / top, alpha=0.7, color="tab:green")
        for i in range(n_q):
            _arrow(ax, (1, y["f"][a]), (0, y["q"][i]), lw=0.4 + 3 * PQ[i, a] / top, alpha=0.7, color="tab:orange")
    ax.scatter([0] * n_q, y["q"], s=160, color="tab:orange", zorder=3)
    ax.scatter([1] * F, y["f"], s=160, color="lightgrey", edgecolors="black", zorder=3)
    ax.scatter([2] * n_k, y["k"], s=160, color="tab:green", zorder=3)
    for i, lab in enumerate(query_labels):
        ax.text(-0.08, y["q"][i], lab, ha="right", va="center", fontsize=9)
    for a in range(F):
        ax.text(1, y["f"][a] + 0.07, f"feature {a + 1}", ha="center", fontsize=8)
    for j, lab in enumerate(key_labels):
        ax.text(2.08, y["k"][j], lab, ha="left", va="center", fontsize=9)
    ax.text(0, 1.15, "queries", ha="center", fontsize=9)
    ax.text(2, 1.15, "keys", ha="center", fontsize=9)
    ax.set_xlim(-0.6, 2.6)
    ax.set_ylim(-0.12, 1.25)
    ax.axis("off")
    direction_key(ax, y=-0.04)
    return finish(fig)


def plot_feature_error(F, errors: dict, reference=None):
    """Error of random-feature attention against the number F of features (log-log), one line per
    entry of ``errors``; ``reference`` (F, c/√F) is drawn dotted."""
    fig, ax = plt.subplots(figsize=(3.7, 3.0))
    for (name, e), marker in zip(errors.items(), ("o-", "s-", "^-")):
        ax.loglog(F, e, marker, label=name)
    if reference is not None:
        ax.loglog(F, reference, ":", color="grey", label=r"slope $-1/2$")
    ax.set_xlabel("number of features F")
    ax.set_ylabel("error against softmax")
    ax.minorticks_off()
    ax.set_xticks(F, [str(int(x)) for x in F])
    legend_under(ax)
    return finish(fig)


def plot_linear_benchmark(results: dict):
    """Memory above the inputs and median time against n, linear against dense attention, from the
    ``"results"`` of ``bench_linear.json``; the memory target is dashed."""
    fig, (ax_m, ax_t) = plt.subplots(2, 1, figsize=(3.7, 6.6))
    for method, marker in (("dense", "o-"), ("linear", "s-")):
        cases = sorted((c for c in results["cases"] if c["method"] == method), key=lambda c: c["n"])
        n = [c["n"] for c in cases]
        ax_m.loglog(n, [c["above_inputs_mb"] for c in cases], marker, label=method)
        ax_t.loglog(n, [c["seconds"] for c in cases], marker, label=f"{method}, wall clock")
        ax_t.loglog(n, [c["cpu_seconds"] for c in cases], marker.replace("-", "--"), alpha=0.6,
                    label=f"{method}, CPU")
    t = results["target"]
    ax_m.axhline(t["memory_mb"], color="tab:red", lw=0.8, ls="--", label=f"target at n = {t['n']}")
    n_all = sorted({c["n"] for c in results["cases"]})
    for ax in (ax_m, ax_t):
        ax.set_xlabel("n (queries = keys)")
        ax.set_xticks(n_all, [f"{x // 1024}k" for x in n_all])
        ax.minorticks_off()
        ax.legend(frameon=False, fontsize=8)
    ax_m.set_ylabel("peak memory above the inputs (MiB)")
    ax_t.set_ylabel("median time (s)")
    return finish(fig)
