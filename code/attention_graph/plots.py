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
__all__ += ["plot_fixed_and_computed"]


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
    ax.loglog(moments["d"], moments["d"], ":", color="grey", label="the line $y = d$")
    ax.set_xlabel("dimension $d$")
    ax.set_ylabel("sample variance")
    ax.legend(frameon=False)
    return _finish(fig)


def plot_heatmap(graph, ax=None, *, title: str | None = None, fmt: str = "{:.3f}", cmap: str = "Blues"):
    """Heatmap of an :class:`AttentionGraph`'s W with each value printed in its cell.

    Rows are the node giving the weight (query i), columns the node receiving it (key j).
    """
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
                         show_weights: bool = False, fmt: str = "{:.2f}", node_radius: float = 0.17):
    """Draw an :class:`AttentionGraph`: node i → node j for every weight, width and opacity by W[i, j].

    Self-loops are drawn as circles just outside their node, sized like the edges by W[i, i]. Edges
    i → j and j → i are drawn as two arcs bending to opposite sides, so the asymmetry of W stays
    visible. With ``show_weights`` each weight is printed on its edge near the node that gives it
    (the tail), so the number beside node i is always a weight of row i.
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
    return _finish(ax.figure, own)


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
        fig, ax = plt.subplots(figsize=(5.0, 3.6))
    ax.add_patch(Circle((1.0, 0.0), 1.0, fill=False, ls="--", color="grey", lw=1))
    markers = "ox^sd"
    for k, (name, lam) in enumerate(spectra.items()):
        lam = np.asarray(lam, dtype=complex)  # (n,)
        ax.plot(lam.real, lam.imag, markers[k % len(markers)], ms=6, alpha=0.8, label=name,
                mfc="none" if k else None)
    ax.axhline(0, color="grey", lw=0.5)
    ax.axvline(0, color="grey", lw=0.5)
    ax.set_xlim(-0.1, 2.1)
    ax.set_ylim(-1.05, 1.05)
    ax.set_aspect("equal")
    ax.set_xlabel(r"Re $\lambda$")
    ax.set_ylabel(r"Im $\lambda$")
    ax.legend(frameon=False, fontsize=8, loc="upper right")
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
    ax.set_ylabel("Fiedler vector $u_i$")
    if title:
        ax.set_title(title)
    return _finish(ax.figure, own)


def plot_head_graphs(heads, titles):
    """One column per head: its attention graph on top, its heatmap below (a multigraph, head by head)."""
    h = len(heads)
    fig, axes = plt.subplots(2, h, figsize=(3.6 * h, 7.0), gridspec_kw={"height_ratios": [1, 1]},
                             squeeze=False)
    for col, (graph, name) in enumerate(zip(heads, titles)):
        plot_attention_graph(graph, ax=axes[0, col], title=name)
        plot_heatmap(graph, ax=axes[1, col])
        if col:
            axes[1, col].set_ylabel("")
    return _finish(fig)


def plot_rollout_layers(layers, rollouts: dict):
    """Top row: heatmaps of W⁽¹⁾ … W⁽ᴸ⁾. Bottom row: each rollout of ``rollouts`` (title → graph)."""
    L = len(layers)
    cols = max(L, len(rollouts))
    fig, axes = plt.subplots(2, cols, figsize=(3.1 * cols, 6.4), squeeze=False)
    for k, g in enumerate(layers, 1):
        plot_heatmap(g, ax=axes[0, k - 1], title=f"layer {k}: $W^{{({k})}}$", fmt="{:.2f}")
    for ax, (name, g) in zip(axes[1], rollouts.items()):
        plot_heatmap(g, ax=ax, title=name, fmt="{:.2f}", cmap="Purples")
    for ax in axes[1, len(rollouts):]:
        ax.axis("off")
    for ax in axes[:, 1:].ravel():
        ax.set_ylabel("")
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
    return _finish(fig)


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
    return _finish(fig)


def plot_cycle_encodings(P, frequencies, coefficients):
    """The columns of a cycle's Laplacian encoding P (n, k) as dots, each on its fitted sinusoid.

    ``frequencies[c]`` is the m of column c and ``coefficients[c]`` the (a, b) with
    P[:, c] = a cos(2π m k / n) + b sin(2π m k / n); the curve is drawn for continuous k.
    """
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
    return _finish(fig)


def plot_sparse_benchmark(record: dict):
    """Log-log time and peak memory against n, dense against edge attention, from a bench record."""
    res = record["results"]
    rows = res["sizes"]
    dense = [r for r in rows if "dense_seconds" in r]
    n_all = np.array([r["n"] for r in rows])  # (sizes,)
    n_dense = np.array([r["n"] for r in dense])  # (dense sizes,)
    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(9.0, 3.6))
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
        for name, v in zip(labels, V):
            ax.annotate(str(name), v, textcoords="offset points", xytext=(5, 5), fontsize=9)
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
    fig, (ax_mem, ax_time) = plt.subplots(1, 2, figsize=(9.0, 3.6))
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
    for run in runs:
        ax.plot(run["steps"], run["share"], "-", label=run["task"])
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


def plot_fixed_and_computed(fixed, computed, *, titles=("fixed: the path", "computed: attention")):
    """Two attention graphs of the same nodes side by side, at the same positions, weights printed.

    The book's first figure: a GCN's fixed adjacency on the article's path (left) and the complete
    graph whose weights one attention layer computes from the input (right).
    """
    if fixed.labels != computed.labels:
        raise ValueError(f"fixed and computed must have the same nodes; got {fixed.labels} "
                         f"and {computed.labels}")
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 4.6))  # two panels
    pos = circle_layout(fixed.n)  # (n, 2), the same places in both panels
    for ax, graph, title in zip(axes, (fixed, computed), titles):
        plot_attention_graph(graph, ax, pos=pos, show_weights=True, min_weight=1e-12)
        ax.text(0.5, -0.02, title, transform=ax.transAxes, ha="center", va="top", fontsize=11)
    fig = _finish(fig, own=True)
    fig.subplots_adjust(bottom=0.08)  # room for the captions under the panels
    return fig


# --- Multi-head attention, the block, attention patterns -------------------------------------------

__all__ += ["plot_patterns", "plot_pattern_scaling", "plot_bipartite"]


def plot_patterns(patterns: dict, n: int):
    """Each pattern's (n, n) mask as a black-and-white grid: row i = query, column j = key."""
    fig, axes = plt.subplots(1, len(patterns), figsize=(1.6 * len(patterns), 2.0))
    for ax, (name, E) in zip(axes, patterns.items()):
        M = np.zeros((n, n), dtype=bool)  # (n, n)
        M[E[:, 0], E[:, 1]] = True
        ax.imshow(M, cmap="Greys", vmin=0, vmax=1, interpolation="nearest")
        ax.set_title(name, fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
    return _finish(fig)


def plot_pattern_scaling(comparison: dict):
    """Edges (log-log) and maximum path length against n, one line per pattern."""
    fig, (ax_e, ax_d) = plt.subplots(1, 2, figsize=(9.0, 3.5))
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
    ax_d.legend(frameon=False, fontsize=7)
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
