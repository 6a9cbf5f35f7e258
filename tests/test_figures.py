"""A picture for every step: every content chapter has a figure, every drawn graph carries the
legend of its arrows (from j to i, v_j along it), no page translates one direction into the other,
and every figure fits a phone's column with its
text read at 9 px or more: from the SVGs the build glued, and measured in Chromium at 390 px on
every page (tests/js/figure_fit.js), where a figure's images and an explorable's drawings are shown.
"""

from __future__ import annotations

import inspect
import io
import re
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
import yaml

import booktools as bt
import browsertools as bw
import buildpaths as paths
from attention_graph import AttentionGraph, plots
from attention_graph.plots.style import COLUMN
from visits import script

ROOT = Path(__file__).resolve().parents[1]
FIGURE = re.compile(r"```\{(?:glue:)?figure\}\s*(\S+)\n((?::.*\n)*)\n?([\s\S]*?)```")
# The plot functions that draw arrows between nodes (book figures of graphs).
ARROWS = ("plot_attention_graph", "plot_fixed_and_computed", "plot_fixed_to_computed", "plot_head_graphs",
          "plot_block_graph", "plot_qkv", "plot_orientation", "plot_window_graph", "plot_decay_graph",
          "plot_decoding_dag", "plot_causal_paths", "plot_two_hop",
          "plot_bipartite", "plot_heads_side_by_side")


def content_chapters() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [Path(c["file"]).name for part in toc["parts"] if part.get("numbered", True)
            for c in part["chapters"]]


def figures(text: str) -> dict[str, str]:
    """Figure name → caption, for every figure directive of a page."""
    return {m.group(1): m.group(3) for m in FIGURE.finditer(text)}


def test_figures_finds_a_figure_and_its_caption():
    page = "```{glue:figure} fig-a\n:name: fig-a\n\nThe four people.\n```\n"
    assert figures(page) == {"fig-a": "The four people.\n"}


def test_every_content_chapter_has_a_figure():
    missing = {stem for stem in content_chapters() if not figures((ROOT / "book" / f"{stem}.md").read_text())}
    assert missing == set(), missing


def test_every_drawn_graph_carries_the_legend_of_its_arrows():
    """The book's one legend (plots.graphs.direction_key: an arrow from j to i, v_j flowing along it)
    is drawn by every plot function that draws arrows, itself or through plot_attention_graph."""
    for name in ARROWS:
        source = inspect.getsource(getattr(plots, name))
        assert re.search(r"\b(direction_key|plot_attention_graph|graph_panels)\(", source), name


def test_the_legend_of_the_arrows_is_drawn_and_can_be_left_out():
    graph = AttentionGraph(np.array([[0.5, 0.5], [0.2, 0.8]]), ["a", "b"])
    words = {t.get_text() for t in plots.plot_attention_graph(graph).axes[0].texts}
    assert "$v_j$ flows from $j$ to $i$" in words and {"$j$", "$i$", "$W_{ij}$"} <= words
    bare = {t.get_text() for t in plots.plot_attention_graph(graph, key=False).axes[0].texts}
    assert "$v_j$ flows from $j$ to $i$" not in bare


def label_faults(fig) -> list[str]:
    """What keeps a reader from reading each weight label of a drawn attention graph on one arc only.

    plots.graphs labels every weight's text, arc or loop "W[i,j]" (and a leader line "_leader
    W[i,j]"). Measured in px once the figure is drawn: a label's box overlaps no other label, no node
    and no other arc or loop (their strokes as drawn, arrowheads included); and either its own arc is
    the nearest stroke to it, by a point at least, and runs through it or within SNUG points of it, or
    a leader joins it to its own arc (a leader seen for less than 2 points between its arc's stroke and
    the box is none). A reader assigns a label to the stroke seen nearest its middle, and its box hides
    what runs under it: so, from the box's centre, the visible part of its own arc is nearer than
    NEARER times any other arc or loop (a label halfway between two arcs is read on either), and an
    arc that runs through its box runs through its middle, within OFF_CENTRE of its height (a box its
    arc crosses at one side reads as sitting beside it, towards whatever is on the other side)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.patches import Circle, FancyArrowPatch

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    pt = renderer.points_to_pixels(1.0)  # px a point
    faults = []

    def gap(points, box):  # (m,): px from each point to the box, 0 inside
        dx = np.maximum(np.maximum(box.x0 - points[:, 0], points[:, 0] - box.x1), 0.0)
        dy = np.maximum(np.maximum(box.y0 - points[:, 1], points[:, 1] - box.y1), 0.0)
        return np.hypot(dx, dy)

    for ax in fig.axes:
        to = ax.transData.transform
        strokes, nodes = {}, []  # label -> (points (m, 2) px, half the line width px); (centre, radius) px
        for patch in ax.patches:
            key = patch.get_label()
            if isinstance(patch, FancyArrowPatch) and key.startswith("W["):
                points = np.concatenate([seg(np.linspace(0, 1, 40)) for seg, _ in patch.get_path().iter_bezier()])
            elif isinstance(patch, Circle) and key.startswith("W["):  # a self-loop
                turn = np.linspace(0, 2 * np.pi, 120)
                points = np.asarray(patch.center) + patch.radius * np.column_stack([np.cos(turn), np.sin(turn)])
            elif isinstance(patch, Circle):  # a node
                nodes.append((to(patch.center), np.linalg.norm(to(np.add(patch.center, (patch.radius, 0)))
                                                               - to(patch.center))))
                continue
            else:
                continue
            strokes[key] = (to(points), patch.get_linewidth() * pt / 2)
        leaders = {line.get_label().split()[-1]: to(line.get_xydata()) for line in ax.lines
                   if line.get_label().startswith("_leader") and line.get_visible()}
        labels = [(t.get_label(), t.get_bbox_patch().get_window_extent(renderer)) for t in ax.texts
                  if t.get_label().startswith("W[") and t.get_bbox_patch() is not None]
        for key, box in labels:
            where = f"{ax.get_title() or 'graph'} {key}"
            faults += [f"{where} overlaps the label of {other}" for other, b in labels
                       if other != key and box.overlaps(b)]
            faults += [f"{where} overlaps a node" for c, radius in nodes if gap(c[None], box)[0] < radius]
            off = {k: max(float(gap(points, box).min()) - half, 0.0) / pt for k, (points, half) in strokes.items()}
            touched = sorted(k for k, d in off.items() if k != key and d < 0.5)
            faults += [f"{where} touches the arc {k}" for k in touched]
            points, half = strokes[key]
            if key in leaders and gap(leaders[key][:1], box)[0] > half + 2 * pt:  # seen between arc and box
                start, end = leaders[key]
                if np.linalg.norm(points - start, axis=1).min() > half + pt or gap(end[None], box)[0] > 0:
                    faults.append(f"{where}: its leader does not join its arc to it")
                continue
            others = min((d for k, d in off.items() if k != key), default=np.inf)
            if off[key] > SNUG or others < off[key] + 1:
                faults.append(f"{where} is {off[key]:.1f} pt from its arc and {others:.1f} pt from another")
            centre = np.array([(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2])  # (2,) px
            seen = {k: (np.linalg.norm(points[gap(points, box) > 0] - centre, axis=1).min(initial=np.inf) - half) / pt
                    for k, (points, half) in strokes.items()}  # from the centre to each stroke as seen, points
            nearest = min((d, k) for k, d in seen.items() if k != key)
            if seen[key] >= NEARER * nearest[0]:
                faults.append(f"{where} is not clearly nearer its own arc ({seen[key]:.1f} pt from its centre) "
                              f"than {nearest[1]} ({nearest[0]:.1f} pt)")
            through = np.linalg.norm(points - centre, axis=1).min() / pt  # its arc's middle line, from the centre
            if off[key] == 0 and through > OFF_CENTRE * box.height / pt:
                faults.append(f"{where}: its arc runs through its box {through:.1f} pt off the middle")
    return faults


def leader_crossings(fig) -> list[str]:
    """Each leader line of a drawn attention graph ("_leader W[i,j]") that crosses another arc or
    loop (its stroke as drawn, arrowhead included): a reader follows a leader across an arc to the
    wrong one."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.patches import Circle, FancyArrowPatch

    FigureCanvasAgg(fig).draw()

    def turn(o, u, v):  # the sign of the turn o → u → v
        du, dv = u - o, v - o
        return np.sign(du[..., 0] * dv[..., 1] - du[..., 1] * dv[..., 0])

    faults = []
    for ax in fig.axes:
        to = ax.transData.transform
        strokes = {}
        for patch in ax.patches:
            key = patch.get_label()
            if isinstance(patch, FancyArrowPatch) and key.startswith("W["):
                path = patch.get_path()
                strokes[key] = to(np.concatenate([seg(np.linspace(0, 1, 40)) for seg, _ in path.iter_bezier()]))
            elif isinstance(patch, Circle) and key.startswith("W["):
                turn_ = np.linspace(0, 2 * np.pi, 120)
                ring = np.column_stack([np.cos(turn_), np.sin(turn_)])  # (120, 2)
                strokes[key] = to(np.asarray(patch.center) + patch.radius * ring)
        for line in ax.lines:
            if not (line.get_label().startswith("_leader") and line.get_visible()):
                continue
            key = line.get_label().split()[-1]
            p, q = to(line.get_xydata())[:2]
            for other, points in sorted(strokes.items()):
                a, b = points[:-1], points[1:]
                crossed = (turn(p, q, a) * turn(p, q, b) < 0) & (turn(a, b, p) * turn(a, b, q) < 0)
                if other != key and crossed.any():
                    faults.append(f"{ax.get_title() or 'graph'} {key}: its leader crosses the arc {other}")
    return faults


def test_leader_crossings_catches_a_leader_across_an_arc():
    """The rule, on the worked example's graph: a leader drawn by hand from Carla's side straight
    across the middle of the drawing crosses arcs; the drawing's own leaders of the pair are read too."""
    we, graph, _ = _worked_graphs()
    C, A, B = (we.index(name) for name in ("Carla", "Ana", "Bruno"))
    fig = plots.plot_attention_graph(graph, show_weights=True, highlight=A, pair=(C, B), key=False)
    ax = fig.axes[0]
    for artist in list(ax.artists):  # the placement, which would move the leader back
        artist.remove()
    leader = next(line for line in ax.lines if line.get_label() == f"_leader W[{C},{B}]")
    leader.set_data([-0.9, 0.9], [-0.3, 0.3])
    leader.set_visible(True)
    assert any(f"W[{C},{B}]: its leader crosses" in f for f in leader_crossings(fig))


def test_no_leader_of_the_worked_example_crosses_an_arc():
    """The worked example's graph and Fig. 1 of the introduction (the same graph, a panel of it):
    no leader crosses an arc, so each label is read on its own arc."""
    we, graph, path = _worked_graphs()
    C, A, B = (we.index(name) for name in ("Carla", "Ana", "Bruno"))
    worked = plots.plot_attention_graph(graph, show_weights=True, highlight=A, pair=(C, B), fontsize=10)
    intro = plots.plot_fixed_and_computed(path, graph, highlight=A, pair=(C, B))
    assert leader_crossings(worked) == [] and leader_crossings(intro) == []


SNUG = 6.0  # points: the most a label without a leader may stand off its own arc or loop
NEARER = 0.5  # a label's own arc, seen from its centre, is nearer than this times any other stroke
OFF_CENTRE = 0.2  # the most an arc through a label's box may pass off its centre, a share of its height


def _worked_graphs():
    from attention_graph import gcn
    from attention_graph import worked_example as we

    _, graph = we.attention_layer()
    _, path = gcn(we.path_adjacency(), we.embeddings(), we.PEOPLE)
    return we, graph, path


def test_label_faults_catches_a_label_off_its_arc():
    """The rule, on the worked example's graph with its labels moved by hand (the drawing's own
    placement, which runs at every draw, taken out first): onto a node, onto another label, onto a
    crossing of other arcs, away from every arc, halfway between the pair's two arcs, and on its own
    arc but off the box's middle, towards the other arc of the pair (where the placement once put it)."""
    we, graph, _ = _worked_graphs()
    C, A, B = (we.index(name) for name in ("Carla", "Ana", "Bruno"))
    draw = lambda: plots.plot_attention_graph(graph, show_weights=True, highlight=A, pair=(C, B), key=False)  # noqa: E731
    assert label_faults(draw()) == []
    for where, expected in [((0.0, 1.0), "overlaps a node"), ((0.0, 0.0), "touches the arc"),
                            ((1.35, -1.35), "pt from its arc"), ((0.0, 0.45), "not clearly nearer"),
                            ((0.27, 0.02), "off the middle")]:
        fig = draw()
        ax = fig.axes[0]
        for artist in list(ax.artists):  # the placement (plots.graphs._WeightLabels)
            artist.remove()
        for line in ax.lines:
            line.set_visible(False)
        text = next(t for t in ax.texts if t.get_label() == f"W[{C},{B}]")
        text.set_position(where)
        assert any(expected in f for f in label_faults(fig)), (where, label_faults(fig))
    fig = draw()
    for artist in list(fig.axes[0].artists):
        artist.remove()
    texts = [t for t in fig.axes[0].texts if t.get_label().startswith("W[") and t.get_label() != f"W[{A},{A}]"]
    for t in texts:
        t.set_position((0.0, -0.1))  # all at one spot
    assert any("overlaps the label" in f for f in label_faults(fig))


def test_the_worked_example_graphs_print_each_weight_on_its_own_arc():
    """Fig. 1 of the introduction and the worked example's graph: every weight printed (the messages
    into Ana, the Carla–Bruno pair) reads on its own arc only, at the figures' own sizes."""
    we, graph, path = _worked_graphs()
    C, A, B = (we.index(name) for name in ("Carla", "Ana", "Bruno"))
    worked = plots.plot_attention_graph(graph, show_weights=True, highlight=A, pair=(C, B), fontsize=10)
    intro = plots.plot_fixed_and_computed(path, graph, highlight=A, pair=(C, B))
    assert label_faults(worked) == [] and label_faults(intro) == []
    assert pair_label_ends(worked, graph.labels, C, B) == []
    assert pair_label_ends(intro, graph.labels, C, B) == []
    printed = {t.get_label(): t.get_text() for t in worked.axes[0].texts if t.get_label().startswith("W[")}
    expected = {(A, j) for j in range(4)} | {(C, B), (B, C)}
    assert printed == {f"W[{i},{j}]": f"{graph.W[i, j]:.3f}" for i, j in expected}


def pair_label_ends(fig, labels, a: int, b: int) -> list[str]:
    """Each label of the pair (a, b) sits nearer the node its arc points to than the node it leaves
    (its box's centre, in px as drawn), so the two are not read side by side. Node k is found by
    its name, ``labels[k]``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    faults, seen = [], 0
    for ax in fig.axes:
        centre = {labels.index(t.get_text()): ax.transData.transform(t.get_position()) for t in ax.texts
                  if t.get_text() in labels and not t.get_label().startswith("W[")}
        for i, j in ((a, b), (b, a)):  # the arc from j to i carries W[i, j]
            texts = [t for t in ax.texts if t.get_label() == f"W[{i},{j}]"]
            if not texts:  # a panel without this arc (the intro's fixed path)
                continue
            seen += 1
            box = texts[0].get_bbox_patch().get_window_extent(canvas.get_renderer())
            at = np.array([(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2])
            if np.linalg.norm(at - centre[i]) >= np.linalg.norm(at - centre[j]):
                faults.append(f"{ax.get_title() or 'graph'} W[{i},{j}] sits nearer its arc's tail than its head")
    return faults if seen else ["no label of the pair"]


def test_a_labelled_pair_prints_each_arcs_weight_on_its_own_arc():
    """plot_attention_graph(pair=(a, b)): both arcs between a and b are orange and labelled, W[b, a]
    on the arc from a to b, each label read on its own arc only (label_faults)."""
    from attention_graph.plots.graphs import PAIR_COLOR

    W = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.3, 0.3, 0.4]])
    fig = plots.plot_attention_graph(AttentionGraph(W, ["a", "b", "c"]), show_weights=True, highlight=2,
                                     pair=(0, 1), key=False)
    orange = {t.get_label(): t.get_text() for t in fig.axes[0].texts
              if t.get_bbox_patch() is not None and t.get_bbox_patch().get_edgecolor()[:3]
              == pytest.approx(matplotlib.colors.to_rgb(PAIR_COLOR))}
    assert orange == {"W[1,0]": "0.200", "W[0,1]": "0.300"}  # W[1, 0] on a → b, W[0, 1] on b → a
    assert label_faults(fig) == [] and pair_label_ends(fig, ["a", "b", "c"], 0, 1) == []
    with pytest.raises(ValueError, match="pair must be two different nodes"):
        plots.plot_attention_graph(AttentionGraph(W, ["a", "b", "c"]), pair=(1, 1))


# Sentences that give both readings of an edge, or call the arrows "the way messages flow": the
# notation page says it once, and the legend under every graph says it again.
TRANSLATIONS = re.compile(r"the\s+way\s+(?:messages|the\s+message|\$j\$'s|\$v_j\$)|drawn\s+the\s+way|"
                          r"against\s+the\s+edge|\(\$i\$\s+attends\s+to\s+\$j\$|following\s+attention")


def test_no_sentence_translates_one_direction_into_the_other():
    found = {page.stem: TRANSLATIONS.findall(page.read_text()) for page in sorted((ROOT / "book").glob("*.md"))}
    assert {stem: hits for stem, hits in found.items() if hits} == {}
    assert TRANSLATIONS.search("drawn the way messages flow") and TRANSLATIONS.search("($i$ attends to $j$)")


# --------------------------------------------------------------------------------------------------
# Figure text on a phone and on a laptop, from the SVGs the build glued
# --------------------------------------------------------------------------------------------------
# The figures are SVGs whose width is in points (1 pt = 4/3 CSS px) and whose text is drawn as glyph
# paths (svg.fonttype "path"): each text element of a figure is a group <g id="text_N"> whose glyph
# group carries the font size as its scale, scale(s -s) for a size of 100 s points. The page scales
# an image to the column, never above its natural size (book.css), so no figure is wider than the
# column; a figure drawn at most a phone's column wide (plots.style.COLUMN) keeps its size there.
MIN_TEXT_PX = 9.0  # the smallest figure text a reader is shown, CSS px
PHONE_COLUMN, LAPTOP_COLUMN = 358.0, 690.0  # CSS px: the text column on a 390 px phone, at 1280 px
CSS = ROOT / "book" / "_ext" / "static" / "book.css"
_TEXT = re.compile(r'<g id="text_\d+">')
_GLYPHS = re.compile(r"scale\(([\d.e+-]+) -[\d.e+-]+\)")
_WORDS = re.compile(r"<!-- (.*?) -->")
_WIDTH = re.compile(r'<svg\b[^>]*\bwidth="([\d.]+)pt"')


def svg_texts(svg: str) -> tuple[float, list[tuple[float, str]]]:
    """(the figure's width in pt, [(font size in pt, the text) for each text element])."""
    width = float(_WIDTH.search(svg).group(1))
    starts = [m.start() for m in _TEXT.finditer(svg)] + [len(svg)]
    texts = []
    for a, b in zip(starts, starts[1:]):
        part = svg[a:b]
        glyphs, words = _GLYPHS.search(part), _WORDS.search(part)
        if glyphs:  # the first glyph group is the text's own size (mathtext scripts are 0.7 of it)
            texts.append((100 * float(glyphs.group(1)), words.group(1) if words else ""))
    return width, texts


# A heatmap's cell numbers are read digit by digit: a number drawn straight into axes that hold an
# image (plot_heatmap's cells) is measured by the height of its digits, 0.729 of its font size in
# DejaVu Sans (1493 of 2048 units), and must be drawn MIN_TEXT_PX tall. The font size alone (the rule
# for every other text) let 8 pt cells through at 10.6 px on a phone, their digits 7.7 px tall.
DIGIT = 0.729
_NUMBER = re.compile(r"[\u2212-]?\d*\.?\d+%?")
_SVG = "{http://www.w3.org/2000/svg}"


def cell_texts(svg: str) -> list[tuple[float, str]]:
    """[(font size in pt, the number) for each number drawn straight into an axes that holds an
    image]: a heatmap's cells, not its ticks (those sit in tick groups) nor a colour bar's labels."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(svg, parser=ET.XMLParser(target=ET.TreeBuilder(insert_comments=True)))
    found = []
    for axes in root.iter(_SVG + "g"):
        if not re.fullmatch(r"axes_\d+", axes.get("id", "")) or axes.find(f".//{_SVG}image") is None:
            continue
        for text in axes.findall(_SVG + "g"):
            if not re.fullmatch(r"text_\d+", text.get("id", "")):
                continue
            words = next((c.text.strip() for c in text if c.tag is ET.Comment), "")
            glyphs = next((_GLYPHS.search(g.get("transform", "")) for g in text.iter(_SVG + "g")
                           if _GLYPHS.search(g.get("transform", ""))), None)
            if glyphs and _NUMBER.fullmatch(words):
                found.append((100 * float(glyphs.group(1)), words))
    return found


def phone_share(css: str) -> float:
    """How many columns wide book.css lets a figure be drawn on a phone (1 when it sets nothing)."""
    found = re.search(r"@media \(max-width: 600px\)[\s\S]*?main figure > img[^{]*\{[^}]*max-width:\s*(\d+)%", css)
    return int(found.group(1)) / 100 if found else 1.0


def shown_px(size_pt: float, width_pt: float, column_px: float, share: float = 1.0) -> float:
    """CSS px of text of ``size_pt`` in a figure ``width_pt`` wide, shown at most ``share`` columns wide."""
    natural_px = width_pt * 4 / 3
    return size_pt * min(natural_px, share * column_px) / width_pt


def smallest_text_px(svg: str, share: float) -> tuple[float, float, str]:
    """(smallest text on a phone, on a laptop, in CSS px; that text)."""
    width, texts = svg_texts(svg)
    size, words = min(texts)
    return (shown_px(size, width, PHONE_COLUMN, share), shown_px(size, width, LAPTOP_COLUMN), words)


def shown_figures() -> dict[str, str]:
    """"page:key" → the SVG the build glued, for every glued figure a page shows."""
    found = {}
    for page in bt.pages():
        for key in figures(page.read_text()):
            data = bt.pasted(f"book/{page.stem}", key)["data"]
            if "image/svg+xml" in data:
                found[f"{page.stem}:{key}"] = data["image/svg+xml"]
    return found


def _svg(draw) -> str:
    plots.use_book_style()  # the conftest selected it too; a planted figure is drawn as the book's are
    fig = draw()
    out = io.StringIO()
    fig.savefig(out, format="svg", bbox_inches="tight")
    plt.close(fig)
    return out.getvalue()


def test_svg_texts_reads_the_font_size_and_the_width():
    def draw():
        fig, ax = plt.subplots(figsize=(4.0, 3.0))
        ax.set_title("twelve", fontsize=12)
        ax.text(0.5, 0.5, "$x_i$ six", fontsize=6, bbox=dict(fc="white"))
        ax.set_xticks([])
        ax.set_yticks([])
        return fig

    width, texts = svg_texts(_svg(draw))
    assert sorted(texts) == [(6.0, "$x_i$ six"), (12.0, "twelve")]
    assert 0.8 * 4 * 72 < width < 1.05 * 4 * 72


def test_shown_px_follows_the_css():
    assert phone_share("@media (max-width: 600px) {\n  main figure > img, main figure > a > img "
                       "{ max-width: 200%; width: auto; }\n}") == 2.0
    assert phone_share("main img { max-width: 100%; }") == 1.0
    assert shown_px(9, 252, PHONE_COLUMN) == pytest.approx(12.0)  # 3.5 in: its natural size, 4/3 px a pt
    assert shown_px(9, 720, PHONE_COLUMN) == pytest.approx(9 * 358 / 720)  # 10 in: scaled to the column
    assert shown_px(9, 720, PHONE_COLUMN, share=2.0) == pytest.approx(9 * 716 / 720)


def test_smallest_text_catches_a_tiny_font():
    def draw():  # three panels side by side, legend and ticks at 6 pt: what a phone cannot read
        fig, axes = plt.subplots(1, 3, figsize=(9.0, 3.0))
        for ax in axes:
            ax.plot([1, 2], [1, 2], label="a line")
            ax.legend(fontsize=6)
            ax.tick_params(labelsize=6)
        return fig

    phone, laptop, words = smallest_text_px(_svg(draw), share=2.0)
    assert phone < MIN_TEXT_PX and laptop < MIN_TEXT_PX


def test_cell_texts_reads_a_heatmaps_numbers_by_their_digits():
    graph = AttentionGraph(np.array([[0.5, 0.5], [0.2, 0.8]]), ["a", "b"])
    small = cell_texts(_svg(lambda: plots.plot_heatmap(graph, fontsize=8)))
    assert sorted(words for _, words in small) == ["0.200", "0.500", "0.500", "0.800"]
    assert DIGIT * shown_px(min(small)[0], 250, PHONE_COLUMN) < MIN_TEXT_PX  # 8 pt: 7.8 px digits
    drawn = min(cell_texts(_svg(lambda: plots.plot_heatmap(graph))))[0]  # the book's 10 pt
    assert DIGIT * shown_px(drawn, 250, PHONE_COLUMN) >= MIN_TEXT_PX


@pytest.mark.build
def test_every_figure_text_is_legible_on_a_phone_and_a_laptop():
    share = phone_share(CSS.read_text())
    small = {}
    for name, svg in shown_figures().items():
        phone, laptop, words = smallest_text_px(svg, share)
        if min(phone, laptop) < MIN_TEXT_PX:
            small[name] = f"{phone:.1f} px on a phone, {laptop:.1f} px at 1280 px: {words!r}"
        cells = cell_texts(svg)
        if cells:
            size, number = min(cells)
            digits = DIGIT * shown_px(size, svg_texts(svg)[0], PHONE_COLUMN, share)
            if digits < MIN_TEXT_PX:
                small[f"{name} cells"] = f"digits {digits:.1f} px tall on a phone: {number!r}"
    assert small == {}, small


# --------------------------------------------------------------------------------------------------
# In Chromium at 390 px: every figure within the column, every text of it at 9 px or more as shown
# --------------------------------------------------------------------------------------------------
HTML = paths.HTML
DOCS = [d for d in bw.toc_docnames() if (HTML / f"{d}.html").exists()] if HTML.exists() else []
PHONE = {"width": 390, "height": 844}


def misfits(found: list[dict]) -> list[str]:
    """The figures of one page (``js/figure_fit.js``) wider than the column or with text under 9 px."""
    bad = []
    for f in found:
        if f["width"] > f["column"] + 1:
            bad.append(f"{f['name']}: {f['width']:.0f} px wide in a {f['column']:.0f} px column")
        if f["smallest"] is not None and f["smallest"] < MIN_TEXT_PX:
            bad.append(f"{f['name']}: text {f['smallest']:.1f} px as shown: {f['text']!r}")
        if f.get("cells") is not None and f["cells"] < MIN_TEXT_PX:
            bad.append(f"{f['name']}: heatmap cell digits {f['cells']:.1f} px tall as shown: {f['cell']!r}")
    return bad


@pytest.fixture(scope="module")
def phone_figures(phone) -> dict[str, list[dict]]:
    """doc → what ``js/figure_fit.js`` measured of its figures at 390 px (light), from the page's
    phone load (``tests/visits.py``, shared with the layout and summary checks)."""
    return {doc: phone(f"{doc}.html", "light")["figure_fit"] for doc in DOCS}


@pytest.mark.browser
def test_every_figure_fits_the_phone_column_with_legible_text(phone_figures):
    assert sum(len(found) for found in phone_figures.values()) > 50  # the figures were found and measured
    bad = {doc: misfits(found) for doc, found in phone_figures.items() if misfits(found)}
    assert bad == {}, bad


PLANTED = """<!doctype html><html><head><meta name="viewport" content="width=device-width">
<style>body { margin: 0; } main article { padding: 0 16px; } .small img { max-width: 100%; }</style></head>
<body><main><article>
<figure id="fig-wide"><img src="wide.svg" alt="wide"></figure>
<figure id="fig-fits" class="small"><img src="narrow.svg" alt="narrow"></figure>
<figure id="fig-tiny" class="small"><img src="wide.svg" alt="wide, scaled"></figure>
<div class="explorable" data-title="planted"><svg viewBox="0 0 600 100" style="width: 100%">
<text x="10" y="50" style="font-size: 12px">twelve units, half shown</text></svg></div>
</article></main></body></html>"""


@pytest.mark.browser
def test_the_fit_rule_catches_a_wide_figure(browser, tmp_path):
    def wide():  # three panels side by side, 9 in: wider than the column, or, scaled to it, 5 px text
        fig, axes = plt.subplots(1, 3, figsize=(9.0, 2.5))
        for ax in axes:
            ax.plot([1, 2], [1, 2])
        return fig

    def narrow():  # a phone's column wide: shown at its own size
        fig, ax = plt.subplots(figsize=(COLUMN, 2.5))
        ax.plot([1, 2], [1, 2])
        return fig

    (tmp_path / "wide.svg").write_text(_svg(wide))
    (tmp_path / "narrow.svg").write_text(_svg(narrow))
    (tmp_path / "page.html").write_text(PLANTED)
    page = browser.new_page(viewport=PHONE)
    try:
        with bw.serve(Path(tmp_path)) as base:
            page.goto(base + "page.html")
            found = page.evaluate(script("figure_fit.js"))
    finally:
        page.close()
    bad = misfits(found)
    assert [b.split(":")[0] for b in bad] == ["fig-wide", "fig-tiny", "planted"], bad
    assert "px wide in a 358 px column" in bad[0]
    assert {f["name"]: f["smallest"] > MIN_TEXT_PX for f in found}["fig-fits"]
