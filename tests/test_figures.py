"""A picture for every step: every content chapter has a figure, and every drawn graph says where its
arrows point (from j to i, the way messages flow).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
FIGURE = re.compile(r"```\{(?:glue:)?figure\}\s*(\S+)\n((?::.*\n)*)\n?([\s\S]*?)```")
# The plot functions that draw arrows between nodes (book figures of graphs).
ARROWS = ("plot_attention_graph", "plot_fixed_and_computed", "plot_fixed_to_computed", "plot_head_graphs",
          "plot_block_graph", "plot_qkv", "plot_orientation")


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
