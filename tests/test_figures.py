"""A picture for every step: every content chapter has a figure, every drawn graph says where its
arrows point (from j to i, the way messages flow), and every figure's text can be read on a phone.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
import yaml

import booktools as bt
from attention_graph import plots

ROOT = Path(__file__).resolve().parents[1]
FIGURE = re.compile(r"```\{(?:glue:)?figure\}\s*(\S+)\n((?::.*\n)*)\n?([\s\S]*?)```")
# The plot functions that draw arrows between nodes (book figures of graphs).
ARROWS = ("plot_attention_graph", "plot_fixed_and_computed", "plot_fixed_to_computed", "plot_head_graphs",
          "plot_block_graph", "plot_qkv", "plot_orientation", "plot_window_graph")


def content_chapters() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [Path(c["file"]).name for part in toc["parts"] if part.get("numbered", True)
            for c in part["chapters"]]


def figures(text: str) -> dict[str, str]:
    """Figure name → caption, for every figure directive of a page."""
    return {m.group(1): m.group(3) for m in FIGURE.finditer(text)}


def test_figures_finds_a_figure_and_its_caption():
    page = "```{glue:figure} fig-a\n:name: fig-a\n\nArrows run from $j$ to $i$.\n```\n"
    assert figures(page) == {"fig-a": "Arrows run from $j$ to $i$.\n"}


def test_every_content_chapter_has_a_figure():
    missing = {stem for stem in content_chapters() if not figures((ROOT / "book" / f"{stem}.md").read_text())}
    assert missing == set(), missing


def test_every_drawn_graph_says_its_arrows_run_from_j_to_i():
    for page in sorted((ROOT / "book").glob("*.md")):
        text = page.read_text()
        drawn = {key for key, call in re.findall(r'glue\("(fig-[\w-]+)",\s*(\w+)', text) if call in ARROWS}
        drawn |= {key for key in re.findall(r'glue\("(fig-[\w-]+)",\s*fig\b', text)
                  if re.search(r"fig = (" + "|".join(ARROWS) + r")\(", text)}
        for key in drawn:
            caption = figures(text)[key]
            assert re.search(r"from\s+\$j\$\s+to\s+\$i\$", caption), f"{page.stem}:{key}: {caption}"


# --------------------------------------------------------------------------------------------------
# Figure text on a phone and on a laptop, from the SVGs the build glued
# --------------------------------------------------------------------------------------------------
# The figures are SVGs whose width is in points (1 pt = 4/3 CSS px) and whose text is drawn as glyph
# paths (svg.fonttype "path"): each text element of a figure is a group <g id="text_N"> whose glyph
# group carries the font size as its scale, scale(s -s) for a size of 100 s points. The page scales
# an image to the column, never above its natural size; on a phone (book.css, max-width 600 px) a
# figure may be drawn up to a share of the column (max-width 200 %) and scrolls sideways.
MIN_TEXT_PX = 9.0  # the smallest figure text a reader is shown, CSS px
PHONE_COLUMN, LAPTOP_COLUMN = 350.0, 690.0  # CSS px: the text column on a 390 px phone, at 1280 px
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
    assert shown_px(9, 720, PHONE_COLUMN) == pytest.approx(9 * 350 / 720)  # 10 in: scaled to the column
    assert shown_px(9, 720, PHONE_COLUMN, share=2.0) == pytest.approx(9 * 700 / 720)


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


@pytest.mark.build
def test_every_figure_text_is_legible_on_a_phone_and_a_laptop():
    share = phone_share(CSS.read_text())
    small = {}
    for name, svg in shown_figures().items():
        phone, laptop, words = smallest_text_px(svg, share)
        if min(phone, laptop) < MIN_TEXT_PX:
            small[name] = f"{phone:.1f} px on a phone, {laptop:.1f} px at 1280 px: {words!r}"
    assert small == {}, small
