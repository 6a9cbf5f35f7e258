"""The figures of the chapter ``book/kv_sharing.md``, drawn from the package's own arrays.

Narrow by design: 3.6 inches wide (360 px at the book's 100 dpi), so that on a 390 px phone column
the text (10 px, 9 px at the smallest) stays legible. Panels are stacked, never side by side.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch

from .style import QKV_COLORS, finish, legend_under

_WIDTH = 3.6  # inches: the phone column
_KIND_STYLE = {"multi-head": ("o", "-", "0.25"), "grouped": ("s", "-", "tab:orange"),
              "multi-query": ("^", "-", "tab:green"), "latent": ("D", "--", "tab:purple")}


def _sharing_panel(ax, groups, title: str, latent: bool = False):
    """Query heads on top; below them the key/value heads (or one latent) that feed them, arrows upwards."""
    H = len(groups)
    xq = np.arange(H, dtype=float)  # (H,)
    n_kv = 1 if latent else int(max(groups)) + 1
    xk = np.array([xq[np.asarray(groups) == r].mean() for r in range(n_kv)])  # (n_kv,): under its group
    for h, r in enumerate(groups):
        ax.add_patch(FancyArrowPatch((xk[r], 0.0), (xq[h], 1.0), arrowstyle="-|>", mutation_scale=9,
                                     lw=1.0, color="0.35", shrinkA=9, shrinkB=9))
    ax.scatter(xq, np.ones(H), s=170, color="white", edgecolors=QKV_COLORS["q"], lw=1.5, zorder=3)
    for h in range(H):
        ax.text(xq[h], 1.0, str(h + 1), ha="center", va="center", fontsize=9, zorder=4)
    if latent:
        ax.scatter(xk, [0.0], s=260, marker="D", color="white", edgecolors=QKV_COLORS["y"], lw=1.5, zorder=3)
        ax.text(xk[0], 0.0, "c", ha="center", va="center", fontsize=9, zorder=4)
    else:
        ax.scatter(xk, np.zeros(n_kv), s=210, marker="s", color="white", edgecolors=QKV_COLORS["k"], lw=1.5,
                   zorder=3)
        for r in range(n_kv):
            ax.text(xk[r], 0.0, str(r + 1), ha="center", va="center", fontsize=9, zorder=4)
    ax.set_title(title, fontsize=10, loc="left")
    ax.set_xlim(-0.6, H - 0.4)
    ax.set_ylim(-0.35, 1.35)
    ax.axis("off")


def plot_kv_sharing(H: int, H_kv: int, cache: dict):
    """Four stacked panels: which key/value head (or latent) each of H query heads reads.

    ``cache`` maps each kind ("multi-head", "grouped", "multi-query", "latent") to the words of its
    cache per token, shown in the panel's title."""
    fig, axes = plt.subplots(4, 1, figsize=(_WIDTH, 5.6))
    G = H // H_kv
    rows = [("multi-head", list(range(H)), False), ("grouped", [h // G for h in range(H)], False),
            ("multi-query", [0] * H, False), ("latent", [0] * H, True)]
    for ax, (kind, groups, latent) in zip(axes, rows):
        _sharing_panel(ax, groups, f"{kind}: {cache[kind]}", latent=latent)
    return finish(fig)


def plot_kv_bench(record: dict):
    """Two stacked panels from the kv benchmark: cache bytes per token (bars), and one decoding
    step's median time against the context length n (log-log), one line per kind."""
    res = record["results"]
    kinds = [k["kind"] for k in res["kinds"]]
    fig, (ax_b, ax_t) = plt.subplots(2, 1, figsize=(_WIDTH, 5.4), gridspec_kw={"height_ratios": [1, 1.4]})
    per_token = [k["bytes_per_token"] / 1024 for k in res["kinds"]]
    ax_b.barh(kinds[::-1], per_token[::-1], color=[_KIND_STYLE[k][2] for k in kinds[::-1]])
    for y, v in enumerate(per_token[::-1]):
        ax_b.text(v, y, f" {v:g}", va="center", fontsize=9)
    ax_b.set_xlabel("KiB per token and layer")
    ax_b.set_xlim(0, 1.25 * max(per_token))
    ns = [s["n"] for s in res["steps"]]
    for kind in kinds:
        marker, style, color = _KIND_STYLE[kind]
        ax_t.loglog(ns, [1e3 * s[kind] for s in res["steps"]], marker + style, color=color, mfc="none", label=kind)
    ax_t.set_xticks(ns, [f"{n // 1024}k" if n >= 1024 else str(n) for n in ns])
    ax_t.minorticks_off()
    ax_t.set_xlabel("tokens in the cache, n")
    ax_t.set_ylabel("one step (ms)")
    legend_under(ax_t)
    return finish(fig)
