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


def _register_ipython_figures() -> None:
    """Let IPython, and so MyST-NB's glue, render a Figure as SVG (without a creation date).

    With the Agg backend forced above, IPython registers no image formatter for figures, and a glued
    figure would reach the page as its text repr ("<Figure size ...>").
    """
    try:
        from IPython import get_ipython
        from IPython.core.pylabtools import select_figure_formats
    except ImportError:  # pragma: no cover - IPython is a dependency of the book, not of the package
        return
    shell = get_ipython()
    if shell is not None:
        select_figure_formats(shell, {"svg"}, metadata={"Date": None})


_register_ipython_figures()

__all__ = ["circle_layout", "plot_attention_graph", "plot_dot_product_variance", "plot_heatmap",
           "plot_model_adjacencies", "plot_cycle_encodings", "plot_sparse_benchmark"]


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


def plot_model_adjacencies(models: dict, structure=None):
    """One heatmap panel per model's graph (:func:`attention_graph.graph.five_models`), 3 × 2 grid.

    ``models`` maps a name to (Y, AttentionGraph). ``structure``, an AttentionGraph of the fixed
    graph, fills the last panel when there are five models; otherwise that panel is left empty.
    """
    fig, axes = plt.subplots(3, 2, figsize=(7.6, 10.6))
    panels = [(name, graph, "{:.3f}", "Blues") for name, (_, graph) in models.items()]
    if structure is not None:
        panels.append(("the fixed graph: $A + I$", structure, "{:.0f}", "Oranges"))
    for ax, (name, graph, fmt, cmap) in zip(axes.flat, panels):
        plot_heatmap(graph, ax=ax, title=name, fmt=fmt, cmap=cmap)
        for text in ax.texts:
            text.set_fontsize(10.5)
        ax.set_title(name, fontsize=12)
        ax.set_xlabel("")
        ax.set_ylabel("")
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax in axes[:, 0]:
        ax.set_ylabel("node i (gives weight)")
    for ax in axes[-1, :]:
        ax.set_xlabel("node j (its message)")
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_cycle_encodings(P, frequencies, coefficients):
    """The columns of a cycle's Laplacian encoding P (n, k) as dots, each on its fitted sinusoid.

    ``frequencies[c]`` is the m of column c and ``coefficients[c]`` the (a, b) with
    P[:, c] = a cos(2π m k / n) + b sin(2π m k / n); the curve is drawn for continuous k.
    """
    import numpy as np

    n, k = P.shape
    fig, axes = plt.subplots(1, k, figsize=(2.6 * k, 2.5), sharey=True)
    axes = np.atleast_1d(axes)
    x = np.linspace(0, n, 400)  # (400,)
    for c, ax in enumerate(axes):
        m, (a, b) = frequencies[c], coefficients[c]
        theta = 2 * np.pi * m * x / n  # (400,)
        ax.plot(x, a * np.cos(theta) + b * np.sin(theta), "-", color="grey", lw=1)
        ax.plot(np.arange(n), P[:, c], "o", ms=4, color="tab:blue")
        ax.axhline(0, color="black", lw=0.5)
        ax.set_title(f"column {c + 1} (m = {m})", fontsize=9)
        ax.set_xlabel("position k")
    axes[0].set_ylabel("encoding")
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_sparse_benchmark(record: dict):
    """Log-log time and peak memory against n, dense against edge attention, from a bench record."""
    import numpy as np

    res = record["results"]
    rows = res["sizes"]
    dense = [r for r in rows if "dense_seconds" in r]
    n_all = np.array([r["n"] for r in rows])  # (sizes,)
    n_dense = np.array([r["n"] for r in dense])  # (dense sizes,)
    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(9.0, 3.6))
    ax_t.loglog(n_dense, [r["dense_seconds"] for r in dense], "o-", label="dense, masked")
    ax_t.loglog(n_all, [r["sparse_seconds"] for r in rows], "s-", label="edge_attention")
    ax_t.loglog(n_all, [r["csr_seconds"] for r in rows], "^:", label="lean CSR formulation")
    ax_t.set_xlabel("nodes n (E = %d n)" % res["degree"])
    ax_t.set_ylabel("seconds per call (median)")
    ax_t.legend(frameon=False, fontsize=8)
    ax_m.loglog(n_dense, [r["dense_peak_bytes"] for r in dense], "o-", label="dense, masked")
    ax_m.loglog(n_all, [r["sparse_peak_bytes"] for r in rows], "s-", label="edge_attention")
    ax_m.loglog(n_all, 8.0 * n_all**2, ":", color="grey", label="$8n^2$ bytes: one dense W")
    ax_m.set_xlabel("nodes n")
    ax_m.set_ylabel("peak bytes allocated in the call")
    ax_m.legend(frameon=False, fontsize=8)
