"""Drawings that several chapters share: the attention graph, the heat map, the layouts, side-by-side graph panels."""

from __future__ import annotations

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np
from matplotlib.patches import Circle, FancyArrowPatch
from matplotlib.textpath import TextPath

from .style import COLUMN, finish


def plot_heatmap(graph, ax=None, *, title: str | None = None, fmt="{:.3f}", cmap: str = "Blues",
                 vmax: float | None = None, fontsize: float = 10):
    """Heatmap of an :class:`AttentionGraph`'s W with each value printed in its cell.

    Row i is the node that receives (the query), column j the node that sends (the key): W[i, j] is
    the arrow from j to i of :func:`plot_attention_graph`. Panels
    that are compared pass one ``vmax``, so that they share a colour scale (from 0). ``fmt`` is a
    format string or a function of the weight (:func:`short_weight` for small cells). The cell
    numbers are 10 pt: their digits (0.73 of it) are drawn 9.7 px tall, at least 9 px shown on a phone.
    """
    own = ax is None
    if own:  # at most the phone's column wide (style.COLUMN), so its numbers keep their size there
        side = min(0.75 * graph.n + 1.2, COLUMN)
        fig, ax = plt.subplots(figsize=(side, side - 0.2))
    W = graph.W
    vmax = max(float(W.max()), 1e-12) if vmax is None else float(vmax)
    ax.imshow(W, cmap=cmap, vmin=0.0, vmax=vmax)
    for (i, j), w in np.ndenumerate(W):
        ax.text(j, i, fmt(w) if callable(fmt) else fmt.format(w), ha="center", va="center", fontsize=fontsize,
                color="white" if w > 0.6 * vmax else "black")
    ax.set_xticks(range(graph.n), graph.labels, rotation=0)
    ax.set_yticks(range(graph.n), graph.labels)
    ax.set_xlabel("j: sends (key)")
    ax.set_ylabel("i: receives (query)")
    if title:
        ax.set_title(title)
    return finish(ax.figure, own)


def short_weight(w: float) -> str:
    """A weight in two decimals without its leading zero (".37"), for heatmap cells too narrow for "0.37"."""
    text = f"{w:.2f}"
    return text[1:] if text.startswith("0.") else text


def circle_layout(n: int):
    """Positions of n nodes evenly on the unit circle, the first at the top, clockwise. (n, 2)."""
    angles = np.pi / 2 - 2 * np.pi * np.arange(n) / n  # (n,)
    return np.column_stack([np.cos(angles), np.sin(angles)])  # (n, 2)


def club_layout() -> np.ndarray:
    """Deterministic 2-d positions of the 34 members for the figures (Kamada–Kawai). Shape (34, 2)."""
    G = nx.karate_club_graph()
    pos = nx.kamada_kawai_layout(G)
    return np.array([pos[v] for v in sorted(G.nodes)])  # (34, 2)


def name_radius(names, fontsize: float, points_per_unit: float, at_least: float) -> float:
    """The radius (data units) of a circle that holds the widest of ``names`` at ``fontsize``,
    where one data unit is ``points_per_unit`` points; never below ``at_least``."""
    widest = max(TextPath((0, 0), str(name), size=fontsize).get_extents().width for name in names)
    return max(float(at_least), (0.5 * widest + 0.3 * fontsize) / points_per_unit)


def direction_key(ax, *, y: float = -0.01, fontsize: float = 9, carries: str = "$W_{ij}$",
                  says: str = "$v_j$ flows from $j$ to $i$", color: str = "tab:blue"):
    """The book's one legend for the arrows of an attention graph, under ``ax``: a small arrow from
    j to i, ``v_j`` travelling along it to i with weight ``W_ij`` (source to target, as PyG and DGL).

    A figure whose arrows carry something else than weights names it: ``carries`` is printed over
    the small arrow, ``says`` beside it, the arrow drawn in its ``color`` (the direction stays the
    book's, from j to i)."""
    at = dict(xy=(0.02, y), xycoords="axes fraction", textcoords="offset points", fontsize=fontsize,
              va="center", annotation_clip=False)  # lengths in points, whatever the panel's size
    j = ax.annotate("$j$", xytext=(0, 0), ha="center", **at)
    i = ax.annotate("$i$", xytext=(46, 0), ha="center", **at)
    ax.annotate("", xy=(0, 0.5), xycoords=i, xytext=(1, 0.5), textcoords=j, annotation_clip=False,
                arrowprops=dict(arrowstyle="-|>", color=color, lw=1.6, shrinkA=3, shrinkB=3))
    ax.annotate(carries, xytext=(23, 8), ha="center", **at)
    ax.annotate(says, xytext=(56, 0), ha="left", **at)


PAIR_COLOR = "tab:orange"  # the two arcs of one pair, labelled to show W_ij != W_ji
PAIR_AT = 0.2  # where along its arc a pair's label sits, from the arc's tail (the node that sends)


def plot_attention_graph(graph, ax=None, *, pos=None, title: str | None = None, min_weight: float = 0.0,
                         show_weights: bool = False, fmt: str = "{:.2f}", node_radius: float = 0.17,
                         highlight: int | None = None, pair: tuple[int, int] | None = None,
                         fontsize: float = 10, key: bool = True):
    """Draw an :class:`AttentionGraph`: for every weight W[i, j] the arrow from j to i, carrying v_j.

    Width and opacity grow with W[i, j], so the heavy edges stand out. Self-loops are drawn as
    circles outside the ring, just beyond their node, sized like the edges by W[i, i]. The two
    arrows between a pair bend apart by the same small distance whatever the pair's length, so they
    run side by side, and the asymmetry of W stays visible. With ``show_weights`` each weight is
    printed on its own arrow, in a box edged in the arrow's colour: near the node that receives the
    message (the head, node i), so the number beside node i is always a weight of row i. With
    ``highlight`` = i only the messages into node i are coloured and labelled, each at the middle
    of its arrow (the four heads meet at i, their labels would not); the other arrows are drawn thin
    and faint grey, dark enough to stay on the dark page's card. A self-loop's weight sits beyond its
    loop, away from the ring. With ``pair`` = (a, b) the two arcs between nodes a and b are drawn
    in orange and each labelled with its own weight (W[b, a] on the arc from a to b, W[a, b] on the
    arc back), so the reader sees that the two differ: each label sits on its arc's outer side,
    PAIR_AT of the way from the arc's tail, so the two sit at opposite ends of the pair. Each
    circle is made wide enough for its name. With ``key`` the book's legend of the arrows
    (:func:`direction_key`) sits under the drawing.
    """
    if pair is not None and (len(pair) != 2 or pair[0] == pair[1]
                             or not all(0 <= int(k) < graph.n for k in pair)):
        raise ValueError(f"pair must be two different nodes of 0..{graph.n - 1}; got {pair!r}")
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(COLUMN, COLUMN + 0.3))
    pos = circle_layout(graph.n) if pos is None else np.asarray(pos, dtype=float)  # (n, 2)
    if pos.shape != (graph.n, 2):
        raise ValueError(f"pos must have shape ({graph.n}, 2); got {pos.shape}")
    wmax = max(float(graph.W.max()), 1e-12)
    center = pos.mean(axis=0)  # (2,)
    loop = 0.1  # a self-loop's radius, data units
    label_w = TextPath((0, 0), fmt.format(wmax), size=fontsize).get_extents().width + 0.6 * fontsize  # points
    label_h = 1.5 * fontsize  # points, the box's height
    looped = [k for k in range(graph.n) if show_weights and graph.W[k, k] > min_weight
              and (highlight is None or k == highlight)]  # the loops whose weight is printed
    fig_w, fig_h = ax.figure.get_size_inches()
    box = ax.get_position()
    width_points, height_points = 72 * box.width * fig_w, 72 * box.height * fig_h

    def outward(k):  # the unit vector from the ring's centre through node k, (2,)
        out = pos[k] - center  # (2,)
        return out / (np.linalg.norm(out) or 1.0)

    r, lo, hi = node_radius, pos.min(axis=0) - 1.0, pos.max(axis=0) + 1.0  # (2,), (2,): never a zero span
    for _ in range(3):  # the margins in data units depend on the scale they change
        points_per_unit = min(width_points / (hi - lo)[0], height_points / (hi - lo)[1])
        r = name_radius(graph.labels, fontsize, points_per_unit, node_radius)
        lo, hi = pos.min(axis=0) - (r + 2 * loop + 0.06), pos.max(axis=0) + (r + 2 * loop + 0.06)  # (2,)
        for k in looped:  # room for the printed loop weights, on their side
            out = outward(k)
            at = pos[k] + (r + 2 * loop + 0.06) * out  # (2,)
            half = np.array([label_w, label_h]) / 2 / points_per_unit  # (2,)
            shift = np.where(np.abs(out) > 0.5, np.sign(out) * half, 0.0)  # (2,): where the box's centre sits
            lo, hi = np.minimum(lo, at + shift - half), np.maximum(hi, at + shift + half)
    bend = 0.3  # the control point's distance from the chord: a pair's arcs run 0.3 apart at their middle
    for i, j, w in graph.edges(tol=min_weight):
        share = w / wmax
        alpha, width, color, label = 0.35 + 0.65 * share, 0.6 + 4.4 * share, "tab:blue", show_weights
        if highlight is not None and i != highlight:
            color, alpha, width, label = "0.5", 0.3 + 0.3 * share, 0.5 + 1.5 * share, False
        paired = pair is not None and i != j and {i, j} == set(pair)
        if paired:
            color, alpha, width, label = PAIR_COLOR, 0.35 + 0.65 * share, 0.6 + 4.4 * share, True
        label_box = dict(boxstyle="round,pad=0.15", fc="white", ec=color, lw=0.8, alpha=0.95)
        if i == j:
            out = outward(i)  # (2,)
            ax.add_patch(Circle(pos[i] + (r + loop) * out, loop, fill=False, lw=width, alpha=alpha,
                                color=color, zorder=1))
            if label:  # beyond the loop, aligned so that the box grows away from the ring
                at = pos[i] + (r + 2 * loop + 0.06) * out  # (2,)
                ha = "left" if out[0] > 0.5 else "right" if out[0] < -0.5 else "center"
                va = "bottom" if out[1] > 0.5 else "top" if out[1] < -0.5 else "center"
                ax.text(*at, fmt.format(w), ha=ha, va=va, fontsize=fontsize, bbox=label_box, zorder=5)
            continue
        a, b = pos[j], pos[i]  # (2,), (2,): the message leaves j and arrives at i
        rad = bend / float(np.linalg.norm(b - a))  # arc3's rad is relative to the chord's length
        dx, dy = b - a
        ctrl = (a + b) / 2 + rad * np.array([dy, -dx])  # arc3's control point, (2,)
        start = a + r * (ctrl - a) / np.linalg.norm(ctrl - a)  # leave the node's rim towards ctrl
        end = b + r * (ctrl - b) / np.linalg.norm(ctrl - b)  # arrive at the rim from ctrl
        rad_rim = rad * np.linalg.norm(b - a) / np.linalg.norm(end - start)  # the same bend, rim to rim
        ax.add_patch(FancyArrowPatch(start, end, connectionstyle=f"arc3,rad={rad_rim}",
                                     arrowstyle="-|>", mutation_scale=9 + 7 * share,
                                     lw=width, alpha=alpha, color=color,
                                     shrinkA=0, shrinkB=2, zorder=1 if color == "0.5" else 2))
        if paired:  # on the arc's outer side (away from its twin), PAIR_AT of the way from its tail j
            s_ = PAIR_AT
            sx, sy = end - start
            c2 = (start + end) / 2 + rad_rim * np.array([sy, -sx])  # (2,)
            p = (1 - s_) ** 2 * start + 2 * s_ * (1 - s_) * c2 + s_**2 * end  # (2,), on the arrow
            side = np.array([sy, -sx]) * np.sign(rad_rim)  # (2,): the way the arc bulges
            side = side / (np.linalg.norm(side) or 1.0)
            ha = "left" if side[0] > 0.5 else "right" if side[0] < -0.5 else "center"
            va = "bottom" if side[1] > 0.5 else "top" if side[1] < -0.5 else "center"
            ax.annotate(fmt.format(w), p, xytext=tuple(4 * side), textcoords="offset points", ha=ha, va=va,
                        fontsize=fontsize, bbox=label_box, zorder=5)
        elif label:
            s_ = 0.5 if highlight is not None else 0.72  # along the quadratic Bezier from j
            sx, sy = end - start
            c2 = (start + end) / 2 + rad_rim * np.array([sy, -sx])  # (2,)
            p = (1 - s_) ** 2 * start + 2 * s_ * (1 - s_) * c2 + s_**2 * end  # (2,), on the arrow
            ax.text(*p, fmt.format(w), ha="center", va="center", fontsize=fontsize, bbox=label_box,
                    zorder=5)
    for k, ((x, y), name) in enumerate(zip(pos, graph.labels)):
        ring = "tab:blue" if k == highlight else "black"
        ax.add_patch(Circle((x, y), r, color="white", ec=ring, lw=2.0 if k == highlight else 1.0, zorder=3))
        ax.text(x, y, name, ha="center", va="center", fontsize=fontsize, zorder=4)
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title)
    if key:
        direction_key(ax, y=-0.05)
    return finish(ax.figure, own)


def graph_panels(graphs, titles, *, highlight=None, pair=None, columns: int = 1, panel: float = COLUMN,
                 fontsize: float = 10):
    """Attention graphs of the same nodes in a grid of ``columns``, at the same positions, each
    titled above; the legend of the arrows once, under the last panel."""
    rows = -(-len(graphs) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(panel * columns, (panel + 0.1) * rows), squeeze=False)
    pos = circle_layout(graphs[0].n)  # (n, 2), the same places in every panel
    for k, (ax, graph, title) in enumerate(zip(axes.flat, graphs, titles)):
        plot_attention_graph(graph, ax, pos=pos, show_weights=True, min_weight=1e-12, title=title,
                             highlight=highlight, pair=pair, fontsize=fontsize, node_radius=0.2,
                             key=k == len(graphs) - 1)
        ax.title.set_fontsize(fontsize + 1)
    for ax in axes.flat[len(graphs):]:
        ax.axis("off")
    return finish(fig, own=True)
