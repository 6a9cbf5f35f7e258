"""The book reads front to back: no chapter refers to an equation or a figure of a later chapter.

The order is that of ``_toc.yml``. A reference ``{eq}`label``` or ``{numref}`label``` on a page
points to the page that defines the label (``:label:`` of an equation, ``:name:`` of a figure);
when that page is a later numbered chapter, the reader meets a number not yet introduced. The
appendices and the back matter (unnumbered parts) may be referred to from anywhere.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]

REFERENCE = re.compile(r"\{(eq|numref)\}`(?:[^`<]*<)?([^`<>]+)>?`")
DEFINITION = re.compile(r"^:(?:label|name):\s*(\S+)", re.M)


def reading_order(toc: dict) -> list[tuple[str, bool]]:
    """(page stem, numbered) for the root and every chapter, in the order of the table of contents."""
    order = [(Path(toc["root"]).name, True)]
    for part in toc["parts"]:
        numbered = part.get("numbered", True)
        order += [(Path(c["file"]).name, numbered) for c in part["chapters"]]
    return order


def forward_references(order: list[tuple[str, bool]], texts: dict[str, str]) -> list[tuple[str, str, str]]:
    """(page, label, defining page) for each reference to an equation or figure of a later chapter."""
    position = {stem: k for k, (stem, _) in enumerate(order)}
    numbered = dict(order)
    defined = {}
    for stem, _ in order:
        for label in DEFINITION.findall(texts[stem]):
            defined.setdefault(label, stem)
    found = []
    for stem, _ in order:
        for _role, label in REFERENCE.findall(texts[stem]):
            home = defined.get(label)
            if home and numbered[home] and position[home] > position[stem]:
                found.append((stem, label, home))
    return found


def test_the_rule_catches_a_forward_reference():
    order = [("a", True), ("b", True), ("appendix", False)]
    texts = {"a": "See {eq}`eq-later`, {numref}`Fig. %s <fig-later>` and {eq}`eq-appendix`.\n",
             "b": "```{math}\n:label: eq-later\n```\n```{figure} x.png\n:name: fig-later\n```\n"
                  "{eq}`eq-later` is fine here.\n",
             "appendix": "```{math}\n:label: eq-appendix\n```\n"}
    assert forward_references(order, texts) == [("a", "eq-later", "b"), ("a", "fig-later", "b")]


def test_no_chapter_refers_to_a_later_chapters_equation_or_figure():
    order = reading_order(yaml.safe_load((ROOT / "_toc.yml").read_text()))
    texts = {stem: (ROOT / "book" / f"{stem}.md").read_text() for stem, _ in order}
    assert forward_references(order, texts) == []
