"""Every figure of the book, drawn from the package's own arrays (no plot code lives in a cell).

A page calls :func:`use_book_style` once, before its first figure: it selects the non-interactive
backend, the book's rcParams (:data:`STYLE`) and IPython's SVG output. Every figure then leaves
through :func:`_finish`, which lays it out and closes it. Figures are deterministic: a fixed SVG hash
salt and no creation dates, so two builds give the same files.
"""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import networkx as nx
import numpy as np
from matplotlib.patches import Circle, FancyArrowPatch, Polygon

from .validation import as_matrix

# The book's look, and what makes an SVG the same bytes on every build. Figures are drawn on a
# transparent ground: on the light page they sit on the page itself; in dark mode book.css puts
# them on a soft light card (black ink on a dark page could not be read, and a white card glares).
STYLE = {
    "svg.hashsalt": "attention-graph",
    "figure.facecolor": "none",
    "axes.facecolor": "none",
    "savefig.facecolor": "none",
    "savefig.transparent": True,
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "font.size": 10,
}
_styled = False


def use_book_style() -> None:
    """Draw every figure that follows in the book's style (call once per page, before any figure).

    Selects the Agg backend and :data:`STYLE`, and lets IPython, so MyST-NB's glue, render a
    Figure as SVG without a creation date (with Agg, IPython registers no image formatter, and a
    glued figure would reach the page as its text repr "<Figure size ...>").
    """
    global _styled
    matplotlib.use("Agg")
    matplotlib.rcParams.update(STYLE)
    try:
        from IPython import get_ipython  # the book's kernel has IPython; the package needs it not
        from IPython.core.pylabtools import select_figure_formats
    except ImportError:  # pragma: no cover
        shell = None
    else:
        shell = get_ipython()
    if shell is not None:
        select_figure_formats(shell, {"svg"}, metadata={"Date": None})
    _styled = True


__all__ = ["circle_layout", "club_layout", "plot_attention_graph", "plot_dot_product_variance", "plot_heatmap",
           "plot_model_adjacencies", "plot_plane_movement"]
__all__ += ["plot_centrality_bars", "plot_club_split", "plot_fiedler_vector",
            "plot_head_graphs", "plot_laplacian_spectra", "plot_pagerank_vs_degree",
            "plot_rollout_layers", "plot_seed_sweep"]
__all__ += ["plot_blockwise_scaling", "plot_block_size_sweep"]
__all__ += ["plot_cycle_encodings", "plot_sparse_benchmark"]
__all__ += ["plot_softmax_peakedness", "convex_hull_2d", "plot_pull", "use_book_style", "STYLE"]
__all__ += ["plot_backward_benchmark", "plot_learned_graphs", "plot_share_curves",
            "plot_club_accuracy"]
__all__ += ["plot_fixed_and_computed", "plot_fixed_to_computed"]
__all__ += ["plot_softmax_row"]


def _finish(fig, own: bool = True):
    """Every figure leaves through here: laid out and closed when its plot function made it (``own``).

    A panel drawn into a caller's axes (``own`` False) is left to the caller's own ``_finish``.
    """
    if not _styled:
        raise RuntimeError("call attention_graph.plots.use_book_style() before drawing a figure")
    if own:
        fig.tight_layout()
        plt.close(fig)
    return fig


def plot_dot_product_variance(moments: dict[str, list[float]]):
    """Sample variance of q·k and of q·k/√d against d (log-log), from :func:`dot_product_moments`."""
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    ax.loglog(moments["d"], moments["var"], "o-", label=r"$\mathrm{Var}[q\cdot k]$ (unscaled)")
    ax.loglog(moments["d"], moments["var_scaled"], "s-", label=r"$\mathrm{Var}[q\cdot k/\sqrt{d}]$")
    ax.loglog(moments["d"], moments["d"], "-", color="0.82", lw=7, zorder=0,
              label="the line $y = d$ (the unscaled curve lies on it)")
    ax.set_xlabel("dimension $d$")
    ax.set_ylabel("sample variance")
    ax.legend(frameon=False)
    return _finish(fig)


def plot_heatmap(graph, ax=None, *, title: str | None = None, fmt: str = "{:.3f}", cmap: str = "Blues",
                 vmax: float | None = None, fontsize: float = 9):
    """Heatmap of an :class:`AttentionGraph`'s W with each value printed in its cell.

    Rows are the node attending (query i), columns the node it attends to (key j). Panels
    that are compared pass one ``vmax``, so that they share a colour scale (from 0).
    """
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(1.1 * graph.n + 1.6, 1.0 * graph.n + 1.0))
    W = graph.W
    vmax = max(float(W.max()), 1e-12) if vmax is None else float(vmax)
    ax.imshow(W, cmap=cmap, vmin=0.0, vmax=vmax)
    for (i, j), w in np.ndenumerate(W):
        ax.text(j, i, fmt.format(w), ha="center", va="center", fontsize=fontsize,
                color="white" if w > 0.6 * vmax else "black")
    ax.set_xticks(range(graph.n), graph.labels, rotation=0)
    ax.set_yticks(range(graph.n), graph.labels)
    ax.set_xlabel("j (key: attended to)")
    ax.set_ylabel("i (query: attends)")
    if title:
        ax.set_title(title)
    return _finish(ax.figure, own)


def circle_layout(n: int):
    """Positions of n nodes evenly on the unit circle, the first at the top, clockwise. (n, 2)."""
    angles = np.pi / 2 - 2 * np.pi * np.arange(n) / n  # (n,)
    return np.column_stack([np.cos(angles), np.sin(angles)])  # (n, 2)


def club_layout() -> np.ndarray:
    """Deterministic 2-d positions of the 34 members for the figures (Kamada–Kawai). Shape (34, 2)."""
    G = nx.karate_club_graph()
    pos = nx.kamada_kawai_layout(G)
    return np.array([pos[v] for v in sorted(G.nodes)])  # (34, 2)


def plot_attention_graph(graph, ax=None, *, pos=None, title: str | None = None, min_weight: float = 0.0,
                         show_weights: bool = False, fmt: str = "{:.2f}", node_radius: float = 0.17,
                         highlight: int | None = None, fontsize: float = 10):
    """Draw an :class:`AttentionGraph`: for every weight W[i, j] an arrow from j to i, the way v_j flows.

    Width and opacity grow with W[i, j]. Self-loops are drawn as circles just outside their node,
    sized like the edges by W[i, i]. The two arrows between a pair bend to opposite sides, so the
    asymmetry of W stays visible. With ``show_weights`` each weight is printed on its arrow near the
    node that receives the message (the head, node i), so the number beside node i is always a
    weight of row i. With ``highlight`` = i only the messages into node i are coloured (and
    labelled); the other arrows are drawn faint grey.
    """
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
        color, label = "tab:blue", show_weights
        if highlight is not None and i != highlight:
            color, alpha, label = "0.6", 0.1 + 0.3 * w / wmax, False
        if i == j:
            out = pos[i] - center  # (2,)
            out = out / (np.linalg.norm(out) or 1.0)
            loop = 0.11
            ax.add_patch(Circle(pos[i] + (r + loop) * out, loop, fill=False, lw=width, alpha=alpha,
                                color=color, zorder=1))
            if label:
                ax.text(*(pos[i] + (r + 2 * loop + 0.11) * out), fmt.format(w), ha="center",
                        va="center", fontsize=fontsize, bbox=label_box, zorder=5)
            continue
        a, b = pos[j], pos[i]  # (2,), (2,): the message leaves j and arrives at i
        dx, dy = b - a
        ctrl = (a + b) / 2 + rad * np.array([dy, -dx])  # arc3's control point, (2,)
        start = a + r * (ctrl - a) / np.linalg.norm(ctrl - a)  # leave the node's rim towards ctrl
        end = b + r * (ctrl - b) / np.linalg.norm(ctrl - b)  # arrive at the rim from ctrl
        ax.add_patch(FancyArrowPatch(start, end, connectionstyle=f"arc3,rad={rad}",
                                     arrowstyle="-|>", mutation_scale=10 + 6 * w / wmax,
                                     lw=width, alpha=alpha, color=color,
                                     shrinkA=0, shrinkB=2, zorder=2))
        if label:
            s_ = 0.7  # along the quadratic Bezier from j, so near the head i
            sx, sy = end - start
            c2 = (start + end) / 2 + rad * np.array([sy, -sx])
            p = (1 - s_) ** 2 * start + 2 * s_ * (1 - s_) * c2 + s_**2 * end
            ax.text(*p, fmt.format(w), ha="center", va="center", fontsize=fontsize, bbox=label_box,
                    zorder=5)
    for k, ((x, y), name) in enumerate(zip(pos, graph.labels)):
        ring = "tab:blue" if k == highlight else "black"
        ax.add_patch(Circle((x, y), r, color="white", ec=ring, lw=2.0 if k == highlight else 1.0, zorder=3))
        ax.text(x, y, name, ha="center", va="center", fontsize=fontsize, zorder=4)
    margin = r + 0.5 if show_weights else r + 0.3
    ax.set_xlim(pos[:, 0].min() - margin, pos[:, 0].max() + margin)
    ax.set_ylim(pos[:, 1].min() - margin, pos[:, 1].max() + margin)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title)
    return _finish(ax.figure, own)


def plot_model_adjacencies(models: dict, structure=None):
    """One heatmap panel per model's graph (:func:`attention_graph.graph.five_models`), 3 × 2 grid.

    ``models`` maps a name to (Y, AttentionGraph). ``structure``, an AttentionGraph of the fixed
    graph, fills the last panel when there are five models; otherwise that panel is left empty.
    """
    fig, axes = plt.subplots(3, 2, figsize=(7.6, 10.6))
    top = max(float(graph.W.max()) for _, graph in models.values())  # one colour scale for the models
    panels = [(name, graph, "{:.3f}", "Blues", top) for name, (_, graph) in models.items()]
    if structure is not None:
        panels.append(("the fixed graph: $A + I$", structure, "{:.0f}", "Oranges", None))
    for ax, (name, graph, fmt, cmap, vmax) in zip(axes.flat, panels):
        plot_heatmap(graph, ax=ax, title=name, fmt=fmt, cmap=cmap, vmax=vmax)
        for text in ax.texts:
            text.set_fontsize(10.5)
        ax.set_title(name, fontsize=12)
        ax.set_xlabel("")
        ax.set_ylabel("")
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax in axes[:, 0]:
        ax.set_ylabel("node i (attends)")
    for ax in axes[-1, :]:
        ax.set_xlabel("node j (attended to)")
    return _finish(fig)


def plot_plane_movement(X, Y, labels, ax=None, *, title: str | None = None):
    """The plane of a 2-d attention layer: each row's arrow from x_i to y_i, and the mean of the x_i.

    ``X`` and ``Y`` are (n, 2): the inputs and the outputs Y = W V of the layer (V = X for the
    worked example). Open circles are the inputs, filled dots the outputs; the cross is x̄.
    """
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
    return _finish(ax.figure, own)


def plot_centrality_bars(graph, series: dict, ax=None, *, title: str | None = None):
    """Grouped bars, one group per node of ``graph`` and one bar per entry of ``series`` (name → (n,))."""
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(6.0, 3.8))
    width = 0.8 / max(len(series), 1)
    x = np.arange(graph.n)  # (n,)
    for k, (name, values) in enumerate(series.items()):
        ax.bar(x + (k - (len(series) - 1) / 2) * width, values, width, label=name)
    ax.axhline(1 / graph.n, color="grey", ls=":", lw=1, label=f"uniform, 1/{graph.n}")
    ax.set_xticks(x, graph.labels)
    ax.set_ylabel("share of the total")
    ax.legend(frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2)
    if title:
        ax.set_title(title)
    return _finish(ax.figure, own)


def plot_laplacian_spectra(spectra: dict, ax=None, *, title: str | None = None):
    """Eigenvalues of I − W in the complex plane (name → complex array), inside the disc |λ − 1| ≤ 1."""
    own = ax is None
    if own:
        fig, (ax, ax_zoom) = plt.subplots(1, 2, figsize=(8.0, 4.2), gridspec_kw={"width_ratios": [1, 1.2]})
    ax.add_patch(Circle((1.0, 0.0), 1.0, fill=False, ls="--", color="grey", lw=1))
    markers = "ox^sd"
    top = max(max(float(np.abs(np.asarray(lam).imag).max()) for lam in spectra.values()), 1e-12)
    for k, (name, lam) in enumerate(spectra.items()):
        lam = np.asarray(lam, dtype=complex)  # (n,)
        for a in ((ax, ax_zoom) if own else (ax,)):
            a.plot(lam.real, lam.imag, markers[k % len(markers)], ms=6, alpha=0.8, label=name,
                   mfc="none" if k else None)
    ax.axhline(0, color="grey", lw=0.5)
    ax.axvline(0, color="grey", lw=0.5)
    ax.set_xlim(-0.1, 2.1)
    ax.set_ylim(-1.05, 1.05)
    ax.set_aspect("equal")
    ax.set_xlabel(r"Re $\lambda$")
    ax.set_ylabel(r"Im $\lambda$")
    ax.set_title("the disc $|\\lambda - 1| \\leq 1$", fontsize=10)
    if own:
        ax_zoom.axhline(0, color="grey", lw=0.5)
        ax_zoom.set_ylim(-1.3 * top, 1.3 * top)
        ax_zoom.set_xlabel(r"Re $\lambda$")
        ax_zoom.set_title("the same, imaginary axis magnified", fontsize=10)
        fig.legend(*ax.get_legend_handles_labels(), frameon=False, fontsize=9, ncol=2,
                   loc="lower center", bbox_to_anchor=(0.5, 0.0))
        fig.tight_layout(rect=(0, 0.14, 1, 1))
        plt.close(fig)
        return _finish(fig, own=False)
    if title:
        ax.set_title(title)
    return _finish(ax.figure, own)


def plot_fiedler_vector(graph, u, groups, ax=None, *, title: str | None = None):
    """Bars of the Fiedler vector u, one per node, coloured by the community its sign gives."""
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(5.0, 2.8))
    colors = np.where(np.asarray(groups) == 0, "tab:blue", "tab:orange")
    ax.bar(range(graph.n), u, color=colors)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(range(graph.n), graph.labels)
    ax.set_ylabel(r"Fiedler vector $\hat u_i$")
    if title:
        ax.set_title(title)
    return _finish(ax.figure, own)


def plot_head_graphs(heads, titles):
    """One column per head: its attention graph on top, its heatmap below (a multigraph, head by head)."""
    h = len(heads)
    fig, axes = plt.subplots(2, h, figsize=(3.6 * h, 7.0), gridspec_kw={"height_ratios": [1, 1]},
                             squeeze=False)
    top = max(float(g.W.max()) for g in heads)  # the heads share one colour scale
    for col, (graph, name) in enumerate(zip(heads, titles)):
        plot_attention_graph(graph, ax=axes[0, col], title=name)
        plot_heatmap(graph, ax=axes[1, col], vmax=top)
        if col:
            axes[1, col].set_ylabel("")
    return _finish(fig)


def plot_rollout_layers(layers, rollouts: dict):
    """Top row: heatmaps of W⁽¹⁾ … W⁽ᴸ⁾. Bottom row: each rollout of ``rollouts`` (title → graph)."""
    L = len(layers)
    cols = max(L, len(rollouts))
    fig, axes = plt.subplots(2, cols, figsize=(2.1 * cols + 0.6, 5.2), squeeze=False)
    top = max(float(g.W.max()) for g in list(layers) + list(rollouts.values()))  # one scale for all
    for k, g in enumerate(layers, 1):
        plot_heatmap(g, ax=axes[0, k - 1], title=f"layer {k}: $W^{{({k})}}$", fmt="{:.2f}", vmax=top,
                     fontsize=10)
    for ax, (name, g) in zip(axes[1], rollouts.items()):
        plot_heatmap(g, ax=ax, title=name, fmt="{:.2f}", cmap="Purples", vmax=top, fontsize=10)
    for ax in axes[1, len(rollouts):]:
        ax.axis("off")
    for ax in axes.ravel():
        ax.set_xlabel("key j")
        ax.set_ylabel("")
        ax.tick_params(labelsize=9)
        ax.title.set_fontsize(10)
    for ax in axes[:, 0]:
        ax.set_ylabel("query i")
    return _finish(fig)


def plot_club_split(graph, groups, pos, ax=None, *, title: str | None = None, wrong=None):
    """The club: an edge per friendship, as wide as the mutual attention (W + Wᵀ)/2; nodes by group.

    ``groups`` colours the nodes (0 blue, 1 orange); nodes listed in ``wrong`` get a thick red ring.
    """
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(6.4, 5.6))
    pos = np.asarray(pos, dtype=float)  # (n, 2)
    A_s = (graph.W + graph.W.T) / 2  # (n, n)
    top = max(float(A_s[~np.eye(graph.n, dtype=bool)].max()), 1e-12)
    for i, j in zip(*np.nonzero(np.triu(A_s, k=1))):
        ax.plot(*pos[[i, j]].T, color="grey", lw=0.3 + 4.0 * A_s[i, j] / top, alpha=0.6, zorder=1)
    colors = np.where(np.asarray(groups) == 0, "tab:blue", "tab:orange")
    ax.scatter(pos[:, 0], pos[:, 1], s=260, c=colors, edgecolors="black", linewidths=0.6, zorder=2)
    if wrong is not None and len(wrong):
        w = np.asarray(wrong, dtype=int)
        ax.scatter(pos[w, 0], pos[w, 1], s=560, facecolors="none", edgecolors="red", linewidths=2.2,
                   zorder=3)
    for (x, y), name in zip(pos, graph.labels):
        ax.text(x, y, name, ha="center", va="center", fontsize=8, zorder=4)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10)
    return _finish(ax.figure, own)


def plot_seed_sweep(scores, *, baseline: float, random_q95: float, ax=None):
    """ARI of the communities for each seed (dots), the mask-only baseline and a random split's 95th
    percentile (lines)."""
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(6.0, 3.6))
    scores = np.asarray(scores, dtype=float)  # (n_seeds,)
    ax.plot(np.arange(len(scores)), scores, "o", label="attention graph, one seed each")
    ax.axhline(baseline, color="tab:green", ls="--", label="uniform attention on the same mask")
    ax.axhline(random_q95, color="tab:red", ls=":", label="random split, 95th percentile")
    ax.set_xlabel("seed of the projections")
    ax.set_ylabel("adjusted Rand index")
    ax.set_xticks(range(len(scores)))
    ax.tick_params(axis="x", labelsize=7)
    ax.set_ylim(min(-0.05, scores.min() - 0.05), 1.05)
    ax.legend(frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2)
    return _finish(ax.figure, own)


def plot_pagerank_vs_degree(degree, rank, labels, ax=None, *, top: int = 3):
    """PageRank of the attention graph against the degree of each member; the ``top`` ranked named."""
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(5.0, 3.4))
    degree, rank = np.asarray(degree, dtype=float), np.asarray(rank, dtype=float)  # (n,), (n,)
    ax.plot(degree, rank, "o", alpha=0.7)
    for i in np.argsort(-rank)[:top]:
        ax.annotate(f"member {labels[i]}", (degree[i], rank[i]), textcoords="offset points",
                    xytext=(-6, 6), ha="right", fontsize=8)
    ax.set_xlabel("degree (number of friends)")
    ax.set_ylabel("PageRank of the attention graph")
    return _finish(ax.figure, own)


def plot_blockwise_scaling(results: dict):
    """Peak memory and time of dense and blockwise attention against n, from the blockwise benchmark.

    ``results`` is the ``"results"`` entry of ``attention_graph/data/bench_blockwise.json``. The memory panel
    marks the target and the size of one dense n × n float64 matrix.
    """
    fig, (ax_mem, ax_time) = plt.subplots(1, 2, figsize=(8.0, 3.6))
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
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())  # y keeps its labels
    return _finish(fig)


def plot_block_size_sweep(results: dict):
    """Peak memory and time of blockwise attention against the block size, at one n."""
    sweep = results["block_size_sweep"]
    cases = sorted(sweep["cases"], key=lambda c: c["block_size"])
    b = [c["block_size"] for c in cases]
    # Drawn as Fig. "blockwise scaling" is: memory left, time right, both log-log, blockwise in the
    # second colour of the cycle with squares.
    fig, (ax_mem, ax_time) = plt.subplots(1, 2, figsize=(9.0, 3.6))
    color = plt.rcParams["axes.prop_cycle"].by_key()["color"][1]
    ax_mem.loglog(b, [c["traced_mb"] for c in cases], "s-", color=color)
    ax_time.loglog(b, [c["seconds"] for c in cases], "s-", color=color)
    ax_mem.set_ylabel("peak memory of the call (MiB)")
    ax_time.set_ylabel("median time (s)")
    for ax in (ax_mem, ax_time):
        ax.set_xlabel(f"block size (keys per block), n = {sweep['n']}")
        ax.set_xticks(b, [str(x) for x in b])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())  # y keeps its labels
    return _finish(fig)


def plot_cycle_encodings(P, frequencies, coefficients):
    """The columns of a cycle's Laplacian encoding P (n, k) as dots, each on its fitted sinusoid.

    ``frequencies[c]`` is the χ of column c and ``coefficients[c]`` the (ψ₁, ψ₂) with
    P[:, c] = ψ₁ cos(2π χ j / n) + ψ₂ sin(2π χ j / n); the curve is drawn for continuous j.
    """
    n, k = P.shape
    cols = k if k <= 3 else 2  # at most three panels a row, so that the text stays legible
    rows = -(-k // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(2.6 * cols, 2.4 * rows), sharex=True, sharey=True,
                             squeeze=False)
    for ax in axes.flat[k:]:
        ax.axis("off")
    x = np.linspace(0, n, 400)  # (400,)
    for c, ax in enumerate(axes.flat[:k]):
        chi, (psi_1, psi_2) = frequencies[c], coefficients[c]
        theta = 2 * np.pi * chi * x / n  # (400,)
        ax.plot(x, psi_1 * np.cos(theta) + psi_2 * np.sin(theta), "-", color="grey", lw=1)
        ax.plot(np.arange(n), P[:, c], "o", ms=4, color="tab:blue")
        ax.axhline(0, color="black", lw=0.5)
        ax.set_title(f"column {c + 1} ($\\chi$ = {chi})", fontsize=9)
    for ax in axes[-1, :]:
        ax.set_xlabel("position $j$")
    for ax in axes[:, 0]:
        ax.set_ylabel("encoding")
    return _finish(fig)


def plot_sparse_benchmark(record: dict):
    """Log-log time and peak memory against n, dense against edge attention, from a bench record."""
    res = record["results"]
    rows = res["sizes"]
    dense = [r for r in rows if "dense_seconds" in r]
    n_all = np.array([r["n"] for r in rows])  # (sizes,)
    n_dense = np.array([r["n"] for r in dense])  # (dense sizes,)
    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(8.0, 3.6))
    ax_t.loglog(n_dense, [r["dense_seconds"] for r in dense], "o-", label="dense, masked")
    ax_t.loglog(n_all, [r["sparse_seconds"] for r in rows], "s-", label="edge_attention")
    ax_t.loglog(n_all, [r["csr_seconds"] for r in rows], "^:", label="lean CSR formulation")
    ax_t.set_xlabel(f"nodes n (E = {res['degree']:d} n)")
    ax_t.set_ylabel("seconds per call (median)")
    ax_t.legend(frameon=False, fontsize=8)
    ax_m.loglog(n_dense, [r["dense_peak_bytes"] for r in dense], "o-", label="dense, masked")
    ax_m.loglog(n_all, [r["sparse_peak_bytes"] for r in rows], "s-", label="edge_attention")
    ax_m.loglog(n_all, 8.0 * n_all**2, ":", color="grey", label="$8n^2$ bytes: one dense W")
    ax_m.set_xlabel("nodes n")
    ax_m.set_ylabel("peak bytes allocated in the call")
    ax_m.legend(frameon=False, fontsize=8)
    return _finish(fig)


# --- Derivation chapters: softmax and weighted sums ------------------------------------------------



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
    return _finish(fig)


def convex_hull_2d(points):
    """Vertices of the convex hull of 2-d points, counter-clockwise (Andrew's monotone chain). (h, 2)."""
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
        for name, v, y in zip(labels, V, Y):
            away = v - y  # (2,): from the output back past the value, so no cross covers the label
            away = away / (np.linalg.norm(away) or 1.0)
            ax.annotate(str(name), v, textcoords="offset points", xytext=11 * away, fontsize=10,
                        ha="center", va="center", zorder=5,
                        bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.8))
    ax.margins(0.1)  # room for the labels of the outermost values
    ax.set_aspect("equal")
    ax.legend(frameon=False, fontsize=8, loc="best")
    if title:
        ax.set_title(title)
    return _finish(ax.figure, own)


# --------------------------------------------------------------------------------------------------
# The backward pass and training (book/blockwise.md, book/training.md)
# --------------------------------------------------------------------------------------------------


def plot_backward_benchmark(results: dict):
    """Peak memory (traced, above the inputs) and time of the dense and blockwise backward against n.

    ``results`` is the ``"results"`` entry of ``attention_graph/data/bench_backward.json``; the
    dense peak extrapolated to the target n is drawn as an open marker.
    """
    fig, (ax_mem, ax_time) = plt.subplots(1, 2, figsize=(8.0, 3.6))
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
        ax.legend(frameon=False, fontsize=8)
    return _finish(fig)


def plot_learned_graphs(runs: list[dict]):
    """For each run of ``training.train_sequence_model``: mean attention before and after training.

    Rows are queries i, columns keys j; a red dot marks each expected edge i → source[i].
    """
    fig, axes = plt.subplots(len(runs), 2, figsize=(6.4, 3.0 * len(runs)), squeeze=False)
    for row, run in zip(axes, runs):
        n = len(run["source"])
        for ax, key, when in ((row[0], "W_before", "before"), (row[1], "W_after", "after")):
            ax.imshow(run[key], cmap="Blues", vmin=0.0, vmax=1.0)
            ax.plot(np.asarray(run["source"]), np.arange(n), "o", ms=3, color="tab:red")
            ax.set_title(f"{run['task']}: {when} training", fontsize=9)
            ax.set_xticks(range(n))
            ax.set_yticks(range(n))
            ax.set_xlabel("j (key)")
            ax.set_ylabel("i (query)")
    return _finish(fig)


def plot_share_curves(runs: list[dict]):
    """The share of attention on the expected edges over training steps, one line per task."""
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    styles = [dict(ls="-", marker="o", lw=2.4, alpha=0.6), dict(ls="--", marker="s", mfc="none", lw=1.4)]
    for k, run in enumerate(runs):
        every = max(len(run["steps"]) // 8, 1)
        ax.plot(run["steps"], run["share"], markevery=(k * every // 2, every), ms=5, label=run["task"],
                **styles[k % len(styles)])
    ax.axhline(1 / len(runs[0]["source"]), color="grey", ls=":", lw=0.8, label="uniform attention")
    ax.set_xlabel("Adam step")
    ax.set_ylabel("mass on the expected edges")
    ax.set_ylim(0, 1.02)
    ax.legend(frameon=False, fontsize=8)
    return _finish(fig)


def plot_club_accuracy(accuracies: dict):
    """Accuracy on the unlabelled members, one dot per seed, one column per model."""
    fig, ax = plt.subplots(figsize=(6.0, 3.2))
    for k, values in enumerate(accuracies.values()):
        values = np.asarray(values, dtype=float)  # (seeds,)
        jitter = np.linspace(-0.15, 0.15, len(values))  # (seeds,)
        ax.plot(k + jitter, values, "o", ms=3, alpha=0.7)
        ax.plot([k - 0.25, k + 0.25], [values.mean()] * 2, "k-", lw=1.2)
    ax.set_xticks(range(len(accuracies)), list(accuracies), fontsize=8)
    ax.set_ylabel("accuracy, unlabelled members")
    return _finish(fig)


def plot_fixed_and_computed(fixed, computed, *, titles=("fixed: the path", "computed: attention"),
                            highlight: int | None = None):
    """Two attention graphs of the same nodes, one above the other, at the same positions.

    The book's first figure: a GCN's fixed adjacency on the article's path (top) and the complete
    graph whose weights one attention layer computes from the input (bottom). Arrows run from j to
    i, the way messages flow; with ``highlight`` = i only the messages into node i are coloured and
    labelled with their weights (all of them otherwise).
    """
    if fixed.labels != computed.labels:
        raise ValueError(f"fixed and computed must have the same nodes; got {fixed.labels} "
                         f"and {computed.labels}")
    return _graph_panels([fixed, computed], titles, highlight=highlight, columns=1)


def plot_fixed_to_computed(graphs: dict, *, highlight: int | None = None):
    """From a fixed graph to a computed one: one panel per model (title → AttentionGraph), 2 columns.

    The closing figure: the same nodes at the same places, arrows from j to i; with ``highlight``
    only the messages into that node are coloured and labelled with their weights.
    """
    return _graph_panels(list(graphs.values()), list(graphs), highlight=highlight, columns=2,
                         panel=4.0, fontsize=11)


def _graph_panels(graphs, titles, *, highlight=None, columns: int = 1, panel: float = 4.6,
                  fontsize: float = 11):
    """Attention graphs of the same nodes in a grid of ``columns``, at the same positions, titled below."""
    rows = -(-len(graphs) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(panel * columns, (panel - 0.3) * rows), squeeze=False)
    pos = circle_layout(graphs[0].n)  # (n, 2), the same places in every panel
    for ax, graph, title in zip(axes.flat, graphs, titles):
        plot_attention_graph(graph, ax, pos=pos, show_weights=True, min_weight=1e-12,
                             highlight=highlight, fontsize=fontsize, node_radius=0.2)
        ax.text(0.5, -0.01, title, transform=ax.transAxes, ha="center", va="top", fontsize=fontsize + 1)
    for ax in axes.flat[len(graphs):]:
        ax.axis("off")
    fig = _finish(fig, own=True)
    fig.subplots_adjust(hspace=0.12)  # room for the titles under the panels
    return fig


# --- Multi-head attention, the block, attention patterns -------------------------------------------

__all__ += ["plot_patterns", "plot_pattern_scaling", "plot_bipartite"]


def plot_patterns(patterns: dict, n: int):
    """Each pattern's (n, n) mask as a black-and-white grid: row i = query, column j = key."""
    cols = min(len(patterns), 3)  # at most three a row, so that the names stay legible
    rows = -(-len(patterns) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(1.6 * cols, 2.0 * rows), squeeze=False)
    for ax in axes.flat[len(patterns):]:
        ax.axis("off")
    for ax, (name, E) in zip(axes.flat, patterns.items()):
        M = np.zeros((n, n), dtype=bool)  # (n, n)
        M[E[:, 0], E[:, 1]] = True
        ax.imshow(M, cmap="Greys", vmin=0, vmax=1, interpolation="nearest")
        ax.set_title(name, fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
    return _finish(fig)


def plot_pattern_scaling(comparison: dict):
    """Edges (log-log) and maximum path length against n, one line per pattern."""
    fig, (ax_e, ax_d) = plt.subplots(1, 2, figsize=(8.0, 3.5))
    markers, styles = "os^vDx", ["-", "--", "-", "-", "-", "--"]
    for marker, style, (name, by_n) in zip(markers, styles, comparison.items()):
        ns = sorted(by_n)
        ax_e.loglog(ns, [by_n[n]["edges"] for n in ns], marker + style, label=name, mfc="none")
        ax_d.loglog(ns, [by_n[n]["max_path"] for n in ns], marker + style, label=name, mfc="none")
    for ax in (ax_e, ax_d):
        ax.set_xticks(ns, [str(n) for n in ns])
        ax.minorticks_off()
    ax_e.set_xlabel("tokens n")
    ax_e.set_ylabel("edges of one layer")
    ax_d.set_xlabel("tokens n")
    ax_d.set_ylabel("maximum path length (layers)")
    ax_d.legend(frameon=False, fontsize=8)
    return _finish(fig)


def plot_bipartite(W, query_labels, key_labels, ax=None, *, title: str | None = None):
    """Cross-attention as a bipartite graph: queries left, keys right, edge width ∝ W_ij."""
    own = ax is None
    if own:
        _, ax = plt.subplots(figsize=(4.4, 3.0))
    n_q, n_k = len(query_labels), len(key_labels)
    yq = [(n_k - 1) / 2 - i + (n_q - 1) / 2 for i in range(n_q)]
    yk = [n_k - 1 - j for j in range(n_k)]
    for i in range(n_q):
        for j in range(n_k):
            if W[i][j] > 0:
                ax.plot([0, 1], [yq[i], yk[j]], color="tab:blue", lw=0.5 + 6 * float(W[i][j]),
                        alpha=0.7, solid_capstyle="round")
                ax.annotate(f"{float(W[i][j]):.2f}", (0.72, yq[i] + 0.72 * (yk[j] - yq[i])),
                            fontsize=7, ha="center", va="center",
                            bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none"})
    for i, lab in enumerate(query_labels):
        ax.text(-0.05, yq[i], lab, ha="right", va="center")
    for j, lab in enumerate(key_labels):
        ax.text(1.05, yk[j], lab, ha="left", va="center")
    ax.scatter([0] * n_q, yq, s=120, color="tab:orange", zorder=3)
    ax.scatter([1] * n_k, yk, s=120, color="tab:green", zorder=3)
    ax.set_xlim(-0.5, 1.5)
    ax.axis("off")
    if title:
        ax.set_title(title)
    return _finish(ax.figure, own)


# --- One step per picture: Q/K/V, the block as a graph layer, the backward graph ------------------

__all__ += ["plot_qkv", "plot_block_graph", "plot_backward_graph"]

# One colour per object across these pictures: queries, keys, values, outputs.
QKV_COLORS = {"x": "0.35", "q": "tab:blue", "k": "tab:orange", "v": "tab:green", "y": "tab:purple"}


def _vector(ax, xy, values, color, name, *, cell: float = 0.62, fontsize: float = 11):
    """One row vector drawn as a strip of cells, each holding its entry, its name to the left."""
    x0, y0 = xy
    for c, value in enumerate(values):
        ax.add_patch(plt.Rectangle((x0 + c * cell, y0 - cell / 2), cell, cell, fc=color, alpha=0.18,
                                   ec=color, lw=1.2))
        ax.text(x0 + (c + 0.5) * cell, y0, f"{value:.2f}".replace("-", "−"), ha="center", va="center",
                fontsize=fontsize - 2)
    ax.text(x0 - 0.1, y0, name, ha="right", va="center", fontsize=fontsize, color=color)
    return x0 + len(values) * cell  # the right end of the strip


def plot_orientation(graph):
    """W_ij two ways, stacked for a narrow page: the heatmap (row i attends to column j) above
    the graph it is the adjacency of, where the weight W_ij is an arrow from j to i, the way v_j flows."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(4.4, 8.2), gridspec_kw={"height_ratios": [1, 1.1]})
    plot_heatmap(graph, top, fmt="{:.1f}", fontsize=12, title="$W_{ij}$: row $i$ attends to column $j$")
    plot_attention_graph(graph, bottom, show_weights=True, fmt="{:.1f}", node_radius=0.2, fontsize=12,
                         title="the same weights: $v_j$ flows from $j$ to $i$")
    return _finish(fig)


def plot_qkv(X, W_Q, W_K, W_V, labels, i: int):
    """Top: one input row x_i becomes three vectors q_i, k_i, v_i. Bottom: q_i meets every key.

    ``X`` is (n, d_model); the projections as in :func:`attention_graph.project`. The bottom panel
    draws each key k_j as a node with an arrow from j to i, the way j's value will flow, labelled
    with the score q_i · k_j / √d.
    """
    X = np.asarray(X, dtype=float)  # (n, d_model)
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # (n, d), (n, d), (n, d_v)
    S = Q @ K.T / np.sqrt(Q.shape[1])  # (n, n)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(4.8, 6.8), gridspec_kw={"height_ratios": [1, 1.35]})
    end = _vector(top, (0.2, 1.0), X[i], QKV_COLORS["x"], "$x_i$")
    for y, key, M, name in ((1.8, "q", Q, "$q_i$"), (1.0, "k", K, "$k_i$"), (0.2, "v", V, "$v_i$")):
        top.annotate("", xy=(2.45, y), xytext=(end + 0.05, 1.0),
                     arrowprops=dict(arrowstyle="-|>", color=QKV_COLORS[key], lw=1.5))
        top.text(0.5 * (end + 2.45) - 0.12, 0.5 * (1.0 + y) + 0.17, f"$W_{key.upper()}$",
                 color=QKV_COLORS[key], ha="center", va="center", fontsize=10)
        _vector(top, (2.95, y), M[i], QKV_COLORS[key], name)
    top.set_xlim(-0.6, 4.9)
    top.set_ylim(-0.2, 2.2)
    top.axis("off")
    top.set_title(f"one row, three vectors: {labels[i]}", fontsize=11)
    n = X.shape[0]
    others = [j for j in range(n)]
    angles = np.pi / 2 - 2 * np.pi * np.arange(n) / n  # (n,)
    pos = np.column_stack([np.cos(angles), np.sin(angles)]) * 1.45  # (n, 2), keys on a circle
    for j in others:
        tail, head = pos[j] * 0.82, pos[j] * 0.2  # from key j towards the query in the middle
        bottom.annotate("", xy=head, xytext=tail,
                        arrowprops=dict(arrowstyle="-|>", color=QKV_COLORS["k"], lw=1.4, shrinkA=4))
        mid = 0.5 * (tail + head) + 0.16 * np.array([-pos[j][1], pos[j][0]]) / 1.45
        bottom.text(*mid, f"{S[i, j]:.2f}".replace("-", "−"), ha="center", va="center", fontsize=11,
                    bbox=dict(boxstyle="round,pad=0.12", fc="white", ec="none", alpha=0.9))
        bottom.add_patch(Circle(pos[j], 0.4, fc="white", ec=QKV_COLORS["k"], lw=1.5))
        bottom.text(*pos[j], f"$k$\n{labels[j]}", ha="center", va="center", fontsize=10)
    bottom.add_patch(Circle((0, 0), 0.4, fc="white", ec=QKV_COLORS["q"], lw=2))
    bottom.text(0, 0, f"$q$\n{labels[i]}", ha="center", va="center", fontsize=10)
    bottom.set_xlim(-2.0, 2.0)
    bottom.set_ylim(-2.0, 2.0)
    bottom.set_aspect("equal")
    bottom.axis("off")
    bottom.set_title(r"the query meets every key: $q \cdot k_j/\sqrt{d}$", fontsize=11)
    return _finish(fig)


def plot_block_graph(W, labels):
    """The Transformer block as one graph layer, for n tokens (one head's weights ``W``, (n, n)).

    Bottom row: the inputs x_j. Middle row: x'_i = x_i + Σ_j W_ij (x_j W_V W_O), the rows of the
    page's X' (drawn "x'", not "h", the head index), attention arrows from every j to i (width by
    W_ij) and the residual as a straight dashed self-loop x_i → x'_i. Top row:
    y_i = x'_i + FFN(x'_i), the same small network on every node, with its own residual.
    """
    W = np.asarray(W, dtype=float)  # (n, n)
    n = W.shape[0]
    fig, ax = plt.subplots(figsize=(5.6, 5.4))
    xs = np.arange(n) * 1.5  # (n,)
    rows = {"x": 0.0, "h": 2.2, "y": 4.0}
    top = max(float(W.max()), 1e-12)
    for i in range(n):
        for j in range(n):
            if i == j or W[i, j] <= 0:
                continue
            ax.annotate("", xy=(xs[i], rows["h"] - 0.28), xytext=(xs[j], rows["x"] + 0.28),
                        arrowprops=dict(arrowstyle="-|>", color="tab:blue", alpha=0.25 + 0.75 * W[i, j] / top,
                                        lw=0.6 + 3.5 * W[i, j] / top, shrinkA=0, shrinkB=0))
        # the attention's own self-loop W_ii competes in the softmax; the residual does not
        ax.annotate("", xy=(xs[i] - 0.12, rows["h"] - 0.28), xytext=(xs[i] - 0.12, rows["x"] + 0.28),
                    arrowprops=dict(arrowstyle="-|>", color="tab:blue", alpha=0.25 + 0.75 * W[i, i] / top,
                                    lw=0.6 + 3.5 * W[i, i] / top, shrinkA=0, shrinkB=0))
        ax.annotate("", xy=(xs[i] + 0.16, rows["h"] - 0.28), xytext=(xs[i] + 0.16, rows["x"] + 0.28),
                    arrowprops=dict(arrowstyle="-|>", color="black", ls="--", lw=1.4, shrinkA=0, shrinkB=0))
        ax.add_patch(plt.Rectangle((xs[i] - 0.42, 2.9), 0.84, 0.42, fc="tab:green", alpha=0.25,
                                   ec="tab:green"))
        ax.text(xs[i], 3.11, "FFN", ha="center", va="center", fontsize=9)
        ax.annotate("", xy=(xs[i], 2.9), xytext=(xs[i], rows["h"] + 0.28),
                    arrowprops=dict(arrowstyle="-", color="tab:green", lw=1.4, shrinkA=0, shrinkB=0))
        ax.annotate("", xy=(xs[i], rows["y"] - 0.28), xytext=(xs[i], 3.32),
                    arrowprops=dict(arrowstyle="-|>", color="tab:green", lw=1.4, shrinkA=0, shrinkB=0))
        ax.annotate("", xy=(xs[i] + 0.5, rows["y"] - 0.2), xytext=(xs[i] + 0.5, rows["h"] + 0.2),
                    arrowprops=dict(arrowstyle="-|>", color="black", ls="--", lw=1.0,
                                    connectionstyle="arc3,rad=-0.3", shrinkA=0, shrinkB=0))
        for key, y in rows.items():
            ax.add_patch(Circle((xs[i], y), 0.28, fc="white", ec="black", zorder=3))
            ax.text(xs[i], y, {"h": "$x'$"}.get(key, f"${key}$"), ha="center", va="center", fontsize=11,
                    zorder=4)
        ax.text(xs[i], -0.55, labels[i], ha="center", va="top", fontsize=10)
    ax.text(xs[-1] + 0.95, 1.1, "attention:\nmessages\nfrom j to i", fontsize=9, va="center", color="tab:blue")
    ax.text(xs[-1] + 0.95, 3.1, "node-wise\nupdate", fontsize=9, va="center", color="tab:green")
    ax.plot([], [], "--", color="black", label="residual: a self-loop outside the softmax")
    ax.plot([], [], "-", color="tab:blue", label="attention edge, width by $W_{ij}$")
    ax.legend(frameon=False, fontsize=9, loc="upper center", bbox_to_anchor=(0.5, 0.02), ncol=1)
    ax.set_xlim(-0.7, xs[-1] + 2.4)
    ax.set_ylim(-1.0, 4.5)
    ax.set_aspect("equal")
    ax.axis("off")
    return _finish(fig)


def plot_backward_graph():
    """The computation graph of attention: forward arrows (black) and the gradients flowing back (red).

    Nodes Q, K, V, S, W, Y and the loss 𝒥; each backward arrow is labelled with the equation of
    ``book/backward.md`` that carries the gradient along it.
    """
    pos = {"Q": (0.0, 2.3), "K": (0.0, 0.3), "S": (2.3, 1.3), "W": (4.3, 1.3), "V": (4.3, -0.7),
           "Y": (6.2, 0.3), "L": (7.9, 0.3)}
    names = {"Q": "$Q$", "K": "$K$", "V": "$V$", "S": "$S$", "W": "$W$", "Y": "$Y$",
             "L": r"loss $\mathcal{J}$"}
    forward = [("Q", "S"), ("K", "S"), ("S", "W"), ("W", "Y"), ("V", "Y"), ("Y", "L")]
    backward = [("L", "Y", r"$\mathrm{d}Y$"), ("Y", "W", r"$\mathrm{d}W = \mathrm{d}Y\,V^\top$"),
                ("Y", "V", r"$\mathrm{d}V = W^\top \mathrm{d}Y$"), ("W", "S", r"$\mathrm{d}S$"),
                ("S", "Q", r"$\mathrm{d}Q = \mathrm{d}S\,K/\sqrt{d}$"),
                ("S", "K", r"$\mathrm{d}K = \mathrm{d}S^\top Q/\sqrt{d}$")]
    fig, ax = plt.subplots(figsize=(7.4, 3.9))
    for a, b in forward:
        ax.annotate("", xy=pos[b], xytext=pos[a],
                    arrowprops=dict(arrowstyle="-|>", color="black", lw=1.3, shrinkA=17, shrinkB=17,
                                    connectionstyle="arc3,rad=0.12"))
    for a, b, label in backward:
        ax.annotate("", xy=pos[b], xytext=pos[a],
                    arrowprops=dict(arrowstyle="-|>", color="tab:red", lw=1.3, ls="--", shrinkA=17,
                                    shrinkB=17, connectionstyle="arc3,rad=0.12"))
        mid = 0.5 * (np.array(pos[a]) + np.array(pos[b]))  # (2,)
        d = np.array(pos[b]) - np.array(pos[a])  # (2,)
        side = np.array([-d[1], d[0]]) / (np.linalg.norm(d) or 1.0)
        ax.text(*(mid + 0.42 * side), label, color="tab:red", ha="center", va="center", fontsize=10,
                bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.85))
    for key, (x, y) in pos.items():
        ax.text(x, y, names[key], ha="center", va="center", fontsize=12,
                bbox=dict(boxstyle="round,pad=0.35", fc="white", ec="black"))
    ax.plot([], [], "-", color="black", label="forward: computes")
    ax.plot([], [], "--", color="tab:red", label="backward: the gradient of $L$")
    ax.legend(frameon=False, fontsize=9, loc="upper right")
    ax.set_xlim(-0.6, 8.7)
    ax.set_ylim(-1.3, 2.8)
    ax.axis("off")
    return _finish(fig)


def plot_club_curves(early: dict, models):
    """Test accuracy against Adam steps, seed means, one line per model; a dot at the mean of the
    steps chosen on the held-out members and the mean test accuracy there (from training.early_stopping)."""
    fig, ax = plt.subplots(figsize=(6.0, 3.4))
    steps = np.asarray(early["record_steps"])  # (records,)
    for kind in models:
        r = early[kind]
        (line,) = ax.plot(steps, r["curve"], "-", lw=1.4, label=kind)
        ax.plot([np.mean(r["chosen"])], [np.mean(r["at_chosen"])], "o", color=line.get_color(), ms=5)
    ax.set_xlabel("Adam step")
    ax.set_ylabel("accuracy, test members")
    ax.set_ylim(0.85, 1.0)
    ax.legend(frameon=False, fontsize=8, loc="lower right")
    return _finish(fig)


def plot_softmax_row(p_raw, p_scaled, d: int):
    """The softmax weights of one row of scores q·k_j in d dimensions, without and with the 1/√d scale.

    Two bar panels on one weight axis (0 to 1), keys in the order of the row; the dashed line is a
    uniform row. The explorable of ``book/softmax.md`` starts from the right panel.
    """
    p_raw = as_matrix(np.atleast_2d(p_raw), "p_raw", shape_doc="(n_k,)")[0]  # (n_k,)
    p_scaled = as_matrix(np.atleast_2d(p_scaled), "p_scaled", shape_doc="(n_k,)")[0]  # (n_k,)
    n_k = p_raw.shape[0]
    fig, axes = plt.subplots(1, 2, figsize=(8.4, 2.8), sharey=True)
    for ax, p, title in ((axes[0], p_raw, r"unscaled, $q\cdot k_j$"),
                         (axes[1], p_scaled, r"scaled, $q\cdot k_j/\sqrt{d}$")):
        ax.bar(np.arange(n_k), p, color="0.35")
        ax.axhline(1.0 / n_k, color="grey", ls="--", lw=1)
        ax.set_ylim(0, 1.0)
        ax.set_xticks([])
        ax.set_xlabel(f"the {n_k} keys")
        ax.set_title(f"{title}, $d$ = {d}", fontsize=9)
    axes[0].set_ylabel("weight")
    return _finish(fig)
    return _finish(fig)


# --------------------------------------------------------------------------------------------------
# Sequences as graphs: positions, linear attention, decoding
# --------------------------------------------------------------------------------------------------
__all__ += ["plot_offset_kernel", "plot_score_panels", "plot_club_distance_bias", "plot_two_hop",
            "plot_feature_error", "plot_linear_benchmark", "plot_decoding_dag"]


def _arrow(ax, a, b, *, color="tab:blue", lw=1.0, alpha=1.0, shrink=9):
    """One arrow from point a to point b: a message travelling from a to b."""
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=9, lw=lw, alpha=alpha, color=color,
                                 shrinkA=shrink, shrinkB=shrink, zorder=2))


def plot_offset_kernel(G, offsets, kernel):
    """Left: the Gram matrix PE PEᵀ of the sinusoidal encodings (n, n); right: its value against i − j."""
    fig, (ax_g, ax_k) = plt.subplots(1, 2, figsize=(8.4, 3.4))
    im = ax_g.imshow(G, cmap="viridis")
    fig.colorbar(im, ax=ax_g, fraction=0.046, pad=0.04, label=r"$\mathrm{PE}_i \cdot \mathrm{PE}_j$")
    ax_g.set_xlabel("position j")
    ax_g.set_ylabel("position i")
    ax_k.plot(offsets, kernel, "-", color="tab:blue", lw=1.2)
    ax_k.set_xlabel("offset i − j")
    ax_k.set_ylabel(r"$\mathrm{PE}_i \cdot \mathrm{PE}_j$")
    ax_k.axhline(0, color="black", lw=0.5)
    return _finish(fig)


def plot_score_panels(panels: dict, *, xlabel="key position j", ylabel="query position i"):
    """Heatmaps of score matrices side by side, on one shared colour scale (−∞ entries blank)."""
    mats = [np.where(np.isfinite(M), M, np.nan) for M in panels.values()]
    lo = min(float(np.nanmin(M)) for M in mats)
    hi = max(float(np.nanmax(M)) for M in mats)
    fig, axes = plt.subplots(1, len(panels), figsize=(3.4 * len(panels) + 0.8, 3.3))
    axes = np.atleast_1d(axes)
    for ax, (title, M) in zip(axes, zip(panels, mats)):
        im = ax.imshow(M, cmap="viridis", vmin=lo, vmax=hi)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(xlabel)
    axes[0].set_ylabel(ylabel)
    fig.colorbar(im, ax=list(axes), fraction=0.046, pad=0.04)
    plt.close(fig)  # no tight_layout: it would not leave room for the shared colour bar
    return _finish(fig, own=False)


def plot_club_distance_bias(A, weights: dict, query: int):
    """The karate club, each member coloured by the weight query ``query`` gives it; one panel per
    entry of ``weights`` (name: (n,) row of W), on one shared colour scale."""
    pos = club_layout()  # (34, 2)
    G = nx.from_numpy_array(np.asarray(A))
    others = np.arange(len(pos)) != query  # (34,): the query's own weight is left out of the scale
    vmax = max(float(np.max(np.asarray(w)[others])) for w in weights.values())
    fig, axes = plt.subplots(1, len(weights), figsize=(4.2 * len(weights), 4.0))
    axes = np.atleast_1d(axes)
    for ax, (title, w) in zip(axes, weights.items()):
        nx.draw_networkx_edges(G, {v: pos[v] for v in G.nodes}, ax=ax, width=0.5, alpha=0.4)
        sc = ax.scatter(pos[others, 0], pos[others, 1], c=np.asarray(w)[others], cmap="Blues", vmin=0, vmax=vmax,
                        s=90, edgecolors="black", linewidths=0.5, zorder=3)
        ax.scatter([pos[query, 0]], [pos[query, 1]], s=90, color="white", edgecolors="black", lw=0.5, zorder=3)
        ax.scatter([pos[query, 0]], [pos[query, 1]], s=260, facecolors="none", edgecolors="tab:red", lw=1.6,
                   zorder=4)
        ax.set_title(title, fontsize=9)
        ax.axis("off")
    fig.colorbar(sc, ax=list(axes), fraction=0.03, pad=0.02, label=f"weight member {query} gives")
    plt.close(fig)  # no tight_layout: it would not leave room for the shared colour bar
    return _finish(fig, own=False)


def plot_two_hop(PQ, PK, query_labels, key_labels):
    """Linear attention's graph: keys (right) send to F feature nodes (middle), which send to the
    queries (left); edge width ∝ φ(k_j)_a and φ(q_i)_a. Arrows point the way messages flow."""
    PQ, PK = np.asarray(PQ, float), np.asarray(PK, float)  # (n_q, F), (n_k, F)
    n_q, F = PQ.shape
    n_k = PK.shape[0]
    fig, ax = plt.subplots(figsize=(6.0, 3.6))
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
    return _finish(fig)


def plot_feature_error(F, errors: dict, reference=None):
    """Error of random-feature attention against the number F of features (log-log), one line per
    entry of ``errors``; ``reference`` (F, c/√F) is drawn dotted."""
    fig, ax = plt.subplots(figsize=(5.2, 3.4))
    for (name, e), marker in zip(errors.items(), ("o-", "s-", "^-")):
        ax.loglog(F, e, marker, label=name)
    if reference is not None:
        ax.loglog(F, reference, ":", color="grey", label=r"slope $-1/2$")
    ax.set_xlabel("number of features F")
    ax.set_ylabel("error against softmax")
    ax.legend(frameon=False, fontsize=8)
    ax.minorticks_off()
    ax.set_xticks(F, [str(int(x)) for x in F])
    return _finish(fig)


def plot_linear_benchmark(results: dict):
    """Memory above the inputs and median time against n, linear against dense attention, from the
    ``"results"`` of ``bench_linear.json``; the memory target is dashed."""
    fig, (ax_m, ax_t) = plt.subplots(1, 2, figsize=(8.0, 3.6))
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
    return _finish(fig)


def plot_decoding_dag(n: int, weights):
    """The causal DAG of n tokens as decoding builds it: arrows j → i (messages flow from key j to
    query i); the newest token, n − 1, in red with the messages into it, their width ∝ ``weights`` (n,)."""
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    x = np.arange(n, dtype=float)  # (n,)
    w = np.asarray(weights, float)  # (n,)
    for i in range(n - 1):
        for j in range(i):
            ax.add_patch(FancyArrowPatch((x[j], 0), (x[i], 0), connectionstyle=f"arc3,rad={-0.45}",
                                         arrowstyle="-|>", mutation_scale=8, lw=0.6, color="grey", alpha=0.6,
                                         shrinkA=8, shrinkB=8))
    new = n - 1
    for j in range(new):
        ax.add_patch(FancyArrowPatch((x[j], 0), (x[new], 0), connectionstyle="arc3,rad=0.45", arrowstyle="-|>",
                                     mutation_scale=10, lw=0.6 + 5 * w[j] / w.max(), color="tab:red",
                                     shrinkA=8, shrinkB=8))
    ax.scatter(x[:-1], np.zeros(n - 1), s=200, color="white", edgecolors="black", zorder=3)
    ax.scatter([x[new]], [0], s=220, color="tab:red", edgecolors="black", zorder=3)
    for i in range(n):
        ax.text(x[i], 0, str(i), ha="center", va="center", fontsize=8, zorder=4,
                color="white" if i == new else "black")
    ax.text(x[new], 0.35, f"self-loop weight {w[new]:.2f}", ha="center", fontsize=8, color="tab:red")
    ax.set_xlim(-0.7, n - 0.3)
    ax.set_ylim(-1.45 * (n - 1) / 5 - 0.3, 1.45 * (n - 1) / 5 + 0.3)
    ax.axis("off")
    return _finish(fig)


# --- What the graph view explains: rank collapse, bottlenecks ---------------------------------------

__all__ += ["plot_collapse_bound", "plot_collapse_depth", "plot_causal_paths", "plot_sensitivity"]

_FLOOR = 1e-17  # log axes: a value that rounding made 0 is drawn at this floor


def plot_collapse_bound(study: dict):
    """Per graph, the measured spread ratio δ(X⁽ˡ⁾)/δ(X⁽⁰⁾) of the stack without skips against
    τ(W⁽ˡ⁾ ⋯ W⁽¹⁾) and ∏ τ(W⁽ᵐ⁾), on one shared log scale."""
    graphs = list(study["bounds"])
    fig, axes = plt.subplots(1, len(graphs), figsize=(8.0, 3.3), sharey=True)
    for ax, graph in zip(axes, graphs):
        run = study["runs"][graph]["attention only"][0]
        depth = np.arange(1, len(run["spread"]))  # (L,)
        ratio = np.maximum(run["spread"][1:] / run["spread"][0], _FLOOR)  # (L,)
        b = study["bounds"][graph]
        ax.semilogy(depth, np.maximum(b["bound"], _FLOOR), "--", color="grey", label=r"$\prod_m \tau_1(W^{(m)})$")
        ax.semilogy(depth, np.maximum(b["product"], _FLOOR), "-", color="tab:orange",
                    label=r"$\tau_1(W^{(l)} \cdots W^{(1)})$")
        ax.semilogy(depth, ratio, "o", ms=2.5, color="tab:blue", label=r"measured $\Delta(X^{(l)})/\Delta(X^{(0)})$")
        ax.set_title(graph)
        ax.set_xlabel("layer $l$")
        ax.set_ylim(_FLOOR / 3, 3.0)
    axes[0].set_ylabel("spread of the rows, relative")
    axes[1].legend(frameon=False, fontsize=8, loc="lower left")
    return _finish(fig)


def plot_collapse_depth(study: dict):
    """Per graph, the distance from rank one r(X⁽ˡ⁾) against depth for each variant: the median over
    the seeds (line) and their range (band), on one shared log scale."""
    graphs = list(study["runs"])
    fig, axes = plt.subplots(1, len(graphs), figsize=(8.0, 3.4), sharey=True)
    styles = ["-", ":", "--", "-"]
    for ax, graph in zip(axes, graphs):
        for style, (name, runs) in zip(styles, study["runs"][graph].items()):
            R = np.maximum(np.array([run["r"] for run in runs]), _FLOOR)  # (seeds, L + 1)
            depth = np.arange(R.shape[1])  # (L + 1,)
            line, = ax.semilogy(depth, np.median(R, axis=0), style, lw=1.4, label=name)
            ax.fill_between(depth, R.min(axis=0), R.max(axis=0), color=line.get_color(), alpha=0.15, lw=0)
        ax.set_title(graph)
        ax.set_xlabel("layer $l$")
        ax.set_ylim(_FLOOR / 3, 3.0)
    axes[0].set_ylabel(r"distance from rank one $\mathrm{res}(X^{(l)})$")
    axes[-1].legend(frameon=False, fontsize=8, loc="lower left")
    return _finish(fig)


def plot_causal_paths(n: int, n_layers: int, counts):
    """The causal graph unrolled over L layers: positions left to right, layer l above layer l − 1,
    an arrow from token j of layer l − 1 to token i ≥ j of layer l (the way messages flow). Each input
    token is labelled with its number of paths to the last token of the top layer, ``counts`` (n,)."""
    fig, ax = plt.subplots(figsize=(1.0 * n + 1.2, 0.9 * n_layers + 1.3))
    for layer in range(1, n_layers + 1):
        for i in range(n):
            for j in range(i + 1):
                ax.add_patch(FancyArrowPatch((j, layer - 1), (i, layer), arrowstyle="-|>", mutation_scale=7,
                                             lw=0.7, color="tab:blue", alpha=0.55, shrinkA=7, shrinkB=7))
    for layer in range(n_layers + 1):
        ax.scatter(range(n), [layer] * n, s=110, color="white", edgecolor="black", zorder=3)
    ax.scatter([n - 1], [n_layers], s=110, color="tab:orange", edgecolor="black", zorder=4)
    for j, c in enumerate(counts):
        ax.text(j, -0.42, str(int(c)), ha="center", va="top", fontsize=9, color="tab:red")
    ax.set_xticks(range(n), [f"$j = {j + 1}$" for j in range(n)])
    ax.set_yticks(range(n_layers + 1), ["input"] + [f"layer {layer}" for layer in range(1, n_layers + 1)])
    ax.set_xlim(-0.6, n - 0.4)
    ax.set_ylim(-0.9, n_layers + 0.4)
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.tick_params(length=0)
    return _finish(fig)


def plot_sensitivity(study: dict):
    """Per depth L, the share of the last token's sensitivity ‖∂y_n/∂x_j‖ that each input token j
    holds (median over the seeds, range as a band), against the path share and the uniform walk's
    share; one shared scale across panels."""
    depths = list(study["by_depth"])
    cols = min(len(depths), 2)  # two panels a row: a phone shows the legend at a readable size
    rows = -(-len(depths) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.3 * cols, 2.7 * rows), sharex=True, sharey=True,
                             squeeze=False)
    for ax in axes.flat[len(depths):]:
        ax.axis("off")
    for ax, L in zip(axes.flat, depths):
        row = study["by_depth"][L]
        j = np.arange(1, len(row["path_share"]) + 1)  # (n,)
        S = np.maximum(np.array(row["sensitivity_share"]), _FLOOR)  # (seeds, n)
        ax.fill_between(j, S.min(axis=0), S.max(axis=0), color="tab:blue", alpha=0.2, lw=0)
        ax.semilogy(j, np.median(S, axis=0), "o-", ms=3, color="tab:blue", label="measured")
        ax.semilogy(j, np.maximum(row["walk_share"], _FLOOR), "--", color="tab:orange", label="uniform causal walk")
        ax.semilogy(j, np.maximum(row["path_share"], _FLOOR), ":", color="black", label="share of paths")
        ax.set_title(f"$T = {L}$")
        ax.set_ylim(1e-10, 1.5)
    for ax in axes[-1, :]:
        ax.set_xlabel("input token $j$")
    for ax in axes[:, 0]:
        ax.set_ylabel(r"share of $\|\partial y_n / \partial x_j\|$")
    axes[0, 0].legend(frameon=False, fontsize=8)
    return _finish(fig)


def plot_causal_reach(in_degree, in_strength, rank):
    """The causal graph on n tokens: how many queries see each key (left); the in-strength and the
    PageRank of each key under uniform causal attention (right)."""
    in_degree, in_strength, rank = (np.asarray(x, dtype=float) for x in (in_degree, in_strength, rank))
    n = len(in_degree)
    j = np.arange(1, n + 1)  # (n,): 1-based positions
    fig, (a, b) = plt.subplots(1, 2, figsize=(7.0, 3.0))
    a.bar(j, in_degree, color="tab:blue")
    a.set_xlabel("key position j")
    a.set_ylabel("queries that see j")
    a.set_title("in-degree in the causal graph", fontsize=9)
    b.bar(j - 0.2, in_strength / n, width=0.4, color="tab:orange", label="in-strength / n")
    b.bar(j + 0.2, rank, width=0.4, color="tab:green", label="PageRank")
    b.set_xlabel("key position j")
    b.set_title("uniform causal attention", fontsize=9)
    b.legend(frameon=False, fontsize=8)
    for ax in (a, b):
        ax.set_xticks(j[::2])
    return _finish(fig)


def plot_sink_forming(results: dict):
    """The in-strength of the first positions over training, one line per seed, from the sinks
    benchmark record: without a sink token (left, the first token) and with one (right, the sink
    token and the first content token). Shared y-axis."""
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 3.2), sharey=True)
    n = results["n"]
    harmonic = float(np.sum(1.0 / np.arange(1, n + 1)))
    for ax, variant in zip(axes, ("plain", "sink token")):
        for k, run in enumerate(results["runs"][variant]):
            s = np.array([r["in_strength"] for r in run["readouts"]])  # (checkpoints, n or n + 1)
            ax.plot(run["steps"], s[:, 0], "-", color="tab:blue", lw=1, alpha=0.8,
                    label=("first token" if variant == "plain" else "sink token") if k == 0 else None)
            if variant == "sink token":
                ax.plot(run["steps"], s[:, 1], "--", color="tab:orange", lw=1, alpha=0.8,
                        label="first content token" if k == 0 else None)
        ax.axhline(harmonic, color="grey", ls=":", lw=0.8, label="uniform: $H_n$")
        ax.set_xlabel("Adam step")
        ax.set_title("no sink token" if variant == "plain" else "with a sink token", fontsize=9)
        ax.legend(frameon=False, fontsize=7)
    axes[0].set_ylabel("in-strength $s_{\\mathrm{in}}$")
    return _finish(fig)


def plot_sink_graphs(W_plain, W_sink):
    """The trained mean attention without and with a sink token, one colour scale (0 to 1).

    Rows are queries i, columns keys j: a message flows from key j to query i."""
    fig, (a, b, cax) = plt.subplots(1, 3, figsize=(7.0, 3.4),
                                    gridspec_kw={"width_ratios": [1, 1, 0.05]})
    for ax, W, title in zip((a, b), (W_plain, W_sink), ("no sink token", "with a sink token (position 0)")):
        W = np.asarray(W, dtype=float)  # (n, n)
        im = ax.imshow(W, cmap="Blues", vmin=0.0, vmax=1.0)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("j (key)")
        ax.set_ylabel("i (query)")
        ax.set_xticks(range(0, len(W), 2))
        ax.set_yticks(range(0, len(W), 2))
    fig.colorbar(im, cax=cax, label="$W_{ij}$")
    return _finish(fig)


def plot_induction_curves(curves: list[dict]):
    """Held-out accuracy against steps, one thin line per seed, the median thick and the range
    shaded (left); the median head scores against steps (right)."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(7.2, 3.2))
    steps = np.asarray(curves[0]["steps"])  # (checkpoints,)
    acc = np.array([c["accuracy"] for c in curves])  # (seeds, checkpoints)
    for row in acc:
        a.plot(steps, row, "-", color="tab:blue", lw=0.7, alpha=0.6)
    a.fill_between(steps, acc.min(axis=0), acc.max(axis=0), color="tab:blue", alpha=0.15,
                   label="range over seeds")
    a.plot(steps, np.median(acc, axis=0), "-", color="black", lw=1.6, label="median")
    a.set_xlabel("Adam step")
    a.set_ylabel("held-out accuracy")
    a.set_ylim(0, 1.02)
    a.legend(frameon=False, fontsize=8, loc="lower right")
    for key, style in (("previous", "-"), ("induction", "--"), ("composed", ":")):
        b.plot(steps, np.median([c[key] for c in curves], axis=0), style, label=key)
    b.set_xlabel("Adam step")
    b.set_ylabel("mass on the expected edges")
    b.set_ylim(0, 1.02)
    b.legend(frameon=False, fontsize=8)
    return _finish(fig)


def plot_induction_graphs(W1, W2, C, period: int):
    """Layer 1's graph, layer 2's and their product W⁽²⁾W⁽¹⁾ on one sequence of period m, one colour
    scale; red dots mark the expected edges (j, j − 1) at the keys j = i − m + 1 that layer 2 reads,
    (i, i − m + 1) and (i, i − m), for the predictable queries i.

    Rows are queries i, columns keys j: a message flows from key j to query i."""
    fig, axes = plt.subplots(1, 3, figsize=(7.6, 2.9))
    n = len(np.asarray(W1))
    m = int(period)
    i = np.arange(m, n - 1)  # (r,): the predictable queries
    j = i - m + 1  # (r,): the keys the induction head reads
    dots = ((j - 1, j), (j, i), (i - m, i))
    titles = ("layer 1: $W^{(1)}$", "layer 2: $W^{(2)}$", "two hops: $W^{(2)}W^{(1)}$")
    for ax, W, (x, y), title in zip(axes, (W1, W2, C), dots, titles):
        ax.imshow(np.asarray(W, dtype=float), cmap="Blues", vmin=0.0, vmax=1.0)
        ax.plot(x, y, "o", ms=2.5, color="tab:red")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("j (key)")
        ax.set_xticks(range(0, n, 4))
        ax.set_yticks(range(0, n, 4))
    axes[0].set_ylabel("i (query)")
    return _finish(fig)


def plot_circuits(qk, ov):
    """Layer 2's two token-to-token circuits (Elhage et al. 2021), each on its own symmetric colour
    scale: QK (query token a against the token b that layer 1 wrote into the key) and OV (the logit
    of token c that attending to token b adds)."""
    fig, axes = plt.subplots(1, 2, figsize=(6.4, 3.1))
    for ax, M, title, ylabel, xlabel in (
            (axes[0], qk, "QK: $W_E W_Q^{(2)} (W_E W_V^{(1)} W_K^{(2)})^\\top$", "query token a",
             "previous token b at the key"),
            (axes[1], ov, "OV: $W_E W_V^{(2)} W_U$", "attended token b", "output logit c")):
        M = np.asarray(M, dtype=float)  # (vocab, vocab)
        lim = float(np.abs(M).max())
        ax.imshow(M, cmap="RdBu_r", vmin=-lim, vmax=lim)
        ax.set_title(title, fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_xticks(range(0, len(M), 4))
        ax.set_yticks(range(0, len(M), 4))
    return _finish(fig)


__all__ += ["plot_prediction_and_outcome"]


def plot_prediction_and_outcome(predicted, trained):
    """The in-strength of each causal position: what the graph predicts (uniform attention on the
    causal graph, ``predicted`` (n,)) against what trained models do (``trained`` (seeds, n)).

    Line: the prediction H_n − H_{j−1}. Dots: the median over seeds after training; band: their range.
    """
    predicted = np.asarray(predicted, dtype=float)  # (n,)
    trained = np.asarray(trained, dtype=float)  # (seeds, n)
    j = np.arange(1, predicted.size + 1)  # (n,): positions from 1
    fig, ax = plt.subplots(figsize=(5.6, 3.2))
    ax.plot(j, predicted, "--", color="0.35", lw=1.4, label="graph view: uniform causal attention")
    ax.fill_between(j, trained.min(axis=0), trained.max(axis=0), color="tab:blue", alpha=0.18, lw=0,
                    label="trained models: range over seeds")
    ax.plot(j, np.median(trained, axis=0), "o", color="tab:blue", ms=5, label="trained models: median")
    ax.set_xlabel("key position $j$")
    ax.set_ylabel("in-strength $\\sum_i W_{ij}$")
    ax.set_xticks(j)
    ax.legend(frameon=False, fontsize=9)
    return _finish(fig)
