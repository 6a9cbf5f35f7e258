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
           "plot_model_adjacencies", "plot_plane_movement"]


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


def plot_attention_graph(graph, ax=None, *, pos=None, title: str | None = None, min_weight: float = 0.0,
                         show_weights: bool = False, fmt: str = "{:.2f}", node_radius: float = 0.17):
    """Draw an :class:`AttentionGraph`: node i → node j for every weight, width and opacity by W[i, j].

    Self-loops are drawn as circles just outside their node, sized like the edges by W[i, i]. Edges
    i → j and j → i are drawn as two arcs bending to opposite sides, so the asymmetry of W stays
    visible. With ``show_weights`` each weight is printed on its edge near the node that gives it
    (the tail), so the number beside node i is always a weight of row i.
    """
    import numpy as np
    from matplotlib.patches import Circle, FancyArrowPatch

    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(5.0, 5.0))
    pos = circle_layout(graph.n) if pos is None else np.asarray(pos, dtype=float)  # (n, 2)
    if pos.shape != (graph.n, 2):
        raise ValueError(f"pos must have shape ({graph.n}, 2); got {pos.shape}")
    wmax = max(float(graph.W.max()), 1e-12)
    center = pos.mean(axis=0)  # (2,)
    r, rad = float(node_radius), 0.15
    label_box = dict(boxstyle="round,pad=0.12", fc="white", ec="none", alpha=0.85)
    for i, j, w in graph.edges(tol=min_weight):
        alpha = 0.15 + 0.85 * w / wmax
        width = 0.5 + 5.0 * w / wmax
        if i == j:
            out = pos[i] - center  # (2,)
            out = out / (np.linalg.norm(out) or 1.0)
            loop = 0.11
            ax.add_patch(Circle(pos[i] + (r + loop) * out, loop, fill=False, lw=width, alpha=alpha,
                                color="tab:blue", zorder=1))
            if show_weights:
                ax.text(*(pos[i] + (r + 2 * loop + 0.09) * out), fmt.format(w), ha="center",
                        va="center", fontsize=8, bbox=label_box, zorder=5)
            continue
        a, b = pos[i], pos[j]  # (2,), (2,)
        dx, dy = b - a
        ctrl = (a + b) / 2 + rad * np.array([dy, -dx])  # arc3's control point, (2,)
        start = a + r * (ctrl - a) / np.linalg.norm(ctrl - a)  # leave the node's rim towards ctrl
        end = b + r * (ctrl - b) / np.linalg.norm(ctrl - b)  # arrive at the rim from ctrl
        ax.add_patch(FancyArrowPatch(start, end, connectionstyle=f"arc3,rad={rad}",
                                     arrowstyle="-|>", mutation_scale=10 + 6 * w / wmax,
                                     lw=width, alpha=alpha, color="tab:blue",
                                     shrinkA=0, shrinkB=2, zorder=2))
        if show_weights:
            s_ = 0.27  # along the quadratic Bezier from the tail
            sx, sy = end - start
            c2 = (start + end) / 2 + rad * np.array([sy, -sx])
            p = (1 - s_) ** 2 * start + 2 * s_ * (1 - s_) * c2 + s_**2 * end
            ax.text(*p, fmt.format(w), ha="center", va="center", fontsize=8, bbox=label_box,
                    zorder=5)
    for (x, y), name in zip(pos, graph.labels):
        ax.add_patch(Circle((x, y), r, color="white", ec="black", zorder=3))
        ax.text(x, y, name, ha="center", va="center", fontsize=9, zorder=4)
    margin = r + 0.5 if show_weights else r + 0.3
    ax.set_xlim(pos[:, 0].min() - margin, pos[:, 0].max() + margin)
    ax.set_ylim(pos[:, 1].min() - margin, pos[:, 1].max() + margin)
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


def plot_plane_movement(X, Y, labels, ax=None, *, title: str | None = None):
    """The plane of a 2-d attention layer: each row's arrow from x_i to y_i, and the mean of the x_i.

    ``X`` and ``Y`` are (n, 2): the inputs and the outputs Y = W V of the layer (V = X for the
    worked example). Open circles are the inputs, filled dots the outputs; the cross is x̄.
    """
    import numpy as np

    from .validation import as_matrix

    X = as_matrix(X, "X", shape_doc="(n, 2)")  # (n, 2)
    Y = as_matrix(Y, "Y", shape_doc="(n, 2)")  # (n, 2)
    labels = [str(x) for x in labels]
    if X.shape != Y.shape or X.shape[1] != 2:
        raise ValueError(f"X and Y must both have shape (n, 2); got {X.shape} and {Y.shape}")
    if len(labels) != X.shape[0]:
        raise ValueError(f"labels must name the {X.shape[0]} rows; got {len(labels)} labels")
    lo = np.minimum(X.min(axis=0), Y.min(axis=0)) - 0.4  # (2,)
    hi = np.maximum(X.max(axis=0), Y.max(axis=0)) + 0.4  # (2,)
    own = ax is None
    if own:
        span = hi - lo  # (2,)
        height = 5.2
        fig, ax = plt.subplots(figsize=(min(max(height * span[0] / span[1], 3.0), 8.0) + 1.0, height))
    mean = X.mean(axis=0)  # (2,)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, ((x, y), (xn, yn), name) in enumerate(zip(X, Y, labels)):
        color = colors[k % len(colors)]
        ax.annotate("", xy=(xn, yn), xytext=(x, y),
                    arrowprops=dict(arrowstyle="-|>", color=color, lw=1.6, shrinkA=5, shrinkB=4))
        ax.plot([x], [y], "o", mfc="white", mec=color, mew=1.6, ms=9, zorder=3)
        ax.plot([xn], [yn], "o", color=color, ms=6, zorder=3)
        away = np.array([x, y]) - mean  # (2,)
        away = away / (np.linalg.norm(away) or 1.0)
        ax.annotate(name, (x, y), xytext=12 * away, textcoords="offset points",
                    ha="center", va="center", color=color, fontsize=10)
    ax.plot([mean[0]], [mean[1]], "X", color="black", ms=9, zorder=4, label=r"mean $\bar{x}$")
    ax.plot([], [], "o", mfc="white", mec="grey", label="input $x_i$")
    ax.plot([], [], "o", color="grey", ms=6, label="output $y_i$")
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect("equal")
    ax.axhline(0, color="0.85", lw=0.8, zorder=0)
    ax.axvline(0, color="0.85", lw=0.8, zorder=0)
    ax.set_xlabel("first coordinate")
    ax.set_ylabel("second coordinate")
    ax.legend(frameon=False, loc="lower left", fontsize=9)
    if title:
        ax.set_title(title)
    if own:
        fig.tight_layout()
        plt.close(fig)
        return fig
    return ax.figure
