"""A first-reading path: a plain-words summary at the top of every chapter, and a switch that hides the rest.

**The summary.** A chapter opens, right under its title, with::

    :::{summary}
    :figure: fig-peakedness
    What the chapter shows and why it matters, in plain words (under 80 words).
    :::

The directive puts the text beside the chapter's key figure: the figure the page glues under that
name (``{glue:figure} fig-peakedness``, found in the page's source with its alt text), pasted again
as an image and a line that points to the numbered figure further down (not a second figure, so no
figure number moves). Side by side at wide widths, the text above the figure on a phone
(``static/first_reading.css``). Other builders get the text and the figure, one after the other.

**The switch.** ``static/first_reading.js`` adds one button to the page header, "First reading",
with ``aria-pressed`` for its state; the reader's choice is kept in ``localStorage`` (key
``first-reading``), so it holds across pages. On, it hides, on screen only, what a first reading
skips: the proofs (sphinx-proof's ``prf:proof``, marked ``prf-proof`` here when a page is read),
the class badges (``check_strength.py``), the "How this page is checked" block (``page_checks.py``),
the technical asides, the admonitions a page marks with the class ``technical``
(``:class: note technical``), and the kernel code shown under a formula (a ``literalinclude`` with
``:pyobject:``, marked ``kernel-code`` by ``short_code.py``). The page's own code cells stay: their
outputs are what the prose reads.

**Second-reading material.** Prose and cells that only make sense beside what the switch hides (a
sentence about the badges, a cell whose explanation is a technical aside) are marked so the switch
hides them too: prose in a fenced ``{container} second-reading`` (a ``div`` of class
``second-reading``), a code cell with the tag ``second-reading`` (MyST-NB gives its ``div`` the class
``tag_second-reading``). The paragraph right after a kernel listing that tells how a reader calls it
("A reader calls it as ``f(...)``.") is marked here, when a page is read (``mark_second_reading``),
so no page wraps it by hand. Printed (the PDF), a page shows everything, whatever the switch says.
The script runs in the page's head, before the body is drawn, so a page never flashes what the
reader chose to hide. The switch is off by default; a reader who has never chosen (no key stored)
finds, first in the article, a quiet offer (a labelled ``aside``) whose two buttons, "Start the first
reading" and "Show everything", store the choice as the switch does, and remove the offer for good.

Enable it in ``_config.yml`` under ``sphinx.local_extensions``.
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from short_code import KERNEL_CLASS  # short_code.py's mark on a kernel listing
from sphinx.util.docutils import SphinxDirective

STATIC = Path(__file__).parent / "static"
LABEL = "In short"


def figure_alt(source: str, name: str) -> str | None:
    """The ``:alt:`` of the page's ``{glue:figure} name`` block, or None when the page has no such figure.

    >>> page = "```{glue:figure} fig-a\\n:alt: Two bars, one tall.\\n:name: fig-a\\n\\nCaption.\\n```\\n"
    >>> figure_alt(page, "fig-a"), figure_alt(page, "fig-b")
    ('Two bars, one tall.', None)
    """
    block = re.search(r"^(`{3,}|:{3,})\{glue:figure\}\s+" + re.escape(name) + r"\s*\n((?::[\w-]+:.*\n)*)",
                      source, re.M)
    if block is None:
        return None
    alt = re.search(r"^:alt:\s*(.*)$", block.group(2), re.M)
    return alt.group(1).strip() if alt else ""


class SummaryDirective(SphinxDirective):
    """``{summary}``: the chapter in plain words, beside its key figure (``:figure:``, a glued figure's name)."""

    has_content = True
    option_spec = {"figure": directives.unchanged_required}

    def run(self):
        name = self.options.get("figure", "").strip()
        source = Path(self.env.doc2path(self.env.docname)).read_text(encoding="utf8")
        alt = figure_alt(source, name) if name else None
        if alt is None:
            raise self.error(f"summary: :figure: must name a {{glue:figure}} of this page (got {name!r})")
        text = nodes.container(classes=["chapter-summary-text"])
        text += nodes.paragraph("", LABEL, classes=["chapter-summary-label"])
        self.state.nested_parse(self.content, self.content_offset, text)
        figure = nodes.container(classes=["chapter-summary-figure"])
        pasted = StringList([
            f"```{{glue:figure}} {name}", f":alt: {alt}", "", "Key figure: "
            f"{{numref}}`Fig. %s <{name}>`, explained further down.", "```"],
            source=self.env.docname)
        self.state.nested_parse(pasted, self.content_offset, figure)
        for pasted_figure in list(figure.findall(nodes.figure)):  # unnumbered: Sphinx numbers figures only
            caption = [nodes.paragraph("", "", *c.children, classes=["chapter-summary-caption"])
                       for c in pasted_figure.children if isinstance(c, nodes.caption)]
            rest = [c for c in pasted_figure.children if not isinstance(c, (nodes.caption, nodes.legend))]
            pasted_figure.replace_self([*rest, *caption])
        box = nodes.container(classes=["chapter-summary"])
        box += [text, figure]
        return [box]


def mark_proofs(app, doctree) -> None:
    """Give every proof's box (the admonition a ``prf:proof`` wraps) the class ``prf-proof``."""
    for node in doctree.findall(nodes.admonition):
        if type(node.parent).__name__ == "proof_node":
            node["classes"].append("prf-proof")


SECOND_READING = "second-reading"
CALLS = "A reader calls"


def mark_second_reading(app, doctree) -> None:
    """Mark ``second-reading`` the paragraph right after a kernel listing that says how a reader calls it."""
    for node in list(doctree.findall(nodes.Element)):
        if KERNEL_CLASS not in node["classes"] or node.parent is None:
            continue
        siblings = node.parent.children
        after = siblings[siblings.index(node) + 1:]
        if after and isinstance(after[0], nodes.paragraph) and CALLS in after[0].astext():
            after[0]["classes"].append(SECOND_READING)


def _add_static(app) -> None:
    if str(STATIC) not in map(str, app.config.html_static_path):
        app.config.html_static_path.append(str(STATIC))


def setup(app):
    app.add_directive("summary", SummaryDirective)
    app.connect("doctree-read", mark_proofs)
    app.connect("doctree-read", mark_second_reading)
    app.connect("builder-inited", _add_static)
    app.add_css_file("first_reading.css")
    app.add_js_file("first_reading.js")  # in the head, not deferred: the state applies before the body is drawn
    return {"parallel_read_safe": True, "parallel_write_safe": True}
