"""Drawings that several chapters share: the attention graph, the heat map, the layouts, side-by-side graph panels."""

from __future__ import annotations

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np
from matplotlib.artist import Artist
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


CLUB_SPACING = 0.14  # the least distance between two members' centres in club_layout, data units


def club_layout() -> np.ndarray:
    """Deterministic 2-d positions of the 34 members for the figures (Kamada–Kawai). Shape (34, 2).

    Kamada–Kawai sets a few members almost on top of each other (2 and 9, 3 and 10, as the book names
    them): each pair nearer than CLUB_SPACING is pushed apart along the line joining it, a few rounds,
    until no two are nearer, so that no two node circles overlap, in the figures or the explorable."""
    G = nx.karate_club_graph()
    layout = nx.kamada_kawai_layout(G)
    pos = np.array([layout[v] for v in sorted(G.nodes)])  # (34, 2)
    for _ in range(200):
        gap = pos[:, None, :] - pos[None, :, :]  # (34, 34, 2)
        dist = np.linalg.norm(gap, axis=2) + np.eye(len(pos))  # (34, 34), never 0 on the diagonal
        short = np.maximum(CLUB_SPACING * 1.001 - dist, 0.0) * (1 - np.eye(len(pos)))  # (34, 34)
        if not short.any():
            break
        pos = pos + 0.5 * (short[:, :, None] * gap / dist[:, :, None]).sum(axis=1)  # (34, 2)
    return pos


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
FAINT = "0.5"  # the grey of the arrows a highlight leaves unlabelled
# Where along its arc a weight's label may sit (the Bezier parameter from the tail j), best first:
# the middle, then outwards to either end. GAP: points between a label's box and its own arc's
# stroke when it sits beside it; CLEAR: points it keeps from any other arc, node, loop or label.
LABEL_AT = (0.5, 0.42, 0.58, 0.34, 0.66, 0.26, 0.74, 0.2, 0.8)
# A pair's two labels sit near the middle of their own arcs, a little towards the arrowhead, each on
# its arc's outer side: PAIR_AT along the arc, best first.
PAIR_AT = (0.7, 0.64, 0.76, 0.82)
# A control point's distance from the chord, data units: other arcs bend BEND, so that the two arcs of
# a pair run BEND / 2 apart at their middle; the labelled pair's, PAIR_BEND, so that each is clearly
# its own curve, with room for its label beside it or on it.
BEND, PAIR_BEND = 0.3, 0.5
# Where a few labels are set (highlight, pair), the arcs make room for them. A pair of nodes whose
# chord's middle lies farther than RIM times the ring's radius from its centre runs along the ring:
# its two arcs nest, both bulging out of the ring, NEST[0] and NEST[1] from the chord, the coloured one
# outside (its label sits outside the ring, with no arc to cross). A pair across the ring bends
# ACROSS_BEND, close to its chord, leaving room beside it, unless a pair is labelled (then BEND,
# keeping clear of the pair's labels).
RIM = 0.6
NEST = (0.2, 0.7)
ACROSS_BEND = 0.15
GAP, CLEAR = 1.5, 3.0


def _bezier(start, ctrl, end, s):
    """Points of the quadratic Bezier start–ctrl–end at the parameters ``s``. (len(s), 2)."""
    s = np.asarray(s, dtype=float)[:, None]  # (m, 1)
    return (1 - s) ** 2 * start + 2 * s * (1 - s) * ctrl + s**2 * end  # (m, 2)


def _crosses(p0, p1, line):
    """Whether each segment p0[k]–p1[k] ((k, 2) each) crosses the polyline ``line`` (m, 2). (k,)."""
    a, b = line[:-1][None], line[1:][None]  # (1, m-1, 2) each
    p, q = p0[:, None], p1[:, None]  # (k, 1, 2) each

    def turn(o, u, v):  # the sign of the turn o → u → v, (k, m-1)
        du, dv = u - o, v - o  # (k, m-1, 2) each
        return np.sign(du[..., 0] * dv[..., 1] - du[..., 1] * dv[..., 0])

    return ((turn(p, q, a) * turn(p, q, b) < 0) & (turn(a, b, p) * turn(a, b, q) < 0)).any(axis=1)  # (k,)


def _gap_to_segments(point, p0, p1):
    """The distance from ``point`` (2,) to each segment p0[k]–p1[k] ((k, 2) each). (k,)."""
    run = p1 - p0  # (k, 2)
    t = np.clip(((point - p0) * run).sum(axis=1) / np.maximum((run * run).sum(axis=1), 1e-12), 0.0, 1.0)  # (k,)
    return np.linalg.norm(p0 + t[:, None] * run - point, axis=1)  # (k,)


def _gap_to_box(points, centres, half):
    """The distance from each of ``points`` (m, 2) to each box ``centres`` (k, 2) ± ``half`` (2,),
    0 inside. (k, m)."""
    d = np.maximum(np.abs(points[None, :, :] - centres[:, None, :]) - half, 0.0)  # (k, m, 2)
    return np.hypot(d[..., 0], d[..., 1])  # (k, m)


def _label_spot(arc, arcs, circles, boxes, half, limits, unit):
    """Where the weight of ``arc`` is printed: the centre of its box (2,) and, when the box stands
    off its arc, the point of the arc a short leader line joins it to (else None).

    The box keeps CLEAR points from every other arc and arrowhead (twice that from an arc of its own
    colour), from every node and self-loop (``circles``: (centre, radius)) and label box (``boxes``:
    (centre, half)), inside ``limits``. It sits on its own arc, at one of LABEL_AT along it (the
    middle first; a pair's arc, PAIR_AT): centred on it, the arc running through it, or touching
    it from one side, GAP points off its stroke (a pair's arc: only from the side it bulges to, so
    the box never sits between the pair's two arcs). Where none of those spots is
    clear, the box goes to the clear spot nearest the arc, off it (so the leader shows; a pair's, on
    its bulging side), joined to it by a straight leader that crosses no other arc (its stroke as
    drawn, arrowhead included) and passes no node or loop closer than CLEAR, wherever one can;
    where none can, a pair's box sits centred on its arc, at one of PAIR_AT, if one is clear. All
    lengths in one unit (the figure's pixels as drawn); ``unit`` is one point.
    """
    start, ctrl, end, own = arc["start"], arc["ctrl"], arc["end"], arc["points"]
    others = [a for a in arcs if a is not arc]
    points = np.concatenate([a["points"] for a in others] or [np.zeros((0, 2))])  # (m, 2)
    room = np.concatenate([a["clear"] + (CLEAR * unit if a["color"] == arc["color"] else 0.0)
                           for a in others] or [np.zeros(0)])  # (m,)
    lo, hi = limits

    def clash(centres):  # (k, 2) -> (k,): how far each box intrudes on what it must keep clear of
        found = np.maximum(room - _gap_to_box(points, centres, half), 0.0).sum(axis=1)  # (k,)
        for c, radius in circles:
            found += np.maximum(radius + CLEAR * unit - _gap_to_box(c[None], centres, half)[:, 0], 0.0)
        for c, h in boxes:
            found += np.maximum(h + half + CLEAR * unit - np.abs(centres - c), 0.0).min(axis=1)
        found += np.maximum(lo - (centres - half), 0.0).sum(axis=1)  # inside the drawing
        return found + np.maximum(centres + half - hi, 0.0).sum(axis=1)  # (k,)

    touch = arc["width"] / 2 + GAP * unit  # from the arc's middle line to a box beside it
    spots, costs = [], []
    at, best = (PAIR_AT, PAIR_AT[0]) if arc.get("paired") else (LABEL_AT, 0.5)
    # A pair's label never sits between its two arcs (it would read as either's): beside its arc on the
    # side the arc bulges to, away from its twin, or at the end of a leader on that side.
    sides = (1.0,) if arc.get("paired") else (1.0, -1.0)
    for s in at:  # on the arc: centred on it, or beside it on the side it bulges to, or the other
        p = _bezier(start, ctrl, end, [s])[0]  # (2,)
        tangent = 2 * (1 - s) * (ctrl - start) + 2 * s * (end - ctrl)  # (2,)
        normal = np.array([tangent[1], -tangent[0]]) / (np.linalg.norm(tangent) or 1.0)  # (2,)
        normal = normal if normal @ arc["bulge"] >= 0 else -normal
        if not arc.get("paired"):  # centred on it (a pair's label: only where no leader is free, below)
            spots.append(p)
            costs.append(4 * abs(s - best))
        for side in sides:
            t = 0.0  # the box slides out along the normal until it is GAP off its arc, nearest to nearest
            while _gap_to_box(own, (p + side * normal * t)[None], half).min() < touch and t < 9 * half.max():
                t += 0.5 * unit
            spots.append(p + side * normal * t)
            costs.append(4 * abs(s - best) + 0.5 + (side < 0))
    spots = np.array(spots)  # (k, 2)
    found = clash(spots)  # (k,)
    costs = np.array(costs) + (100 + found / unit) * (found > 0)  # (k,)
    if found.min() == 0:
        return spots[np.argmin(costs)], None
    centred = _bezier(start, ctrl, end, at)  # (len(at), 2): a pair's label centred on its arc
    centred = centred[clash(centred) == 0] if arc.get("paired") else centred[:0]
    # Off the arc: every spot of a grid over the drawing, a leader from the arc's nearest point.
    step = half[1] / (2 if arc.get("paired") else 1)
    xs, ys = np.arange(lo[0] + half[0], hi[0] - half[0], step), np.arange(lo[1] + half[1], hi[1] - half[1], step)
    grid = np.stack(np.meshgrid(xs, ys), axis=-1).reshape(-1, 2)  # (k, 2)
    # A leader the box would hide is no leader: the box stands off its arc, a pair's on the bulge side.
    clear_of_own = _gap_to_box(own, grid, half).min(axis=1) >= touch + GAP * unit  # (k,)
    if arc.get("paired"):
        nearest_own = own[_gap_to_box(own, grid, half).argmin(axis=1)]  # (k, 2)
        clear_of_own &= (grid - nearest_own) @ arc["bulge"] > 0
    grid = grid[(clash(grid) == 0) & clear_of_own]
    if not len(grid):
        return (centred[0] if len(centred) else spots[np.argmin(costs)]), None
    m = len(own)  # a leader leaves the arc away from its ends; a pair's, from the half towards its head
    middle = own[(3 * m // 5):(5 * m // 6)] if arc.get("paired") else own[(m // 6):(5 * m // 6)]  # (m', 2)
    gaps = _gap_to_box(middle, grid, half)  # (k, m')
    nearest = gaps.argmin(axis=1)  # (k,)
    length = gaps.min(axis=1)  # (k,)
    along = np.linspace(0, 1, 24)[None, :, None]  # (1, 24, 1)
    lines = middle[nearest][:, None, :] + along * (grid - middle[nearest])[:, None, :]  # (k, 24, 2): the leaders
    crossed = np.zeros(len(grid))  # (k,): the arcs each leader crosses, 3 a grey one, 10 a coloured one
    for a in others:
        near = np.linalg.norm(lines[:, :, None, :] - a["points"][None, None], axis=3).min(axis=(1, 2))  # (k,)
        crossed += (near < a["width"] / 2 + unit) * (3 if a["color"] == FAINT else 10)
        crossed += 1000 * _crosses(middle[nearest], grid, a.get("outline", a["points"]))
    for c, radius in circles:  # a leader never crosses a node or a loop, nor passes near one, nor a label
        crossed += 10000 * (_gap_to_segments(c, middle[nearest], grid) < radius + CLEAR * unit)
    for c, h in boxes:
        crossed += 1000 * (np.abs(lines - c) < h + CLEAR * unit).all(axis=2).any(axis=1)  # nor grazes it
    towards = (len(middle) - 1 - nearest) * 8 / len(middle) if arc.get("paired") else 0.0  # (k,): a pair's, to its head
    best = np.argmin(length / unit / 4 + crossed + towards)
    if crossed[best] >= 1000 and len(centred):  # every leader crosses an arc or a node: on the arc
        return centred[0], None
    return grid[best], middle[nearest[best]]


class _WeightLabels(Artist):
    """Sets the few weight labels of :func:`plot_attention_graph` (``highlight``, ``pair``) where
    :func:`_label_spot` finds room, each time the figure is drawn: so in its final layout and scale,
    whatever the panels around it. Drawn first (zorder 0), it draws nothing itself: it moves the
    labels' texts and leader lines, which are drawn after it."""

    def __init__(self, arcs, circles, fixed, labels):
        super().__init__()
        self.set_zorder(0)
        self._arcs, self._circles, self._fixed, self._labels = arcs, circles, fixed, labels

    def draw(self, renderer):
        ax = self.axes
        to, back = ax.transData.transform, ax.transData.inverted().transform
        unit = renderer.points_to_pixels(1.0)  # px a point
        scale = np.linalg.norm(to((1.0, 0.0)) - to((0.0, 0.0)))  # px a data unit (the aspect is equal)

        def box(text):  # (centre, half) of a text's white box, px
            ext = text.get_window_extent(renderer)
            pad = 0.15 * text.get_fontsize() * unit
            return np.array([ext.x0 + ext.x1, ext.y0 + ext.y1]) / 2, np.array([ext.width, ext.height]) / 2 + pad

        arcs = []
        for a in self._arcs:  # each arc's stroke in px, and the room kept around it (more under its head)
            start, ctrl, end = to(a["start"]), to(a["ctrl"]), to(a["end"])  # (2,) each
            points = _bezier(start, ctrl, end, np.linspace(0, 1, 60))  # (60, 2)
            tip = np.linalg.norm(points - end, axis=1) < (0.4 * a["head"] + 2) * unit  # (60,)
            clear = np.where(tip, max(a["width"] / 2, 0.25 * a["head"]), a["width"] / 2) + CLEAR  # (60,), points
            outline = a["patch"].get_path()  # the arc as drawn, its arrowhead included (data units)
            outline = to(np.concatenate([seg(np.linspace(0, 1, 12)) for seg, _ in outline.iter_bezier()]))  # (m, 2)
            arcs.append(dict(a, start=start, ctrl=ctrl, end=end, points=points, clear=clear * unit,
                             width=a["width"] * unit, outline=outline))
        circles = [(to(c), radius * scale + width / 2 * unit) for c, radius, width in self._circles]
        boxes = [box(t) for t in self._fixed]
        for k, text, leader in self._labels:
            half = box(text)[1]  # (2,)
            centre, edge = _label_spot(arcs[k], arcs, circles, boxes, half, (ax.bbox.min, ax.bbox.max), unit)
            boxes.append((centre, half))
            text.set_position(back(centre))
            leader.set_visible(edge is not None)
            if edge is not None:  # from just off the arc to the box (which hides the rest of it)
                leader.set_data(*back(np.array([edge, centre])).T)
                line = edge + np.linspace(0, 1, 24)[:, None] * (centre - edge)  # (24, 2): later labels keep off it
                arcs.append(dict(points=line, clear=np.full(24, (0.4 + CLEAR) * unit), color=arcs[k]["color"],
                                 width=0.8 * unit))
        self.stale = False


def plot_attention_graph(graph, ax=None, *, pos=None, title: str | None = None, min_weight: float = 0.0,
                         show_weights: bool = False, fmt: str = "{:.3f}", node_radius: float = 0.17,
                         highlight: int | None = None, pair: tuple[int, int] | None = None,
                         fontsize: float = 10, key: bool = True):
    """Draw an :class:`AttentionGraph`: for every weight W[i, j] the arrow from j to i, carrying v_j.

    Width and opacity grow with W[i, j], so the heavy edges stand out. Self-loops are drawn as
    circles outside the ring, just beyond their node, sized like the edges by W[i, i]. The two
    arrows between a pair bend apart by the same small distance whatever the pair's length, so they
    run side by side, and the asymmetry of W stays visible (the labelled ``pair``'s bend wider apart,
    each clearly its own curve; with ``highlight`` or ``pair``, the two arrows between neighbours on
    the ring nest outside it, the coloured one outermost, to leave their labels room: RIM, NEST,
    ACROSS_BEND). With ``show_weights`` each weight is
    printed on its own arrow, in a white box edged in the arrow's colour: near the node that receives
    the message (the head, node i), so the number beside node i is always a weight of row i. With
    ``highlight`` = i only the messages into node i are coloured and labelled; the other arrows are
    drawn thin and faint grey, dark enough to stay on the dark page's card. With ``pair`` = (a, b)
    the two arcs between nodes a and b are drawn in orange and each labelled with its own weight
    (W[b, a] on the arc from a to b, W[a, b] on the arc back), so the reader sees that the two
    differ. These few labels (``highlight``, ``pair``) each sit on their own arc, centred on it or
    just beside it, as near its middle as they can (a pair's: near its middle, a little towards its
    head, beside its arc on the outer side or centred on it, never between the pair's arcs; no leader
    crosses an arc where one can help it) while clear
    of every other arc, node, loop, label and leader (:func:`_label_spot`; at the end of a short
    leader line where no spot on the arc is clear), so each number is read on one arc only. A
    self-loop's weight sits beyond its loop, away from the ring. Each circle is made wide enough for
    its name. With ``key`` the book's legend of the arrows (:func:`direction_key`)
    sits under the drawing. Each weight's text and arc carry the label ``W[i,j]`` (``get_label()``),
    for the tests that read where it was printed.
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
    sparse = highlight is not None or pair is not None  # a few labels, each set clear of the rest
    arcs, circles, fixed, labels = [], [(p, r, 0.0) for p in pos], [], []  # what _WeightLabels reads
    drawn = graph.W > min_weight  # (n, n): the arrows drawn
    ring = float(np.linalg.norm(pos - center, axis=1).mean())  # the ring's radius, data units

    def bend(i, j):  # the arc from j to i: its control point's distance from the chord, + to its right
        a, b = pos[j], pos[i]  # (2,), (2,)
        right = np.array([(b - a)[1], -(b - a)[0]])  # (2,): arc3's side, the right of the way it runs
        paired = pair is not None and {i, j} == set(pair)
        rim = np.linalg.norm((a + b) / 2 - center) > RIM * ring  # a chord along the ring, not across it
        if paired or not sparse:
            return PAIR_BEND if paired else BEND
        if not rim:  # across the ring: with no pair labelled, close to its chord, leaving room beside it
            return BEND if pair is not None else ACROSS_BEND
        if not drawn[j, i]:
            return BEND
        coloured = highlight == i, highlight == j  # the arc from j to i, the arc back
        # Labels need room: the two arcs of a pair along the ring nest, both bulging out of the ring, the
        # outer one (the coloured one, so that its label sits outside, clear of the rest) farther.
        outward = right @ ((a + b) / 2 - center) > 0
        outer = coloured[0] if coloured[0] != coloured[1] else outward
        return (1 if outward else -1) * (NEST[1] if outer else NEST[0])

    for i, j, w in graph.edges(tol=min_weight):
        share = w / wmax
        alpha, width, color, label = 0.35 + 0.65 * share, 0.6 + 4.4 * share, "tab:blue", show_weights
        if highlight is not None and i != highlight:
            color, alpha, width, label = FAINT, 0.3 + 0.3 * share, 0.5 + 1.5 * share, False
        paired = pair is not None and i != j and {i, j} == set(pair)
        if paired:
            color, alpha, width, label = PAIR_COLOR, 0.35 + 0.65 * share, 0.6 + 4.4 * share, True
        label_box = dict(boxstyle="round,pad=0.15", fc="white", ec=color, lw=0.8, alpha=0.95)
        if i == j:
            out = outward(i)  # (2,)
            ax.add_patch(Circle(pos[i] + (r + loop) * out, loop, fill=False, lw=width, alpha=alpha,
                                color=color, zorder=1, label=f"W[{i},{j}]"))
            circles.append((pos[i] + (r + loop) * out, loop, width))
            if label:  # beyond the loop, aligned so that the box grows away from the ring
                at = pos[i] + (r + 2 * loop + 0.06) * out  # (2,)
                ha = "left" if out[0] > 0.5 else "right" if out[0] < -0.5 else "center"
                va = "bottom" if out[1] > 0.5 else "top" if out[1] < -0.5 else "center"
                fixed.append(ax.text(*at, fmt.format(w), ha=ha, va=va, fontsize=fontsize, bbox=label_box,
                                     zorder=5, label=f"W[{i},{j}]"))
            continue
        a, b = pos[j], pos[i]  # (2,), (2,): the message leaves j and arrives at i
        rad = bend(i, j) / float(np.linalg.norm(b - a))  # arc3's rad: relative to the chord
        dx, dy = b - a
        ctrl = (a + b) / 2 + rad * np.array([dy, -dx])  # arc3's control point, (2,)
        start = a + r * (ctrl - a) / np.linalg.norm(ctrl - a)  # leave the node's rim towards ctrl
        end = b + r * (ctrl - b) / np.linalg.norm(ctrl - b)  # arrive at the rim from ctrl
        rad_rim = rad * np.linalg.norm(b - a) / np.linalg.norm(end - start)  # the same bend, rim to rim
        head = 9 + 7 * share  # points, the arrowhead's size (mutation scale)
        arrow = ax.add_patch(FancyArrowPatch(start, end, connectionstyle=f"arc3,rad={rad_rim}",
                                             arrowstyle="-|>", mutation_scale=head, label=f"W[{i},{j}]",
                                             lw=width, alpha=alpha, color=color,
                                             shrinkA=0, shrinkB=2, zorder=1 if color == FAINT else 2))
        sx, sy = end - start
        c2 = (start + end) / 2 + rad_rim * np.array([sy, -sx])  # (2,): the control point, rim to rim
        if sparse:  # the arc as _WeightLabels keeps clear of it: its stroke, wider under the arrowhead
            bulge = np.array([sy, -sx]) * np.sign(rad_rim)  # (2,): the way the arc bulges
            arcs.append(dict(start=start, ctrl=c2, end=end, width=width, head=head, color=color, paired=paired,
                             patch=arrow, bulge=bulge / (np.linalg.norm(bulge) or 1.0)))
        if label:  # on the arrow: where _WeightLabels sets it (sparse), or near its head, centred on it
            p = _bezier(start, c2, end, [0.5 if sparse else 0.72])[0]  # (2,)
            text = ax.text(*p, fmt.format(w), ha="center", va="center", fontsize=fontsize, bbox=label_box,
                           zorder=5, label=f"W[{i},{j}]")
            if sparse:
                leader, = ax.plot([], [], color=color, lw=0.8, zorder=4, visible=False, label=f"_leader W[{i},{j}]")
                labels.append((len(arcs) - 1, text, leader, paired))
    if labels:  # the pair's labels first, then the rest in the order of the edges
        ordered = sorted(labels, key=lambda item: not item[3])
        ax.add_artist(_WeightLabels(arcs, circles, fixed, [item[:3] for item in ordered]))
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



