"""Every figure of the book, drawn from the package's own arrays (no plot code lives in a cell).

Figures are deterministic: a fixed SVG hash salt and no creation dates, so two builds give the same
files.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

matplotlib.rcParams.update({
    "svg.hashsalt": "attention-graph",
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "font.size": 10,
})

__all__ = ["circle_layout", "plot_attention_graph", "plot_dot_product_variance", "plot_heatmap",
           "plot_blockwise_scaling", "plot_block_size_sweep"]


def plot_dot_product_variance(moments: dict[str, list[float]]):
    """Sample variance of q·k and of q·k/√d against d (log-log), from :func:`dot_product_moments`."""
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    ax.loglog(moments["d"], moments["var"], "o-", label=r"$\mathrm{Var}[q\cdot k]$ (unscaled)")
    ax.loglog(moments["d"], moments["var_scaled"], "s-", label=r"$\mathrm{Var}[q\cdot k/\sqrt{d}]$")
    ax.loglog(moments["d"], moments["d"], ":", color="grey", label="the line $y = d$")
    ax.set_xlabel("dimension $d$")
    ax.set_ylabel("sample variance")
    ax.legend(frameon=False)
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_heatmap(graph, ax=None, *, title: str | None = None, fmt: str = "{:.3f}", cmap: str = "Blues"):
    """Heatmap of an :class:`AttentionGraph`'s W with each value printed in its cell.

    Rows are the node giving the weight (query i), columns the node receiving it (key j).
    """
    import numpy as np

    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(1.1 * graph.n + 1.6, 1.0 * graph.n + 1.0))
    W = graph.W
    vmax = max(float(W.max()), 1e-12)
    ax.imshow(W, cmap=cmap, vmin=0.0, vmax=vmax)
    for (i, j), w in np.ndenumerate(W):
        ax.text(j, i, fmt.format(w), ha="center", va="center", fontsize=9,
                color="white" if w > 0.6 * vmax else "black")
    ax.set_xticks(range(graph.n), graph.labels, rotation=0)
    ax.set_yticks(range(graph.n), graph.labels)
    ax.set_xlabel("j (key: receives attention)")
    ax.set_ylabel("i (query: gives attention)")
    if title:
        ax.set_title(title)
    if own:
        fig.tight_layout()
        plt.close(fig)
        return fig
    return ax.figure


def circle_layout(n: int):
    """Positions of n nodes evenly on the unit circle, the first at the top, clockwise. (n, 2)."""
    import numpy as np

    angles = np.pi / 2 - 2 * np.pi * np.arange(n) / n  # (n,)
    return np.column_stack([np.cos(angles), np.sin(angles)])  # (n, 2)


def plot_attention_graph(graph, ax=None, *, pos=None, title: str | None = None, min_weight: float = 0.0):
    """Draw an :class:`AttentionGraph`: node i → node j for every weight, width and opacity by W[i, j].

    Self-loops are drawn as small circles beside their node, sized by W[i, i]. Edges i → j and j → i
    are drawn as two arcs bending to opposite sides, so the asymmetry of W stays visible.
    """
    import numpy as np
    from matplotlib.patches import Circle, FancyArrowPatch

    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(5.0, 5.0))
    pos = circle_layout(graph.n) if pos is None else np.asarray(pos, dtype=float)  # (n, 2)
    wmax = max(float(graph.W.max()), 1e-12)
    center = pos.mean(axis=0)  # (2,)
    for i, j, w in graph.edges(tol=min_weight):
        alpha = 0.15 + 0.85 * w / wmax
        width = 0.5 + 5.0 * w / wmax
        if i == j:
            out = pos[i] - center
            out = out / (np.linalg.norm(out) or 1.0)
            ax.add_patch(Circle(pos[i] + 0.16 * out, 0.1, fill=False, lw=width, alpha=alpha,
                                color="tab:blue"))
            continue
        ax.add_patch(FancyArrowPatch(pos[i], pos[j], connectionstyle="arc3,rad=0.15",
                                     arrowstyle="-|>", mutation_scale=10 + 6 * w / wmax,
                                     lw=width, alpha=alpha, color="tab:blue",
                                     shrinkA=16, shrinkB=16))
    for (x, y), name in zip(pos, graph.labels):
        ax.add_patch(Circle((x, y), 0.09, color="white", ec="black", zorder=3))
        ax.text(x, y - 0.02, name, ha="center", va="center", fontsize=9, zorder=4)
    ax.set_xlim(pos[:, 0].min() - 0.45, pos[:, 0].max() + 0.45)
    ax.set_ylim(pos[:, 1].min() - 0.45, pos[:, 1].max() + 0.45)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title)
    if own:
        fig.tight_layout()
        plt.close(fig)
        return fig
    return ax.figure


def plot_blockwise_scaling(results: dict):
    """Peak memory and time of dense and blockwise attention against n, from the blockwise benchmark.

    ``results`` is the ``"results"`` entry of ``book/data/bench_blockwise.json``. The memory panel
    marks the target and the size of one dense n × n float64 matrix.
    """
    import numpy as np

    fig, (ax_mem, ax_time) = plt.subplots(1, 2, figsize=(9.0, 3.6))
    for method, marker in (("dense", "o-"), ("blockwise", "s-")):
        cases = sorted((c for c in results["cases"] if c["method"] == method), key=lambda c: c["n"])
        n = [c["n"] for c in cases]
        label = method if method == "dense" else f"blockwise, block size {results['block_size']}"
        ax_mem.loglog(n, [c["rss_mb"] for c in cases], marker, label=label)
        ax_time.loglog(n, [c["seconds"] for c in cases], marker, label=label)
    n_all = np.array(sorted({c["n"] for c in results["cases"]}), dtype=float)  # (sizes,)
    ax_mem.loglog(n_all, n_all**2 * 8 / 2**20, ":", color="grey", label=r"one $n\times n$ float64 matrix")
    target = results["target"]
    ax_mem.axhline(target["target_mb"], color="tab:red", lw=0.8, ls="--",
                   label=f"target at n = {target['n']}")
    ax_mem.set_xlabel("n (queries = keys)")
    ax_mem.set_ylabel("peak memory over idle (MiB)")
    ax_mem.legend(frameon=False, fontsize=8)
    ax_time.set_xlabel("n (queries = keys)")
    ax_time.set_ylabel("median time (s)")
    ax_time.legend(frameon=False, fontsize=8)
    for ax in (ax_mem, ax_time):
        ax.set_xticks(n_all, [str(int(x)) for x in n_all])
        ax.minorticks_off()
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_block_size_sweep(results: dict):
    """Peak memory and time of blockwise attention against the block size, at one n."""
    sweep = results["block_size_sweep"]
    cases = sorted(sweep["cases"], key=lambda c: c["block_size"])
    b = [c["block_size"] for c in cases]
    fig, ax_mem = plt.subplots(figsize=(5.5, 3.4))
    ax_mem.loglog(b, [c["traced_mb"] for c in cases], "s-", color="tab:orange",
                  label="peak memory of the call (tracemalloc)")
    ax_mem.set_xlabel(f"block size (keys per block), n = {sweep['n']}")
    ax_mem.set_ylabel("MiB")
    ax_time = ax_mem.twinx()
    ax_time.semilogx(b, [c["seconds"] for c in cases], "o--", color="tab:blue", label="median time")
    ax_time.set_ylabel("seconds")
    ax_time.set_ylim(bottom=0)
    ax_mem.set_xticks(b, [str(x) for x in b])
    ax_mem.minorticks_off()
    lines = ax_mem.get_legend_handles_labels()
    more = ax_time.get_legend_handles_labels()
    ax_mem.legend(lines[0] + more[0], lines[1] + more[1], frameon=False, fontsize=8, ncol=2,
                  loc="lower center", bbox_to_anchor=(0.5, 1.0))
    fig.tight_layout()
    plt.close(fig)
    return fig


def _render_figures_in_notebooks() -> None:
    """Give IPython an SVG formatter for figures, so that glued figures render in the book.

    ``matplotlib.use("Agg")`` above bypasses the inline backend, which is what normally registers
    it: without this, a glued figure carries only its text repr ("<Figure size ...>").
    """
    try:
        from IPython import get_ipython
        from IPython.core.pylabtools import select_figure_formats
    except ImportError:  # pragma: no cover - IPython is a dependency of the book, not of the package
        return
    shell = get_ipython()
    if shell is not None:
        select_figure_formats(shell, {"svg"})


_render_figures_in_notebooks()
