"""Gather a page's "How this page is checked" boxes into one collapsed block at the page's end.

A page writes its checks where it likes, as ``:::{admonition} How this page is checked`` (with or
without ``:class: dropdown``) or ``:::{dropdown} How this page is checked``. When the page is read,
:class:`GatherChecks` takes every such box out of the text and puts their contents, in order, into
one ``<details class="how-checked">`` after everything else on the page (the exercises included), so
the methodology never interrupts the reading and never looks like a theorem. It opens on a click
or with the keyboard (its ``<summary>`` is focusable); the look lives in ``static/book.css``.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.transforms import SphinxTransform

TITLE = "How this page is checked"


class how_checked(nodes.General, nodes.Element):
    """The page's one collapsed block of checks; rendered by :func:`visit_html`."""


def visit_html(self, node: how_checked) -> None:
    self.body.append(f'<details class="how-checked" id="how-this-page-is-checked">'
                     f'<summary>{TITLE}</summary><div class="how-checked-body">')


def depart_html(self, node: how_checked) -> None:
    self.body.append("</div></details>")


def visit_plain(self, node: how_checked) -> None:  # other builders: the contents, as they are
    pass


def depart_plain(self, node: how_checked) -> None:
    pass


def _box_body(node: nodes.Node) -> list[nodes.Node] | None:
    """The contents of a "How this page is checked" box, or None when ``node`` is not one."""
    if isinstance(node, nodes.admonition) and node.children and isinstance(node[0], nodes.title):
        title = node[0]
    elif (isinstance(node, nodes.container) and node.get("design_component") == "dropdown"
          and node.children and isinstance(node[0], nodes.rubric)):
        title = node[0]
    else:
        return None
    if not title.astext().strip().startswith(TITLE):
        return None
    return list(node.children[1:])


class GatherChecks(SphinxTransform):
    default_priority = 900  # after MyST has built the boxes

    def apply(self, **kwargs) -> None:
        gathered = []
        for node in list(self.document.findall(lambda n: _box_body(n) is not None)):
            gathered += _box_body(node)
            node.parent.remove(node)
        if not gathered:
            return
        sections = [c for c in self.document.children if isinstance(c, nodes.section)]
        (sections[-1] if sections else self.document).append(how_checked("", *gathered))


def setup(app):
    app.add_node(how_checked, html=(visit_html, depart_html), text=(visit_plain, depart_plain),
                 latex=(visit_plain, depart_plain), man=(visit_plain, depart_plain),
                 texinfo=(visit_plain, depart_plain))
    app.add_transform(GatherChecks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
