"""Show under every labeled result how strongly its SymPy check establishes it.

The line is generated from ``attention_graph.registry`` (``registry.badge(label)``): "Proved in SymPy
for every d ...", "Verified exactly for n = 2, 3 ...", "Measured to 1e-12 ...". It is added after each
labeled display equation and at the end of each theorem whose label has a registered check, when a
page is read, so a page cannot forget it and a new result gets its line without any markup.
"""

from __future__ import annotations

from docutils import nodes


def _badge(label: str) -> nodes.paragraph:
    from attention_graph import registry

    kind, _scope = registry.strength(label)
    text = registry.badge(label)
    return nodes.paragraph(text, "", nodes.emphasis(text, text),
                           classes=["check-strength", f"check-{kind}"], ids=[f"check-{label}"])


def add_badges(app, doctree) -> None:
    from attention_graph import registry

    known = set(registry.labels())
    for node in list(doctree.findall(nodes.math_block)):
        label = node.get("label")
        if label in known:
            node.parent.insert(node.parent.index(node) + 1, _badge(label))
    for node in list(doctree.findall(nodes.Admonition)):
        label = node.get("label")
        if label in known and node.get("realtype"):  # a sphinx-proof result
            sections = [c for c in node.children if isinstance(c, nodes.section)]
            (sections[-1] if sections else node).append(_badge(label))


def setup(app):
    app.connect("doctree-read", add_badges)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
