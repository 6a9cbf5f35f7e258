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


# --- Derivation chapters: softmax and weighted sums ------------------------------------------------

__all__ += ["plot_softmax_peakedness", "convex_hull_2d", "plot_pull"]


def plot_softmax_peakedness(record: dict):
    """Two panels from :func:`attention_graph.softmax.peakedness`: the mean largest weight of a row
    and the mean Frobenius norm of the softmax Jacobian, against d, without and with the 1/√d scale.
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.4, 3.4))
    d, n_k = record["d"], record["n_k"]
    left.semilogx(d, record["max_raw"], "o-", label=r"scores $q\cdot k$ (unscaled)")
    left.semilogx(d, record["max_scaled"], "s-", label=r"scores $q\cdot k/\sqrt{d}$")
    left.axhline(1.0, color="grey", ls=":", lw=1)
    left.axhline(1.0 / n_k, color="grey", ls="--", lw=1, label=f"uniform row, $1/n_k$ ($n_k$ = {n_k})")
    left.set_ylim(0, 1.05)
    left.set_xlabel("dimension $d$")
    left.set_ylabel("mean largest weight of a row")
    left.legend(frameon=False, fontsize=8, loc="center right")
    right.semilogx(d, record["jac_raw"], "o-", label="unscaled")
    right.semilogx(d, record["jac_scaled"], "s-", label=r"scaled by $1/\sqrt{d}$")
    right.set_ylim(bottom=0)
    right.set_xlabel("dimension $d$")
    right.set_ylabel(r"mean $\|\mathrm{diag}(p) - p p^\top\|_F$")
    right.legend(frameon=False, fontsize=8)
    fig.tight_layout()
    plt.close(fig)
    return fig


def convex_hull_2d(points):
    """Vertices of the convex hull of 2-d points, counter-clockwise (Andrew's monotone chain). (h, 2)."""
    import numpy as np

    P = sorted(map(tuple, np.asarray(points, dtype=float)))  # n points, sorted by x then y
    if len(P) <= 2:
        return np.array(P)

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    def chain(pts):
        out = []
        for p in pts:
            while len(out) >= 2 and cross(out[-2], out[-1], p) <= 0:
                out.pop()
            out.append(p)
        return out

    lower, upper = chain(P), chain(P[::-1])
    return np.array(lower[:-1] + upper[:-1])  # (h, 2)


def plot_pull(V, Y, labels=None, ax=None, *, title: str | None = None):
    """Values v_j (dots) with their convex hull (shaded) and outputs y_i (crosses), an arrow v_i → y_i.

    For self-attention in two dimensions: each output lies in the hull of the values, pulled from
    its own value toward the weighted centre of mass of the others.
    """
    import numpy as np
    from matplotlib.patches import Polygon

    V, Y = np.asarray(V, dtype=float), np.asarray(Y, dtype=float)  # (n, 2), (n, 2)
    if V.ndim != 2 or V.shape[1] != 2 or Y.shape != V.shape:
        raise ValueError(f"V and Y must both have shape (n, 2); got {V.shape} and {Y.shape}")
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(5.2, 4.6))
    hull = convex_hull_2d(V)  # (h, 2)
    ax.add_patch(Polygon(hull, closed=True, facecolor="tab:blue", alpha=0.08, edgecolor="tab:blue",
                         lw=1, label="convex hull of the values"))
    ax.plot(V[:, 0], V[:, 1], "o", color="tab:blue", label="value $v_i$")
    ax.plot(Y[:, 0], Y[:, 1], "x", color="tab:red", ms=8, mew=2, label="output $y_i$")
    for v, y in zip(V, Y):
        ax.annotate("", xy=y, xytext=v, arrowprops=dict(arrowstyle="->", color="grey", lw=1))
    if labels is not None:
        for name, v in zip(labels, V):
            ax.annotate(str(name), v, textcoords="offset points", xytext=(5, 5), fontsize=9)
    ax.set_aspect("equal")
    ax.legend(frameon=False, fontsize=8, loc="best")
    if title:
        ax.set_title(title)
    if own:
        fig.tight_layout()
        plt.close(fig)
        return fig
    return ax.figure
