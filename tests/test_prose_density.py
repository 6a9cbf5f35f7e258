"""The prose of every content chapter at or under d2l's density, measured on the sources.

The figures (``tools/prose_density.py``): median words a sentence ≤ 18, at most 3 % of sentences over 40
words, at most 4 semicolons a thousand words, no paragraph with more than 5 computed numbers. Every content
chapter (the root page and the parts before the appendices) meets them, a new chapter from the start.
"""

from __future__ import annotations

import re

import pytest
from prose_density import TARGET, density, over_target

import buildpaths as paths


def content_chapters() -> list[str]:
    """The stems of the root page and of every chapter in a part before the appendices, in _toc.yml's order."""
    toc = (paths.ROOT / "_toc.yml").read_text()
    root = re.search(r"^root:\s*book/(\w+)", toc, re.M).group(1)
    body = re.split(r"^\s*- caption:\s*Appendices", toc, flags=re.M)[0]
    return [root] + re.findall(r"file:\s*book/(\w+)", body)


@pytest.mark.parametrize("stem", content_chapters())
def test_the_chapter_is_no_denser_than_d2l(stem):
    figures = density((paths.BOOK / f"{stem}.md").read_text())
    assert over_target(figures) == {}, f"{stem}: lighter prose needed (targets {TARGET})"


def test_a_dense_paragraph_is_caught_and_a_light_one_passes():
    dense = ("The weights are {glue:text}`a`, {glue:text}`b`, {glue:text}`c`, {glue:text}`d`, {glue:text}`e` "
             "and {glue:text}`f`; the first is the largest, the last is the smallest, and the middle ones "
             "are close to each other, which the table shows for every row of the matrix in the example.\n")
    light = "Each weight is positive. The weights of a row sum to one. The largest weight goes to the closest key.\n"
    assert set(over_target(density(dense))) == set(TARGET)
    assert over_target(density(light)) == {}
