"""Every figure of the book, drawn from the package's own arrays (no plot code lives in a cell).

Figures are deterministic: a fixed SVG hash salt and no creation dates, so two builds give the same
files. In a Jupyter kernel (the book's build) a Figure displays, and so is glued, as that SVG.
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


def _display_figures_as_svg() -> None:
    """Register the SVG formatter for Figures in a running IPython kernel; elsewhere do nothing.

    The Agg backend above bypasses the inline backend, whose activation would register it: without
    this, ``glue("fig-x", fig)`` records only the text ``<Figure size ...>`` and the book shows no
    image. No ``Date`` in the SVG's metadata, so the file depends only on the figure.
    """
    try:
        from IPython import get_ipython
        from IPython.core.pylabtools import select_figure_formats
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None and hasattr(shell, "display_formatter"):
        select_figure_formats(shell, {"svg"}, bbox_inches="tight", metadata={"Date": None})


_display_figures_as_svg()

__all__ = ["circle_layout", "plot_attention_graph", "plot_dot_product_variance", "plot_heatmap"]


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
